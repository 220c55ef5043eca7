"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), fifth part: saving None, extra gradients,
pickling, non-differentiable dependencies, set_grad_enabled, reentrant backward, joining and reductions.
See test_pytorch_suite_basics.py for the method.
"""
import pickle

import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, ones, randn, same_in_both

torch = pytest.importorskip("torch")


def test_saving_none_for_backward():
    def scenario(lib):
        def forward(ctx, x):
            ctx.save_for_backward(None, x, None)
            return x * x

        def backward(ctx, g):
            n1, x, n2 = ctx.saved_tensors
            assert n1 is None and n2 is None
            return 2 * x * g
        x = randn(lib, 5, requires_grad=True)
        function(lib, forward, backward, name="MyFn").apply(x).sum().backward()
        return x.grad
    same_in_both(scenario)


def test_extra_none_gradients_are_ignored():
    def scenario(lib):
        x = randn(lib, 5, 5, requires_grad=True)
        function(lib, lambda ctx, x: x, lambda ctx, g: (g, None, None), name="MyFn").apply(x).sum().backward()
        return x.grad
    same_in_both(scenario)


@pytest.mark.parametrize("protocol", [0, 1, 2])
def test_pickling_keeps_values_and_requires_grad(protocol):
    def scenario(lib):
        x, y = randn(lib, 10, 10, requires_grad=True), randn(lib, 10, 10, seed=1)
        xc, yc = pickle.loads(pickle.dumps([x, y], protocol=protocol))
        return xc, xc.requires_grad, yc, yc.requires_grad
    same_in_both(scenario)


def test_dependency_through_a_non_differentiable_output():
    def scenario(lib):
        def f1_forward(ctx, x):
            out = lib.zeros(x.size(), dtype=lib.float64)
            ctx.mark_non_differentiable(out)
            return x, out
        f1 = function(lib, f1_forward, lambda ctx, g, ignored: g, name="F1")
        f2 = function(lib, lambda ctx, x, ignored: x, lambda ctx, g: (g, None), name="F2")
        x = randn(lib, 5, requires_grad=True)
        a, b = f1.apply(x)
        b = b + 1
        c = f2.apply(a, b)
        c.backward(lib.ones(c.size(), dtype=lib.float64))
        return a.requires_grad, b.requires_grad, x.grad
    same_in_both(scenario)


def test_set_grad_enabled_as_context_and_as_function():
    def scenario(lib):
        x = lib.tensor([1.0], requires_grad=True)
        with lib.set_grad_enabled(False):
            a = x * 2
        with lib.set_grad_enabled(True):
            b = x * 2
        with lib.set_grad_enabled(False):
            lib.set_grad_enabled(True)
            c = x * 2
        return a.requires_grad, b.requires_grad, c.requires_grad
    assert same_in_both(scenario) == ("ok", (False, True, True))


def test_simple_reentrant_backward():
    def scenario(lib):
        y_data = randn(lib, 2, 2, seed=1)

        def forward(ctx, x):
            with lib.enable_grad():
                ctx.x = lib.autograd.Variable(x, requires_grad=True)
                ctx.y = lib.autograd.Variable(y_data, requires_grad=True)
                ctx.output_var = ctx.x * ctx.y
            return ctx.output_var.detach()

        def backward(ctx, g):
            with lib.enable_grad():
                ctx.output_var.sum().backward()
            return ctx.x.grad * g
        x = randn(lib, 2, 2, requires_grad=True)
        function(lib, forward, backward, name="Reenter").apply(x).sum().backward()
        return x.grad, y_data
    same_in_both(scenario)


def test_error_in_a_reentrant_child_backward_propagates():
    def scenario(lib):
        def raising(ctx, g):
            raise Exception("Simulate error on backward pass")
        simulate = function(lib, lambda ctx, x: x.clone(), lib.autograd.function.once_differentiable(raising))
        a = randn(lib, 3, 3, requires_grad=True)
        c = a * a
        b = randn(lib, 3, 3, requires_grad=True, seed=1)
        root = simulate.apply(b * b).sum()

        def backward(ctx, g):
            root.backward()
            return g
        function(lib, lambda ctx, x: x.clone(), backward, name="ReentrantFunc").apply(c).sum().backward()
    result = same_in_both(scenario)
    assert "Simulate error" in result[1]


CHECKS = {
    "broadcast_tensors": (lambda lib, a, b, c, d: lib.broadcast_tensors(a, b, c, d), [(3,), (1, 2, 1), (1, 1), (5, 1, 1)]),
    "cat": (lambda lib, a, b, c: lib.cat((a, b, c), 0), [(1, 5, 5), (2, 5, 5), (3, 5, 5)]),
    "cat_negdim_1": (lambda lib, a, b, c: lib.cat((a, b, c), -1), [(5, 5, 1), (5, 5, 2), (5, 5, 3)]),
    "cat_negdim_2": (lambda lib, a, b, c: lib.cat((a, b, c), -2), [(5, 1, 5), (5, 2, 5), (5, 3, 5)]),
    "cat_empty": (lambda lib, a, b: lib.cat((a, b)), [(0, 5), (5, 5)]),
    "block_diag": (lambda lib, a, b, c: lib.block_diag(a, b, c), [(1, 5), (2, 5), (3, 5)]),
    "trapz": (lambda lib, y, x: lib.trapz(y, x), [(2, 3), (2, 3)]),
}
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_gradcheck_and_gradgradcheck_of_joining_functions(name):
    def scenario(lib):
        fn, shapes = CHECKS[name]
        args = [randn(lib, *s, requires_grad=True, seed=i) for i, s in enumerate(shapes)]
        f = lambda *a: fn(lib, *a)  # noqa: E731
        out = f(*args)
        return (lib.autograd.gradcheck(f, args), lib.autograd.gradgradcheck(f, args),
                [tuple(o.shape) for o in out] if isinstance(out, (tuple, list)) else tuple(out.shape))
    same_in_both(scenario)


def test_var_mean_matches_var_and_mean_in_gradient():
    def scenario(lib):
        dim = [2, 4]
        input1 = randn(lib, 3, 4, 5, 6, 2, 3, requires_grad=True)
        input2 = input1.detach().clone().requires_grad_()
        var1, mean1 = lib.var_mean(input1, dim=dim, keepdim=False)
        var2, mean2 = input2.var(dim=dim, keepdim=False), input2.mean(dim=dim, keepdim=False)
        grad = randn(lib, 3, 4, 6, 3, seed=1)
        r1, r2 = var1 * var1 * mean1 * mean1, var2 * var2 * mean2 * mean2
        lib.autograd.backward(r1, grad)
        lib.autograd.backward(r2, grad)
        return bool(lib.allclose(r1, r2)), bool(lib.allclose(input1.grad, input2.grad)), input1.grad
    same_in_both(scenario)
