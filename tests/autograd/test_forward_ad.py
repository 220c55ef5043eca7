"""Forward-mode AD (autograd/forward_ad.py, Note [Forward-mode tangents]), compared with torch's."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from retrograd.ops._call import interposition

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as tfwAD  # noqa: E402


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    assert interposition.stack == ()
    assert fwAD.unpack_dual(rg.ones(1)).tangent is None


def _pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return rg.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _outcome(lib, fw, fn):
    try:
        fn(lib, fw)
    except Exception as exc:  # noqa: BLE001 - the outcome compared with torch's
        return type(exc).__name__, str(exc).split("\n")[0].split(". ")[0].replace("retrograd.", "torch.")
    return None


def _same_outcome(fn):
    ours, theirs = _outcome(rg, fwAD, fn), _outcome(torch, tfwAD, fn)
    assert ours == theirs
    return ours


def test_tangents_of_a_composite_function_match_torch():
    (x, tx), (v, tv) = _pair(3, 4), _pair(3, 4, seed=1)
    results = []
    for lib, fw, p, t in ((rg, fwAD, x, v), (torch, tfwAD, tx, tv)):
        with fw.dual_level():
            d = fw.make_dual(p, t)
            out = (d.sin() * d.exp()).softmax(1).matmul(d.mT).sum(0) / (d * d).sum()
            results.append(fw.unpack_dual(out).tangent.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10)


def test_unpack_dual_gives_the_tangent_as_it_is_and_a_view_of_the_primal():
    p, t = rg.ones(3), rg.full((3,), 2.0)
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(p, t)
        primal, tangent = fwAD.unpack_dual(d)
        assert tangent is t and fwAD.unpack_dual(d, level=0).tangent is t
        assert primal._base is p and fwAD.unpack_dual(primal).tangent is None
        assert isinstance(fwAD.unpack_dual(d), fwAD.UnpackedDualTensor)
        assert fwAD.unpack_dual(p).tangent is None
    assert fwAD.unpack_dual(d).tangent is None  # leaving the level clears the tangents


def test_make_dual_is_backward_differentiable():
    p = rg.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(p, rg.ones(2))
        assert d.grad_fn.name() == "ViewBackward0"
        (d * d).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [2.0, 4.0])


@pytest.mark.parametrize("case", [
    lambda lib, fw: fw.make_dual(lib.ones(2), lib.ones(2)),
    lambda lib, fw: fw.exit_dual_level(),
])
def test_errors_outside_a_level_match_torch(case):
    assert _same_outcome(case) is not None


@pytest.mark.parametrize("case", [
    lambda lib, fw: fw.enter_dual_level(),
    lambda lib, fw: fw.make_dual(lib.ones(3), lib.ones(2)),
    lambda lib, fw: fw.make_dual(lib.ones(3, dtype=lib.int64), lib.ones(3)),
    lambda lib, fw: fw.make_dual(lib.ones(3), lib.ones(3, dtype=lib.int64)),
    lambda lib, fw: fw.make_dual(fw.make_dual(lib.ones(3), lib.ones(3)), lib.ones(3)),
    lambda lib, fw: fw.make_dual(lib.ones(3), lib.ones(3), level=3),
    lambda lib, fw: fw.exit_dual_level(level=5),
    lambda lib, fw: fw.make_dual(lib.ones(3), lib.ones(3, dtype=lib.float32)),
])
def test_errors_inside_a_level_match_torch(case):
    def inside(lib, fw):
        with fw.dual_level():
            case(lib, fw)
    _same_outcome(inside)


def test_an_op_without_a_forward_derivative_raises_torchs_error():
    # ctc_loss's backward has none (nor a derivative at all), as PyTorch's: forward over its reverse stops there.
    x = rg.randn(4, 2, 3, dtype=rg.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, rg.ones(4, 2, 3, dtype=rg.float64))
        loss = rg.nn.functional.ctc_loss(d.log_softmax(2), rg.tensor([[1, 2], [2, 0]]), [4, 3], [2, 1])
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with ctc_loss_backward that does not "
                                                      "support it because it has not been implemented yet."):
            rg.autograd.grad(loss, x)
        assert fwAD.unpack_dual(d.exp()).tangent is not None  # the level works on


def test_non_differentiable_ops_give_no_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(rg.ones(3), rg.ones(3))
        assert fwAD.unpack_dual(d > 0).tangent is None
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None


def _both(fn):
    """``fn(lib, fw, p, t)`` under each library's level: its returned tangents, as arrays."""
    (p, tp), (t, tt) = _pair(4), _pair(4, seed=1)
    out = []
    for lib, fw, a, b in ((rg, fwAD, p, t), (torch, tfwAD, tp, tt)):
        with fw.dual_level():
            out.append([None if x is None else x.numpy().copy() for x in fn(lib, fw, a.clone(), b.clone())])
    return out


