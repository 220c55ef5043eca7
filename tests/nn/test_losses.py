"""The loss modules beyond the basic six, and the losses' errors and warnings, against PyTorch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as RF

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

_rng = np.random.default_rng(11)
X, Y = _rng.uniform(-2, 2, (4, 3)), _rng.uniform(-2, 2, (4, 3))
SIGNS = np.sign(_rng.uniform(-1, 1, (4, 3)))
ROW_SIGNS = np.array([1., -1., 1., -1.])
COUNTS = _rng.integers(0, 5, (4, 3)).astype(np.float64)
LOGP = np.log(_rng.dirichlet(np.ones(3), 4))
P = _rng.dirichlet(np.ones(3), 4)

# (module name, constructor kwargs, inputs, how many leading inputs require grad): arrays for both libraries.
MODULES = [
    ("SmoothL1Loss", {"beta": 0.5}, (X, Y), 2),
    ("HuberLoss", {"delta": 0.5}, (X, Y), 2),
    ("KLDivLoss", {"reduction": "batchmean"}, (LOGP, P), 2),
    ("KLDivLoss", {"log_target": True, "reduction": "sum"}, (LOGP, np.log(P)), 2),
    ("CosineEmbeddingLoss", {"margin": 0.1}, (X, Y, ROW_SIGNS), 2),
    ("MarginRankingLoss", {"margin": 0.2}, (X[:, 0], Y[:, 0], ROW_SIGNS), 2),
    ("HingeEmbeddingLoss", {"margin": 2.0}, (np.abs(X), SIGNS), 1),
    ("TripletMarginLoss", {"margin": 0.5, "swap": True}, (X, Y, X[::-1].copy()), 3),
    ("SoftMarginLoss", {}, (X, SIGNS), 1),
    ("MultiLabelSoftMarginLoss", {}, (X, (SIGNS > 0).astype(np.float64)), 1),
    ("PoissonNLLLoss", {"full": True}, (X, COUNTS), 1),
    ("GaussianNLLLoss", {"full": True}, (X, Y, np.abs(Y) + 0.1), 3),
    ("CosineSimilarity", {"dim": 1}, (X, Y), 2),
    ("PairwiseDistance", {"p": 1.0}, (X, Y), 2),
    ("LogSigmoid", {}, (X,), 1),
]


@pytest.mark.parametrize("name,kwargs,inputs,ngrad", MODULES, ids=[m[0] + str(i) for i, m in enumerate(MODULES)])
def test_loss_module_forward_and_gradients_match_torch(name, kwargs, inputs, ngrad):
    ours = [rg.tensor(a, requires_grad=i < ngrad) for i, a in enumerate(inputs)]
    theirs = [torch.tensor(a, requires_grad=i < ngrad) for i, a in enumerate(inputs)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(rg.nn, name)(**kwargs)(*ours)
        ref = getattr(torch.nn, name)(**kwargs)(*theirs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    out.sum().backward()
    ref.sum().backward()
    for o, t in zip(ours, theirs):
        if t.grad is not None:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "SoftMarginLoss",
                                  "PoissonNLLLoss", "MarginRankingLoss", "TripletMarginLoss"])
def test_loss_module_repr_matches_torch(name):
    assert repr(getattr(rg.nn, name)()) == repr(getattr(torch.nn, name)())


def _same_error(call):
    """Both libraries raise the same type with the same first sentence."""
    with pytest.raises(Exception) as mine:
        call(rg, RF)
    with pytest.raises(Exception) as ref:
        call(torch, TF)
    assert type(mine.value).__name__ == type(ref.value).__name__ or isinstance(mine.value, type(ref.value))
    first = str(ref.value).replace("torch.Size", "retrograd.Size").split(". ")[0]
    assert str(mine.value).split(". ")[0] == first


@pytest.mark.parametrize("call", [
    lambda lib, F: F.huber_loss(lib.zeros(2), lib.zeros(2), delta=0.0),
    lambda lib, F: F.huber_loss(lib.zeros(2), lib.zeros(2), weight=lib.ones(3)),
    lambda lib, F: F.mse_loss(lib.zeros(2), lib.zeros(2), weight=lib.ones(3)),
    lambda lib, F: F.smooth_l1_loss(lib.zeros(2), lib.zeros(2), beta=-1.0),
    lambda lib, F: F.gaussian_nll_loss(lib.zeros(2), lib.zeros(2), -1.0),
    lambda lib, F: F.gaussian_nll_loss(lib.zeros(2), lib.zeros(2), lib.tensor([1.0, -1.0])),
    lambda lib, F: F.gaussian_nll_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.ones(3, 3)),
    lambda lib, F: F.gaussian_nll_loss(lib.zeros(2), lib.zeros(2), lib.ones(2), reduction="avg"),
    lambda lib, F: F.triplet_margin_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(2, 3), margin=0.0),
    lambda lib, F: F.triplet_margin_loss(lib.zeros(2, 3), lib.zeros(3), lib.zeros(2, 3)),
    lambda lib, F: F.margin_ranking_loss(lib.zeros(2), lib.zeros(2, 1), lib.ones(2)),
    lambda lib, F: lib.nn.TripletMarginLoss(margin=-1.0),
    lambda lib, F: F.smooth_l1_loss(lib.zeros(2), lib.zeros(2), reduction="avg"),
], ids=["huber_delta", "huber_weight", "mse_weight", "smooth_l1_beta", "gaussian_var_float", "gaussian_var",
        "gaussian_var_shape", "gaussian_reduction", "triplet_margin", "triplet_dims", "ranking_dims",
        "triplet_module_margin", "bad_reduction"])
def test_loss_errors_match_torch(call):
    _same_error(call)


def test_kl_div_mean_warns_as_torch():
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both the batch size"):
        RF.kl_div(rg.tensor(LOGP), rg.tensor(P))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RF.kl_div(rg.tensor(LOGP), rg.tensor(P), reduction="batchmean")


def test_smooth_l1_loss_warns_on_broadcasting_shapes():
    with pytest.warns(UserWarning, match=r"Using a target size \(retrograd.Size\(\[1\]\)\) that is different"):
        RF.smooth_l1_loss(rg.zeros(3), rg.zeros(1))


def test_logsigmoid_does_not_overflow():
    out = RF.logsigmoid(rg.tensor([-1000.0, 0.0, 1000.0], dtype=rg.float64))
    np.testing.assert_allclose(out.numpy(), [-1000.0, -np.log(2.0), 0.0], rtol=1e-12)


# nll_loss tells targets that are all classes from ignored or out-of-range ones as Python ints up to 16
# targets, by one unsigned reduction above; PyTorch's ignore_index (-100) is no class, 0 and 2 are.
@pytest.mark.parametrize("n", [3, 20])
@pytest.mark.parametrize("ignore_index", [-100, 0, 2])
@pytest.mark.parametrize("ignored", [False, True])
@pytest.mark.parametrize("dtype", ["int64", "uint8"])
def test_cross_entropy_targets_classes_and_ignored_as_torch(n, ignore_index, ignored, dtype):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 4))
    y = rng.integers(0, 4, n)
    if ignored:
        y[1] = ignore_index
        if dtype == "uint8" and ignore_index < 0:
            pytest.skip("a uint8 target holds no negative ignore_index")
    grads = []
    for lib, F in ((rg, RF), (torch, TF)):
        xt = lib.tensor(x, requires_grad=True)
        loss = F.cross_entropy(xt, lib.tensor(y.astype(dtype)), ignore_index=ignore_index)
        grads.append((loss.detach().numpy(), lib.autograd.grad(loss, xt)[0].numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n", [3, 20])
@pytest.mark.parametrize("bad", [-1, 4])
def test_nll_loss_target_out_of_bounds_as_torch(n, bad):
    y = np.zeros(n, dtype=np.int64)
    y[-1] = bad
    _same_error(lambda lib, F: F.nll_loss(lib.zeros(n, 4), lib.tensor(y)))
