"""Custom Functions against PyTorch: the same scenario, run with retrograd and with torch, behaves the same.

Each scenario takes the library (``rg`` or ``torch``) and returns what it observed; errors are
compared by type and first sentence. See Note [Outputs of a custom Function] in function.py.
"""
import gc
import re
import threading
import weakref

import numpy as np
import pytest

import retrograd as rg
from errors_like_torch import outcome, same_in_both

torch = pytest.importorskip("torch")


def leaf(lib, values=(1.0, 2.0, 3.0)):
    return lib.tensor(list(values), dtype=lib.float64, requires_grad=True)


def fn(lib, forward, backward=None, setup_context=None, name="Fn", **extra):
    """A custom Function class of ``lib`` made of these static methods."""
    attrs = {"forward": staticmethod(forward), **{k: staticmethod(v) for k, v in extra.items()}}
    if backward is not None:
        attrs["backward"] = staticmethod(backward)
    if setup_context is not None:
        attrs["setup_context"] = staticmethod(setup_context)
    return type(name, (lib.autograd.Function,), attrs)


# -- outputs: non-tensors, None, inputs returned as they are, views ---------------------------
def test_non_tensor_outputs_are_returned_as_they_are_and_get_none_gradients():
    def scenario(lib):
        seen = []

        def backward(ctx, g, g_int, g_none, g_str):
            seen.append((g.tolist(), g_int, g_none, g_str))
            return g * 2
        x = leaf(lib)
        out = fn(lib, lambda ctx, x: (x * 2, 3, None, "s"), backward).apply(x)
        kinds = [type(o).__name__ for o in out]
        out[0].sum().backward()
        return kinds, out[1:], seen, x.grad.tolist()
    assert same_in_both(scenario)[1][2] == [([1.0, 1.0, 1.0], None, None, None)]


def test_undefined_gradient_of_a_non_tensor_output_stays_none_with_materialize_grads():
    def scenario(lib):
        seen = []

        def backward(ctx, g, g2):
            seen.append(g2)
            return g
        x = leaf(lib)
        y, k = fn(lib, lambda ctx, x: (x * 2, None), backward).apply(x)
        y.sum().backward()
        return k, seen, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", (None, [None], [1.0, 1.0, 1.0]))


def test_forward_returning_none_returns_none():
    assert same_in_both(lambda lib: fn(lib, lambda ctx, x: None, lambda ctx, g: g).apply(leaf(lib))) == ("ok", None)


def test_input_returned_as_is_is_a_new_view_of_it_with_the_functions_history():
    def scenario(lib):
        x = leaf(lib)
        a = x * 1
        y = fn(lib, lambda ctx, x: x, lambda ctx, g: g * 3, name="Same").apply(a)
        facts = (y is a, y._base is a, y.grad_fn.name(), a.grad_fn.name())
        y.sum().backward()
        return facts, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", ((False, True, "SameBackward", "MulBackward0"), [3.0, 3.0, 3.0]))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_input_returned_as_is_without_recording_is_a_new_tensor_without_grad(requires_grad):
    def scenario(lib):
        x = lib.ones(2, requires_grad=requires_grad)
        with lib.no_grad():
            y = fn(lib, lambda ctx, x: x, lambda ctx, g: g).apply(x)
        return y is x, y.requires_grad, y.grad_fn is None, y._version
    assert same_in_both(scenario) == ("ok", (False, False, True, 0))


def test_returned_view_of_an_input_is_a_view_with_the_functions_backward():
    def scenario(lib):
        def backward(ctx, g):
            r = lib.zeros(3, dtype=g.dtype)
            r[:2] = g
            return r * 5
        x = leaf(lib)
        y = fn(lib, lambda ctx, x: x[:2], backward, name="View").apply(x)
        facts = (y._base is x, y.grad_fn.name(), y.requires_grad)
        y.sum().backward()
        return facts, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", ((True, "ViewBackward", True), [5.0, 5.0, 0.0]))


@pytest.mark.parametrize("forward", [lambda ctx, x: x[:2], lambda ctx, x: x.view(3), lambda ctx, x: x],
                         ids=["slice", "view", "input_as_is"])
@pytest.mark.parametrize("nonleaf", [False, True])
def test_inplace_on_a_returned_view_raises(forward, nonleaf):
    def scenario(lib):
        x = leaf(lib)
        y = fn(lib, forward, lambda ctx, g: g, name="View").apply(x * 1 if nonleaf else x)
        y.mul_(2)
    ours = same_in_both(scenario)
    assert ours[0] == "RuntimeError" and ours[1] == "Output 0 of View is a view and is being modified inplace."


def test_inplace_on_a_returned_view_is_allowed_under_no_grad():
    def scenario(lib):
        x = leaf(lib) * 1
        y = fn(lib, lambda ctx, x: x[:2], lambda ctx, g: g).apply(x)
        with lib.no_grad():
            y.mul_(2)
        return x.tolist()
    assert same_in_both(scenario) == ("ok", [2.0, 4.0, 3.0])


def test_inplace_on_one_of_several_returned_views_raises():
    def scenario(lib):
        y, _ = fn(lib, lambda ctx, x: (x[:1], x[1:]), lambda ctx, g, g2: lib.cat([g, g2]), name="Two").apply(
            leaf(lib) * 1)
        y.mul_(2)
    ours = same_in_both(scenario)
    assert ours == ("RuntimeError", "Output 0 of Two is a view and is being modified inplace.")
    x = rg.ones(3, requires_grad=True) * 1
    y, _ = fn(rg, lambda ctx, x: (x[:1], x[1:]), lambda ctx, g, g2: rg.cat([g, g2]), name="Two").apply(x)
    with pytest.raises(RuntimeError, match="This view is the output of a function that returns multiple views"):
        y.mul_(2)


