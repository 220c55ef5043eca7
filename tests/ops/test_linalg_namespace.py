"""retrograd.linalg against torch.linalg: what the op sweep cannot see (errors, integer results, named tuples),
and the errors and non-differentiable results of the other ops of PyTorch's list."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(rg)`` and ``fn(torch)``: each a result, or the exception's type name and first sentence."""
    out = []
    for m in (rg, torch):
        try:
            out.append(("ok", fn(m)))
        except Exception as exc:  # noqa: BLE001 - the point is to compare them
            name = "LinAlgError" if type(exc).__name__ in ("LinAlgError", "_LinAlgError") else type(exc).__name__
            out.append((name, str(exc).split(". ")[0].split("\n")[0]))
    return out


def _same_error(fn):
    ours, theirs = _both(fn)
    assert ours[0] != "ok" and ours == theirs


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(m.tensor([[1., 2.], [2., 4.]])),
    lambda m: m.linalg.inv(m.zeros(2, 3, 3)),
    lambda m: m.linalg.solve(m.zeros(2, 2), m.ones(2)),
    lambda m: m.linalg.cholesky(m.tensor([[1., 2.], [2., 1.]])),
    lambda m: m.linalg.cholesky(m.stack([m.eye(2), m.tensor([[1., 2.], [2., 1.]])])),
], ids=["inv", "inv batched", "solve", "cholesky", "cholesky batched"])
def test_singular_and_indefinite_inputs_raise_linalg_error_as_pytorch(call):
    _same_error(call)


def test_linalg_error_is_a_runtime_error():
    assert issubclass(rg.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError):
        rg.linalg.inv(rg.zeros(2, 2))
    assert rg.linalg.inv(rg.eye(2)).tolist() == [[1., 0.], [0., 1.]]  # and the next call works


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(m.ones(2, 3)),
    lambda m: m.linalg.det(m.ones(2, 3)),
    lambda m: m.linalg.cross(m.ones(2), m.ones(2)),
    lambda m: m.linalg.cross(m.ones(2, 3), m.ones(3)),
    lambda m: m.rot90(m.ones(2, 2), 1, [0, 0]),
    lambda m: m.rot90(m.ones(2), 1),
    lambda m: m.fliplr(m.ones(2)),
    lambda m: m.flipud(m.tensor(1.)),
    lambda m: m.combinations(m.ones(2, 2)),
    lambda m: m.vander(m.ones(2, 2)),
    lambda m: m.repeat_interleave(m.ones(3), m.tensor([1, 2])),
    lambda m: m.repeat_interleave(m.ones(3), -1),
    lambda m: m.meshgrid(m.ones(2), m.ones(2), indexing="yx"),
    lambda m: m.isclose(m.tensor([1, 2]), m.tensor([1., 2.])),
    lambda m: m.nanmean(m.tensor([1, 2])),
    lambda m: m.diff(m.tensor(1.)),
    lambda m: m.scatter_reduce(m.ones(3), 0, m.tensor([0]), m.ones(1), "maximum"),
    lambda m: m.ones(3).unfold(0, 4, 1),
    lambda m: m.linalg.matrix_power(m.ones(2, 3), 2),
], ids=["inv not square", "det not square", "cross not 3", "cross ranks", "rot90 same dims", "rot90 1-d", "fliplr",
        "flipud", "combinations", "vander", "repeat_interleave sizes", "repeat_interleave negative", "meshgrid",
        "isclose dtypes", "nanmean ints", "diff 0-d", "scatter_reduce reduce", "unfold size", "matrix_power"])
def test_bad_arguments_raise_as_pytorch(call):
    _same_error(call)


def test_qr_backward_errors_are_pytorch_s():
    for mode, shape in (("r", (3, 2)), ("complete", (3, 2))):
        def call(m, mode=mode, shape=shape):
            a = m.ones(*shape, dtype=m.float64).requires_grad_()
            out = m.linalg.qr(a + m.eye(*shape, dtype=m.float64), mode=mode)
            out.R.sum().backward()
        _same_error(call)


def test_scatter_with_reduce_records_a_node_whose_backward_raises_as_pytorch():
    def call(m):
        x = m.ones(3, dtype=m.float64).requires_grad_()
        y = x.scatter(0, m.tensor([0, 0]), m.ones(2, dtype=m.float64), reduce="add")
        assert y.requires_grad
        y.sum().backward()
    _same_error(call)