def _assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_in_place_op_on_a_dual_updates_its_tangent():
    def fn(lib, fw, p, t):
        d = fw.make_dual(p, t)
        d.mul_(d.exp()).add_(1)
        return [fw.unpack_dual(d).tangent, t]  # the tangent object itself was written
    _assert_same(*_both(fn))


def test_view_of_a_dual_has_the_view_of_the_tangent_and_in_place_on_it_updates_the_base():
    def fn(lib, fw, p, t):
        d = fw.make_dual(p, t)
        v = d[1:3]
        before = fw.unpack_dual(v).tangent.clone()
        v.mul_(3)
        return [before, fw.unpack_dual(d).tangent, fw.unpack_dual(v).tangent]
    _assert_same(*_both(fn))


def test_in_place_op_with_a_dual_on_a_view_of_a_plain_tensor_gives_the_base_a_tangent():
    def fn(lib, fw, p, t):
        d = fw.make_dual(p, t)
        base = lib.zeros(6)
        base[1:5].copy_(d.exp())
        other = lib.ones(4)
        other[2:] = d[:2]
        return [fw.unpack_dual(base).tangent, fw.unpack_dual(other).tangent]
    _assert_same(*_both(fn))


def test_a_view_taken_before_the_base_became_dual_sees_its_tangent():
    def fn(lib, fw, p, t):
        base = p.clone()
        v = base[:2]
        base.mul_(fw.make_dual(lib.ones(4), t))
        return [fw.unpack_dual(v).tangent]
    _assert_same(*_both(fn))


def test_fill_and_zero_in_place_reset_the_tangent():
    def fn(lib, fw, p, t):
        d = fw.make_dual(p, t)
        d[:2].zero_()
        e = fw.make_dual(p.clone(), t.clone())
        e.fill_(2.0)
        return [fw.unpack_dual(d).tangent, fw.unpack_dual(e).tangent]
    _assert_same(*_both(fn))


def test_dual_level_is_a_decorator_too():
    @fwAD.dual_level()
    def tangent_of_square(p, t):
        return fwAD.unpack_dual(fwAD.make_dual(p, t) ** 2).tangent
    np.testing.assert_array_equal(tangent_of_square(rg.tensor([3.0]), rg.tensor([1.0])).numpy(), [6.0])


# -- forward over reverse --------------------------------------------------------------------------------
def test_hvp_forward_over_reverse_matches_torch():
    (x, tx), (v, tv) = _pair(5), _pair(5, seed=3)
    results = []
    for lib, fw, p, t in ((rg, fwAD, x, v), (torch, tfwAD, tx, tv)):
        p = p.clone().requires_grad_(True)
        with fw.dual_level():
            d = fw.make_dual(p, t)
            y = (d.sin() * d.exp() + d.tanh() * d.sigmoid()).logsumexp(0) + (d * d).prod()
            (g,) = lib.autograd.grad(y, d, create_graph=True)
            results.append(fw.unpack_dual(g).tangent.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9)


def test_forward_over_reverse_through_an_in_place_op_that_saves_its_result():
    results = []
    for lib, fw in ((rg, fwAD), (torch, tfwAD)):
        x = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
        with fw.dual_level():
            y = fw.make_dual(x, lib.tensor([1.0, 2.0], dtype=lib.float64)) * 2
            y.exp_()  # its node saves the result, which backward unpacks as a new tensor
            (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
            results.append(fw.unpack_dual(g).tangent.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_tangents_are_backward_differentiable():
    p = rg.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(p, rg.ones(2))
        t = fwAD.unpack_dual(d.exp()).tangent  # exp(p) * 1
        t.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), np.exp([1.0, 2.0]))


# -- custom Functions -------------------------------------------------------------------------------------
def _custom(lib):
    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_forward(x, y)
            ctx.forward_saw = (lib.autograd.forward_ad.unpack_dual(x).tangent is not None)
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, g

        @staticmethod
        def jvp(ctx, gx, gy):
            x, y = ctx.saved_tensors
            return gx * y + gy * x

    return Mul


