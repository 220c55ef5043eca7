"""Memory: deep graphs, releasing saved tensors, and freeing graphs by reference counting alone."""
import gc
import sys
import weakref

import numpy as np
import pytest

import retrograd as rg


@pytest.fixture
def no_gc():
    """Disables the cycle collector, so whatever is freed is freed by reference counting."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if was_enabled:
        gc.enable()


class _Tracked(np.ndarray):
    """An ndarray that can be weakly referenced (plain ndarrays cannot)."""


@pytest.mark.timeout(600)  # about 7 s of CPU compiled; more on a loaded machine
def test_million_op_chain_backward_and_delete(no_gc, engine_loop):
    # See Note [Deleting deep graphs]. The pure-Python loop gets a fifth of the length here (20
    # times the recursion limit); scripts/stress_engine.py runs two million ops in both loops.
    assert sys.getrecursionlimit() <= 10_000  # the default limit, not a raised one
    x = rg.ones(1, requires_grad=True)
    y = x
    for _ in range(1_000_000 if engine_loop == "compiled" else 200_000):
        y = y * 1.0000001
    first = weakref.ref(y.grad_fn)
    y.sum().backward()
    # The backward multiplies by the same float32 constant, in the same order, as the forward.
    assert x.grad.item() == y.item() and y.item() > 1.02
    del y
    assert first() is None  # the whole chain was unlinked without a RecursionError or crash


class _Double(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x * 2
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors
        return grad * 2


def test_deep_chain_of_mixed_nodes_is_freed_without_recursion(no_gc):
    x = rg.ones(1, requires_grad=True)
    w = rg.ones(1, requires_grad=True)
    y = x
    for _ in range(25_000):
        y = _Double.apply((y * w).tanh() * 0.5)  # custom node, saved leaf, saved own output
    root = weakref.ref(y.grad_fn)
    del y
    assert root() is None


def test_saved_tensors_are_released_after_backward(no_gc):
    a = np.arange(3.0).view(_Tracked)
    saved = weakref.ref(a)
    x = rg.from_numpy(a)  # saved by mul for w's gradient
    del a
    w = rg.ones(3, dtype=rg.float64, requires_grad=True)
    y = (x * w).sum()
    del x
    assert saved() is not None  # only the graph holds it now
    y.backward()
    assert saved() is None
    assert w.grad.tolist() == [0.0, 1.0, 2.0]


def test_retain_graph_keeps_saved_tensors_until_the_graph_dies(no_gc):
    a = np.arange(3.0).view(_Tracked)
    saved = weakref.ref(a)
    x = rg.from_numpy(a)
    del a
    w = rg.ones(3, dtype=rg.float64, requires_grad=True)
    y = (x * w).sum()
    del x
    y.backward(retain_graph=True)
    assert saved() is not None
    del y
    assert saved() is None


def test_graph_out_of_scope_is_freed_by_refcounting(no_gc):
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def build():
        a = x.exp()  # saves its own output
        b = _Double.apply(a)  # custom node saving its own output
        c = b * x
        c.retain_grad()
        c.register_hook(lambda g: g)
        d = c[1:]  # a view
        e = c * 1
        e[:2].mul_(2)  # CopySlices
        out = (d.sum() + e.sum()) * 1
        out.grad_fn.metadata["k"] = 1
        return out, [weakref.ref(t.grad_fn) for t in (a, b, c, d, e, out)]
    out, refs = build()
    acc = weakref.ref(out.grad_fn.next_functions[0][0].next_functions[0][0])
    assert all(r() is not None for r in refs)
    del out
    assert all(r() is None for r in refs)
    assert acc() is None


def test_graph_is_freed_after_backward(no_gc):
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = _Double.apply(x.tanh()).sum()
    ref = weakref.ref(y.grad_fn)
    y.backward()
    del y
    assert ref() is None


def test_saved_output_holds_no_cycle(no_gc):
    x = rg.tensor([1.0], requires_grad=True)
    y = x.exp()
    node = weakref.ref(y.grad_fn)
    out = weakref.ref(y)
    del y
    assert node() is None and out() is None


def test_no_cycle_between_parameter_and_grad_with_create_graph(no_gc):
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    grad_graph = weakref.ref(x.grad.grad_fn)
    param = weakref.ref(x)
    del x
    assert param() is None and grad_graph() is None


def test_leaf_is_freed_while_its_graph_lives(no_gc):
    x = rg.ones(2, requires_grad=True)
    y = x * 2
    ref = weakref.ref(x)
    del x
    assert ref() is None and y.grad_fn.next_functions[0][0].variable is None