def _values(x):
    return x.tolist() if hasattr(x, "tolist") else x


def test_integer_and_info_results_match_pytorch():
    calls = [
        lambda m: m.linalg.matrix_rank(m.tensor([[1., 2.], [2., 4.]])),
        lambda m: m.linalg.matrix_rank(m.eye(3, dtype=m.float64), atol=0.5, rtol=0.),
        lambda m: m.linalg.cholesky_ex(m.tensor([[1., 2.], [2., 1.]])).info,
        lambda m: m.linalg.inv_ex(m.tensor([[1., 2.], [2., 4.]])).info,
        lambda m: m.linalg.inv_ex(m.eye(2)).info,
        lambda m: m.triu_indices(3, 4, 1), lambda m: m.tril_indices(4, 3, -1), lambda m: m.triu_indices(0, 3),
        lambda m: m.repeat_interleave(m.tensor([2, 0, 3])),
        lambda m: m.tensor([1, 2]).type_as(m.tensor([1.])), lambda m: m.ones(2).type_as(m.ones(2, dtype=m.float64)),
        lambda m: m.ones(2, 3).is_contiguous(), lambda m: m.ones(2, 3).t().is_contiguous(),
        lambda m: m.ones(2, 3)[:, ::2].is_contiguous(), lambda m: m.ones(3, 1).t().is_contiguous(),
        lambda m: m.allclose(m.tensor([1., 2.]), m.tensor([1., 2.0001])),
        lambda m: m.tensor([1., 2.]).allclose(m.tensor([1., 2.0001]), rtol=1e-3),
        lambda m: m.allclose(m.tensor([float("nan")]), m.tensor([float("nan")]), equal_nan=True),
        lambda m: m.equal(m.tensor([1, 2]), m.tensor([1., 2.])), lambda m: m.tensor([1, 2]).equal(m.tensor([1])),
    ]
    for call in calls:
        ours, theirs = _both(call)
        assert ours[0] == theirs[0] == "ok"
        a, b = ours[1], theirs[1]
        assert _values(a) == _values(b)
        if hasattr(b, "dtype"):
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


def test_lstsq_fields_follow_pytorch_s_drivers():
    a = np.random.default_rng(0).standard_normal((4, 2))
    b = np.random.default_rng(1).standard_normal((4, 1))
    for driver in (None, "gelsd"):
        ours = rg.linalg.lstsq(rg.from_numpy(a), rg.from_numpy(b), driver=driver)
        theirs = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver=driver)
        assert type(ours).__name__ == type(theirs).__name__ == "linalg_lstsq"
        for o, t in zip(ours, theirs, strict=True):
            assert tuple(o.shape) == tuple(t.shape)
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def test_named_tuples_have_pytorch_s_names_and_fields():
    a = rg.tensor([[2., 1.], [1., 3.]])
    t = torch.tensor([[2., 1.], [1., 3.]])
    pairs = [(rg.linalg.slogdet(a), torch.linalg.slogdet(t)), (rg.slogdet(a), torch.slogdet(t)),
             (rg.linalg.qr(a), torch.linalg.qr(t)), (rg.linalg.svd(a), torch.linalg.svd(t)),
             (rg.linalg.eigh(a), torch.linalg.eigh(t)), (rg.linalg.cholesky_ex(a), torch.linalg.cholesky_ex(t)),
             (rg.linalg.inv_ex(a), torch.linalg.inv_ex(t)), (rg.aminmax(a), torch.aminmax(t)),
             (rg.cummax(a, 0), torch.cummax(t, 0)), (rg.cummin(a, 1), torch.cummin(t, 1))]
    for ours, theirs in pairs:
        assert type(ours).__name__ == type(theirs).__name__
        assert ours._fields == tuple(theirs._fields) if hasattr(theirs, "_fields") else len(ours) == len(theirs)


def test_second_derivatives_of_the_decompositions_pass_gradgradcheck():
    rng = np.random.default_rng(3)
    x = rg.from_numpy(rng.standard_normal((3, 3)) + 3 * np.eye(3)).requires_grad_()
    for fn in (lambda a: rg.linalg.inv(a), lambda a: rg.linalg.det(a),
               lambda a: rg.linalg.cholesky(a @ a.mT), lambda a: rg.linalg.eigvalsh(a + a.mT),
               lambda a: rg.linalg.solve(a, a.sum(0))):
        assert rg.autograd.gradgradcheck(fn, (x,))
