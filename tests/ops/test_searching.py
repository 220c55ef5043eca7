"""Searching and counting: PyTorch's results, dtypes and errors (the op sweep checks the values)."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def _error(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc), str(exc).split("\n")[0]
    return None


ERRORS = {
    "searchsorted-side-and-right": lambda m: m.searchsorted(m.tensor([1, 3]), m.tensor([3]), side="left", right=True),
    "searchsorted-leading-dims": lambda m: m.searchsorted(m.tensor([[1, 3, 5]]), m.tensor([[3], [5]])),
    "bucketize-2d-boundaries": lambda m: m.bucketize(m.tensor([1, 3]), m.tensor([[1, 3, 5]])),
    "histc-integers": lambda m: m.histc(m.tensor([1, 2]), bins=4),
    "histc-min-above-max": lambda m: m.histc(m.tensor([1., 2.]), bins=4, min=3, max=1),
    "histc-no-bins": lambda m: m.histc(m.tensor([1., 2.]), bins=0),
    "bincount-negative": lambda m: m.bincount(m.tensor([1, -1])),
    "bincount-2d": lambda m: m.bincount(m.tensor([[1]])),
    "bincount-floats": lambda m: m.bincount(m.tensor([1.])),
    "bincount-minlength": lambda m: m.bincount(m.tensor([1, 2]), minlength=-1),
    "bincount-weights": lambda m: m.bincount(m.tensor([1, 2]), weights=m.tensor([1.])),
    "unique-dim": lambda m: m.unique(m.tensor([1, 2]), dim=1),
    "all-dim": lambda m: m.all(m.tensor([True]), dim=2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_arguments_raise_as_torch(name):
    expected = _error(lambda: ERRORS[name](torch))
    assert expected is not None
    assert _error(lambda: ERRORS[name](rg)) == expected


def test_unique_returns_what_its_flags_ask_for():
    x = [3, 1, 3, 2]
    for flags in ({}, {"return_inverse": True}, {"return_counts": True},
                  {"return_inverse": True, "return_counts": True}):
        ours, theirs = rg.unique(rg.tensor(x), **flags), torch.unique(torch.tensor(x), **flags)
        assert isinstance(ours, tuple) == isinstance(theirs, tuple)
        for o, t in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,),
                        strict=True):
            np.testing.assert_array_equal(o.numpy(), t.numpy())
            assert o.dtype.name == str(t.dtype).replace("torch.", "")


def test_nonzero_as_tuple_indexes_the_nonzero_elements():
    x = rg.tensor([[0., 2.], [3., 0.]])
    assert rg.equal(x[rg.nonzero(x, as_tuple=True)], rg.tensor([2., 3.]))


def test_results_never_require_grad():
    # unique and unique_consecutive do, as PyTorch's (their backward raises): tests/autograd/test_pytorch_suite_*
    x = rg.tensor([0., 1., 1., 3.], requires_grad=True)
    for r in (rg.nonzero(x), rg.argwhere(x), rg.count_nonzero(x), rg.all(x), rg.any(x),
              rg.histc(x, 3), rg.isin(x, rg.tensor([1.])), rg.bucketize(x, rg.tensor([0.5, 2.])),
              rg.searchsorted(rg.tensor([0.5, 2.]), x)):
        assert not r.requires_grad


def test_methods_are_there_where_torch_has_them():
    x = rg.tensor([1, 0, 2])
    for name in ("nonzero", "argwhere", "unique", "unique_consecutive", "count_nonzero", "all", "any", "bincount"):
        assert hasattr(torch.Tensor, name) and hasattr(rg.Tensor, name), name
        np.testing.assert_array_equal(np.asarray(getattr(x, name)().numpy()),
                                      getattr(torch.tensor([1, 0, 2]), name)().numpy())


@pytest.mark.parametrize("call", [lambda m, x: m.unique(x), lambda m, x: m.unique(x, dim=0),
                                  lambda m, x: m.unique_consecutive(x)], ids=["unique", "unique_dim", "consecutive"])
def test_unique_values_carry_a_node_whose_backward_is_not_implemented_as_in_torch(call):
    torch = pytest.importorskip("torch")
    seen = []
    for m in (rg, torch):
        x = m.tensor([0., 1., 1., 3.], requires_grad=True)
        r = call(m, x)
        with pytest.raises(NotImplementedError) as e:
            r.sum().backward()
        seen.append((r.requires_grad, type(r.grad_fn).__name__, str(e.value)))
    assert seen[0] == seen[1]
