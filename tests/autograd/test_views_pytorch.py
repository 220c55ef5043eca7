"""Views and in-place ops against PyTorch: a view's requires_grad, is_leaf, grad_fn and _base in every case,
CopySlices, views made under no_grad, multi-output views, and the errors.

A stale view's grad_fn is regenerated as AsStridedBackward0 by default, or, with view replay on, by
replaying the view ops; the tests that compare node names turn it on in both libraries.
"""
import gc
import re
import weakref

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.variable import CreationMeta
from retrograd.ops import REGISTRY

torch = pytest.importorskip("torch")


@pytest.fixture
def view_replay():
    with torch.autograd._force_original_view_tracking(True), rg.autograd._force_original_view_tracking(True):
        yield


def first_sentence(message):
    found = re.match(r"(.*?\.)(?=\s|[A-Z]|$)", message, re.S)
    return message if found is None else found.group(1)


def raised(fn):
    """(type, first sentence) of the error ``fn()`` raises, or None if it returns."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any error, compared between the libraries
        return type(e), first_sentence(str(e))
    return None


def both(scenario):
    ours, theirs = scenario(rg), scenario(torch)
    assert ours == theirs
    return ours


def name(fn):
    return None if fn is None else fn.name().rpartition("::")[2]


def state(t):
    """What a tensor's autograd state looks like from outside."""
    return t.requires_grad, t.is_leaf, t._is_view(), name(t.grad_fn)


def edges(fn):
    return [(name(f), i) for f, i in fn.next_functions]


# -- views made where nothing is recorded --------------------------------------------------------
def test_view_made_under_no_grad_requires_grad_through_its_base_with_a_dead_edge():
    def scenario(lib):
        leaf = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.no_grad():
            v = leaf[:2]
        y = v * 2
        z = v + leaf[:2]
        y.sum().backward()
        unused = raised(lambda: lib.autograd.grad((v * 3).sum(), v))
        allowed = lib.autograd.grad((v * 3).sum(), v, allow_unused=True)
        return (state(v), v._base is leaf, state(y), edges(y.grad_fn), edges(z.grad_fn), leaf.grad, unused, allowed,
                raised(lambda: v.backward(lib.ones(2))), raised(lambda: v.numpy()), repr(v))
    seen = both(scenario)
    assert seen[0] == (True, True, True, None) and seen[3] == [(None, 0), (None, 0)]
    assert seen[6] == (RuntimeError, "The differentiated Tensor at index 0 appears to not have been used in the graph.")


def test_view_of_a_leaf_requires_grad_once_the_leaf_does():
    def scenario(lib):
        b = lib.ones(3)
        v = b[:2]
        before = state(v)
        b.requires_grad_()
        y = v * b[1:]
        (y * 1).sum().backward()
        return before, state(v), edges(y.grad_fn), b.grad.tolist(), raised(lambda: v.mul_(2))
    seen = both(scenario)
    assert seen[1] == (True, True, True, None)
    assert seen[4] == (RuntimeError, "a view of a leaf Variable that requires grad is being used in an in-place "
                                     "operation.")


def test_view_made_under_no_grad_cannot_be_modified_in_place_with_grad_mode_on():
    def scenario(lib):
        mid = lib.ones(3, requires_grad=True) * 2
        with lib.no_grad():
            v = mid[:2]
        vv = v[1:]  # recorded: a view of a view made under no_grad
        direct = raised(lambda: v.mul_(2)), raised(lambda: vv.mul_(2))
        plain = lib.zeros(3)
        with lib.no_grad():
            u = plain[:2]
        w = lib.ones(2, requires_grad=True)
        return direct, state(vv), raised(lambda: u.mul_(w)), u.mul_(2).tolist()
    seen = both(scenario)
    assert seen[0] == ((RuntimeError, "A view was created in no_grad mode and is being modified inplace with grad "
                                      "mode enabled."),
                       (RuntimeError, "Output 0 of Slice is a view of a view which was created in no_grad mode and is "
                                      "being modified inplace with grad mode enabled."))


