"""Tensor methods, operators and in-place ops: they exist where PyTorch has them and act like it."""
import numpy as np
import pytest

import retrograd as rg

API_FUNCTIONS = """add sub mul div neg pow exp log log1p expm1 sqrt rsqrt abs sign sin cos tan tanh sigmoid relu
clamp maximum minimum where sum mean var std prod max min amax amin argmax argmin norm matmul mm bmm outer einsum
reshape view flatten transpose permute t unsqueeze squeeze expand expand_as broadcast_to cat stack split chunk
gather scatter_add index_select masked_fill softmax log_softmax logsumexp cumsum flip roll tril triu diagonal
trace""".split()
INPLACE = "add_ sub_ mul_ div_ pow_ clamp_ zero_ fill_ copy_ relu_ masked_fill_".split()


@pytest.mark.parametrize("name", API_FUNCTIONS)
def test_api_function_exists_where_torch_has_it(name):
    torch = pytest.importorskip("torch")
    if hasattr(torch, name):
        assert callable(getattr(rg, name, None)), f"retrograd.{name} is missing"
    if hasattr(torch.Tensor, name):
        assert hasattr(rg.Tensor, name), f"Tensor.{name} is missing"


def _x():
    return rg.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=rg.float64)


# (in-place call, the same computed out of place)
CASES = {
    "add_": (lambda x: x.add_(rg.tensor([1.0, 2.0, 3.0], dtype=rg.float64), alpha=2), lambda x: x + 2 * rg.tensor([1.0, 2.0, 3.0], dtype=rg.float64)),
    "sub_": (lambda x: x.sub_(1.5), lambda x: x - 1.5),
    "mul_": (lambda x: x.mul_(rg.tensor(3.0, dtype=rg.float64)), lambda x: x * 3),
    "div_": (lambda x: x.div_(4), lambda x: x / 4),
    "div_floor": (lambda x: x.div_(2, rounding_mode="floor"), lambda x: rg.div(x, 2, rounding_mode="floor")),
    "pow_": (lambda x: x.pow_(2), lambda x: x ** 2),
    "clamp_": (lambda x: x.clamp_(min=-1, max=2), lambda x: x.clamp(-1, 2)),
    "zero_": (lambda x: x.zero_(), lambda x: x * 0),
    "fill_": (lambda x: x.fill_(7), lambda x: x * 0 + 7),
    "copy_": (lambda x: x.copy_(rg.tensor([9.0, 8.0, 7.0])), lambda x: x * 0 + rg.tensor([9.0, 8.0, 7.0], dtype=rg.float64)),
    "relu_": (lambda x: x.relu_(), lambda x: x.relu()),
    "masked_fill_": (lambda x: x.masked_fill_(rg.tensor([True, False, True]), -5.0),
                     lambda x: x.masked_fill(rg.tensor([True, False, True]), -5.0)),
    "__iadd__": (lambda x: x.__iadd__(1), lambda x: x + 1),
    "__isub__": (lambda x: x.__isub__(1), lambda x: x - 1),
    "__imul__": (lambda x: x.__imul__(2), lambda x: x * 2),
    "__itruediv__": (lambda x: x.__itruediv__(2), lambda x: x / 2),
    "__ipow__": (lambda x: x.__ipow__(3), lambda x: x ** 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_writes_result_and_bumps_version(name):
    inplace, outplace = CASES[name]
    x = _x()
    expected = outplace(_x())
    v = x._version
    out = inplace(x)
    assert out is x
    assert x._version == v + 1
    np.testing.assert_array_equal(x.numpy(), expected.numpy())


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_on_leaf_requiring_grad_raises(name):
    inplace, _ = CASES[name]
    x = _x().requires_grad_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        inplace(x)
    with rg.no_grad():
        inplace(x)
    assert x.is_leaf and x.requires_grad


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_gradient_matches_out_of_place(name):
    inplace, outplace = CASES[name]
    w = rg.tensor([[0.3, -0.7, 1.1], [2.0, 0.2, -0.4]], dtype=rg.float64)
    grads = []
    for fn in (inplace, outplace):
        x = _x().requires_grad_()
        y = x * 1.5
        z = fn(y)
        (z * w).sum().backward()
        grads.append(x.grad.numpy().copy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_inplace_turns_tensor_into_non_leaf_when_other_requires_grad():
    x = rg.zeros(3, dtype=rg.float64)
    y = rg.ones(3, dtype=rg.float64, requires_grad=True)
    x.add_(y)
    assert x.requires_grad and not x.is_leaf
    x.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.ones(3))


def test_setitem_bumps_version_and_routes_gradients():
    torch = pytest.importorskip("torch")
    data = np.arange(12.0).reshape(3, 4)
    v = np.array([10.0, 20.0])
    results = []
    for lib in (rg, torch):
        x = lib.tensor(data, requires_grad=True)
        val = lib.tensor(v, requires_grad=True)
        y = x * 2
        before = y._version
        y[lib.tensor([0, 2]), -1] = val
        y[1, 1:3] = 0.0
        y[y > 15] = -1.0
        assert y._version == before + 3
        (y * lib.tensor(data)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), val.grad.numpy()))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b)


def test_max_with_dim_returns_values_and_indices():
    x = rg.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]], requires_grad=True)
    values, indices = x.max(dim=1)
    out = x.max(1)
    assert out.values is not None and out.indices is not None
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert values.requires_grad and not indices.requires_grad
    assert indices.dtype is rg.int64


def test_comparisons_and_argmax_do_not_require_grad():
    x = rg.tensor([1.0, -2.0], requires_grad=True)
    for out in (x > 0, x == x, x.argmax(), x.argmin(0), rg.isnan(x)):
        assert not out.requires_grad and out.grad_fn is None
    for out in (x.sign(), x.round(), x.floor()):
        assert out.requires_grad
    x.sign().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["int64", "bool", "int32"])
def test_inplace_result_that_cannot_be_cast_back_raises_torchs_message(dtype):
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (rg, torch):
        x = lib.zeros(2, dtype=getattr(lib, dtype))
        with pytest.raises(RuntimeError) as info:
            x.add_(lib.ones(2) * 0.5)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