# -- mark_dirty -------------------------------------------------------------------------------
def _double_inplace(ctx, x):
    x.mul_(2)
    ctx.mark_dirty(x)
    return x


def test_mark_dirty_rebases_the_input_and_moves_retain_grad():
    def scenario(lib):
        x = leaf(lib)
        a = x * 1
        a.retain_grad()
        y = fn(lib, _double_inplace, lambda ctx, g: g * 2, name="Dirty").apply(a)
        facts = (y is a, a.grad_fn.name(), a.tolist())
        y.sum().backward()
        return facts, a.grad.tolist(), x.grad.tolist()
    assert same_in_both(scenario)[1][0] == (True, "DirtyBackward", [2.0, 4.0, 6.0])


def test_mark_dirty_on_a_view_rebases_its_base():
    def scenario(lib):
        x = leaf(lib)
        a = x * 1
        other = a[1:]  # another view of the base sees the new values and their history
        y = fn(lib, _double_inplace, lambda ctx, g: g * 2, name="Dirty").apply(a[:2])
        facts = (a.tolist(), y.requires_grad, other.requires_grad)
        ga, = lib.autograd.grad(a.sum(), x, retain_graph=True)
        go, = lib.autograd.grad(other.sum(), x, retain_graph=True)
        gy, = lib.autograd.grad((y * lib.tensor([1.0, 10.0], dtype=lib.float64)).sum(), x)
        return facts, ga.tolist(), go.tolist(), gy.tolist()
    assert same_in_both(scenario) == ("ok", (([2.0, 4.0, 3.0], True, True), [2.0, 2.0, 1.0], [0.0, 2.0, 1.0],
                                             [2.0, 20.0, 0.0]))


def test_mark_dirty_on_a_view_passes_gradcheck():
    class ScaleInplace(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            x.mul_(w)
            ctx.mark_dirty(x)
            ctx.save_for_backward(w)
            return x

        @staticmethod
        def backward(ctx, g):
            w, = ctx.saved_tensors
            return g * w, None

    def f(base):
        a = base * 1
        ScaleInplace.apply(a[1:3], rg.tensor([2.0, 3.0], dtype=rg.float64))
        return a
    assert rg.autograd.gradcheck(f, (rg.randn(4, dtype=rg.float64, requires_grad=True),))


def test_mark_dirty_on_a_view_with_several_outputs_raises():
    def scenario(lib):
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x * 2
        fn(lib, forward, lambda ctx, g, g2: g).apply((leaf(lib) * 1)[:2])
    assert same_in_both(scenario)[0] == "RuntimeError"


@pytest.mark.parametrize("view", [False, True])
def test_mark_dirty_on_a_leaf_requiring_grad_raises(view):
    def scenario(lib):
        x = leaf(lib)
        fn(lib, _double_inplace, lambda ctx, g: g).apply(x[:2] if view else x)
    ours = same_in_both(scenario)
    assert ours[0] == "RuntimeError" and "leaf Variable that requires grad" in ours[1]


@pytest.mark.parametrize("grad", ["enabled", "no_grad", "no_input_requires_grad"])
def test_mark_dirty_of_a_tensor_not_returned_raises(grad):
    def scenario(lib):
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1
        x = lib.ones(2) if grad == "no_input_requires_grad" else leaf(lib) * 1
        with lib.set_grad_enabled(grad != "no_grad"):
            fn(lib, forward, lambda ctx, g: g).apply(x)
    assert same_in_both(scenario) == (
        "RuntimeError", "Some elements marked as dirty during the forward method were not returned as output.")


def test_mark_dirty_of_a_leaf_under_no_grad_returns_it_modified_without_grad():
    def scenario(lib):
        x = leaf(lib)
        with lib.no_grad():
            y = fn(lib, _double_inplace, lambda ctx, g: g).apply(x)
        return y.tolist(), y.requires_grad, x.tolist(), x.requires_grad
    assert same_in_both(scenario) == ("ok", ([2.0, 4.0, 6.0], False, [2.0, 4.0, 6.0], True))


def test_mark_dirty_of_an_input_not_requiring_grad_gives_it_the_functions_history():
    def scenario(lib):
        def forward(ctx, x, y):
            x.add_(y)
            ctx.mark_dirty(x)
            return x
        w = leaf(lib)
        x = lib.zeros(3, dtype=lib.float64)
        out = fn(lib, forward, lambda ctx, g: (g, g * 2), name="AddInplace").apply(x, w)
        facts = (out is x, x.requires_grad, x.grad_fn.name())
        out.sum().backward()
        return facts, w.grad.tolist()
    assert same_in_both(scenario) == ("ok", ((True, True, "AddInplaceBackward"), [2.0, 2.0, 2.0]))


@pytest.mark.parametrize("mark", ["mark_dirty", "mark_non_differentiable"])
def test_marking_a_non_tensor_raises(mark):
    def scenario(lib):
        def forward(ctx, x):
            getattr(ctx, mark)(3)
            return x * 1
        fn(lib, forward, lambda ctx, g: g).apply(leaf(lib))
    ours, theirs = outcome(scenario, rg), outcome(scenario, torch)
    # PyTorch's message stops after "argument " (its formatting drops the rest): ours goes on with what it was
    assert ours[0] == theirs[0] == "RuntimeError" and ours[1].startswith(theirs[1]) and ours[1].endswith("int")


# -- setup_context, keyword arguments, needs_input_grad ----------------------------------------
def test_setup_context_receives_inputs_and_output_and_sets_up_backward():
    def scenario(lib):
        seen = []

        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.save_for_backward(x, output)
            seen.append((len(inputs), k, output.tolist(), ctx.needs_input_grad, ctx.saved_tensors))

        def backward(ctx, g):
            x, out = ctx.saved_tensors
            return g * ctx.k + 0 * x * out, None
        x = leaf(lib)
        y = fn(lib, lambda x, k: x * k, backward, setup_context).apply(x, 2.0)
        y.sum().backward()
        return seen, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", ([(2, 2.0, [2.0, 4.0, 6.0], (True, False), ())], [2.0, 2.0, 2.0]))


@pytest.mark.parametrize("call", ["default", "positional", "keyword", "tensor_keyword"])
def test_apply_with_keyword_arguments_binds_them_to_forward_for_setup_context(call):
    def scenario(lib):
        seen = []

        def setup_context(ctx, inputs, output):
            seen.append((len(inputs), ctx.needs_input_grad))

        def forward(x, k=1.0):
            return x * k
        f = fn(lib, forward, lambda ctx, g: (g, None), setup_context)
        x = leaf(lib)
        args, kwargs = {"default": ((x,), {}), "positional": ((x, 3.0), {}), "keyword": ((x,), {"k": 3.0}),
                        "tensor_keyword": ((x,), {"k": leaf(lib)})}[call]
        y = f.apply(*args, **kwargs)
        y.sum().backward()
        return seen, y.tolist(), x.grad.tolist()
    ours = same_in_both(scenario)
    assert ours[1][0][0][0] == 2


@pytest.mark.parametrize("tensor_k", [False, True])
def test_apply_with_keyword_arguments_passes_them_to_a_forward_taking_ctx_as_inputs(tensor_k):
    def scenario(lib):
        seen = []

        def forward(ctx, x, k=1.0):
            seen.append(ctx.needs_input_grad)
            ctx.k = k
            return x * k
        x = leaf(lib)
        k = leaf(lib) if tensor_k else 2.0
        y = fn(lib, forward, lambda ctx, g: (g * ctx.k, None)).apply(x, k=k)
        edges = len(y.grad_fn.next_functions)
        y.sum().backward()
        return seen, edges, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", ([(True, tensor_k)], 2 if tensor_k else 1,
                                             [1.0, 2.0, 3.0] if tensor_k else [2.0, 2.0, 2.0]))


