"""``autograd.grad`` with no gradients given, compiled (``grad`` in _engine_loop.c) and in Python.

The compiled entry takes the plain call (scalar floating non-leaf outputs that are not views,
inputs that are Tensors and not views, outside the engine) and declines everything else,
having done nothing; these tests hold both paths to PyTorch's values and errors.
"""
import gc
import sys
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import engine, interrupts

torch = pytest.importorskip("torch")


def _first_sentence(exc):
    return str(exc).split(". ")[0]


def _mlp(lib, params, x):
    w1, b1, w2 = params
    return ((x @ w1 + b1).tanh() @ w2).sum()


def _params(lib, dtype):
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((3, 5)), rng.standard_normal(5), rng.standard_normal(5)]
    return [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays], lib.tensor(
        rng.standard_normal((2, 3)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_of_leaves_and_non_leaves_as_torch(engine_loop, dtype):
    got, want = [], []
    for lib, out in ((rg, got), (torch, want)):
        params, x = _params(lib, dtype)
        hidden = x @ params[0]
        loss = ((hidden + params[1]).tanh() @ params[2]).sum()
        out.extend(lib.autograd.grad(loss, [params[0], hidden, params[2]], retain_graph=True))
        out.extend(lib.autograd.grad([loss * 2.0, (hidden * hidden).sum()], (params[0], hidden)))
    for g, w in zip(got, want):
        assert g.dtype.itemsize == w.dtype.itemsize and tuple(g.shape) == tuple(w.shape)
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=tol, atol=tol)


def test_grad_of_grad_and_retained_graph_as_torch(engine_loop):
    got, want = [], []
    for lib, out in ((rg, got), (torch, want)):
        params, x = _params(lib, np.float64)
        loss = _mlp(lib, params, x)
        (g,) = lib.autograd.grad(loss, params[0], create_graph=True)
        assert g.requires_grad
        out.append(lib.autograd.grad((g * g).sum(), params[0], retain_graph=True)[0])
        out.append(lib.autograd.grad((g * g).sum(), params[0])[0])
        out.append(lib.autograd.grad(loss, params[2], retain_graph=True)[0])
        out.append(lib.autograd.grad(loss, params[2])[0])
        with pytest.raises(RuntimeError) as info:
            lib.autograd.grad(loss, params[2])
        out.append(_first_sentence(info.value))
    for g, w in zip(got[:4], want[:4]):
        np.testing.assert_allclose(g.numpy(), w.detach().numpy(), rtol=1e-10)
    assert got[4] == want[4]


def test_grad_of_parameters_as_torch(engine_loop):
    got, want = [], []
    for lib, out in ((rg, got), (torch, want)):
        params, x = _params(lib, np.float64)
        params = [lib.nn.Parameter(p.detach()) for p in params]
        out.extend(g.detach().numpy() for g in lib.autograd.grad(_mlp(lib, params, x), params))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_unused_inputs_as_torch(engine_loop):
    got, want = [], []
    for lib, out in ((rg, got), (torch, want)):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (b * 2.0).sum().backward()  # b has an accumulator that this pass does not reach
        for unused in (a, b):
            with pytest.raises(RuntimeError) as info:
                lib.autograd.grad((a * a).sum() if unused is b else (b * a[0]).sum(), [a[0:1].sum(), unused])
            out.append((type(info.value), str(info.value)))
            with pytest.raises(RuntimeError) as info:
                lib.autograd.grad((a * 3.0).sum(), [a, unused] if unused is b else [b, unused])
            out.append((type(info.value), str(info.value)))
        result = lib.autograd.grad((a * 3.0).sum(), [b, a], allow_unused=True)
        out.append((result[0], result[1].tolist()))
    assert got == want


def test_compiled_grad_runs_only_the_plain_call(expects_compiled):
    assert engine.use_compiled_loop(True)
    loop, eng = engine._loop, engine.get_default_engine()
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2.0
    (g,) = loop.grad(eng, (y * x).sum(), x, False, False, False)
    np.testing.assert_array_equal(g.numpy(), [4.0, 8.0, 12.0])
    assert x.grad is None
    declined = [((y * y).sum(), y[1:], "a view as input"),
                ((y * y).sum(), [x, 2.0], "not a tensor"),
                ((y * y).sum(), [], "no inputs"),
                (y * y, x, "three elements"),
                ((y * y)[1], x, "a view as output"),
                (x.sum().detach(), x, "no graph"),
                (rg.tensor(1.0, requires_grad=True), x, "a leaf as output"),
                ((y * y).sum(), rg.tensor([1.0]), "an input that does not require grad"),
                (((y * y).sum(),), {x}, "a set")]
    for outputs, inputs, why in declined:
        assert loop.grad(eng, outputs, inputs, True, False, False) is NotImplemented, why
    assert x.grad is None and (y * y).sum().grad_fn is not None
    p = rg.nn.Parameter(rg.tensor([1.0, -1.0]))  # a Parameter is taken as a Tensor: it has no __torch_function__
    (gp,) = loop.grad(eng, (p * p).sum(), [p], False, False, False)
    assert gp.tolist() == [2.0, -2.0]

    class Nested(rg.autograd.Function):
        seen = []

        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, grad):  # inside the engine: the Python path, which nests the pass
            with rg.enable_grad():
                inner = rg.tensor(2.0, requires_grad=True)
                Nested.seen.append(loop.grad(eng, inner * inner, inner, False, False, False))
                Nested.seen.append(rg.autograd.grad(inner * inner, inner)[0].item())
            return grad

    rg.autograd.grad(Nested.apply(x).sum(), x)
    assert Nested.seen == [NotImplemented, 4.0]


def test_interrupt_pending_at_the_end_of_the_pass_is_raised(engine_loop):
    class Interrupted(rg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, grad):
            interrupts.state.pending = True  # as the SIGINT handler leaves it inside the engine
            return grad

    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(KeyboardInterrupt):
        rg.autograd.grad(Interrupted.apply(x).sum(), x)
    assert interrupts.state.pending is False
    assert rg.autograd.grad((x * x).sum(), x)[0].tolist() == [2.0, 4.0]  # the engine keeps working


def test_no_floating_point_warning_and_no_reference_leaked(engine_loop):
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (g,) = rg.autograd.grad(rg.log(x).sum(), x)
    tx = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    assert g.tolist() == torch.autograd.grad(torch.log(tx).sum(), tx)[0].tolist() == [float("inf"), 1.0]
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    (w * 2.0).sum().backward()
    acc = (w * 1.0).grad_fn.next_functions[0][0]
    for _ in range(3):
        rg.autograd.grad((x * w).sum(), [x, w])
    gc.collect()
    watched = (x, w, acc, x._data, engine.get_default_engine())
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(20):
        rg.autograd.grad((x * w).sum(), [x, w])
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == before


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_numpy_in_a_hook_is_quiet_in_both_engine_modes(engine_loop, how):
    # Engine.execute runs a pass with NumPy's floating-point errors ignored; the compiled entries of the
    # plainest backward() and grad() do the same, so a hook's NumPy call warns in neither mode.
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0

    def hook(grad):
        np.log(np.zeros(1))  # divide by zero: a RuntimeWarning outside a pass
        return grad
    y.register_hook(hook)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if how == "backward":
            y.sum().backward()
            assert x.grad.tolist() == [2.0, 2.0]
        else:
            assert rg.autograd.grad(y.sum(), x)[0].tolist() == [2.0, 2.0]
    with pytest.warns(RuntimeWarning):
        np.log(np.zeros(1))  # the caller's own state is back after the pass
