"""MultivariateNormal and the Cholesky and triangular solves it stands on, against torch."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.distributions._linalg import cholesky, solve_triangular

torch = pytest.importorskip("torch")

_r = np.random.default_rng(11)
_M = _r.normal(size=(2, 3, 3))
COV = _M @ _M.transpose(0, 2, 1) + np.eye(3)
LOC = _r.normal(size=(2, 3))
X = _r.normal(size=(4, 2, 3))
MATRICES = {"covariance_matrix": COV, "precision_matrix": np.linalg.inv(COV), "scale_tril": np.linalg.cholesky(COV)}


def _run(lib, kind):
    loc, mat = lib.tensor(LOC, requires_grad=True), lib.tensor(MATRICES[kind], requires_grad=True)
    d = lib.distributions.MultivariateNormal(loc, **{kind: mat})
    q = lib.distributions.MultivariateNormal(lib.tensor(LOC[::-1].copy()),
                                             covariance_matrix=lib.tensor(COV[::-1].copy()))
    lp, ent, kl = d.log_prob(lib.tensor(X)), d.entropy(), lib.distributions.kl_divergence(d, q)
    (lp.sum() + ent.sum() + kl.sum()).backward()
    e = d.expand((5, 2))
    return [lp, ent, kl, loc.grad, mat.grad, d.covariance_matrix, d.precision_matrix, d.scale_tril, d.variance,
            d.mean, e.log_prob(lib.tensor(X[0])), lib.tensor(tuple(e.batch_shape) + tuple(e.event_shape))]


@pytest.mark.parametrize("kind", list(MATRICES))
def test_log_prob_entropy_kl_gradients_and_parametrisations_match_torch(kind):
    for ours, theirs in zip(_run(rg, kind), _run(torch, kind), strict=True):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_rsample_gradient_passes_gradcheck():
    loc = rg.tensor(LOC[0], requires_grad=True)
    tril = rg.tensor(np.linalg.cholesky(COV[0]), requires_grad=True)

    def sample(m, t):
        rg.manual_seed(3)
        return rg.distributions.MultivariateNormal(m, scale_tril=t.tril()).rsample((4,))
    assert rg.autograd.gradcheck(sample, (loc, tril))


def test_samples_have_the_mean_and_covariance():
    rg.manual_seed(5)
    d = rg.distributions.MultivariateNormal(rg.tensor(LOC[0]), covariance_matrix=rg.tensor(COV[0]))
    s = d.sample((40000,)).numpy()
    assert s.shape == (40000, 3)
    np.testing.assert_allclose(s.mean(0), LOC[0], atol=5 * np.sqrt(COV[0].diagonal().max() / 40000))
    np.testing.assert_allclose(np.cov(s.T), COV[0], rtol=0.05, atol=0.05 * COV[0].max())


def test_cholesky_and_solve_triangular_pass_gradcheck_and_gradgradcheck():
    a = rg.tensor(COV, requires_grad=True)
    sym = lambda t: cholesky((t + t.transpose(-2, -1)) / 2)  # noqa: E731 - the derivative is for symmetric inputs
    assert rg.autograd.gradcheck(sym, (a,)) and rg.autograd.gradgradcheck(sym, (a,))
    lower = rg.tensor(np.linalg.cholesky(COV), requires_grad=True)
    b = rg.tensor(_r.normal(size=(3, 2)), requires_grad=True)
    for upper, transpose in ((False, False), (True, True)):
        f = lambda t, y, u=upper, tr=transpose: solve_triangular(t, y, upper=u, transpose=tr)  # noqa: E731
        assert rg.autograd.gradcheck(f, (lower, b)) and rg.autograd.gradgradcheck(f, (lower, b))


def test_cholesky_of_an_indefinite_matrix_raises_as_torch():
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(RuntimeError) as ours:
        cholesky(rg.tensor(bad))
    with pytest.raises(RuntimeError) as theirs:
        torch.linalg.cholesky(torch.tensor(bad))
    assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.distributions.MultivariateNormal(lib.tensor(0.0), lib.eye(1)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), covariance_matrix=lib.ones(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), scale_tril=lib.ones(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), precision_matrix=lib.ones(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), scale_tril=-lib.eye(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.zeros(3)),
    lambda lib: lib.distributions.kl_divergence(lib.distributions.MultivariateNormal(lib.zeros(2), lib.eye(2)),
                                                lib.distributions.MultivariateNormal(lib.zeros(3), lib.eye(3))),
], ids=["loc_0d", "no_matrix", "two_matrices", "covariance_1d", "scale_tril_1d", "precision_1d",
        "scale_tril_negative", "value_event_shape", "kl_event_shapes"])
def test_bad_arguments_raise_as_torch(call):
    errors = []
    for lib in (rg, torch):
        with pytest.raises(ValueError) as info:
            call(lib)
        message = str(info.value).replace("torch.", "retrograd.").split(", but found")[0].split("\n")[0]
        errors.append(" ".join(message.split()))  # PyTorch's KL message has a run of spaces inside
    assert errors[0] == errors[1]


def test_constraints_print_as_torch():
    ours = rg.distributions.MultivariateNormal(rg.zeros(2), rg.eye(2))
    theirs = torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    assert repr(ours.support) == repr(theirs.support)
    assert {k: repr(v) for k, v in ours.arg_constraints.items()} == \
        {k: repr(v) for k, v in theirs.arg_constraints.items()}