def test_backward_of_a_forward_with_keyword_arguments_returns_a_gradient_per_argument():
    def scenario(lib):
        def forward(ctx, x, k=1.0):
            return x * k
        fn(lib, forward, lambda ctx, g: g).apply(leaf(lib), k=2.0).sum().backward()
    assert same_in_both(scenario) == ("RuntimeError", "function FnBackward returned an incorrect number of gradients "
                                      "(expected 2, got 1)")


def test_setup_context_with_a_forward_taking_ctx_raises():
    def scenario(lib):
        fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g, lambda ctx, inputs, output: None).apply(leaf(lib))
    assert same_in_both(scenario) == ("TypeError", "missing a required argument: 'x'")


def test_saved_tensors_is_empty_inside_forward():
    def scenario(lib):
        seen = []

        def forward(ctx, x):
            ctx.save_for_backward(x)
            seen.append(ctx.saved_tensors)
            return x * 2
        fn(lib, forward, lambda ctx, g: g).apply(leaf(lib))
        return seen
    assert same_in_both(scenario) == ("ok", [()])


def test_setup_context_saving_an_input_returned_as_is_raises():
    def scenario(lib):
        fn(lib, lambda x: x, lambda ctx, g: g, lambda ctx, inputs, output: ctx.save_for_backward(output)).apply(
            leaf(lib))
    assert same_in_both(scenario) == (
        "RuntimeError", "An input that has been returned as-is as output is being saved for backward.")


def test_saving_an_input_returned_as_is_without_setup_context_saves_the_input():
    def scenario(lib):
        seen = []

        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x

        def backward(ctx, g):
            x, = ctx.saved_tensors
            seen.append((x.grad_fn is None, x.requires_grad))
            return g * x
        x = leaf(lib)
        fn(lib, forward, backward).apply(x).sum().backward()
        return seen, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", ([(True, True)], [1.0, 2.0, 3.0]))


@pytest.mark.parametrize("grad_enabled", [True, False])
def test_needs_input_grad_per_input_in_and_out_of_no_grad(grad_enabled):
    def scenario(lib):
        seen = []

        def forward(ctx, a, b, c):
            seen.append(ctx.needs_input_grad)
            return a * 1
        with lib.set_grad_enabled(grad_enabled):
            y = fn(lib, forward, lambda ctx, g: (g, None, None)).apply(leaf(lib), lib.ones(1), 3)
        return seen, y.requires_grad
    assert same_in_both(scenario) == ("ok", ([(True, False, False)], grad_enabled))


# -- materialize_grads, mark_non_differentiable ------------------------------------------------
@pytest.mark.parametrize("materialize", [True, False])
def test_materialize_grads_decides_whether_unused_outputs_get_zeros_or_none(materialize):
    def scenario(lib):
        seen = []

        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        def backward(ctx, g1, g2):
            seen.append(None if g2 is None else g2.tolist())
            return g1 * 2
        x = leaf(lib)
        a, _ = fn(lib, forward, backward).apply(x)
        a.sum().backward()
        return seen, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", ([[0.0, 0.0, 0.0] if materialize else None], [2.0, 2.0, 2.0]))


