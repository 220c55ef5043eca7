"""Reentrant backward: backward called from inside a backward function, at any depth."""
import threading

import numpy as np
import pytest

import retrograd as rg

pytestmark = pytest.mark.timeout(60)


class Reentrant(rg.autograd.Function):
    """Identity whose backward runs a nested backward pass ``depth`` levels deep."""

    @staticmethod
    def forward(ctx, x, depth):
        ctx.depth = depth
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        if ctx.depth > 0:
            with rg.enable_grad():
                inner = rg.tensor([2.0], dtype=rg.float64, requires_grad=True)
                (Reentrant.apply(inner, ctx.depth - 1) * 3).sum().backward()
                Reentrant.inner_grads.append(inner.grad.item())
        return grad * 2, None


@pytest.mark.parametrize("depth", [1, 50, 1000])
def test_nested_backward_at_depth(depth):
    Reentrant.inner_grads = []
    x = rg.tensor([1.0], dtype=rg.float64, requires_grad=True)
    Reentrant.apply(x, depth).sum().backward()
    assert x.grad.item() == 2.0
    assert Reentrant.inner_grads == [6.0] * depth


def test_deep_nesting_moves_to_pool_threads_and_leaves_state_clean():
    engine = rg.autograd.get_default_engine()
    threads = set()

    class Where(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, depth):
            ctx.depth = depth
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            threads.add(threading.current_thread().name)
            if ctx.depth:
                with rg.enable_grad():
                    t = rg.ones(1, requires_grad=True)
                    Where.apply(t, ctx.depth - 1).sum().backward()
            return grad, None

    x = rg.ones(1, requires_grad=True)
    Where.apply(x, engine.max_recursion_depth * 3).sum().backward()
    assert "retrograd-reentrant" in threads and threading.current_thread().name in threads
    assert rg.is_grad_enabled()
    assert rg.autograd.is_checkpoint_valid()


def test_nested_tasks_preempt_outer_ones():
    order = []

    class Tag(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, name, nested):
            ctx.name, ctx.nested = name, nested
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            order.append(ctx.name)
            if ctx.nested:
                with rg.enable_grad():
                    t = rg.ones(1, requires_grad=True)
                    Tag.apply(Tag.apply(t, "inner1", False), "inner2", False).sum().backward()
            return grad, None, None

    x = rg.ones(1, requires_grad=True)
    a = Tag.apply(x, "outer_ready", False)
    r = Tag.apply(x, "outer_reentrant", True)
    (a + r).sum().backward()  # both outer nodes are ready when the nested pass starts
    assert order == ["outer_reentrant", "inner2", "inner1", "outer_ready"]


def test_child_error_propagates_through_parent():
    class Fail(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise KeyError("child failed")

    class Parent(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            with rg.enable_grad():
                t = rg.ones(1, requires_grad=True)
                Fail.apply(t).sum().backward()
            return grad

    x = rg.ones(1, requires_grad=True)
    with pytest.raises(KeyError, match="child failed"):
        Parent.apply(x).sum().backward()
    y = rg.ones(1, requires_grad=True)
    (y * 2).sum().backward()
    assert y.grad.item() == 2.0


def test_grad_inside_backward_is_reentrant_and_pruned():
    class Inner(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            with rg.enable_grad():
                xx = x.detach().requires_grad_()
                (g,) = rg.autograd.grad((xx ** 3).sum(), xx)
            return grad * g

    x = rg.tensor([1.0, 2.0], dtype=rg.float64, requires_grad=True)
    Inner.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])
