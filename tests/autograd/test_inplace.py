"""In-place ops and views: version counters, PyTorch's errors, history rebasing and CopySlices."""
import numpy as np
import pytest

import retrograd as rg


def test_inplace_on_leaf_requiring_grad_raises():
    x = rg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        x.add_(1)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        x += 1


def test_inplace_on_view_of_leaf_requiring_grad_raises():
    x = rg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        x[:2].mul_(2)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        x.view(3).zero_()


def test_inplace_on_leaf_is_allowed_under_no_grad_and_bumps_the_version():
    x = rg.ones(2, requires_grad=True)
    with rg.no_grad():
        x.mul_(3)
        x[0] = 5.0
    assert x._version == 2 and x.is_leaf and x.requires_grad and x.tolist() == [5.0, 3.0]


def test_every_inplace_op_bumps_the_version():
    x = rg.ones(3)
    ops = [lambda t: t.add_(1), lambda t: t.sub_(1), lambda t: t.mul_(2), lambda t: t.div_(2),
           lambda t: t.pow_(2), lambda t: t.clamp_(0, 5), lambda t: t.zero_(), lambda t: t.fill_(2.0),
           lambda t: t.copy_(rg.ones(3)), lambda t: t.relu_(), lambda t: t.masked_fill_(rg.tensor([True, False, False]), 0.0)]
    for i, op in enumerate(ops, start=1):
        assert op(x) is x
        assert x._version == i


def test_augmented_assignment_and_setitem_bump_the_version():
    x = rg.ones(3)
    x += 1
    x *= 2
    x -= 1
    x /= 3
    x[1] = 0.0
    assert x._version == 5 and x.tolist() == [1.0, 0.0, 1.0]


def test_inplace_on_non_leaf_rebases_its_history():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    old = y.grad_fn
    y.mul_(x)
    assert y.grad_fn is not old and y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0] is old
    y.sum().backward()  # d(2x*x)/dx = 4x
    assert x.grad.tolist() == [4.0, 8.0]


def test_inplace_op_saving_the_overwritten_value_gives_correct_gradients():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.pow_(3)  # needs the old y
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_inplace_with_operand_requiring_grad_turns_tensor_into_non_leaf():
    w = rg.tensor([2.0, 3.0], requires_grad=True)
    t = rg.ones(2)
    t.mul_(w)
    assert t.requires_grad and not t.is_leaf and t.grad_fn.name() == "MulBackward0"
    t.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0]


def test_setitem_with_value_requiring_grad_turns_tensor_into_non_leaf():
    w = rg.tensor(3.0, requires_grad=True)
    t = rg.zeros(3)
    t[1] = w
    assert t.requires_grad and not t.is_leaf
    (t * rg.tensor([1.0, 5.0, 7.0])).sum().backward()
    assert w.grad.item() == 5.0


def test_inplace_on_view_rebases_base_via_copy_slices():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = x * 1
    view = base[1:]
    view.mul_(10)
    assert base.grad_fn.name() == "torch::autograd::CopySlices"
    assert base.tolist() == [1.0, 20.0, 30.0]
    (base * rg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 20.0, 30.0]


def test_inplace_on_view_with_operand_requiring_grad():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = rg.tensor([4.0, 5.0], requires_grad=True)
    base = x * 1
    base[:2].mul_(w)
    base.sum().backward()
    assert x.grad.tolist() == [4.0, 5.0, 1.0] and w.grad.tolist() == [1.0, 2.0]


def test_inplace_on_view_of_tensor_not_requiring_grad():
    w = rg.tensor([4.0, 5.0], requires_grad=True)
    base = rg.zeros(3)
    base[1:].add_(w)
    assert base.requires_grad and base.grad_fn.name() == "torch::autograd::CopySlices"
    (base * rg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert w.grad.tolist() == [2.0, 3.0]


def test_other_views_of_a_modified_base_see_the_new_history():
    x = rg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    base = x * 1
    first, second = base[:2], base[1:3]
    first.mul_(2)
    assert second.tolist() == [4.0, 3.0]
    second.sum().backward()  # second[0] was doubled through first
    assert x.grad.tolist() == [0.0, 2.0, 1.0, 0.0]


def test_inplace_matches_pytorch_gradients():
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
        w = lib.tensor([2.0, 3.0, -1.0], requires_grad=True)
        y = x * 1
        y[0].mul_(w)
        y[:, 2:].add_(y[:, :1] * 2)
        y.relu_()
        (y * y).sum().backward()
        return x.grad.tolist(), w.grad.tolist()
    ours, theirs = run(rg), run(torch)
    for a, b in zip(ours, theirs, strict=True):
        assert np.allclose(a, b)


def test_detached_alias_modified_in_place_invalidates_saved_tensor():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y
    y.detach().add_(1)
    with pytest.raises(RuntimeError, match="^one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation"):
        z.sum().backward()


def test_inplace_on_an_expanded_tensor_raises_pytorchs_error():
    for base in (rg.tensor(3.0), rg.ones(1, 3)):
        e = base.expand(2, 3)
        with pytest.raises(RuntimeError, match="^unsupported operation: more than one element of the written-to "
                                               "tensor refers to a single memory location"):
            e.add_(1)
        assert base.tolist() == (3.0 if base.dim() == 0 else [[1.0, 1.0, 1.0]])


def test_other_views_of_a_base_follow_its_new_history():
    w = rg.tensor([2.0, 3.0], requires_grad=True)
    b = rg.ones(3)
    v1, v2 = b[:2], b[1:]
    v1.mul_(w)  # b now requires grad through CopySlices; v2 was made before that
    assert v2.requires_grad or v2.grad_fn is not None
    (v2 * 1).sum().backward()
    assert w.grad.tolist() == [0.0, 1.0]
    torch = pytest.importorskip("torch")
    tw = torch.tensor([2.0, 3.0], requires_grad=True)
    tb = torch.ones(3)
    t1, t2 = tb[:2], tb[1:]
    t1.mul_(tw)
    (t2 * 1).sum().backward()
    assert tw.grad.tolist() == w.grad.tolist()


def test_view_made_in_no_grad_mode_cannot_be_modified_in_place_with_grad_mode_on():
    a = rg.ones(3, requires_grad=True) * 1
    with rg.no_grad():
        v = a[:2]
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and is being modified inplace with "
                                           "grad mode enabled."):
        v.mul_(2)
    with rg.no_grad():
        v.mul_(2)  # both inside no_grad: allowed, not recorded
    plain = rg.zeros(3)
    with rg.no_grad():
        u = plain[:2]
    u.mul_(2)  # nothing requires grad: allowed
