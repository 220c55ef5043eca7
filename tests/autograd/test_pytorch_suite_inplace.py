"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), third part: in-place ops and saved values,
non-differentiable outputs, duplicated outputs, setitem, stacking. See test_pytorch_suite_basics.py for the method.
"""
import math

import numpy as np
import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, ones, randn, same_in_both

torch = pytest.importorskip("torch")


def _attempt(fn):
    try:
        fn()
        return "ok"
    except RuntimeError:
        return "RuntimeError"


def test_in_place_ops_invalidate_only_the_nodes_that_saved_the_value():
    def scenario(lib):
        x = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        y = (lib.ones(5, 5, dtype=lib.float64) * 4).requires_grad_()
        g = lambda: lib.ones(5, 5, dtype=lib.float64)  # noqa: E731
        seen = []
        z = x * y
        q, w = z + y, z * y
        z.add_(2)
        seen += [_attempt(lambda: q.backward(g(), retain_graph=True)), _attempt(lambda: w.backward(g()))]
        z = x * y
        q, r = z * y, z + y
        w = z.add_(y)
        seen += [_attempt(lambda: w.backward(g(), retain_graph=True)), _attempt(lambda: r.backward(g(), retain_graph=True)),
                 _attempt(lambda: q.backward(g()))]
        with lib.no_grad():
            x.grad.zero_()
        m = x / 2
        z = m + y / 8
        q, r = z * y, z + y
        before = z._version
        w = z.exp_()
        seen.append(z._version != before)
        r.backward(g(), retain_graph=True)
        seen.append(x.grad.clone())
        w.backward(g(), retain_graph=True)
        seen += [x.grad.clone(), _attempt(lambda: q.backward(g()))]
        leaf = lib.ones(5, 5, dtype=lib.float64, requires_grad=True)
        x = leaf.clone()
        x.add_(10)
        (x + 2).backward(g())
        z = x * (x + 2)
        x.add_(2)
        seen += [x, leaf.grad, _attempt(lambda: z.backward(g()))]
        return seen
    result = same_in_both(scenario)
    assert result[1][7][0][0] == pytest.approx((1 + math.e) / 2)


def test_mark_non_differentiable_mask():
    def scenario(lib):
        def forward(ctx, x):
            out = x > 0
            ctx.mark_non_differentiable(out)
            return out
        x = randn(lib, 5, 5, requires_grad=True)
        mask = function(lib, forward, lambda ctx, g: (g * 0).to(lib.float64)).apply(x)
        x.masked_fill(mask, 0).sum().backward()
        return mask.requires_grad, x.grad
    same_in_both(scenario)


def test_mark_non_differentiable_one_of_two_outputs():
    def scenario(lib):
        seen = []

        def forward(ctx, x):
            a, b = x + 1, x + 2
            ctx.mark_non_differentiable(a)
            return a, b

        def backward(ctx, ga, gb):
            seen.append((bool((ga == 0).all()), bool((gb == 1).all())))
            return gb
        x = randn(lib, 5, 5, requires_grad=True)
        a, b = function(lib, forward, backward).apply(x)
        b.sum().backward()
        return a.requires_grad, b.requires_grad, x.grad, seen
    same_in_both(scenario)


def test_mark_non_differentiable_output_used_with_a_gradient_of_none():
    def scenario(lib):
        def forward(ctx, x):
            out = x.clone()
            ctx.mark_non_differentiable(out)
            return out
        x = randn(lib, 5, 5, requires_grad=True)
        r = function(lib, forward, lambda ctx, g: None).apply(x * x)
        (r * x).sum().backward()
        return x.grad
    same_in_both(scenario)


@pytest.mark.parametrize("inplace", [False, True])
def test_function_returning_the_same_tensor_twice(inplace):
    def scenario(lib):
        def forward(ctx, x):
            if inplace:
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x
            out = x * 2
            return out, out
        f = function(lib, forward, lambda ctx, g1, g2: g1 * 2 + g2 * 2)

        def fn(x):
            a, b = f.apply(x.clone() if inplace else x)
            assert a is b
            return a + b
        x = randn(lib, 5, 5, requires_grad=True)
        checks = [lib.autograd.gradcheck(fn, [x]), lib.autograd.gradgradcheck(fn, [x])]
        if inplace:
            checks += [_attempt(lambda: f.apply(x)), _attempt(lambda: f.apply(x.clone()[0]))]
        return checks
    same_in_both(scenario)


SETITEM = [((5, 5), 1), ((5,), 1), ((1,), 0), ((10,), [[0, 4, 2]]), ((5, 5), [[0, 4], [2, 2]]),
           ((5, 5, 5), (slice(None), slice(None), [1, 3])), ((5, 5, 5), (slice(None), [1, 3], slice(None))),
           ((5, 5, 5), ([1, 3], slice(None), slice(None))), ((5, 5, 5), (slice(None), [2, 4], [1, 3])),
           ((5, 5, 5), ([1, 3], [2, 4], slice(None))), ((5, 5), "mask"), ((5,), "mask_row"), ((1,), "mask_one")]
SETITEM_TENSOR = [((5, 5), 3), ((5, 5), [[0, 1], [1, 0]]), ((5,), 3), ((5,), "long_sum"), ((5,), [[0, 1, 2, 3]]),
                  ((5, 5, 5), (slice(None), slice(None), [1, 3])), ((5, 5, 5), (slice(None), [1, 3], slice(None))),
                  ((5, 5, 5), ([1, 3], slice(None), slice(None))), ((5, 5, 5), (slice(None), [2, 4], [1, 3])),
                  ((5, 5, 5), ([1, 3], [2, 4], slice(None))), ((5, 5, 5), ("long13", [2, 4], slice(None))),
                  ((5, 5), "mask"), ((5,), "mask_row")]
MASK = np.random.default_rng(11).random((5, 5)) > 0.5


def _setitem_index(lib, index):
    special = {"mask": lambda: lib.tensor(MASK.tolist()), "mask_row": lambda: lib.tensor(MASK[0].tolist()),
               "mask_one": lambda: lib.tensor(MASK[0, 0:1].tolist()), "long_sum": lambda: lib.tensor([3]).sum()}
    if isinstance(index, str):
        return special[index]()
    if isinstance(index, tuple):
        return tuple(lib.tensor([1, 3]) if i == "long13" else i for i in index)
    return index


def _lists(index):
    """A list of lists indexes as a tuple of lists, in both libraries (PyTorch's old test relied on it)."""
    return tuple(index) if isinstance(index, list) and index and isinstance(index[0], list) else index


@pytest.mark.parametrize("size,index", SETITEM, ids=str)
def test_setitem_with_a_constant(size, index):
    def scenario(lib):
        x = lib.ones(*size, dtype=lib.float64, requires_grad=True)
        y = x + 2
        before = y._version
        y[_lists(_setitem_index(lib, index))] = 2
        y.backward(lib.ones(*size, dtype=lib.float64))
        return y._version != before, x.grad
    same_in_both(scenario)


@pytest.mark.parametrize("size,index", SETITEM_TENSOR, ids=str)
def test_setitem_with_a_tensor_requiring_grad(size, index):
    def scenario(lib):
        idx = _lists(_setitem_index(lib, index))
        x = lib.ones(*size, dtype=lib.float64, requires_grad=True)
        y = x + 2
        before = y._version
        value = lib.full(x[idx].shape, 7.0, dtype=lib.float64).requires_grad_()
        y[idx] = value
        y.backward(lib.ones(*size, dtype=lib.float64))
        return y._version != before, x.grad, value.grad
    same_in_both(scenario)


def test_setitem_broadcasts_a_smaller_value():
    def scenario(lib):
        x = randn(lib, 4, requires_grad=True)
        y = lib.zeros(2, 3, 4, dtype=lib.float64)
        y[1] = x
        y.backward(randn(lib, 2, 3, 4, seed=1))
        return x.grad
    same_in_both(scenario)


@pytest.mark.parametrize("case", ["select_sum", "fill"])
def test_gradcheck_of_composite_functions(case):
    def scenario(lib):
        def select_sum(x):
            return x.select(0, 1).sum()

        def fill(root):
            x = root.clone()
            x.fill_(2)
            return x
        fn = {"select_sum": select_sum, "fill": fill}[case]
        x = randn(lib, 10, requires_grad=True) if case == "select_sum" else randn(lib, 4, 5, requires_grad=True)
        return lib.autograd.gradcheck(fn, [x]), lib.autograd.gradgradcheck(fn, [x])
    assert same_in_both(scenario) == ("ok", (True, True))


@pytest.mark.parametrize("how", ["stack", "hstack", "hstack_1d", "vstack", "dstack"])
def test_stacking_splits_the_gradient(how):
    def scenario(lib):
        shape = (10,) if how == "hstack_1d" else (10, 10)
        xs = [randn(lib, *shape, requires_grad=True, seed=i) for i in range(3)]
        out = lib.stack(xs, 0) if how == "stack" else getattr(lib, how.replace("_1d", ""))(xs)
        out.backward(randn(lib, *out.shape, seed=9))
        return [x.grad for x in xs]
    same_in_both(scenario)


def test_unbind_backward_with_all_or_one_gradient():
    def scenario(lib):
        stacked = randn(lib, 3, 10, 10, requires_grad=True)
        grad = randn(lib, 3, 10, 10, seed=1)
        lib.autograd.backward(list(stacked.unbind()), list(grad.unbind()))
        ones_grads = [lib.autograd.grad(randn(lib, 3, 10, 10, requires_grad=True).unbind()[i], [], allow_unused=True)
                      for i in range(0)]
        out = [stacked.grad]
        for i in range(3):
            s = randn(lib, 3, 10, 10, requires_grad=True, seed=2)
            out.append(lib.autograd.grad(s.unbind()[i], s, grad.unbind()[i])[0])
        return out, ones_grads
    same_in_both(scenario)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_gradcheck(accumulate):
    def scenario(lib):
        idx = lib.tensor([1, 2, 3, 1, 2, 3] if accumulate else [1, 2, 3, -1, -2, -3])

        def fn(root, values):
            x = root.clone()
            x.put_(idx, values, accumulate=accumulate)
            return x
        args = [randn(lib, 4, 5, requires_grad=True), randn(lib, 6, requires_grad=True, seed=1)]
        return lib.autograd.gradcheck(fn, args), lib.autograd.gradgradcheck(fn, args)
    assert same_in_both(scenario) == ("ok", (True, True))


def test_gradient_of_one_chunk_leaves_the_others_zero():
    def scenario(lib):
        x = randn(lib, 10, 10, requires_grad=True)
        (x.chunk(5)[2] * 4 + 2).sum().backward()
        first = x.grad.clone()
        with lib.no_grad():
            x.grad.zero_()
        x.chunk(5)[0].backward(randn(lib, 2, 10, seed=1))
        return first, x.grad
    same_in_both(scenario)


@pytest.mark.parametrize("node", ["op", "custom"])
def test_legacy_variable_with_a_grad_fn_raises(node):
    def scenario(lib):
        x = lib.ones(1, requires_grad=True)
        y = x * 2 if node == "op" else function(lib, lambda ctx, x: x * 2, lambda ctx, g: g).apply(x)
        lib.autograd.Variable(lib.zeros(1), _grad_fn=y.grad_fn)
    assert same_in_both(scenario)[0] == ("TypeError" if node == "op" else "RuntimeError")
