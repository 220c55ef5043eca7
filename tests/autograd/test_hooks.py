"""Tensor hooks, node hooks and retain_grad, with PyTorch 2.x ordering."""
import warnings
import weakref

import pytest

import retrograd as rg


def test_tensor_hook_sees_and_replaces_the_gradient():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.register_hook(lambda g: g * 10)
    (y * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [60.0, 60.0]


def test_tensor_hooks_run_in_registration_order_on_the_accumulated_gradient():
    x = rg.ones(1, requires_grad=True)
    y = x * 1
    order = []
    y.register_hook(lambda g: order.append(("a", g.item())) or g + 1)
    y.register_hook(lambda g: order.append(("b", g.item())))
    (y + y).backward()
    assert order == [("a", 2.0), ("b", 3.0)] and x.grad.tolist() == [3.0]


def test_removed_tensor_hook_is_not_called():
    x = rg.ones(1, requires_grad=True)
    h = x.register_hook(lambda g: g * 100)
    h.remove()
    (x * 2).backward()
    assert x.grad.tolist() == [2.0]


def test_hook_on_a_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="^cannot register a hook on a tensor that doesn't require gradient"):
        rg.ones(1).register_hook(lambda g: g)


def test_leaf_hook_changes_grad_and_what_autograd_grad_returns():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 2)
    (g,) = rg.autograd.grad((x * 3).sum(), x)
    assert g.tolist() == [6.0, 6.0] and x.grad is None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_non_leaf_hook_changes_what_autograd_grad_returns():
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g + 5)
    (g,) = rg.autograd.grad(y * 3, y)
    assert g.tolist() == [8.0]


# -- retain_grad --------------------------------------------------------------------------------
@pytest.mark.parametrize("retain_first", [True, False])
def test_retain_grad_records_after_every_tensor_hook(retain_first):
    x = rg.ones(2, requires_grad=True)
    y = x * 1
    if retain_first:
        y.retain_grad()
    y.register_hook(lambda g: g * 2)
    y.register_hook(lambda g: g + 1)
    if not retain_first:
        y.retain_grad()
    (y * 3).sum().backward()
    assert y.grad.tolist() == [7.0, 7.0] and x.grad.tolist() == [7.0, 7.0]


def test_retain_grad_accumulates_across_backward_calls():
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y * 3).sum()
    z.backward(retain_graph=True)
    first = y.grad
    z.backward()
    assert y.grad.tolist() == [6.0] and first.tolist() == [3.0] and y.retains_grad


def test_retain_grad_is_a_noop_on_leaves():
    x = rg.ones(1, requires_grad=True)
    x.retain_grad()
    assert not x.retains_grad
    (x * 2).backward()
    assert x.grad.tolist() == [2.0]


def test_retain_grad_without_requires_grad_raises():
    with pytest.raises(RuntimeError, match="^can't retain_grad on Tensor that has requires_grad=False"):
        rg.ones(1).retain_grad()


def test_retain_grad_does_not_keep_the_tensor_alive():
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y * 3
    ref = weakref.ref(y)
    del y
    assert ref() is None
    z.backward()
    assert x.grad.tolist() == [6.0]


def test_non_leaf_grad_warns_unless_retained():
    y = rg.ones(1, requires_grad=True) * 2
    with pytest.warns(UserWarning, match="^The .grad attribute of a Tensor that is not a leaf Tensor is being "
                                         "accessed."):
        assert y.grad is None
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad is None


# -- hook replacement checks ----------------------------------------------------------------------
def _run_with_hook(hook):
    x = rg.ones(2, requires_grad=True)
    y = x * 1
    y.register_hook(hook)
    (y * 2).sum().backward()


def test_hook_returning_a_non_tensor_raises_type_error():
    with pytest.raises(TypeError, match="^expected Variable, but hook returned 'int'"):
        _run_with_hook(lambda g: 1)


def test_hook_changing_the_size_raises():
    def grow(g):
        return rg.ones(3)
    with pytest.raises(RuntimeError, match="^hook 'grow' has changed the size of value"):
        _run_with_hook(grow)