@pytest.mark.parametrize("materialize", [True, False])
def test_non_differentiable_outputs_do_not_require_grad_and_get_zeros_or_none(materialize):
    def scenario(lib):
        seen = []

        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            a, mask, c = x * 2, x > 1, x * 5
            ctx.mark_non_differentiable(mask, c)
            return a, mask, c

        def backward(ctx, g1, g2, g3):
            seen.append(tuple(None if g is None else (str(g.dtype).split(".")[1], g.tolist()) for g in (g2, g3)))
            return g1 * 2
        x = leaf(lib)
        a, mask, c = fn(lib, forward, backward).apply(x)
        facts = (a.requires_grad, mask.requires_grad, c.requires_grad, c.grad_fn is None)
        a.sum().backward()
        return facts, seen, x.grad.tolist()
    zeros = (("bool", [False] * 3), ("float64", [0.0] * 3)) if materialize else (None, None)
    assert same_in_both(scenario) == ("ok", ((True, False, False, True), [zeros], [2.0, 2.0, 2.0]))


def test_non_differentiable_input_returned_is_a_detached_alias():
    def scenario(lib):
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x
        x = leaf(lib) * 1
        y = fn(lib, forward, lambda ctx, g: g).apply(x)
        return y is x, y.requires_grad, x.requires_grad
    assert same_in_both(scenario) == ("ok", (False, False, True))


def test_integer_output_does_not_require_grad():
    def scenario(lib):
        seen = []

        def backward(ctx, g1, g2):
            seen.append((g1.tolist(), g2.tolist()))
            return g2
        x = leaf(lib)
        idx, y = fn(lib, lambda ctx, x: ((x > 1).long(), x * 2), backward).apply(x)
        facts = (idx.requires_grad, idx.grad_fn is None)
        y.sum().backward()
        return facts, seen, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", ((False, True), [([0, 0, 0], [1.0, 1.0, 1.0])], [1.0, 1.0, 1.0]))


def test_output_that_forward_made_require_grad_gets_the_functions_history():
    def scenario(lib):
        y = fn(lib, lambda ctx, x: x.detach().requires_grad_(), lambda ctx, g: g, name="Req").apply(leaf(lib))
        return y.requires_grad, y.grad_fn.name(), y.is_leaf
    assert same_in_both(scenario) == ("ok", (True, "ReqBackward", False))


def test_one_output_returned_twice_is_one_tensor_with_one_slot():
    def scenario(lib):
        def forward(ctx, x):
            y = x * 2
            return y, y
        x = leaf(lib)
        a, b = fn(lib, forward, lambda ctx, g1, g2: g1 + g2 * 10).apply(x)
        facts = (a is b, a.grad_fn is b.grad_fn)
        (a.sum() + b.sum()).backward()
        return facts, x.grad.tolist()
    assert same_in_both(scenario)[0] == "ok"


# -- save_for_backward, save_for_forward ---------------------------------------------------------
def _save_all(ctx, x):
    mid = x * 2
    out = mid * 3
    ctx.save_for_backward(x, mid, out, None)
    ctx.mid = mid
    return out


def test_save_for_backward_of_an_input_an_intermediate_an_output_and_none():
    def scenario(lib):
        seen = []

        def backward(ctx, g):
            x, mid, out, none = ctx.saved_tensors
            seen.append((x.requires_grad, mid.requires_grad, out.requires_grad, none, out.grad_fn is ctx,
                         mid.grad_fn is None))
            return g * 6
        x = leaf(lib)
        y = fn(lib, _save_all, backward).apply(x)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return seen, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", ([(True, False, True, None, True, True)] * 2, [12.0] * 3))


def test_saved_tensors_after_backward_raises():
    def scenario(lib):
        y = fn(lib, _save_all, lambda ctx, g: g * 6).apply(leaf(lib))
        y.sum().backward()
        return y.grad_fn.saved_tensors
    assert same_in_both(scenario) == ("RuntimeError", "Trying to backward through the graph a second time (or "
                                      "directly access saved tensors after they have already been freed).")


@pytest.mark.parametrize("modified", ["intermediate", "output", "input"])
def test_saved_tensor_modified_in_place_raises_in_backward(modified):
    def scenario(lib):
        def backward(ctx, g):
            ctx.saved_tensors  # noqa: B018 - unpacking is what checks the versions
            return g * 6
        x = leaf(lib)
        a = x * 1
        y = fn(lib, _save_all, backward).apply(a)
        {"intermediate": y.grad_fn.mid, "output": y, "input": a}[modified].add_(1)
        y.sum().backward()
    ours, theirs = outcome(scenario, rg), outcome(scenario, torch)
    assert ours[0] == theirs[0] == "RuntimeError"
    assert ours[1].split(":")[0] == theirs[1].split(":")[0] == (
        "one of the variables needed for gradient computation has been modified by an inplace operation")


def test_save_for_backward_of_a_non_tensor_raises():
    def scenario(lib):
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2
        fn(lib, forward, lambda ctx, g: g).apply(leaf(lib))
    assert same_in_both(scenario)[0] == "TypeError"


def test_save_for_forward_keeps_tensors_and_rejects_non_tensors():
    def scenario(lib):
        kept = []

        def forward(ctx, x):
            ctx.save_for_forward(x, None)
            kept.append(len(ctx.saved_for_forward))
            return x * 2
        x = leaf(lib)
        fn(lib, forward, lambda ctx, g: g * 2).apply(x).sum().backward()

        def bad(ctx, x):
            ctx.save_for_forward(x, 3)
            return x * 2
        return kept, x.grad.tolist(), outcome(lambda lib: fn(lib, bad, lambda ctx, g: g).apply(leaf(lib)), lib)
    assert same_in_both(scenario) == ("ok", ([2], [2.0] * 3, (
        "AssertionError", "save_for_forward expects all arguments to be tensors; you should save non-tensors as "
                          "attributes on ctx.")))


