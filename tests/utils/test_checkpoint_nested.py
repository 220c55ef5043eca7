"""Nested checkpoints (a checkpoint inside a checkpointed function), in both implementations, against torch.

Each case runs the same function on the same numbers with retrograd and with torch, wrapped in
checkpoints in several ways, and compares the results with the unwrapped function's; the graphs
must die with their last tensor (no reference cycle through the checkpoints' hooks).
"""
import collections
import gc
import weakref

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.timeout(120)

LIBS = {"retrograd": rg, "torch": torch}


def _grad(lib, fn):
    def wrapper(x):
        with lib.enable_grad():
            out = fn(x)
            (grad_input,) = lib.autograd.grad(out, inputs=(x,), create_graph=True)
        return grad_input
    return wrapper


def _sum(fn):
    return lambda x: fn(x).sum()


def _ck(lib, fn):
    return lambda *args, **kwargs: lib.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False, **kwargs)


def _wrappings(lib, fn):
    """(plain function, the same function wrapped in checkpoints in various ways), as PyTorch's tests build them."""
    def grad(f):
        return _grad(lib, f)

    def c(f):
        return _ck(lib, f)
    return (
        (fn, (c(fn), c(c(fn)))),
        (grad(fn), (grad(c(fn)), grad(c(c(fn))))),
        (grad(grad(fn)), (grad(c(grad(fn))), c(grad(grad(c(fn)))), grad(c(grad(c(fn)))))),
        (grad(grad(grad(fn))), (grad(c(grad(grad(c(fn))))), grad(c(grad(c(grad(c(fn)))))))),
    )


def _graph_nodes(root):
    seen, queue = {root}, collections.deque([root])
    while queue:
        node = queue.popleft()
        yield node
        for fn, _ in node.next_functions:
            if fn is not None and fn not in seen:
                seen.add(fn)
                queue.append(fn)


class _Marker:
    pass


def _nodes_left_alive(lib, fn):
    """The names of the graph nodes of ``fn``'s output still alive once the output is gone (no collector run)."""
    def scope():
        out = fn(lib.tensor(0.7, dtype=lib.float64, requires_grad=True))
        refs = []
        for node in _graph_nodes(out.grad_fn):
            marker = _Marker()
            marker.name = node.name()
            node.metadata["marker"] = marker
            refs.append(weakref.ref(marker))
        return refs
    enabled = gc.isenabled()
    gc.disable()
    try:
        return [r().name for r in scope() if r() is not None]
    finally:
        if enabled:
            gc.enable()


def _f(x):
    return x.sin().exp().sin()


def _g(lib):
    def g(x):
        a = x.sin().exp().sin()
        b = x.sin().exp().sin()
        lib.autograd.grad(a, x)
        lib.autograd.grad(b, x)
        return x.sin()
    return g


