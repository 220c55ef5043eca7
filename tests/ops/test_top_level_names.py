"""PyTorch's top-level names of functional and linear-algebra ops (retrograd/_top_level.py, ops/cholesky.py):
what the op sweep (tests/ops/samples_toplevel.py) cannot show, against torch on the same numbers: the names PyTorch
keeps only to raise, random and shape-only results, and errors.
"""

import numpy as np
import pytest
from errors_like_torch import first_sentence

import retrograd as rg

torch = pytest.importorskip("torch")


def _outcome(call, lib):
    try:
        return ("ok", call(lib))
    except Exception as exc:  # noqa: BLE001 - compared with PyTorch's
        return (type(exc), first_sentence(exc))


@pytest.mark.parametrize("call", [
    lambda lib: lib.eig(lib.eye(2)),
    lambda lib: lib.symeig(lib.eye(2)),
    lambda lib: lib.lstsq(lib.eye(2), lib.eye(2)),
    lambda lib: lib.solve(lib.eye(2), lib.eye(2)),
    lambda lib: lib.matrix_rank(lib.eye(2)),
    lambda lib: lib.eye(2).eig(),
    lambda lib: lib.eye(2).solve(lib.eye(2)),
    lambda lib: lib.broadcast_shapes((2, 1), (1, 3), (4, 1, 5)),
    lambda lib: lib.unravel_index(lib.tensor([1.0]), (2, 4)),
    lambda lib: lib.feature_dropout(lib.ones(3), 0.5, True),
    lambda lib: lib.dropout(lib.ones(3), 1.5, True),
    lambda lib: lib.alpha_dropout_(lib.ones(3), -0.5, False),
    lambda lib: lib.feature_alpha_dropout(lib.ones(2, 3), 2.0, True),
], ids=["eig", "symeig", "lstsq", "solve", "matrix_rank", "Tensor.eig", "Tensor.solve", "broadcast_shapes",
        "unravel_index of floats", "feature_dropout of 1-d", "dropout p",
        "alpha_dropout_ p", "feature_alpha_dropout p"])
def test_errors_match_torch(call):
    ours, theirs = _outcome(call, rg), _outcome(call, torch)
    assert ours[0] is theirs[0] and ours[0] is not "ok"  # noqa: F632
    assert ours[1] == theirs[1]  # first_sentence reads both libraries' names as "retrograd."


def test_shapes_and_indices_match_torch():
    for shapes in [((2, 1), (3,)), ((), (4, 1), 5), ((0, 1), (1, 3))]:
        assert tuple(rg.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    flat = [0, 5, 7, 9, -1]
    ours = rg.unravel_index(rg.tensor(flat), (2, 4))
    theirs = torch.unravel_index(torch.tensor(flat), (2, 4))
    assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]


def test_feature_dropout_drops_whole_channels():
    rg.manual_seed(0)
    x = rg.ones(8, 6, 5, dtype=rg.float64, requires_grad=True)
    y = rg.feature_dropout(x, 0.5, True)
    per_channel = y.detach().numpy()
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel == per_channel[:, :, :1]).all()  # each channel all kept or all dropped
    assert y.grad_fn.name() == torch.feature_dropout(torch.ones(2, 2, 2, requires_grad=True), 0.5,
                                                     True).grad_fn.name()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), per_channel)
    assert rg.feature_dropout(x, 0.5, False) is x


@pytest.mark.parametrize("some", [True, False])
def test_svd_without_vectors_matches_torch(some):
    a = np.random.default_rng(3).standard_normal((3, 4, 2))
    ours, theirs = rg.svd(rg.tensor(a), some=some, compute_uv=False), torch.svd(torch.tensor(a), some=some,
                                                                               compute_uv=False)
    for o, t in zip(ours, theirs, strict=True):
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-12)


def test_inplace_celu_and_selu_record_torchs_nodes():
    names = []
    for lib in (rg, torch):
        x = lib.tensor([-1.0, 0.5], dtype=lib.float64, requires_grad=True)
        names.append((lib.celu_(x * 1).grad_fn.name(), lib.selu_(x * 1).grad_fn.name()))
    assert names[0] == names[1] == ("CeluBackward1", "EluBackward1")


def test_triangular_solve_returns_its_coefficient_and_gradients_as_torch():
    rng = np.random.default_rng(5)
    b, a = rng.standard_normal((3, 2)), np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    found = []
    for lib in (rg, torch):
        bt, at = lib.tensor(b, requires_grad=True), lib.tensor(a, requires_grad=True)
        out = lib.triangular_solve(bt, at)
        assert type(out).__name__ == "triangular_solve"
        (out.solution.sum() + (out.cloned_coefficient * 2).sum()).backward()
        found.append((out.solution.detach().numpy(), out.cloned_coefficient.detach().numpy(), bt.grad.numpy(),
                      at.grad.numpy()))
    for x, y in zip(*found, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
@pytest.mark.parametrize("args", [(7,), (6, False), (1,), (0,)])
def test_windows_match_torch(name, args):
    ours, theirs = getattr(rg, name)(*args), getattr(torch, name)(*args)
    assert ours.dtype is rg.float32 and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-6, atol=2e-7)  # PyTorch computes in float32
    wide = getattr(rg, name)(*args, dtype=rg.float64, requires_grad=True)
    assert wide.requires_grad and wide.is_leaf
    np.testing.assert_allclose(wide.detach().numpy(), getattr(torch, name)(*args, dtype=torch.float64).numpy(),
                               atol=1e-14)


def test_window_parameters_and_logspace_match_torch():
    pairs = [(rg.hamming_window(5, False, 0.5, 0.5), torch.hamming_window(5, False, alpha=0.5, beta=0.5)),
             (rg.kaiser_window(6, True, 5.0), torch.kaiser_window(6, True, 5.0)),
             (rg.logspace(-1, 2, 4, dtype=rg.float64), torch.logspace(-1, 2, 4, dtype=torch.float64)),
             (rg.logspace(0, 1, 5, base=2.0), torch.logspace(0, 1, 5, base=2.0)),
             (rg.logspace(0, 2, 3, dtype=rg.int64), torch.logspace(0, 2, 3, dtype=torch.int64))]
    for ours, theirs in pairs:
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda lib: lib.hann_window(-1),
    lambda lib: lib.cov(lib.ones(2, 2, 2)),
    lambda lib: lib.quantile(lib.tensor([]), 0.5),
    lambda lib: lib.quantile(lib.ones(3), 1.5),
    lambda lib: lib.quantile(lib.ones(3), lib.ones(2, 2) * 0.5),
    lambda lib: lib.quantile(lib.tensor([1, 2]), 0.5),
    lambda lib: lib.nanquantile(lib.ones(3), lib.tensor([0.5], dtype=lib.float64)),
    lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="foo"),
], ids=["negative window", "cov of 3-d", "quantile of none", "q above 1", "2-d q", "integer quantile",
        "q of another dtype", "unknown interpolation"])
def test_factory_and_statistics_errors_match_torch(call):
    ours, theirs = _outcome(call, rg), _outcome(call, torch)
    assert ours[0] is theirs[0] and ours[1] == theirs[1]