def test_custom_function_jvp_gives_the_tangent_and_forward_sees_no_dual():
    def fn(lib, fw, p, t):
        Mul = _custom(lib)
        out = Mul.apply(fw.make_dual(p, t), p * 2)  # the second input's tangent comes as zeros
        return [fw.unpack_dual(out).tangent]
    _assert_same(*_both(fn))


@pytest.mark.parametrize("kind", ["missing", "count", "shape", "dirty", "nondiff"])
def test_custom_function_jvp_errors_match_torch(kind):
    def case(lib, fw):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if kind == "dirty":
                    x.mul_(2)
                    ctx.mark_dirty(x)
                    return x
                if kind == "nondiff":
                    out = x.clone()
                    ctx.mark_non_differentiable(out)
                    return out
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        if kind != "missing":
            F.jvp = staticmethod({"count": lambda ctx, g: (g, g), "shape": lambda ctx, g: g[:1],
                                  "dirty": lambda ctx, g: g * 2, "nondiff": lambda ctx, g: g}[kind])
        with fw.dual_level():
            F.apply(fw.make_dual(lib.ones(3), lib.ones(3)))
    assert _same_outcome(case) is not None


def test_custom_function_dirty_input_whose_jvp_works_in_place():
    def fn(lib, fw, p, t):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def jvp(ctx, g):
                return g.mul_(2)
        d = fw.make_dual(p, t)
        out = Double.apply(d)
        return [fw.unpack_dual(out).tangent, fw.unpack_dual(d).tangent]
    _assert_same(*_both(fn))


# -- functional and func -------------------------------------------------------------------------------------
def f_two(a, b):
    return (a.sin() * b).sum(1), a.exp().mT.matmul(b)


def test_functional_jacobian_forward_mode_matches_torch_and_reverse_mode():
    (a, ta), (b, tb) = _pair(2, 3), _pair(2, 3, seed=1)
    ours = rg.autograd.functional.jacobian(f_two, (a, b), strategy="forward-mode", vectorize=True)
    theirs = torch.autograd.functional.jacobian(f_two, (ta, tb), strategy="forward-mode", vectorize=True)
    reverse = rg.autograd.functional.jacobian(f_two, (a, b))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(ours[i][j].numpy(), theirs[i][j].numpy(), rtol=1e-12)
            np.testing.assert_allclose(ours[i][j].numpy(), reverse[i][j].numpy(), rtol=1e-12)


def test_functional_hessian_forward_over_reverse_matches_torch():
    (a, ta) = _pair(4)

    def f(x):
        return (x.sin() * x.exp()).sum() + x.norm()
    ours = rg.autograd.functional.hessian(f, a, outer_jacobian_strategy="forward-mode", vectorize=True)
    theirs = torch.autograd.functional.hessian(f, ta, outer_jacobian_strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)


def test_func_transforms_match_torch_func():
    (a, ta), (b, tb) = _pair(2, 3), _pair(2, 3, seed=1)
    out, tangent = rg.func.jvp(f_two, (a, b), (b, a))
    t_out, t_tangent = torch.func.jvp(f_two, (ta, tb), (tb, ta))
    for x, y in zip(out + tangent, t_out + t_tangent, strict=True):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12)
    for x, y in zip(rg.func.jacfwd(f_two, argnums=(0, 1))(a, b), torch.func.jacfwd(f_two, argnums=(0, 1))(ta, tb),
                    strict=True):
        for xx, yy in zip(x, y, strict=True):
            np.testing.assert_allclose(xx.numpy(), yy.numpy(), rtol=1e-12)
    _, lin = rg.func.linearize(lambda x: x.tanh() * x, a)
    _, t_lin = torch.func.linearize(lambda x: x.tanh() * x, ta)
    np.testing.assert_allclose(lin(b).numpy(), t_lin(tb).numpy(), rtol=1e-12)

    def g(x):
        return (x.sin() * x.exp()).sum() + (x * x).sum().sqrt()
    np.testing.assert_allclose(rg.func.hessian(g)(a).numpy(), torch.func.hessian(g)(ta).numpy(), rtol=1e-10)