def test_view_made_under_no_grad_is_unusable_with_grad_after_its_base_changed_in_place():
    def scenario(lib):
        mid = lib.ones(3, requires_grad=True) * 2
        with lib.no_grad():
            v = mid[:2]
            v.mul_(2)  # both under no_grad: allowed, not recorded
            harmless = (v * 2).requires_grad
        return (harmless, raised(lambda: v.grad_fn), raised(lambda: v.is_leaf), raised(lambda: v * 2),
                v.requires_grad, repr(v))
    seen = both(scenario)
    assert seen[1] == (RuntimeError, "A view was created in no_grad mode and its base or another view of its base "
                                     "has been modified inplace with grad mode enabled.")
    assert seen[5] == "tensor([4., 4.], grad_fn=<Invalid>)"


# -- multi-output views --------------------------------------------------------------------------
MULTI = [pytest.param(lambda t: t.unbind(), id="unbind"), pytest.param(lambda t: t.unbind(1), id="unbind1"),
         pytest.param(lambda t: t.split(1), id="split"), pytest.param(lambda t: t.chunk(2), id="chunk"),
         pytest.param(lambda t: list(t), id="iter")]


@pytest.mark.parametrize("views", MULTI)
def test_inplace_on_an_output_of_a_multi_output_view_raises(views):
    def scenario(lib):
        mid = lib.arange(6.0).reshape(2, 3).requires_grad_() * 1
        outs = views(mid)
        first = outs[0]
        return (state(first), first._base is mid, first.output_nr, raised(lambda: first.mul_(2)),
                raised(lambda: first[1:].add_(1)), raised(lambda: first.detach().mul_(2)), mid.tolist())
    seen = both(scenario)
    assert seen[3][1].startswith("Output 0 of ") and seen[3][1].endswith(" is a view and is being modified inplace.")


def test_multi_output_view_message_names_the_node_as_pytorch():
    def scenario(lib):
        mid = lib.ones(2, 3, requires_grad=True) * 1
        with pytest.raises(RuntimeError) as info:
            mid.unbind()[1].mul_(2)
        return str(info.value)
    assert both(scenario).startswith("Output 1 of Unbind is a view and is being modified inplace. This view is the "
                                     "output of a function that returns multiple views.")


def test_multi_output_views_may_be_modified_where_nothing_requires_grad():
    def scenario(lib):
        plain = lib.zeros(2, 3)
        rows = plain.unbind()
        rows[0].add_(1)
        w = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            rows[1].add_(w)
        return plain.tolist(), raised(lambda: rows[0].mul_(w))
    seen = both(scenario)
    assert seen[1] == (RuntimeError, "A view was created in no_grad mode and is being modified inplace with grad mode "
                                     "enabled.")


def test_multi_output_view_is_unusable_with_grad_after_its_base_changed_in_place():
    def scenario(lib):
        mid = lib.ones(2, 3, requires_grad=True) * 1
        rows = mid.unbind()
        with lib.no_grad():
            cols = mid.split(1, 1)
        mid.mul_(2)  # the base itself may change
        return (raised(lambda: rows[0].grad_fn), raised(lambda: rows[1] * 2), raised(lambda: cols[0].grad_fn),
                name(mid.grad_fn))
    seen = both(scenario)
    assert seen[0] == (RuntimeError, "Output 0 of Unbind is a view and its base or another view of its base has been "
                                     "modified inplace.")


# -- in-place on views: CopySlices ---------------------------------------------------------------
def test_inplace_on_view_of_leaf_not_requiring_grad_with_operand_requiring_grad(view_replay):
    def scenario(lib):
        w = lib.tensor([2.0, 3.0], requires_grad=True)
        b = lib.ones(4)
        v, sibling = b[:2], b[1:3]
        with lib.no_grad():
            frozen = b[2:]
        v.mul_(w)
        seen = [state(b), edges(b.grad_fn), state(v), edges(v.grad_fn), state(sibling), v._base is b,
                raised(lambda: frozen.grad_fn)]
        (b * lib.tensor([1.0, 2.0, 3.0, 4.0]) + sibling.sum()).sum().backward()
        return seen, w.grad.tolist(), b.is_leaf
    seen = both(scenario)
    assert seen[0][0] == (True, False, False, "CopySlices") and seen[0][1] == [(None, 0), ("AccumulateGrad", 0)]


