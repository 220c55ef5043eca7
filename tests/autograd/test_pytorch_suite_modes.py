"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), second part: grad modes, indexing,
requires_grad, roots of backward, next_functions. See test_pytorch_suite_basics.py for the method.
"""
import warnings

import numpy as np
import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, ones, randn, same_in_both  # noqa: F401

torch = pytest.importorskip("torch")


def test_deep_graph_of_custom_functions_is_freed_without_recursion():
    def scenario(lib):
        f = function(lib, lambda ctx, a, b: a + b, lambda ctx, g: (g, g), name="MyOp")
        y = lib.ones(1, requires_grad=True).clone()
        for _ in range(20000):
            y = f.apply(y, y)
        del y
        return True
    same_in_both(scenario)


def test_deep_graph_of_in_place_ops_with_skip_connections_is_freed_without_recursion():
    def scenario(lib):
        x = lib.ones(1, requires_grad=True)
        y = x.clone()
        previous = [None, None]
        for _ in range(20000):
            earlier = [t for t in previous[:-1] if t is not None]
            previous.append(y)
            previous.pop(0)
            y += y * 0.000001
            if len(earlier) == 2:  # never: PyTorch's test builds a chain of in-place adds
                y += lib.cat(earlier).sum()
        del y, previous
        return True
    same_in_both(scenario)


def test_no_unnecessary_save_lets_a_constant_factor_change():
    def scenario(lib):
        mu = lib.ones(1, dtype=lib.float64, requires_grad=True)
        x = lib.empty(1, dtype=lib.float64)
        loss = 0
        for i in range(3):
            x.detach_()
            x.copy_(mu + i)
            loss += (x * lib.tensor([float(i)], dtype=lib.float64)).sum()
        loss.backward()
        return mu.grad
    same_in_both(scenario)


def test_no_grad_block_and_decorator():
    def scenario(lib):
        x = lib.ones(5, 5, requires_grad=True)
        y = lib.ones(5, 5) * 4
        with lib.no_grad():
            w = x + y

        @lib.no_grad()
        def adder(a, b):
            return a + b
        z = adder(x, y)
        errors = []
        for t in (w, z):
            try:
                t.backward(lib.ones(5, 5))
            except RuntimeError as e:
                errors.append(type(e).__name__)
        with lib.no_grad():
            inside = [lib.is_grad_enabled()]
            adder(x, y)
            inside.append(lib.is_grad_enabled())
        return w.requires_grad, w.grad_fn, z.requires_grad, z.grad_fn, errors, inside
    assert same_in_both(scenario) == ("ok", (False, None, False, None, ["RuntimeError"] * 2, [False, False]))


def test_grad_mode_decorators_on_generators():
    def scenario(lib):
        seen = []

        @lib.no_grad()
        def gen_no_grad():
            for i in range(3):
                seen.append(lib.is_grad_enabled())
                yield i

        @lib.enable_grad()
        def gen_enable_grad():
            for i in range(3):
                seen.append(lib.is_grad_enabled())
                yield i
        with lib.enable_grad():
            for _ in gen_no_grad():
                seen.append(lib.is_grad_enabled())
        with lib.no_grad():
            for _ in gen_enable_grad():
                seen.append(lib.is_grad_enabled())
        return seen
    same_in_both(scenario)


def test_custom_function_under_no_grad_does_not_require_grad():
    def scenario(lib):
        f = function(lib, lambda ctx, x: x + 1, lambda ctx, g: g, name="MyOp")
        with lib.no_grad():
            y = f.apply(lib.ones(5, 5, requires_grad=True))
        return y.requires_grad
    assert same_in_both(scenario) == ("ok", False)


INDICES_2D = [1, (1, 1), slice(1, None), slice(None, 2), (slice(None, 2), 2), (slice(1, 2), 2), (1, slice(2, None)),
              (slice(None), slice(2, None)), "long", "mask", (Ellipsis, slice(2, None)), ([0], [0]), ([1, 2, 3], [0]),
              ([1, 2], [2, 1]), ([[1, 2], [3, 0]], [[0, 1], [2, 3]]), (slice(None), [2, 3]), ([2, 3], slice(None)),
              [0], ([0],)]
INDICES_3D = [(slice(None), [0], [0]), ([0], [0], slice(None)), (slice(None), [0, 1, 2], [0]),
              ([0, 1, 2], [0], slice(None)), (slice(None), [1, 2], [2, 1]), ([1, 2], [2, 1], slice(None)),
              (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]), ([[1, 2], [3, 0]], [[0, 1], [2, 2]], slice(None)),
              (slice(None), slice(None), [2, 1]), (slice(None), [2, 1], slice(None)), ([2, 1], slice(None), slice(None)),
              ([0],), ([0], slice(None)), ([0], Ellipsis), ([1, 2], [0, 1]), ([1, 2], [0, 1], Ellipsis),
              (Ellipsis, [1, 2], [0, 1]), "long_ellipsis"]
MASK = np.random.default_rng(5).random((4, 4)) > 0.5


def _index(lib, idx):
    if idx == "long":
        return lib.tensor([0, 2])
    if idx == "mask":
        return lib.tensor(MASK.tolist())
    if idx == "long_ellipsis":
        return (lib.tensor([0, 1]), Ellipsis)
    return idx


@pytest.mark.parametrize("idx", INDICES_2D + INDICES_3D, ids=lambda i: repr(i)[:40])
def test_indexing_gradient(idx):
    def scenario(lib):
        shape = (4, 4) if any(idx is i for i in INDICES_2D) else (4, 3, 4)
        y = lib.arange(1.0, 1.0 + np.prod(shape), dtype=lib.float64).view(*shape).requires_grad_()
        out = y[_index(lib, idx)]
        out.sum().backward()
        return out, y.grad
    same_in_both(scenario)


@pytest.mark.parametrize("idx", [[1, 1, 3, 2, 1, 2], ([1, 1, 3, 2, 1, 2], [0]), ([[1, 2], [0, 0]], [[0, 1], [1, 1]]),
                                 "3d"], ids=str)
def test_indexing_with_duplicates_accumulates(idx):
    def scenario(lib):
        if idx == "3d":
            y = lib.arange(1.0, 65, dtype=lib.float64).view(4, 4, 4).requires_grad_()
            y[[1, 1, 1], :, :].sum().backward()
        else:
            y = lib.arange(1.0, 17, dtype=lib.float64).view(4, 4).requires_grad_()
            y[lib.tensor(idx) if isinstance(idx, list) else idx].sum().backward()
        return y.grad
    same_in_both(scenario)


def test_index_backward_does_not_save_the_indexed_tensor():
    def scenario(lib):
        a = lib.tensor([1.0, 0, 0])
        b = lib.zeros(3, requires_grad=True)
        t = b + 0
        t[a != 0] = t[a != 0]
        t.backward(lib.zeros_like(t))
        return b.grad
    same_in_both(scenario)


def test_saved_variables_is_deprecated():
    def scenario(lib):
        def backward(ctx, g):
            ctx.saved_variables
            return g, g

        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a + b
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            function(lib, forward, backward).apply(randn(lib, 3, 3, requires_grad=True),
                                                   randn(lib, 3, 3, requires_grad=True, seed=1)).sum().backward()
        return any("deprecated" in str(w.message) and "saved_variables" in str(w.message) for w in caught)
    assert same_in_both(scenario) == ("ok", True)


def test_requires_grad_propagates_and_hooks_of_unused_tensors_do_not_run():
    def scenario(lib):
        x, y, z = randn(lib, 5, 5), randn(lib, 5, 5, seed=1), randn(lib, 5, 5, requires_grad=True, seed=2)
        a = x + y
        b = a + z
        b.backward(lib.ones(5, 5, dtype=lib.float64))
        return a.requires_grad, b.requires_grad, z.grad
    same_in_both(scenario)


def test_requires_grad_method():
    def scenario(lib):
        x, y = randn(lib, 5, 5), randn(lib, 5, 5, requires_grad=True, seed=1)
        facts = [x.requires_grad_() is x, x.requires_grad, y.requires_grad_() is y, y.requires_grad,
                 x.requires_grad_(True) is x, y.requires_grad_(True) is y]
        z = x * y
        try:
            z.requires_grad_(False)
        except RuntimeError as e:
            facts.append(type(e).__name__)
        facts += [z.requires_grad_() is z, z.requires_grad, x.requires_grad_(False) is x, x.requires_grad,
                  y.requires_grad_(False) is y, y.requires_grad]
        return facts
    same_in_both(scenario)


@pytest.mark.parametrize("non_leaf", [False, True])
def test_in_place_add_of_a_tensor_requiring_grad(non_leaf):
    def scenario(lib):
        a = randn(lib, 5, 5) + 0 if non_leaf else randn(lib, 5, 5)
        a += randn(lib, 5, 5, requires_grad=True, seed=1)
        return a.requires_grad
    assert same_in_both(scenario) == ("ok", True)


@pytest.mark.parametrize("case", ["plain", "view", "after_requires_grad_base", "after_requires_grad_view"])
def test_in_place_before_and_after_requires_grad(case):
    def scenario(lib):
        a = randn(lib, 2, 3)
        b = a[:]
        if case == "plain":
            a.add_(5)
        elif case == "view":
            b.add_(5)
        a.requires_grad = True
        if case == "after_requires_grad_base":
            a.add_(5)
        elif case == "after_requires_grad_view":
            b.add_(5)
        a.sum().backward()
        return a.grad
    same_in_both(scenario)


@pytest.mark.parametrize("attr", ["grad", "data", "requires_grad", "_grad_fn", "_backward_hooks"])
def test_deleting_attributes(attr):
    def scenario(lib):
        x = randn(lib, 5, 5, requires_grad=True)
        delattr(x, attr)
        return x.grad
    same_in_both(scenario)


def test_deleting_the_autograd_fields_of_a_non_leaf_raises_and_keeps_them():
    def scenario(lib):
        x = randn(lib, 3, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 3)
        errors = []
        for attr in ("_grad_fn", "_backward_hooks"):
            try:
                delattr(y, attr)
            except RuntimeError as e:
                errors.append(str(e))
        y.sum().backward()
        return errors, y._grad_fn.name(), len(y._backward_hooks), x.grad
    same_in_both(scenario)


def test_assigning_grad_fn_detaches_with_none_and_refuses_anything_else():
    def scenario(lib):
        x = randn(lib, 3, requires_grad=True)
        y = x * 2
        v = x * 1
        w = v[:2]  # a view: its _grad_fn is its grad_fn, replayed after its base changes in place
        v.mul_(2)
        before = (y._grad_fn.name(), w._grad_fn.name(), w._grad_fn is w.grad_fn)
        y._grad_fn = None
        after = (y.requires_grad, y.is_leaf, y._grad_fn)
        z = x * 3
        try:
            z._grad_fn = z.grad_fn
        except RuntimeError as e:
            refused = (str(e), z._grad_fn.name())
        x._grad_fn = None  # a leaf: detached in place too
        return before, after, refused, x.requires_grad
    assert same_in_both(scenario)[1][2][1] == "MulBackward0"


def test_assigning_none_to_data_raises():
    def scenario(lib):
        randn(lib, 5, 5, requires_grad=True).data = None
    assert same_in_both(scenario)[0] == "TypeError"


def test_the_same_root_twice():
    def scenario(lib):
        a, b = randn(lib, 5, 5, requires_grad=True), randn(lib, 5, 5, requires_grad=True, seed=1)
        x = a * b
        go = randn(lib, 5, 5, seed=2)
        lib.autograd.backward([x, x], [go, go])
        return a.grad, b.grad
    same_in_both(scenario)


def test_backward_of_a_non_scalar_without_grad_output_raises():
    def scenario(lib):
        b = randn(lib, 5, 5, requires_grad=True) + 2
        lib.autograd.backward([b], [None])
    assert same_in_both(scenario)[0] == "RuntimeError"


@pytest.mark.parametrize("retain", [False, True])
def test_backward_twice_through_saved_values(retain):
    def scenario(lib):
        b = randn(lib, 3, requires_grad=True)
        c = lib.zeros(3, dtype=lib.float64)
        c[[1, 2]] = b[[1, 1]]
        go = lib.tensor([1.0, 1, 1], dtype=lib.float64)
        c.backward(go, retain_graph=retain)
        c.backward(go)
        return b.grad
    same_in_both(scenario)


@pytest.mark.parametrize("kind", ["list", "array", "tensor", "bool"])
def test_backward_twice_through_advanced_indexing_raises(kind):
    def scenario(lib):
        b = randn(lib, 3, requires_grad=True)
        index = {"list": [1, 1], "array": np.array([2, 0]), "tensor": lib.tensor([1, 2]),
                 "bool": lib.tensor([True, False, True])}[kind]
        y = b[index].sum()
        y.backward()
        y.backward()
    assert same_in_both(scenario)[0] == "RuntimeError"


@pytest.mark.parametrize("index", ["x[[0], :]", "x[..., [0]]", "x[None, [0]]", "x[[0], 1]", "x[[0], [1]]",
                                   "x[1:, [0]]", "x[[0], ..., [1]]", "x[torch.tensor([True, False, True])]"])
def test_advanced_indexing_saves_its_indices_as_pytorch(index):
    def scenario(lib):
        x = randn(lib, 3, 3, 3, requires_grad=True)
        node = eval(index, {"x": x, "torch": lib}).grad_fn
        return node.name(), node._saved_indices
    same_in_both(scenario)


def test_backward_twice_without_saved_values():
    def scenario(lib):
        b = randn(lib, 3, requires_grad=True)
        c = b + 1
        c.backward(lib.ones(3, dtype=lib.float64))
        c.backward(lib.ones(3, dtype=lib.float64))
        return b.grad
    same_in_both(scenario)


def test_next_functions_of_add():
    def scenario(lib):
        x, y = randn(lib, 5, 5, requires_grad=True), randn(lib, 5, 5, requires_grad=True, seed=1)
        a = x + y
        nf = a.grad_fn.next_functions
        b = a + 5
        nb = b.grad_fn.next_functions
        return ([(type(n).__name__, i) for n, i in nf], len(nb), nb[0][0] is a.grad_fn, nb[1][0])
    same_in_both(scenario)
