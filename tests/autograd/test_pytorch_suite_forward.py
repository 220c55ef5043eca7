"""Scenarios of PyTorch's test/test_autograd.py (class TestAutogradForwardMode), the CPU real-dtype ones, written
again and run with retrograd and torch. See test_pytorch_suite_basics.py for the method.
"""
import pytest

from .test_pytorch_suite_basics import function, ones, randn, same_in_both

torch = pytest.importorskip("torch")


def _fw(lib):
    return lib.autograd.forward_ad


def test_forward_level_cleanup():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            inside = fw.unpack_dual(dual).tangent is bar
        return inside, fw.unpack_dual(dual).tangent is None
    assert same_in_both(scenario) == ("ok", (True, True))


def test_size_check():
    def scenario(lib):
        fw = _fw(lib)
        with fw.dual_level():
            fw.make_dual(randn(lib, 3), randn(lib, 2))
    assert same_in_both(scenario)[0] == "RuntimeError"


def test_nested_level_is_refused():
    def scenario(lib):
        fw = _fw(lib)
        with fw.dual_level():
            with fw.dual_level():
                pass
    assert same_in_both(scenario)[0] == "RuntimeError"


def test_default_level():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            baz = fw.make_dual(foo, bar)
            baz_primal, baz_tangent = fw.unpack_dual(baz)
            return baz_tangent is bar, baz_primal._base is foo, fw.unpack_dual(baz_primal).tangent is None
    assert same_in_both(scenario) == ("ok", (True, True, True))


def test_grad_cleanup():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar, baz = randn(lib, 2), randn(lib, 2, seed=1), randn(lib, 2, seed=2)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            first = fw.unpack_dual(foo).tangent is None, fw.unpack_dual(dual).tangent is bar
        with fw.dual_level():
            second = fw.unpack_dual(dual).tangent is None
            new_dual = fw.make_dual(foo, baz)
            dual_primal, dual_tangent = fw.unpack_dual(dual)
            new_primal, new_tangent = fw.unpack_dual(new_dual)
            return first, second, dual_tangent is None, new_tangent is baz, (dual_primal - new_primal).abs().sum()
    assert same_in_both(scenario)[0] == "ok"


def test_detach_view_tracking():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            detached = dual.detach()
            return fw.unpack_dual(detached).tangent is None, detached._base is None
    assert same_in_both(scenario) == ("ok", (True, True))


def test_view_inplace_differentiable_views():
    def scenario(lib):
        fw = _fw(lib)
        original_foo, original_bar = randn(lib, 2), ones(lib, 2)
        foo, bar = original_foo.clone(), original_bar.clone()
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            view = dual[0]
            view.mul_(2)  # the tangent of the base follows
            return fw.unpack_dual(dual).tangent, fw.unpack_dual(view).tangent
    assert same_in_both(scenario)[0] == "ok"


def test_view_inplace_from_a_dual_into_a_plain_base():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 3), randn(lib, 3, seed=1)
        base = ones(lib, 5)
        with fw.dual_level():
            base[1:4].copy_(fw.make_dual(foo, bar) * 2)
            return fw.unpack_dual(base).tangent, fw.unpack_dual(base[2:]).tangent
    assert same_in_both(scenario)[0] == "ok"


def test_non_differentiable():
    def scenario(lib):
        fw = _fw(lib)
        foo, bar = randn(lib, 2), randn(lib, 2, seed=1)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            return fw.unpack_dual(dual > 0).tangent is None, fw.unpack_dual(dual.argmax()).tangent is None
    assert same_in_both(scenario) == ("ok", (True, True))


def test_make_dual_refuses_integer_primal_and_tangent():
    def scenario(lib):
        fw = _fw(lib)
        with fw.dual_level():
            fw.make_dual(lib.ones(2, dtype=lib.int64), randn(lib, 2))
    assert same_in_both(scenario)[0] == "ValueError"


def test_custom_function_jvp_and_save_for_forward():
    def scenario(lib):
        fw = _fw(lib)

        def forward(ctx, x, y):
            ctx.save_for_forward(x, y)
            return x * y

        def backward(ctx, g):
            return g, g

        def jvp(ctx, x_t, y_t):
            x, y = ctx.saved_tensors
            return x_t * y + y_t * x
        Mul = function(lib, forward, backward, name="Mul", jvp=jvp)
        with fw.dual_level():
            a = fw.make_dual(randn(lib, 3), randn(lib, 3, seed=1))
            b = fw.make_dual(randn(lib, 3, seed=2), randn(lib, 3, seed=3))
            return fw.unpack_dual(Mul.apply(a, b)).tangent, fw.unpack_dual(Mul.apply(a, randn(lib, 3))).tangent
    assert same_in_both(scenario)[0] == "ok"


def test_custom_function_without_jvp_raises():
    def scenario(lib):
        fw = _fw(lib)
        Id = function(lib, lambda ctx, x: x.clone(), lambda ctx, g: g, name="Id")
        with fw.dual_level():
            Id.apply(fw.make_dual(randn(lib, 2), randn(lib, 2)))
    assert same_in_both(scenario)[0] == "NotImplementedError"


def test_forward_over_reverse_hessian_vector_product():
    def scenario(lib):
        fw = _fw(lib)
        x = randn(lib, 4, requires_grad=True)
        v = randn(lib, 4, seed=5)
        with fw.dual_level():
            d = fw.make_dual(x, v)
            (g,) = lib.autograd.grad((d.tanh() * d.exp()).sum(), x, create_graph=True)
            return fw.unpack_dual(g).tangent
    assert same_in_both(scenario)[0] == "ok"


def test_backward_through_a_tangent():
    def scenario(lib):
        fw = _fw(lib)
        x = randn(lib, 3, requires_grad=True)
        t = randn(lib, 3, seed=4, requires_grad=True)
        with fw.dual_level():
            out = fw.unpack_dual((fw.make_dual(x, t) ** 2).sin()).tangent
            out.sum().backward()
        return x.grad, t.grad
    assert same_in_both(scenario)[0] == "ok"