@pytest.mark.parametrize("case", [
    lambda lib, fw: lib.func.jvp(lib.sin, lib.ones(2), lib.ones(2)),
    lambda lib, fw: lib.func.jvp(lib.sin, (lib.ones(2),), (lib.ones(2), lib.ones(2))),
    lambda lib, fw: lib.func.jvp(lambda x: 3, (lib.ones(2),), (lib.ones(2),)),
    lambda lib, fw: lib.func.jvp(lib.sin, (lib.ones(2),), (lib.ones(2),), has_aux=True),
    lambda lib, fw: lib.func.jacfwd(lib.sin, argnums=1)(lib.ones(2)),
    lambda lib, fw: lib.func.jacfwd(lib.sin, argnums=0.5)(lib.ones(2)),
])
def test_func_errors_match_torch(case):
    assert _same_outcome(case) is not None


def _across_threads(lib, fw):
    """What another thread sees while one thread holds a dual level: levels are global, as PyTorch's."""
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def holder():
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 0.0]))
            inside.set()
            release.wait(30)
            seen["holder"] = fw.unpack_dual(x * 3).tangent.tolist()

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert inside.wait(30)
        y = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.0, 1.0]))  # the holder's level, from here
        seen["other"] = [round(v, 6) for v in fw.unpack_dual(y.sin()).tangent.tolist()]
        try:
            with fw.dual_level():
                seen["enter"] = "entered"
        except RuntimeError as exc:
            seen["enter"] = str(exc)
    finally:
        release.set()
        t.join(30)
    seen["after"] = _outcome(lib, fw, lambda m, f: f.make_dual(m.ones(2), m.ones(2)))
    return seen


def test_a_dual_level_is_global_across_threads_as_pytorchs():
    # PyTorch keeps the forward AD levels process-wide (torch/csrc/autograd/forward_grad.cpp): another thread
    # pairs tensors at the level one thread entered, and may not enter a second one
    ours = _across_threads(rg, fwAD)
    assert ours == _across_threads(torch, tfwAD)
    assert ours["enter"].startswith("Nested forward mode AD is not supported at the moment")


_BCE = {
    "bce": lambda m, x, y, w, red: m.nn.functional.binary_cross_entropy(x, y, w, reduction=red),
    "bce_with_logits_weight": lambda m, x, y, w, red: m.nn.functional.binary_cross_entropy_with_logits(
        x, y, w, reduction=red),
    "bce_with_logits_pos_weight": lambda m, x, y, w, red: m.nn.functional.binary_cross_entropy_with_logits(
        x, y, pos_weight=w, reduction=red),
}


def _bce_data(m):
    f64 = m.float64
    return (m.tensor([0.2, 0.7, 0.9], dtype=f64), m.tensor([0.0, 1.0, 0.5], dtype=f64),
            m.tensor([1.0, 2.0, 0.5], dtype=f64), m.tensor([0.3, -1.0, 2.0], dtype=f64))


@pytest.mark.parametrize("reduction", ["none", "sum"])
@pytest.mark.parametrize("loss", sorted(_BCE))
def test_a_losss_weight_tangent_gives_its_result_none_as_pytorchs(loss, reduction):
    # the weight is not differentiable: a dual weight alone leaves the loss without a tangent
    def tangent(m, fw):
        x, y, w, v = _bce_data(m)
        with fw.dual_level():
            t = fw.unpack_dual(_BCE[loss](m, x, y, fw.make_dual(w, v), reduction)).tangent
        return None if t is None else t.tolist()

    assert tangent(rg, fwAD) is None
    assert tangent(torch, tfwAD) is None


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_binary_cross_entropys_weight_tangent_counts_for_nothing_in_jvp_as_torch_funcs(reduction):
    def jvps(m):
        x, y, w, v = _bce_data(m)
        _, t_w = m.func.jvp(lambda w_: _BCE["bce"](m, x, y, w_, reduction), (w,), (v,))
        _, t_x = m.func.jvp(lambda x_: _BCE["bce"](m, x_, y, w, reduction), (x,), (v,))
        return np.asarray(t_w.tolist()), np.asarray(t_x.tolist())

    (ours_w, ours_x), (theirs_w, theirs_x) = jvps(rg), jvps(torch)
    np.testing.assert_array_equal(ours_w, theirs_w)
    np.testing.assert_array_equal(ours_w, np.zeros_like(ours_w))
    np.testing.assert_allclose(ours_x, theirs_x, rtol=1e-12)
    # both tangents at once (PyTorch refuses: "Setting a forward grad that itself has a forward gradient"):
    # the input's alone, the weight taken at its value
    x, y, w, v = _bce_data(rg)
    _, both = rg.func.jvp(lambda x_, w_: _BCE["bce"](rg, x_, y, w_, reduction), (x, w), (v, v))
    np.testing.assert_allclose(both.numpy(), ours_x, rtol=1e-12)