def test_inplace_through_a_chain_of_views(view_replay):
    def scenario(lib):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        w = lib.tensor([5.0, 7.0], requires_grad=True)
        b = x * 1
        row = b[0]
        part = row[1:]
        lifted = part.unsqueeze(0)
        lifted.mul_(w)
        facts = [(t._base is b, state(t)) for t in (row, part, lifted)] + [edges(b.grad_fn), edges(lifted.grad_fn)]
        (b * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return facts, x.grad.tolist(), w.grad.tolist()
    seen = both(scenario)
    assert seen[0][2] == (True, (True, False, True, "UnsqueezeBackward0"))


def test_inplace_on_base_after_a_view_was_taken_regenerates_the_views_history(view_replay):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x * 2
        v = b[:2]
        old = v.grad_fn
        b.mul_(x)
        fresh = v.grad_fn
        (v * lib.tensor([1.0, 10.0])).sum().backward()
        return fresh is not old, name(fresh), edges(fresh), state(v), repr(v), x.grad.tolist()
    seen = both(scenario)
    assert seen[0] and seen[2] == [("MulBackward0", 0)] and seen[4] == "tensor([2., 8.], grad_fn=<SliceBackward0>)"


def test_inplace_on_one_view_rebases_the_others_of_the_same_base(view_replay):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = x * 1
        first, second = b[:2], b[1:3]
        first.mul_(2)
        second.add_(x[:2] * 5)
        return state(first), state(second), edges(b.grad_fn), b.tolist()
    seen = both(scenario)
    assert seen[2] == [("CopySlices", 0), ("MulBackward0", 0)]


def test_inplace_on_view_records_the_op_on_the_view_as_pytorch():
    # The op's node saves the view itself where it saves its result: changing it again is caught.
    def scenario(lib):
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        b = x * 2
        v = b[:2]
        v.exp_()
        v.mul_(2)
        kind, message = raised(lambda: b.sum().backward())
        b = x * 2
        b[:2].exp_()
        b.sum().backward()
        return kind, message.split(":")[0], np.round(x.grad.tolist(), 12).tolist()
    seen = both(scenario)
    assert seen[1] == "one of the variables needed for gradient computation has been modified by an inplace operation"


def test_inplace_on_views_matches_pytorch_gradients():
    def scenario(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([2.0, 3.0, -1.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        y[0].mul_(w)
        y[:, 1:].pow_(2)
        y.t()[2].add_(y[:, 0].exp() * w[:2])
        extra = (y[:, 1].exp() * w[:2]).sum()  # saves a new tensor, not the view relu_ changes next
        y.relu_()
        out = (y * y).sum() + extra
        gx, gw = lib.autograd.grad(out, (x, w), create_graph=True)
        hx, = lib.autograd.grad((gx * gx).sum() + gw.sum(), x)
        return np.round(np.array(gx.tolist()), 10).tolist(), np.round(np.array(hx.tolist()), 10).tolist()
    both(scenario)


def test_inplace_on_view_forms_no_reference_cycle():
    # CopySlices holds the op's node, which saves the view as its output: by its data, not the view.
    def scenario(lib):
        root = lib.randn(3, 3, requires_grad=True)
        copy = root.clone()
        alive = weakref.ref(copy)
        view = copy.view(9)
        lib.nn.functional.relu(view, inplace=True)
        del copy, view
        return alive() is None
    enabled = gc.isenabled()
    gc.disable()
    try:
        assert both(scenario)
    finally:
        if enabled:
            gc.enable()


def test_inplace_on_view_of_a_dropped_tensor_still_backpropagates():
    def scenario(lib):
        a = lib.arange(10.0, requires_grad=True)
        b = a.narrow(0, 0, 2).clone().view(-1)
        b.relu_()
        c = b.clone()
        del b
        gc.collect()
        s = c.sum()
        s.backward()
        return s.item(), a.grad.tolist()
    assert both(scenario) == (1.0, [0.0, 1.0] + [0.0] * 8)


def test_copy_slices_gradients_pass_gradcheck():
    def f(x, w):
        b = x * 1
        b[1:].mul_(w)
        b.view(2, 2)[1].add_(w[1:].sin())
        b[:2].exp_()  # last: it saves its result, the view, which a later write to the base would invalidate
        return b * b

    x = rg.randn(4, dtype=rg.float64, requires_grad=True)
    w = rg.randn(3, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(f, (x, w))
    assert rg.autograd.gradgradcheck(f, (x, w))


def test_views_base_and_is_view_in_every_case():
    def scenario(lib):
        x = lib.ones(2, 3, requires_grad=True)
        mid = x * 1
        ints = lib.arange(4)
        cases = [x[0], mid[0], mid[0][1:], mid.detach(), mid[0].detach(), mid.data, x.view(6), ints[:2],
                 mid.unbind()[0], mid.transpose(0, 1)]
        return [(t._is_view(), None if t._base is None else (t._base is x, t._base is mid, t._base is ints),
                 t.requires_grad, t.is_leaf) for t in cases]
    both(scenario)


# -- the compiled op call ------------------------------------------------------------------------
def test_compiled_call_declines_dead_and_stale_views_and_links_views_as_python():
    x = rg.ones(2, 3, requires_grad=True)
    mid = x * 1
    with rg.no_grad():
        dead = x[0]  # requires grad through its base alone
        quiet = mid.t()
    stale = mid[1]
    cases = [("mul", (dead, dead)), ("tanh", (dead,)), ("transpose", (quiet, 0, 1)), ("expand", (dead, (2, 3))),
             ("mul", (stale, x[1])), ("expand", (stale, (2, 3)))]
    for grad_on in (True, False):
        for name_, args in cases:
            mid.mul_(1)  # every call sees a stale ``stale``
            if name_ == "transpose":
                with rg.no_grad():
                    args = (mid.t(), 0, 1)
            op = REGISTRY[name_]
            python_path = getattr(op.function, "python_call", op.function)
            with rg.set_grad_enabled(grad_on):
                a, b = op.function(*args), python_path(*args)
            assert (a.requires_grad, a._is_view(), name(a.grad_fn)) == (b.requires_grad, b._is_view(), name(b.grad_fn))
            assert a.requires_grad == (grad_on or a._is_view()), name_  # a view: through its base
            assert (a.grad_fn is not None) == grad_on, name_  # recorded, with a dead edge or two
            if a._is_view():
                assert a._base is b._base and a._view_creation is b._view_creation, name_
                assert a._view_creation is (CreationMeta.DEFAULT if grad_on and args[0] is stale
                                            else CreationMeta.NO_GRAD_MODE), name_  # inherited from a no_grad view
    assert rg.mul(dead, x[0]).grad_fn.next_functions[0] == (None, 0)


def test_double_backward_reaching_the_op_of_an_inplace_on_view_twice_runs_as_pytorch():
    # The saved result of exp_ leads the second pass to exp's node directly and through CopySlices.
    def second_order(lib):
        x = lib.tensor([0.5, -1.0, 2.0, 0.25], dtype=lib.float64, requires_grad=True)
        b = x * 1
        b[:2].exp_()
        out = b * b
        g, = lib.autograd.grad(out, x, lib.ones_like(out), create_graph=True)
        gg, = lib.autograd.grad(g, x, lib.ones_like(g))
        return g.detach().numpy(), gg.numpy()
    for ours, theirs in zip(second_order(rg), second_order(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_copy_slices_after_backward_raises_backward_a_second_time():
    x = rg.tensor([0.5, -1.0, 2.0], dtype=rg.float64, requires_grad=True)
    b = x * 1
    b[:2].exp_()
    b.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        b.sum().backward()
