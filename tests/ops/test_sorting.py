"""Sorting and selection: PyTorch's named tuples, errors and gradients (the op sweep checks the values)."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

X = np.array([[3., 1., 2., 7.], [0., 5., 6., 4.]])


def _error(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc), str(exc).split("\n")[0]
    return None


@pytest.mark.parametrize("name", ["sort", "topk", "kthvalue", "median", "mode"])
def test_results_are_the_named_tuples_of_torch(name):
    args = {"topk": (2,), "kthvalue": (2,), "median": (1,)}.get(name, ())
    ours = getattr(rg, name)(rg.tensor(X), *args)
    theirs = getattr(torch, name)(torch.tensor(X), *args)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours._fields == ("values", "indices")
    assert ours.indices.dtype == rg.int64
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


@pytest.mark.parametrize("call", [
    lambda m, x: m.topk(x, 5),
    lambda m, x: m.topk(x, -1),
    lambda m, x: m.kthvalue(x, 5),
    lambda m, x: m.kthvalue(x, 0, 0),
    lambda m, x: m.sort(x, 2),
    lambda m, x: m.argsort(x, -3),
    lambda m, x: m.mode(x, 3),
    lambda m, x: m.median(m.ones(2, 0), 1),
    lambda m, x: m.mode(m.ones(2, 0), 1),
    lambda m, x: m.kthvalue(m.ones(0, 3), 1, 0),
], ids=["topk-k-too-large", "topk-negative-k", "kthvalue-k-too-large", "kthvalue-k-zero", "sort-dim", "argsort-dim",
        "mode-dim", "median-empty-dim", "mode-empty-dim", "kthvalue-empty-dim"])
def test_bad_arguments_raise_as_torch(call):
    expected = _error(lambda: call(torch, torch.tensor(X)))
    assert expected is not None
    assert _error(lambda: call(rg, rg.tensor(X))) == expected


def test_methods_are_the_functions():
    x = rg.tensor(X)
    assert rg.equal(x.sort(descending=True).values, rg.sort(x, descending=True).values)
    assert rg.equal(x.argsort(0), rg.argsort(x, 0))
    assert rg.equal(x.topk(1).indices, rg.topk(x, 1).indices)
    assert rg.equal(x.kthvalue(1).values, rg.kthvalue(x, 1).values)
    assert rg.equal(x.median(), rg.median(x))
    assert rg.equal(x.mode().values, rg.mode(x).values)
    assert rg.equal(x.msort(), rg.msort(x))


def test_selected_values_send_their_gradient_to_where_they_came_from():
    x = rg.tensor(X, requires_grad=True)
    v = rg.topk(x, 2, dim=1).values
    assert type(v.grad_fn).__name__ == "TopkBackward0"
    (v * rg.tensor([[1., 10.], [100., 1000.]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[10., 0., 0., 1.], [0., 1000., 100., 0.]])


def test_indices_never_require_grad():
    x = rg.tensor(X, requires_grad=True)
    for result in (rg.sort(x), rg.topk(x, 1), rg.kthvalue(x, 1), rg.median(x, 0), rg.mode(x)):
        assert result.values.requires_grad and not result.indices.requires_grad
    assert not rg.argsort(x).requires_grad


def test_median_of_nan_sends_the_gradient_to_the_nans():
    x = rg.tensor([1., float("nan"), 3., float("nan")], requires_grad=True)
    t = torch.tensor(x.detach().numpy(), requires_grad=True)
    rg.median(x).backward()
    torch.median(t).backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_sorting_an_integer_tensor_keeps_its_dtype():
    x = rg.tensor([3, 1, 2], dtype=rg.int32)
    assert rg.sort(x).values.dtype == rg.int32
    assert rg.median(x).dtype == rg.int32
    assert rg.topk(x, 1).values.dtype == rg.int32
