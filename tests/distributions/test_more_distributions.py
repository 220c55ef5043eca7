"""Exponential, Laplace, Gamma, Beta, Dirichlet, Poisson, Binomial, OneHotCategorical, Independent
against torch.distributions; their reparametrised samples by gradcheck."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

_r = np.random.default_rng(5)
A, B = _r.uniform(0.5, 3, (3,)), _r.uniform(0.5, 3, (3,))
COUNTS = np.array([5.0, 5.0, 5.0])

CASES = [
    ("Exponential", {"rate": A}, _r.uniform(0.1, 2, (3,))),
    ("Laplace", {"loc": A - 1, "scale": B}, _r.normal(size=(3,))),
    ("Gamma", {"concentration": A, "rate": B}, _r.uniform(0.1, 2, (3,))),
    ("Beta", {"concentration1": A, "concentration0": B}, _r.uniform(0.1, 0.9, (3,))),
    ("Dirichlet", {"concentration": _r.uniform(0.5, 3, (2, 3))}, _r.dirichlet(np.ones(3), 2)),
    ("Poisson", {"rate": A}, np.array([0.0, 2.0, 5.0])),
    ("Binomial", {"total_count": COUNTS, "probs": _r.uniform(0.1, 0.9, (3,))}, np.array([0.0, 2.0, 5.0])),
    ("Binomial", {"total_count": COUNTS, "logits": _r.normal(size=(3,))}, np.array([1.0, 3.0, 4.0])),
    ("OneHotCategorical", {"probs": _r.dirichlet(np.ones(4), 2)}, np.eye(4)[[1, 3]]),
    ("OneHotCategorical", {"logits": _r.normal(size=(2, 4))}, np.eye(4)[[0, 2]]),
]
IDS = [f"{c[0]}-{'-'.join(c[1])}" for c in CASES]


def _make(lib, name, params, requires_grad=False):
    tensors = {k: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad and k != "total_count")
               for k, v in params.items()}
    return getattr(lib.distributions, name)(**tensors), tensors


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name,params,value", CASES, ids=IDS)
def test_log_prob_entropy_moments_and_gradients_match_torch(name, params, value):
    ours, our_params = _make(rg, name, params, requires_grad=True)
    theirs, their_params = _make(torch, name, params, requires_grad=True)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))
    lp = ours.log_prob(rg.tensor(value, dtype=rg.float64))
    tlp = theirs.log_prob(torch.tensor(value, dtype=torch.float64))
    _close(lp, tlp)
    total, ttotal = lp.sum(), tlp.sum()
    if name != "Poisson":  # PyTorch's Poisson has no entropy
        ent, tent = ours.entropy(), theirs.entropy()
        _close(ent, tent)
        total, ttotal = total + ent.sum(), ttotal + tent.sum()
    for moment in ("mean", "variance", "stddev", "mode"):
        _close(getattr(ours, moment), getattr(theirs, moment))
    total.backward()
    ttotal.backward()
    for k, p in our_params.items():
        if p.requires_grad:
            _close(p.grad, their_params[k].grad, rtol=1e-7, atol=1e-9)  # digamma sums cancel


@pytest.mark.parametrize("name,params,value", CASES, ids=IDS)
def test_expand_matches_torch(name, params, value):
    ours, theirs = _make(rg, name, params)[0].expand((4,) + tuple(_make(rg, name, params)[0].batch_shape)), None
    base = _make(torch, name, params)[0]
    theirs = base.expand((4,) + tuple(base.batch_shape))
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) and tuple(ours.event_shape) == tuple(theirs.event_shape)
    _close(ours.log_prob(rg.tensor(value, dtype=rg.float64)), theirs.log_prob(torch.tensor(value, dtype=torch.float64)))
    assert tuple(ours.sample((2,)).shape) == tuple(theirs.sample((2,)).shape)


@pytest.mark.parametrize("name,params,value", CASES, ids=IDS)
def test_support_and_arg_constraints_print_as_torch(name, params, value):
    ours, theirs = _make(rg, name, params)[0], _make(torch, name, params)[0]
    if name != "Binomial":  # its support prints total_count, a tensor
        assert repr(ours.support) == repr(theirs.support)
    assert {k: repr(v) for k, v in ours.arg_constraints.items()} == \
        {k: repr(v) for k, v in theirs.arg_constraints.items()}


@pytest.mark.parametrize("make", [
    lambda a: rg.distributions.Gamma(a, rg.tensor([2.0, 0.5], dtype=rg.float64)).rsample((3,)),
    lambda a: rg.distributions.Beta(a, a.flip(0) + 0.5).rsample((3,)),
    lambda a: rg.distributions.Dirichlet(a).rsample((3,)),
    lambda a: rg.distributions.Exponential(a).rsample((3,)),
    lambda a: rg.distributions.Laplace(a, a * 2).rsample((3,)),
], ids=["Gamma", "Beta", "Dirichlet", "Exponential", "Laplace"])
def test_rsample_gradient_passes_gradcheck(make):
    a = rg.tensor([0.7, 2.5], dtype=rg.float64, requires_grad=True)

    def sample(t):
        rg.manual_seed(7)  # the same draws each call: the sample is a smooth function of the parameters
        return make(t)
    assert rg.autograd.gradcheck(sample, (a,))


@pytest.mark.parametrize("name,params,mean,var", [
    ("Exponential", {"rate": np.array([2.0])}, 0.5, 0.25),
    ("Laplace", {"loc": np.array([1.0]), "scale": np.array([0.5])}, 1.0, 0.5),
    ("Gamma", {"concentration": np.array([0.5]), "rate": np.array([2.0])}, 0.25, 0.125),
    ("Gamma", {"concentration": np.array([4.0]), "rate": np.array([1.0])}, 4.0, 4.0),
    ("Beta", {"concentration1": np.array([2.0]), "concentration0": np.array([3.0])}, 0.4, 0.04),
    ("Poisson", {"rate": np.array([3.0])}, 3.0, 3.0),
    ("Binomial", {"total_count": np.array([10.0]), "probs": np.array([0.3])}, 3.0, 2.1),
])
def test_samples_have_the_moments(name, params, mean, var):
    rg.manual_seed(3)
    s = _make(rg, name, params)[0].sample((20000,))
    assert tuple(s.shape) == (20000, 1) and s.dtype == rg.float64 and not s.requires_grad
    assert abs(s.mean().item() - mean) < 5 * np.sqrt(var / 20000)
    assert abs(s.var().item() - var) < 0.06 * var


def test_dirichlet_and_one_hot_samples_lie_in_their_support():
    rg.manual_seed(4)
    d = rg.distributions.Dirichlet(rg.tensor([0.3, 1.0, 2.0], dtype=rg.float64))
    s = d.sample((5000,))
    assert d.support.check(s)
    np.testing.assert_allclose(s.mean(0).numpy(), d.mean.numpy(), atol=0.02)
    oh = rg.distributions.OneHotCategorical(probs=rg.tensor([0.2, 0.8], dtype=rg.float64))
    draws = oh.sample((4000,))
    assert oh.support.check(draws) and abs(draws[:, 1].mean().item() - 0.8) < 0.03


def test_independent_sums_the_reinterpreted_dims_as_torch():
    loc, scale = _r.normal(size=(2, 3)), _r.uniform(0.5, 2, (2, 3))
    x = _r.normal(size=(2, 3))
    out = []
    for lib in (rg, torch):
        D = lib.distributions
        d = D.Independent(D.Normal(lib.tensor(loc), lib.tensor(scale)), 1)
        q = D.Independent(D.Normal(lib.tensor(scale), lib.tensor(loc ** 2 + 0.5)), 1)
        out.append((tuple(d.batch_shape), tuple(d.event_shape), d.log_prob(lib.tensor(x)).numpy(),
                    d.entropy().numpy(), D.kl_divergence(d, q).numpy(), repr(d.support),
                    tuple(d.expand((4, 2)).batch_shape), tuple(d.rsample((5,)).shape), d.has_rsample))
    for a, b in zip(*out):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        else:
            assert a == b


KL_CASES = [
    ("Exponential", {"rate": A}, {"rate": B}),
    ("Laplace", {"loc": A, "scale": B}, {"loc": B, "scale": A}),
    ("Gamma", {"concentration": A, "rate": B}, {"concentration": B, "rate": A}),
    ("Beta", {"concentration1": A, "concentration0": B}, {"concentration1": B, "concentration0": A}),
    ("Dirichlet", {"concentration": A}, {"concentration": B}),
    ("Poisson", {"rate": A}, {"rate": B}),
    ("Binomial", {"total_count": np.array([5.0, 6.0, 5.0]), "probs": A / 4},
     {"total_count": COUNTS, "probs": B / 4}),
    ("OneHotCategorical", {"logits": A}, {"logits": B}),
]


@pytest.mark.parametrize("name,p,q", KL_CASES, ids=[c[0] for c in KL_CASES])
def test_kl_divergence_matches_torch_with_gradients(name, p, q):
    (ours_p, pp), (ours_q, _) = _make(rg, name, p, True), _make(rg, name, q)
    (theirs_p, tp), (theirs_q, _) = _make(torch, name, p, True), _make(torch, name, q)
    kl, tkl = rg.distributions.kl_divergence(ours_p, ours_q), torch.distributions.kl_divergence(theirs_p, theirs_q)
    _close(kl, tkl)
    kl[kl.isfinite()].sum().backward()
    tkl[tkl.isfinite()].sum().backward()
    for k, t in pp.items():
        if t.requires_grad:
            _close(t.grad, tp[k].grad, rtol=1e-8)


def test_kl_exponential_gamma_matches_torch():
    D, T = rg.distributions, torch.distributions
    ours = D.kl_divergence(D.Exponential(rg.tensor(A)), D.Gamma(rg.tensor(B), rg.tensor(A)))
    theirs = T.kl_divergence(T.Exponential(torch.tensor(A)), T.Gamma(torch.tensor(B), torch.tensor(A)))
    _close(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda lib: lib.distributions.Gamma(lib.tensor([-1.0]), lib.tensor([1.0])),
    lambda lib: lib.distributions.Exponential(lib.tensor([0.0])),
    lambda lib: lib.distributions.Dirichlet(lib.tensor(1.0)),
    lambda lib: lib.distributions.Beta(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda lib: lib.distributions.Poisson(lib.tensor([1.0])).log_prob(lib.tensor([0.5])),
    lambda lib: lib.distributions.Dirichlet(lib.ones(3)).log_prob(lib.ones(2) / 2),
    lambda lib: lib.distributions.Exponential(lib.ones(3)).log_prob(lib.ones(2)),
    lambda lib: lib.distributions.Independent(lib.distributions.Normal(lib.zeros(2), lib.ones(2)), 2),
    lambda lib: lib.distributions.Binomial(lib.tensor([2.0, 3.0]), probs=lib.tensor([0.5, 0.5])).entropy(),
    lambda lib: lib.distributions.kl_divergence(lib.distributions.Binomial(2, probs=lib.tensor(0.5)),
                                                lib.distributions.Binomial(3, probs=lib.tensor(0.5))),
    lambda lib: lib.distributions.Binomial(2, probs=lib.tensor(0.5), logits=lib.tensor(0.0)),
    lambda lib: lib.distributions.OneHotCategorical(probs=lib.tensor([0.5, 0.5])).log_prob(lib.tensor([1.0, 1.0])),
], ids=["gamma_negative", "exponential_zero_rate", "dirichlet_0d", "beta_negative", "poisson_fraction",
        "dirichlet_event_shape", "exponential_not_broadcastable", "independent_too_many_dims",
        "binomial_inhomogeneous_entropy", "binomial_kl_larger_q", "binomial_probs_and_logits", "one_hot_not_one_hot"])
def test_bad_arguments_raise_as_torch(call):
    errors = []
    for lib in (rg, torch):
        with pytest.raises((ValueError, NotImplementedError)) as info:
            call(lib)
        errors.append((type(info.value).__name__,
                       str(info.value).replace("torch.", "retrograd.").split(", but found")[0].split("\n")[0]))
    assert errors[0] == errors[1]


def test_binomial_enumerate_support_and_one_hot_enumerate_support_match_torch():
    for name, params in (("Binomial", {"total_count": COUNTS, "probs": A / 4}),
                         ("OneHotCategorical", {"probs": _r.dirichlet(np.ones(3), 2)})):
        ours, theirs = _make(rg, name, params)[0], _make(torch, name, params)[0]
        for expand in (True, False):
            np.testing.assert_array_equal(ours.enumerate_support(expand).numpy(),
                                          theirs.enumerate_support(expand).numpy())
