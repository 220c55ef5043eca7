"""In-place view ops (``t_``, ``transpose_``, ``swapdims_``, ``swapaxes_``, ``unsqueeze_``, ``squeeze_``) against PyTorch.

Each scenario runs with retrograd and with torch on the same numbers. See Note [In-place view ops] in ops/shape.py.
"""

import numpy as np
import pytest

import retrograd as rg
from errors_like_torch import same_in_both

torch = pytest.importorskip("torch")

VALUES = np.arange(1.0, 7.0).reshape(2, 3)


def leaf(lib, shape=(2, 3)):
    return lib.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape).tolist(), dtype=lib.float64,
                      requires_grad=True)


def name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


CALLS = {"t_": lambda x: x.t_(), "transpose_": lambda x: x.transpose_(0, 2), "swapdims_": lambda x: x.swapdims_(1, 2),
         "swapaxes_": lambda x: x.swapaxes_(0, 1), "unsqueeze_": lambda x: x.unsqueeze_(-1),
         "squeeze_": lambda x: x.squeeze_(), "squeeze_dim": lambda x: x.squeeze_(1),
         "squeeze_dims": lambda x: x.squeeze_((0, 1)), "squeeze_keyword": lambda x: x.squeeze_(dim=1)}
SHAPES = {"t_": (2, 3)}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_inplace_view_op_changes_the_tensor_itself_and_records_pytorchs_node(call):
    def scenario(lib):
        a = leaf(lib, SHAPES.get(call, (2, 1, 3)))
        x = a * 1
        out = CALLS[call](x)
        weights = lib.arange(float(x.numel()), dtype=lib.float64).reshape(x.shape)
        (x * weights).sum().backward()
        return out is x, tuple(x.shape), x._version, name(x), x.is_leaf, a.grad.tolist()
    same_in_both(scenario)


@pytest.mark.parametrize("call", sorted(CALLS))
def test_inplace_view_op_on_a_leaf_requiring_grad_raises(call):
    def scenario(lib):
        CALLS[call](leaf(lib, SHAPES.get(call, (2, 1, 3))))
    assert same_in_both(scenario) == ("RuntimeError", "a leaf Variable that requires grad is being used in an "
                                      "in-place operation.")


def test_inplace_view_op_on_a_view_keeps_it_a_view_of_its_base():
    def scenario(lib):
        a = leaf(lib)
        x = a * 1
        v = x[:, 1:]
        v.t_()
        facts = (v._base is x, tuple(v.shape), v._version, x._version, name(v), name(x))
        v.mul_(lib.tensor([[2.0], [3.0]], dtype=lib.float64))  # writes through the transposed view
        (x * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        return facts, x.tolist(), a.grad.tolist(), name(x)
    same_in_both(scenario)


def test_inplace_view_op_under_no_grad_changes_a_leaf_without_history():
    def scenario(lib):
        a = leaf(lib)
        with lib.no_grad():
            a.t_()
        return tuple(a.shape), a._version, a.grad_fn is None, a.is_leaf, a.requires_grad
    assert same_in_both(scenario) == ("ok", ((3, 2), 1, True, True, True))


def test_inplace_view_op_on_a_tensor_without_grad_is_only_a_metadata_change():
    def scenario(lib):
        b = lib.ones(2, 3)
        b.unsqueeze_(0)
        return tuple(b.shape), b._version, b.requires_grad, b.grad_fn
    assert same_in_both(scenario) == ("ok", ((1, 2, 3), 1, False, None))


@pytest.mark.parametrize("saves", ["input", "output"])
def test_inplace_view_op_invalidates_what_a_node_saved(saves):
    def scenario(lib):
        x = leaf(lib) * 1
        y = x * x if saves == "input" else x.exp()
        (x if saves == "input" else y).t_()
        y.sum().backward()
    result = same_in_both(scenario)
    assert result[0] == "RuntimeError" and "modified by an inplace operation" in result[1]


@pytest.mark.parametrize("case", ["view_of_leaf", "slice_of_leaf", "multi_output_view", "no_grad_view"])
def test_inplace_view_op_raises_the_errors_of_an_inplace_op(case):
    def scenario(lib):
        a = leaf(lib)
        if case == "view_of_leaf":
            v = a.view(6)
        elif case == "slice_of_leaf":
            v = a[0]
        elif case == "multi_output_view":
            v = (a * 1).unbind(0)[0]
        else:
            x = a * 1
            with lib.no_grad():
                v = x.view(6)
        v.unsqueeze_(0)
    assert same_in_both(scenario)[0] == "RuntimeError"


@pytest.mark.parametrize("call", ["t_1d", "t_0d", "t_3d", "t_arg", "transpose_out_of_range", "unsqueeze_out_of_range"])
def test_inplace_view_op_bad_arguments_raise_as_pytorch(call):
    def scenario(lib):
        x = {"t_1d": lib.ones(3), "t_0d": lib.tensor(1.0), "t_3d": lib.ones(2, 3, 4)}.get(call, lib.ones(2, 3))
        x = (x.requires_grad_() * 1)
        {"t_1d": lambda: x.t_(), "t_0d": lambda: x.t_(), "t_3d": lambda: x.t_(), "t_arg": lambda: x.t_(1),
         "transpose_out_of_range": lambda: x.transpose_(0, 5), "unsqueeze_out_of_range": lambda: x.unsqueeze_(5)}[call]()
        return tuple(x.shape), x._version
    same_in_both(scenario)


def test_retained_grad_stays_with_the_old_value_as_pytorchs():
    def scenario(lib):
        x = leaf(lib) * 1
        x.retain_grad()
        x.t_()
        x.sum().backward()
        return tuple(x.grad.shape), tuple(x.shape)
    assert same_in_both(scenario) == ("ok", ((2, 3), (3, 2)))


def test_inplace_view_ops_gradcheck():
    def f(a):
        x = a * 1
        x.t_()
        x.unsqueeze_(0)
        x.transpose_(0, 2)
        x.squeeze_(2)
        return x * rg.arange(6.0, dtype=rg.float64).reshape(2, 3)
    assert rg.autograd.gradcheck(f, (rg.randn(2, 3, dtype=rg.float64, requires_grad=True),))


def test_view_taken_before_its_base_changes_shape_in_place_keeps_its_gradient():
    def scenario(lib):
        a = leaf(lib)
        x = a * 1
        row = x[0]
        x.t_()
        (row * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return a.grad.tolist()
    assert same_in_both(scenario)[0] == "ok"


@pytest.mark.parametrize("shape, view", [((2, 3), lambda x: x[0]), ((3, 3), lambda x: x[0]),
                                         ((2, 3), lambda x: x.view(-1)), ((2, 3), lambda x: x[:, 1:])],
                         ids=["a row", "a row of a square", "a flat view", "a slice"])
def test_view_taken_before_its_base_changes_shape_in_place_is_remade_with_as_strided(shape, view):
    def scenario(lib):
        a = leaf(lib, shape)
        x = a * 1
        v = view(x)
        x.t_()
        (v * lib.arange(1.0, 1.0 + v.numel(), dtype=lib.float64).reshape(v.shape)).sum().backward()
        return name(v), v.grad_fn.next_functions[0][0].name(), v.stride(), v.storage_offset(), a.grad.tolist()
    assert same_in_both(scenario)[1][0] == "AsStridedBackward0"


def test_as_strided_inplace_sets_sizes_and_strides():
    def scenario(lib):
        x = leaf(lib) * 1
        x.as_strided_((3, 2), (1, 3))
        return tuple(x.shape), x.stride(), name(x), x._version
    assert same_in_both(scenario)[0] == "ok"