@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("which", ["plain", "with_grad_inside"])
def test_nested_checkpoints_give_the_plain_values_and_free_their_graphs(early_stop, which):
    results = {}
    for name, lib in LIBS.items():
        fn = _f if which == "plain" else _g(lib)
        got = []
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            for expected_fn, actual_fns in _wrappings(lib, fn):
                x = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
                expected = expected_fn(x).item()
                for actual_fn in actual_fns:
                    got.append((expected, actual_fn(x).item()))
                    assert _nodes_left_alive(lib, actual_fn) == []
        results[name] = got
    for expected, actual in results["retrograd"]:
        assert actual == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(np.array(results["retrograd"]), np.array(results["torch"]), rtol=1e-12)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_with_two_children_matches_the_plain_second_derivative(early_stop):
    a0 = np.random.RandomState(0).randn(3, 3)
    results = {}
    for name, lib in LIBS.items():
        def grad(f):
            return _grad(lib, f)

        def c(f):
            return _ck(lib, f)

        def f(x):
            return x.sin().exp().sin()

        def g(x):
            return x.cos().sin().exp()

        def hc(x):
            return c(g)(c(f)(x))

        def h(x):
            return g(f(x))

        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            a = lib.tensor(a0, requires_grad=True)
            expected = grad(_sum(grad(_sum(h))))(a)
            actual = grad(_sum(grad(_sum(c(hc)))))(a)
            actual2 = grad(_sum(c(grad(_sum(c(hc))))))(a)
            np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
            np.testing.assert_allclose(actual2.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
            for fn in (grad(c(hc)), grad(_sum(grad(_sum(c(hc))))), grad(_sum(c(grad(_sum(c(hc))))))):
                assert _nodes_left_alive(lib, fn) == []
            results[name] = actual.detach().numpy()
    np.testing.assert_allclose(results["retrograd"], results["torch"], rtol=1e-12)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_passes_non_tensor_inputs_and_outputs_through(early_stop):
    results = {}
    for name, lib in LIBS.items():
        def fn(k, a, b, f):
            return f(k * a * b.exp()), 1, "abcd"

        a = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out, one, text = lib.utils.checkpoint.checkpoint(fn, 3, a, b, _ck(lib, lambda x: x.sin()),
                                                             use_reentrant=False)
        assert (one, text) == (1, "abcd")
        actual = [g.item() for g in lib.autograd.grad(out, (a, b))]
        expected = [g.item() for g in lib.autograd.grad(fn(3, a, b, lambda x: x.sin())[0], (a, b))]
        assert actual == pytest.approx(expected, rel=1e-12)
        results[name] = actual
    assert results["retrograd"] == pytest.approx(results["torch"], rel=1e-12)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_passes_keyword_arguments(early_stop):
    results = {}
    for name, lib in LIBS.items():
        def fn(a, blah=None):
            out = a.sin().exp()
            if blah is not None:
                out = out * blah
            return out.sin().exp()

        a = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out = _ck(lib, lambda x, blah: _ck(lib, fn)(x, blah=blah))(a, blah=b)
            actual = [g.item() for g in lib.autograd.grad(out, (a, b))]
        expected = [g.item() for g in lib.autograd.grad(fn(a, blah=b), (a, b))]
        assert actual == pytest.approx(expected, rel=1e-12)
        results[name] = actual
    assert results["retrograd"] == pytest.approx(results["torch"], rel=1e-12)


@pytest.mark.parametrize("early_stop", [True, False])
def test_hook_on_the_original_graph_runs_once(early_stop):
    for lib in LIBS.values():
        counter = [0]
        a = lib.tensor(1.0, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out = lib.utils.checkpoint.checkpoint(lambda t: t.sin().cos().sin(), a, use_reentrant=False)
        out.grad_fn.next_functions[0][0].register_hook(lambda *_: counter.__setitem__(0, counter[0] + 1))
        out.backward()
        assert counter[0] == 1, lib.__name__


@pytest.mark.parametrize("early_stop", [True, False])
def test_backward_from_a_hook_inside_the_backward_recomputes_for_its_own_pass(early_stop):
    grads = {}
    for name, lib in LIBS.items():
        def fn(t):
            x = t.sin().cos()
            return x, x.sin()

        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            x, out = lib.utils.checkpoint.checkpoint(fn, a, use_reentrant=False)
        out.grad_fn.register_hook(lambda *_: x.backward(retain_graph=True))
        out.backward(retain_graph=True)
        grads[name] = a.grad.item()
    assert grads["retrograd"] == pytest.approx(grads["torch"], rel=1e-12)


def test_reentrant_checkpoint_inside_a_reentrant_checkpoint_gives_the_plain_gradients():
    x0, w0 = np.random.RandomState(1).randn(4, 3), np.random.RandomState(2).randn(3, 3)
    grads = {}
    for name, lib in LIBS.items():
        ck = lib.utils.checkpoint.checkpoint

        def inner(h, w):
            return (h @ w).tanh()

        def outer(x, w):
            return ck(inner, x.sin(), w, use_reentrant=True).exp()

        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        (ck(outer, x, w, use_reentrant=True) ** 2).sum().backward()
        got = x.grad.numpy().copy(), w.grad.numpy().copy()
        x.grad = w.grad = None
        (inner(x.sin(), w).exp() ** 2).sum().backward()
        np.testing.assert_allclose(got[0], x.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(got[1], w.grad.numpy(), rtol=1e-12)
        grads[name] = got
    for r, t in zip(grads["retrograd"], grads["torch"], strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-12)


@pytest.mark.parametrize(("outer_reentrant", "inner_reentrant"), [(True, False), (False, True)])
def test_mixed_nested_checkpoints_give_the_plain_gradients(outer_reentrant, inner_reentrant):
    x0 = np.random.RandomState(3).randn(5)
    grads = {}
    for name, lib in LIBS.items():
        ck = lib.utils.checkpoint.checkpoint

        def inner(h):
            return h.sin() * h.exp()

        def outer(x):
            return ck(inner, x.cos(), use_reentrant=inner_reentrant).tanh()

        x = lib.tensor(x0, requires_grad=True)
        ck(outer, x, use_reentrant=outer_reentrant).sum().backward()
        got = x.grad.numpy().copy()
        x.grad = None
        inner(x.cos()).tanh().sum().backward()
        np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-12)
        grads[name] = got
    np.testing.assert_allclose(grads["retrograd"], grads["torch"], rtol=1e-12)