def test_hook_changing_the_type_raises():
    def widen(g):
        return g.to(rg.float64)
    with pytest.raises(RuntimeError, match=r"^hook 'widen' has changed the type of value \(was "):
        _run_with_hook(widen)


def test_hook_without_a_name_is_reported_as_unknown():
    class Grow:
        def __call__(self, g):
            return rg.ones(3)
    with pytest.raises(RuntimeError, match="^hook '<unknown>' has changed the size of value"):
        _run_with_hook(Grow())


def test_hook_cannot_replace_a_none_gradient():
    x = rg.ones(2, requires_grad=True)
    a, b = x.split(1)
    b.register_hook(lambda g: rg.ones(1))  # b gets no gradient: a None reaches the hook
    with pytest.raises(RuntimeError, match="^can't replace a None gradient with a non-None value"):
        a.sum().backward()


def test_hook_returning_none_for_a_none_gradient_is_fine():
    x = rg.ones(2, requires_grad=True)
    a, b = x.split(1)
    seen = []
    b.register_hook(lambda g: seen.append(g))
    a.sum().backward()
    assert seen == [None] and x.grad.tolist() == [1.0, 0.0]


def test_node_prehook_with_wrong_count_raises():
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda grads: (grads[0], grads[0]))
    with pytest.raises(RuntimeError, match=r"has returned an incorrect number of values \(got 2, but expected 1\)"):
        y.backward()


def test_node_hooks_run_only_if_the_node_runs():
    calls = []
    x = rg.ones(1, requires_grad=True)
    w = rg.ones(1, requires_grad=True)
    a = w * 2
    a.grad_fn.register_prehook(lambda g: calls.append("pre"))
    a.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    rg.autograd.grad((x * a).sum(), x)
    assert calls == []


def test_tensor_hook_runs_before_node_prehook():
    order = []
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda g: order.append("node_pre"))
    y.register_hook(lambda g: order.append("tensor"))
    y.grad_fn.register_hook(lambda gi, go: order.append("node_post"))
    y.backward()
    assert order == ["tensor", "node_pre", "node_post"]


def test_accumulate_grad_post_hook_sees_the_leaf_gradient():
    x = rg.ones(2, requires_grad=True)
    acc = (x * 1).grad_fn.next_functions[0][0]
    seen = []
    acc.register_hook(lambda gi, go: seen.append((gi, go[0].tolist())))
    (x * 4).sum().backward()
    assert seen == [((), [4.0, 4.0])] and x.grad.tolist() == [4.0, 4.0]


def test_retain_grad_follows_the_tensor_through_an_inplace_op():
    x = rg.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * 5).sum().backward()
    assert y.grad.tolist() == [5.0, 5.0] and x.grad.tolist() == [30.0, 30.0]


def test_retain_grad_of_a_base_follows_it_through_copy_slices():
    x = rg.ones(3, requires_grad=True)
    base = x * 1
    base.retain_grad()
    base[1:].mul_(2)
    (base * rg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert base.grad.tolist() == [1.0, 2.0, 3.0] and x.grad.tolist() == [1.0, 4.0, 6.0]


def test_retain_grad_of_a_view_follows_its_regenerated_history():
    x = rg.ones(3, requires_grad=True)
    base = x * 1
    view = base[1:]
    view.retain_grad()
    base.mul_(2)
    (view * rg.tensor([2.0, 3.0])).sum().backward()
    assert view.grad.tolist() == [2.0, 3.0] and x.grad.tolist() == [0.0, 4.0, 6.0]


def test_retain_grad_follows_a_custom_function_that_marks_the_tensor_dirty():
    class Triple(rg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            t.mul_(3)
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, grad):
            return grad * 3
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    y.retain_grad()
    Triple.apply(y)
    (y * 5).backward()
    assert y.grad.tolist() == [5.0] and x.grad.tolist() == [30.0]


def test_hooks_registered_before_an_inplace_op_stay_with_the_old_value():
    seen = []
    x = rg.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: seen.append(("old", g.tolist())))
    y.mul_(3)
    y.register_hook(lambda g: seen.append(("new", g.tolist())))
    (y * 5).sum().backward()
    assert seen == [("new", [5.0, 5.0]), ("old", [15.0, 15.0])]