# -- double backward, once_differentiable -------------------------------------------------------
def _square(lib, once=False):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
    once_differentiable = (rg.autograd.function if lib is rg else torch.autograd.function).once_differentiable
    return fn(lib, forward, once_differentiable(backward) if once else backward, name="Square")


def test_double_backward_through_a_custom_function_with_create_graph():
    def scenario(lib):
        x = leaf(lib)
        g, = lib.autograd.grad((_square(lib).apply(x) ** 2).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return g.tolist(), gg.tolist()
    assert same_in_both(scenario) == ("ok", ([4.0, 32.0, 108.0], [12.0, 48.0, 108.0]))
    x = rg.randn(3, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(_square(rg).apply, (x,))
    assert rg.autograd.gradgradcheck(_square(rg).apply, (x,))


def test_once_differentiable_raises_when_its_result_is_differentiated():
    def scenario(lib):
        x = leaf(lib)
        # the gradient reaching the backward, 2 * y, requires grad: so do its results
        g, = lib.autograd.grad((_square(lib, once=True).apply(x) ** 2).sum(), x, create_graph=True)
        return g.tolist(), g.requires_grad, outcome(lambda _: g.sum().backward(), lib)
    assert same_in_both(scenario) == ("ok", ([4.0, 32.0, 108.0], True, (
        "RuntimeError", "trying to differentiate twice a function that was marked with @once_differentiable")))


def test_once_differentiable_result_does_not_lead_to_the_incoming_gradients_history():
    def scenario(lib):
        x, w = leaf(lib), leaf(lib)
        g, = lib.autograd.grad(_square(lib, once=True).apply(x), x, grad_outputs=w * 1, create_graph=True)
        return g.tolist(), lib.autograd.grad(g.sum(), w)
    assert same_in_both(scenario) == ("RuntimeError", "The differentiated Tensor at index 0 appears to not have been "
                                      "used in the graph.")


def test_once_differentiable_without_create_graph_gives_plain_gradients():
    def scenario(lib):
        x = leaf(lib)
        g, = lib.autograd.grad(_square(lib, once=True).apply(x).sum(), x)
        return g.tolist(), g.requires_grad
    assert same_in_both(scenario) == ("ok", ([2.0, 4.0, 6.0], False))


# -- what backward returns ----------------------------------------------------------------------
@pytest.mark.parametrize("grads", ["too_few", "too_many", "wrong_shape", "for_a_non_tensor", "int",
                                   "broadcastable", "float32", "int_dtype", "none"])
def test_what_backward_returns_is_checked_against_the_inputs(grads):
    def scenario(lib):
        def backward(ctx, g):
            ones = lib.ones(3, dtype=lib.float64)
            return {"too_few": lambda: ones, "too_many": lambda: (ones, None, ones),
                    "wrong_shape": lambda: (lib.ones(4, dtype=lib.float64), None),
                    "for_a_non_tensor": lambda: (ones, ones), "int": lambda: (3, None),
                    "broadcastable": lambda: (lib.ones(2, 3, dtype=lib.float64), None),
                    "float32": lambda: (lib.ones(3), None), "int_dtype": lambda: (lib.ones(3, dtype=lib.int64), None),
                    "none": lambda: (None, None)}[grads]()
        x = leaf(lib)
        fn(lib, lambda ctx, x, k: x * k, backward, name="Ret").apply(x, 2.0).sum().backward()
        return None if x.grad is None else (str(x.grad.dtype).split(".")[1], x.grad.tolist())
    result = same_in_both(scenario)
    if grads == "int":
        assert result == ("RuntimeError", "expected Variable or None (got int)")


def test_gradient_on_another_device_than_its_input_raises():
    def backward(ctx, g):
        return rg.ones(3, dtype=rg.float64, device="fake")
    x = leaf(rg)
    with pytest.raises(RuntimeError, match=r"^Function FnBackward returned an invalid gradient at index 0 - "
                                           r"expected device cpu but got fake"):
        fn(rg, lambda ctx, x: x * 1, backward).apply(x).sum().backward()
    y = leaf(torch)
    with pytest.raises(RuntimeError, match=r"^Function FnBackward returned an invalid gradient at index 0 - "
                                           r"expected device cpu but got meta"):
        fn(torch, lambda ctx, x: x * 1, lambda ctx, g: torch.ones(3, dtype=torch.float64, device="meta")).apply(
            y).sum().backward()


# -- vjp, names ---------------------------------------------------------------------------------
def test_vjp_is_another_name_for_backward():
    def scenario(lib):
        x = leaf(lib)
        fn(lib, lambda ctx, x: x * 2, None, vjp=lambda ctx, g: g * 2).apply(x).sum().backward()
        return lib.autograd.Function.vjp is lib.autograd.Function.backward, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", (True, [2.0, 2.0, 2.0]))


@pytest.mark.parametrize("defined", ["both", "neither"])
def test_defining_both_or_neither_of_backward_and_vjp_raises_in_backward(defined):
    def scenario(lib):
        extra = {"vjp": lambda ctx, g: g} if defined == "both" else {}
        backward = (lambda ctx, g: g) if defined == "both" else None
        y = fn(lib, lambda ctx, x: x * 2, backward, **extra).apply(leaf(lib))
        y.sum().backward()
    assert same_in_both(scenario) == {
        "both": ("RuntimeError", "Implementing both 'backward' and 'vjp' for a custom Function is not allowed."),
        "neither": ("NotImplementedError", "You must implement either the backward or vjp method for your custom "
                                           "autograd.Function to use it with backward mode AD.")}[defined]


def test_backward_node_is_named_after_the_function_and_knows_its_class():
    def scenario(lib):
        f = _square(lib)
        node = f.apply(leaf(lib)).grad_fn
        return (type(node).__name__, node.name(), node._forward_cls is f, type(node).__mro__[1].__name__,
                isinstance(node, lib.autograd.function.BackwardCFunction))
    assert same_in_both(scenario) == ("ok", ("SquareBackward", "SquareBackward", True, "BackwardCFunction", True))


# -- no_grad, checkpointing, the fake device --------------------------------------------------------
def test_custom_function_under_no_grad_records_nothing_and_still_runs_forward():
    def scenario(lib):
        x = leaf(lib)
        with lib.no_grad():
            y = _square(lib).apply(x)
        return y.tolist(), y.requires_grad, y.grad_fn is None
    assert same_in_both(scenario) == ("ok", ([1.0, 4.0, 9.0], False, True))


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_custom_function_inside_checkpoint_is_recomputed_with_the_same_gradients(use_reentrant):
    def scenario(lib):
        calls = []
        square = _square(lib)

        def segment(x):
            calls.append(lib.is_grad_enabled())
            return square.apply(x).sin()
        x = leaf(lib)
        y = lib.utils.checkpoint.checkpoint(segment, x, use_reentrant=use_reentrant)
        y.sum().backward()
        return len(calls), [round(v, 12) for v in x.grad.tolist()]
    assert same_in_both(scenario)[1][0] == 2


def test_custom_function_on_the_fake_device_runs_backward_on_its_worker():
    seen = []

    def backward(ctx, g):
        x, = ctx.saved_tensors
        seen.append((threading.current_thread().name, g.device.type))
        return 2 * x * g

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    x = rg.tensor([1.0, 2.0], dtype=rg.float64, requires_grad=True)
    y = fn(rg, forward, backward).apply(x.to("fake"))
    assert y.device.type == "fake" and y.grad_fn.name() == "FnBackward"
    y.to("cpu").sum().backward()
    assert seen == [("retrograd-fake:0", "fake")] and x.grad.tolist() == [2.0, 4.0]
    np.testing.assert_array_equal(x.grad.numpy(), np.array([2.0, 4.0]))


def test_custom_function_on_the_fake_device_double_backward_matches_gradgradcheck():
    def square_on_fake(x):
        return _square(rg).apply(x.to("fake")).to("cpu")
    x = rg.randn(3, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(square_on_fake, (x,))
    assert rg.autograd.gradgradcheck(square_on_fake, (x,))


# -- PyTorch's own scenarios (test/test_autograd.py), run with both libraries ----------------------
@pytest.mark.parametrize("inplace", [False, True])
def test_one_output_returned_twice_passes_gradcheck_and_gradgradcheck(inplace):
    def scenario(lib):
        def forward(ctx, x):
            if inplace:
                x.mul_(2)
                ctx.mark_dirty(x)
                out = x
            else:
                out = x * 2
            return out, out
        f = fn(lib, forward, lambda ctx, g1, g2: g1 * 2 + g2 * 2)

        def double(x):
            a, b = f.apply(x.clone())
            assert a is b
            return a + b
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(double, (x,)), lib.autograd.gradgradcheck(double, (x,))
    assert same_in_both(scenario) == ("ok", (True, True))


def test_materialize_non_diff_grads_false_gives_none_for_non_differentiable_outputs():
    def scenario(lib):
        seen = []

        def forward(ctx, x):
            out0, out1 = x.clone(), x.clone()
            ctx.mark_non_differentiable(out1)
            ctx._materialize_non_diff_grads = False
            return out0, out1

        def backward(ctx, g0, g1):
            seen.append(g1)
            return g0
        x = lib.tensor(1.0, requires_grad=True)
        fn(lib, forward, backward).apply(x)[0].backward()
        return seen, x.grad.item()
    assert same_in_both(scenario) == ("ok", ([None], 1.0))


def _non_tensor_io(lib):
    def forward(ctx, t1, t2, scale, t3):
        t4 = t1 + t2 * t3
        t5 = t1 * t2 + t3
        t4 *= scale
        t5 *= scale
        ctx.scale = scale
        ctx.save_for_backward(t1, t2, t3)
        return scale, t4, None, True, t5, "bar", t1

    def backward(ctx, *grads):
        assert len(grads) == 7 and all(grads[i] is None for i in (0, 2, 3, 5))
        scale = ctx.scale
        var1, var2, var3 = ctx.saved_tensors
        return (grads[1] * scale + grads[4] * var2 * scale + grads[6],
                grads[1] * var3 * scale + grads[4] * var1 * scale,
                None,
                grads[1] * var2 * scale + grads[4] * scale)
    once = (rg.autograd.function if lib is rg else torch.autograd.function).once_differentiable
    return fn(lib, forward, once(backward))


@pytest.mark.parametrize("requires_grad", [True, False])
def test_non_tensor_inputs_and_outputs_mixed_with_tensors(requires_grad):
    def scenario(lib):
        values = np.linspace(0.1, 1.0, 10)
        t1 = lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)
        t2 = lib.tensor(values[::-1].copy(), dtype=lib.float64, requires_grad=requires_grad)
        t3 = lib.tensor(values * 2, dtype=lib.float64)
        f = _non_tensor_io(lib)
        res = f.apply(t1, t2, 3, t3)
        facts = (res[0], res[2], res[3], res[5], res[6] is t1, [r.requires_grad for r in (res[1], res[4], res[6])])
        if not requires_grad:
            return facts
        lib.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
        grads = (t1.grad.tolist(), t2.grad.tolist(), t3.grad)

        def three(a, b, c):
            r = f.apply(a, b, 3, c)
            return r[1], r[4], r[6]
        return facts, grads, lib.autograd.gradcheck(three, (t1, t2, t3))
    same_in_both(scenario)


def test_once_differentiable_error_node_leads_to_fresh_leaves_and_none_where_no_gradient():
    def scenario(lib):
        def forward(ctx, t1, k, t2):
            ctx.k = k
            ctx.save_for_backward(t1, t2)
            return t1 + k * t2 + t1 * t2

        def backward(ctx, g):
            assert not lib.is_grad_enabled()
            t1, t2 = ctx.saved_tensors
            return g + g * t2, None, g * ctx.k + g * t1
        once = (rg.autograd.function if lib is rg else torch.autograd.function).once_differentiable
        f = fn(lib, forward, once(backward))
        x = lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([[3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        gx, gy = lib.autograd.grad(f.apply(x, 2, y).sum(), (x, y), lib.ones((), dtype=lib.float64,
                                                                            requires_grad=True), create_graph=True)
        node = gx.grad_fn
        while not node.name().endswith("Error"):
            node = node.next_functions[0][0]
        return ([None if n is None else type(n).__name__ for n, _ in node.next_functions], gx.tolist(), gy.tolist())
    ours = same_in_both(scenario)
    assert ours[1][0] == ["AccumulateGrad", None, "AccumulateGrad"]


def test_input_returned_as_is_gets_hooks_and_gradients_of_its_own_uses():
    def scenario(lib):
        seen = []
        x = leaf(lib)
        y = lib.tensor([1.0, 1.0, 1.0], dtype=lib.float64, requires_grad=True)
        q, p = fn(lib, lambda ctx, a, b: (a, a + b), lambda ctx, ga, gb: (ga + gb, gb)).apply(x, y)
        q.register_hook(lambda g: seen.append(g.tolist()))
        (q + p + x).sum().backward()
        return seen, x.grad.tolist(), y.grad.tolist()
    assert same_in_both(scenario) == ("ok", ([[1.0, 1.0, 1.0]], [3.0, 3.0, 3.0], [1.0, 1.0, 1.0]))


def test_dirty_input_not_requiring_grad_is_returned_with_the_backward_class_as_grad_fn():
    def scenario(lib):
        def forward(ctx, a, b):
            ctx.mark_dirty(a)
            return a.add_(b), b + 2
        f = fn(lib, forward, lambda ctx, ga, gb: (ga, ga + gb))
        x = lib.zeros(3, dtype=lib.float64)
        y = leaf(lib)
        q, p = f.apply(x, y)
        facts = (q is x, type(q.grad_fn) is f._backward_cls, q.requires_grad, p.requires_grad)
        q.sum().backward()
        return facts, y.grad.tolist()
    assert same_in_both(scenario) == ("ok", ((True, True, True, True), [1.0, 1.0, 1.0]))


@pytest.mark.parametrize("shape", [(1,), ()], ids=["1d", "0d"])
def test_input_returned_as_is_of_any_shape_gets_the_functions_gradient(shape):
    def scenario(lib):
        f = fn(lib, lambda ctx, x: x, lambda ctx, g: g * 2)
        v = lib.ones(shape, requires_grad=True)
        f.apply(v).backward()
        first = v.grad.tolist()
        v.grad = None
        f.apply(v.clone()).backward()
        return first, v.grad.tolist()
    assert same_in_both(scenario)[0] == "ok"


def test_backward_returning_none_leaves_no_gradient():
    def scenario(lib):
        f = fn(lib, lambda ctx, x: x * 2, lambda ctx, g: None)
        x = lib.ones(1, requires_grad=True)
        f.apply(x).backward()
        f.apply(x ** 2).backward()
        f.apply(x).sum().backward()
        return x.grad, lib.autograd.grad(f.apply(x), x, allow_unused=True)[0]
    assert same_in_both(scenario) == ("ok", (None, None))


def test_inplace_on_a_view_returned_under_no_grad_raises_the_no_grad_error():
    def scenario(lib):
        inp = lib.tensor([0.5, 0.25], requires_grad=True)
        with lib.no_grad():
            out = fn(lib, lambda ctx, x: x[:], lambda ctx, g: g).apply(inp)
        out.zero_()
    ours, theirs = outcome(scenario, rg), outcome(scenario, torch)
    assert ours == theirs == ("RuntimeError", "A view was created in no_grad mode and is being modified inplace with "
                                              "grad mode enabled.")
    inp = rg.tensor([0.5, 0.25], requires_grad=True)
    with rg.no_grad():
        out = fn(rg, lambda ctx, x: x[:], lambda ctx, g: g).apply(inp)
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        out.zero_()


@pytest.mark.parametrize("inplace", [False, True])
def test_view_of_a_local_tensor_has_the_functions_history_even_after_an_inplace_in_forward(inplace):
    def scenario(lib):
        def forward(ctx, inp):
            view = inp.clone()[:3]
            if inplace:
                view += 2
            return view
        base = lib.tensor(np.linspace(0, 1, 10), requires_grad=True)
        return type(fn(lib, forward, lambda ctx, g: g, name="Local").apply(base).grad_fn).__name__
    assert same_in_both(scenario) == ("ok", "LocalBackward")


def test_setup_context_with_several_outputs_and_once_differentiable():
    def scenario(lib):
        def forward(x):
            return x ** 2, x.item() * 2

        def setup_context(ctx, inputs, output):
            ctx.two_x = output[1]
        once = (rg.autograd.function if lib is rg else torch.autograd.function).once_differentiable
        f = fn(lib, forward, once(lambda ctx, g, _: g * ctx.two_x), setup_context)
        x = lib.tensor(3.0, requires_grad=True)
        y, two_x = f.apply(x)
        return two_x, lib.autograd.grad(y, x)[0].item()
    assert same_in_both(scenario) == ("ok", (6.0, 6.0))


def test_error_in_backward_propagates_and_the_engine_keeps_working():
    def scenario(lib):
        def backward(ctx, g):
            raise ValueError("Simulate error on backward pass")
        x = leaf(lib)
        err = outcome(lambda _: fn(lib, lambda ctx, x: x * 1, backward).apply(x * 2).sum().backward(), lib)
        (x * 3).sum().backward()
        return err, x.grad.tolist()
    assert same_in_both(scenario) == ("ok", (("ValueError", "Simulate error on backward pass"), [3.0, 3.0, 3.0]))


def test_inplace_function_keeps_its_inplace_flag():
    for lib in (rg, torch):
        assert issubclass(lib.autograd.function.InplaceFunction, lib.autograd.Function)
    assert rg.autograd.function.InplaceFunction(inplace=True).inplace is True


@pytest.mark.parametrize("grad", ["no_input_requires_grad", "no_grad"])
def test_save_for_backward_of_a_non_tensor_is_accepted_when_the_call_is_not_recorded(grad):
    def scenario(lib):
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2
        x = lib.ones(2, requires_grad=grad == "no_grad")
        with lib.set_grad_enabled(grad != "no_grad"):
            return fn(lib, forward, lambda ctx, g: g).apply(x).tolist()
    assert same_in_both(scenario) == ("ok", [2.0, 2.0])


def test_mark_dirty_of_a_tensor_that_is_not_an_input_warns():
    def scenario(lib):
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y
        with pytest.warns(UserWarning, match=r"^ctx\.mark_dirty\(\) received a tensor that was not an input\.") as w:
            y = fn(lib, forward, lambda ctx, g: g * 2, name="Other").apply(leaf(lib))
        return len(w), y.grad_fn.name()
    assert same_in_both(scenario) == ("ok", (1, "OtherBackward"))


@pytest.mark.parametrize("case", ["modified", "not_modified", "no_grad", "not_requiring_grad", "view"])
def test_mark_dirty_bumps_the_version_counter_once_more(case):
    def scenario(lib):
        def forward(ctx, x):
            if case != "not_modified":
                x.mul_(2)
            ctx.mark_dirty(x)
            return x
        f = fn(lib, forward, lambda ctx, g: g * 2, name="Dirty")
        base = lib.ones(4, requires_grad=case != "not_requiring_grad").clone()
        x = base[:2] if case == "view" else base
        if case == "no_grad":
            with lib.no_grad():
                y = f.apply(x)
        else:
            y = f.apply(x)
        return y is x, x._version, base._version, x.tolist()
    assert same_in_both(scenario)[0] == "ok"


def _saving(lib, save_output):
    def forward(ctx, x):
        y = x * 2
        ctx.save_for_backward(y if save_output else x)
        return y
    def backward(ctx, g):
        s, = ctx.saved_tensors
        return g * s
    return fn(lib, forward, backward, name="Saving")


@pytest.mark.parametrize("case", ["output", "input", "input_twice", "input_no_grad", "leaf_no_grad"])
def test_modified_saved_tensor_error_names_the_history_as_pytorch(case):
    def scenario(lib):
        a = leaf(lib)
        x = a if case == "leaf_no_grad" else a * 1
        y = _saving(lib, case == "output").apply(x)
        if case == "output":
            y.mul_(2)
        elif case in ("input_no_grad", "leaf_no_grad"):
            with lib.no_grad():
                x.add_(1)
        else:
            x.add_(1)
            if case == "input_twice":
                x.sin_()
        y.sum().backward()
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and "modified by an inplace operation" in result[1]


def test_raw_saved_tensors_are_the_saved_tensor_objects():
    def scenario(lib):
        def forward(ctx, x, y):
            ctx.save_for_backward(x, None, y)
            return x * 2
        f = fn(lib, forward, lambda ctx, g: (g, None), name="Raw")
        x = leaf(lib)
        y = f.apply(x, x * 3)
        raw = y.grad_fn._raw_saved_tensors
        facts = (len(raw), type(raw).__name__, [type(r).__name__ for r in raw], raw[0].unpack() is x)
        seen = []
        raw[2].register_hooks(lambda t: seen.append("pack") or t, lambda t: seen.append("unpack") or t)
        y.grad_fn.saved_tensors
        y.sum().backward()
        return facts, seen, outcome(lambda _: y.grad_fn._raw_saved_tensors, lib)
    ours = outcome(scenario, rg)
    assert ours == outcome(scenario, torch)


def test_raw_saved_tensors_is_empty_without_saving():
    def scenario(lib):
        y = fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g, name="Nothing").apply(leaf(lib))
        return y.grad_fn._raw_saved_tensors
    assert same_in_both(scenario) == ("ok", ())


def test_a_custom_functions_node_is_not_callable_while_an_ops_node_is():
    def scenario(lib):
        x = leaf(lib)
        y = fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g * 2, name="Twice").apply(x)
        z = x * 3
        called = z.grad_fn(lib.ones(3, dtype=lib.float64))
        return (outcome(lambda _: y.grad_fn(lib.ones(3, dtype=lib.float64)), lib), called[0].tolist(), called[1],
                outcome(lambda _: z.grad_fn(), lib))
    assert same_in_both(scenario) == ("ok", (("TypeError", "'TwiceBackward' object is not callable"), [3.0, 3.0, 3.0],
                                             None, ("TypeError", "expected 1 arguments, got 0 instead")))


def test_a_custom_functions_node_can_be_weakly_referenced():
    def scenario(lib):
        y = fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g, name="Weak").apply(leaf(lib))
        ref = weakref.ref(y.grad_fn)
        alive = ref() is y.grad_fn
        del y
        gc.collect()
        return alive, ref() is None
    assert same_in_both(scenario) == ("ok", (True, True))
