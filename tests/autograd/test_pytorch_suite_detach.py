"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), fourth part: stashed ctx, repeated double
backward, detach, type conversions, returning leaves, assignments. See test_pytorch_suite_basics.py for the method.
"""
import gc
import weakref

import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, ones, randn, same_in_both

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("stashed_in", ["forward", "backward"])
@pytest.mark.parametrize("then", ["backward", "backward_retained", "backward_retained_and_deleted"])
def test_stashed_ctx_keeps_its_saved_tensors_until_backward_frees_them(stashed_in, then):
    # PyTorch 2.13 keeps a stashed ctx's saved tensors once the graph is gone (del loss after a retained
    # backward); a backward that frees the graph frees them, and the ctx then raises "backward ... second time".
    def scenario(lib):
        stash = []

        def forward(ctx, x):
            ctx.save_for_backward(x)
            if stashed_in == "forward":
                stash.append(ctx)
            return x

        def backward(ctx, g):
            if stashed_in == "backward":
                stash.append(ctx)
            return ctx.saved_tensors
        p = lib.zeros(1, requires_grad=True)
        loss = function(lib, forward, backward, name="Id").apply(p)
        loss.backward(retain_graph=then != "backward")
        if then == "backward_retained_and_deleted":
            del loss
        return stash[0].saved_tensors, len(stash[0]._raw_saved_tensors)
    result = same_in_both(scenario)
    assert result[0] == ("RuntimeError" if then == "backward" else "ok")


def test_repeated_double_backward_of_a_custom_product():
    def scenario(lib):
        def mult1(x):
            return x.prod(dim=-1).prod(dim=-1)

        def forward(ctx, x):
            y = mult1(x)
            ctx.save_for_backward(x, y)
            return y

        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return (g * y)[:, None, None] / x
        mult2 = function(lib, forward, backward, name="Mult").apply
        x = lib.ones(2, 4, 4, dtype=lib.float64).requires_grad_()
        out = []
        for y in (mult1(x), mult2(x)):
            for _ in range(2):
                gy, = lib.autograd.grad(y[0], x, create_graph=True)
                out.append(lib.autograd.grad(gy[0, 0, 0], x, retain_graph=True)[0][0, 0, 1])
        return out
    same_in_both(scenario)


def test_custom_function_saving_its_output_is_not_freed_early():
    def scenario(lib):
        def forward(ctx, x):
            y = x ** 2
            ctx.save_for_backward(x, y)
            return y

        def backward1(ctx, g):
            x, _ = ctx.saved_tensors
            return g * 2 * x

        def backward2(ctx, g):
            x, y = ctx.saved_tensors
            return g * 2 * y / x
        x = lib.tensor(2.0, dtype=lib.float64).requires_grad_()
        out = []
        for backward in (backward1, backward2):
            f = function(lib, forward, backward, name="Double").apply
            out += [lib.autograd.gradcheck(f, x), lib.autograd.gradgradcheck(f, x)]
            y = f(x)
            lib.autograd.grad(y, x, create_graph=True)
            out.append(lib.autograd.grad(y, x)[0])
        return out
    same_in_both(scenario)


def test_detach_and_detach_in_place():
    def scenario(lib):
        x = randn(lib, 10, 10, requires_grad=True)
        y = (x + 2).detach()
        z = y * 4 + 2
        facts = [y.requires_grad, z.requires_grad]
        x = randn(lib, 10, 10, requires_grad=True, seed=1)
        y = (x * 2).detach()
        facts += [y.requires_grad, y.grad_fn]
        (x + y).sum().backward()
        facts.append(x.grad)
        x, y = randn(lib, 10, 10, requires_grad=True, seed=2), randn(lib, 10, 10, requires_grad=True, seed=3)
        a = x * 2
        (y + a).sum().backward(retain_graph=True)
        a.detach_()
        facts.append(a.requires_grad)
        (y + a).sum().backward()
        facts += [x.grad, y.grad]
        try:
            x.narrow(0, 1, 4).detach_()
        except RuntimeError as e:
            facts.append("view" in str(e))
        return facts
    same_in_both(scenario)


def test_detaching_a_base_does_not_detach_its_view():
    def scenario(lib):
        x = randn(lib, 10, 10, requires_grad=True)
        view = x.narrow(0, 1, 4)
        x.detach_()
        return x.requires_grad, view.requires_grad, view.grad_fn is not None, view._base is x
    same_in_both(scenario)


@pytest.mark.parametrize("to", ["double", "float"])
def test_gradient_through_a_dtype_conversion_has_the_leafs_dtype(to):
    def scenario(lib):
        src = lib.float32 if to == "double" else lib.float64
        v = randn(lib, 5, 5).to(src).requires_grad_()
        getattr(v, to)().sum().backward()
        return v.grad, str(v.grad.dtype).split(".")[1], type(v.grad).__name__
    same_in_both(scenario)


def test_isolated_node_of_an_integer_result():
    def scenario(lib):
        x, y = randn(lib, 5, 5, requires_grad=True), randn(lib, 5, 5, requires_grad=True, seed=1)
        a = x + y
        b = lib.max(a, 1, True)[1].repeat(1, 5).double()
        (b + a).sum().backward()
        return x.grad, y.grad
    same_in_both(scenario)


def test_numpy_of_a_tensor_requiring_grad():
    def scenario(lib):
        x = randn(lib, 2, 2, requires_grad=True)
        out = []
        try:
            x.numpy()
        except RuntimeError as e:
            out.append(str(e))
        with lib.no_grad():
            out.append(x.numpy().shape)
        out.append(randn(lib, 2, 2).numpy().shape)
        return out
    same_in_both(scenario)


def test_returned_input_hooks_see_only_its_own_use():
    def scenario(lib):
        f = function(lib, lambda ctx, a, b: (a, a + b), lambda ctx, ga, gb: (ga + gb, gb), name="Identity")
        x, y = randn(lib, 5, 5, requires_grad=True), randn(lib, 5, 5, requires_grad=True, seed=1)
        q, p = f.apply(x, y)
        seen = []
        q.register_hook(lambda g: seen.append(g))
        (q + p + x).sum().backward()
        return x.grad, y.grad, seen
    same_in_both(scenario)


def test_inplace_function_on_an_input_not_requiring_grad():
    def scenario(lib):
        def forward(ctx, a, b):
            ctx.mark_dirty(a)
            return a.add_(b), b + 2
        body = {"forward": staticmethod(forward), "backward": staticmethod(lambda ctx, ga, gb: (ga, ga + gb))}
        inplace = type("Inplace", (lib.autograd.function.InplaceFunction,), body)
        x, y = randn(lib, 5, 5), randn(lib, 5, 5, requires_grad=True, seed=1)
        fn = inplace(True)
        q, p = fn.apply(x, y)
        facts = (q is x, q.grad_fn.__class__ is fn._backward_cls, q.requires_grad)
        q.sum().backward()
        return facts, y.grad
    same_in_both(scenario)


def test_assigning_rows_of_a_tensor_from_leaves():
    def scenario(lib):
        x = randn(lib, 5, 5)
        y, z = randn(lib, 5, requires_grad=True, seed=1), randn(lib, 5, requires_grad=True, seed=2)
        x[0] = y
        x[1] = 2 * z
        facts = (x.requires_grad, x.grad_fn is not None)
        x.sum().backward()
        return facts, y.grad, z.grad
    same_in_both(scenario)


def test_assignment_under_no_grad_records_nothing():
    def scenario(lib):
        x = randn(lib, 5, 5, requires_grad=True)
        with lib.no_grad():
            x[0] = randn(lib, 5, seed=1)
        return x.requires_grad, x.grad_fn
    assert same_in_both(scenario) == ("ok", (True, None))


def test_in_place_under_no_grad_still_counts_a_version():
    def scenario(lib):
        x, y = randn(lib, 5, requires_grad=True), randn(lib, 5, requires_grad=True, seed=1)
        z = (x * y).sum()
        with lib.no_grad():
            x *= 2
        z.backward()
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and "modified by an inplace operation" in result[1]


def test_custom_function_of_an_input_under_no_grad():
    def scenario(lib):
        x = randn(lib, 5, requires_grad=True)
        with lib.no_grad():
            y = function(lib, lambda ctx, x: x, lambda ctx, g: g).apply(x)
        return x.requires_grad, y.grad_fn
    assert same_in_both(scenario) == ("ok", (True, None))


def test_a_gradient_buffered_in_three_places_is_summed_correctly():
    def scenario(lib):
        x, y = ones(lib, 5, 5, requires_grad=True), ones(lib, 5, 5, requires_grad=True)
        a, b, c = x + 2, y + 2, x + 2
        add2 = a + b + c
        for _ in range(4):
            a, b, c = a * 2, b * 2, c * 2
        (add2 + (a + b + c)).backward(ones(lib, 5, 5))
        return x.grad, y.grad
    same_in_both(scenario)


def test_saved_outputs_of_a_custom_function_recomputed_by_a_checkpoint_that_stops_early_are_freed():
    def scenario(lib):
        refs = []

        def forward(ctx, x):
            y = x.clone()
            ctx.save_for_backward(y)
            refs.append(weakref.ref(y))
            return y

        def backward(ctx, *grads):
            _ = ctx.saved_tensors
            return None
        saving = function(lib, forward, backward, name="Test")
        inp = randn(lib, 5, 5, requires_grad=True)
        gc.disable()  # freed by reference counting alone: no cycle
        try:
            out = lib.utils.checkpoint.checkpoint(saving.apply, inp, use_reentrant=False)  # early stop by default
            out.sum().backward()
            del out
            return [r() is None for r in refs]
        finally:
            gc.enable()
    assert same_in_both(scenario) == ("ok", [True, True])


def test_zeroing_a_detached_alias_of_a_saved_leaf_fails_the_backward():
    def scenario(lib):
        x = randn(lib, requires_grad=True)
        y = x ** 2  # saves x
        z = x.detach()
        z.zero_()  # the alias shares x's version counter
        y.backward()
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and "modified by an inplace operation" in result[1]
