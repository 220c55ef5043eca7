"""retrograd.distributions against torch.distributions on the same parameters and values."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(3)
LOC, SCALE = _rng.normal(size=(3,)), _rng.uniform(0.5, 2.0, (3,))
LOW, HIGH = _rng.uniform(-2, 0, (3,)), _rng.uniform(0.5, 2, (3,))
P = _rng.uniform(0.05, 0.95, (3,))
LOGITS = _rng.normal(size=(2, 4))

# (name, constructor kwargs as arrays, values for log_prob)
CASES = [
    ("Normal", {"loc": LOC, "scale": SCALE}, _rng.normal(size=(3,))),
    ("Uniform", {"low": LOW, "high": HIGH}, (LOW + HIGH) / 2),
    ("Bernoulli", {"probs": P}, np.array([1.0, 0.0, 1.0])),
    ("Bernoulli", {"logits": _rng.normal(size=(3,))}, np.array([0.0, 1.0, 1.0])),
    ("Categorical", {"probs": _rng.dirichlet(np.ones(4), 2)}, np.array([3, 0])),
    ("Categorical", {"logits": LOGITS}, np.array([1, 2])),
]


def _make(lib, name, params, requires_grad=False):
    tensors = {k: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad) for k, v in params.items()}
    return getattr(lib.distributions, name)(**tensors), tensors


def _value(lib, name, v):
    return lib.tensor(v, dtype=lib.int64 if name == "Categorical" else lib.float64)


@pytest.mark.parametrize("name,params,value", CASES, ids=[f"{c[0]}-{'-'.join(c[1])}" for c in CASES])
def test_log_prob_entropy_and_moments_match_torch_with_gradients(name, params, value):
    ours, our_params = _make(rg, name, params, requires_grad=True)
    theirs, their_params = _make(torch, name, params, requires_grad=True)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    lp, tlp = ours.log_prob(_value(rg, name, value)), theirs.log_prob(_value(torch, name, value))
    np.testing.assert_allclose(lp.detach().numpy(), tlp.detach().numpy(), rtol=1e-12, atol=1e-12)
    ent, tent = ours.entropy(), theirs.entropy()
    np.testing.assert_allclose(ent.detach().numpy(), tent.detach().numpy(), rtol=1e-12, atol=1e-12)
    (lp.sum() + ent.sum()).backward()
    (tlp.sum() + tent.sum()).backward()
    for k in params:
        np.testing.assert_allclose(our_params[k].grad.numpy(), their_params[k].grad.numpy(), rtol=1e-10, atol=1e-12)
    if name != "Categorical":  # its mean and variance are nan, as torch's
        for moment in ("mean", "variance", "stddev"):
            np.testing.assert_allclose(getattr(ours, moment).detach().numpy(),
                                       getattr(theirs, moment).detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,params", [("Normal", {"loc": LOC, "scale": SCALE}),
                                         ("Uniform", {"low": LOW, "high": HIGH})])
def test_cdf_and_icdf_match_torch(name, params):
    ours, _ = _make(rg, name, params)
    theirs, _ = _make(torch, name, params)
    q = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(ours.icdf(rg.tensor(q, dtype=rg.float64)).numpy(),
                               theirs.icdf(torch.tensor(q, dtype=torch.float64)).numpy(), rtol=1e-10)
    x = (LOC if name == "Normal" else (LOW + HIGH) / 2) + 0.3
    np.testing.assert_allclose(ours.cdf(rg.tensor(x, dtype=rg.float64)).numpy(),
                               theirs.cdf(torch.tensor(x, dtype=torch.float64)).numpy(), rtol=1e-10)


def test_rsample_is_differentiable_in_the_parameters():
    rg.manual_seed(0)
    loc = rg.tensor([0.5, -1.0], dtype=rg.float64, requires_grad=True)
    scale = rg.tensor([1.0, 2.0], dtype=rg.float64, requires_grad=True)
    x = rg.distributions.Normal(loc, scale).rsample((5,))
    assert x.shape == (5, 2) and x.requires_grad
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [5.0, 5.0])
    np.testing.assert_allclose(scale.grad.numpy(), ((x.detach() - loc.detach()) / scale.detach()).sum(0).numpy())
    assert not rg.distributions.Normal(loc, scale).sample((3,)).requires_grad


@pytest.mark.parametrize("name,params,mean,var", [
    ("Normal", {"loc": np.array([1.0]), "scale": np.array([2.0])}, 1.0, 4.0),
    ("Uniform", {"low": np.array([-1.0]), "high": np.array([3.0])}, 1.0, 16 / 12),
    ("Bernoulli", {"probs": np.array([0.3])}, 0.3, 0.21),
])
def test_samples_have_the_moments_and_shapes(name, params, mean, var):
    rg.manual_seed(1)
    d, _ = _make(rg, name, params)
    s = d.sample((20000,))
    assert s.shape == (20000, 1) and s.dtype == rg.float64
    assert abs(s.mean().item() - mean) < 5 * np.sqrt(var / 20000)
    assert abs(s.var().item() - var) < 0.05 * var


def test_categorical_samples_follow_probs_and_are_reproducible():
    probs = rg.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], dtype=rg.float64)
    rg.manual_seed(2)
    s = rg.distributions.Categorical(probs=probs).sample((30000,))
    assert s.shape == (30000, 2) and s.dtype == rg.int64
    freq = np.stack([np.bincount(s.numpy()[:, b], minlength=3) / 30000 for b in range(2)])
    np.testing.assert_allclose(freq, probs.numpy(), atol=0.015)
    assert freq[1, 2] == 0
    rg.manual_seed(2)
    assert rg.equal(rg.distributions.Categorical(probs=probs).sample((30000,)), s)


KL_CASES = [
    ("Normal", {"loc": LOC, "scale": SCALE}, {"loc": LOC[::-1].copy(), "scale": SCALE[::-1].copy()}),
    ("Bernoulli", {"probs": P}, {"probs": P[::-1].copy()}),
    ("Categorical", {"logits": LOGITS}, {"logits": LOGITS[::-1].copy()}),
    ("Uniform", {"low": np.array([0.0, -1.0]), "high": np.array([1.0, 1.0])},
     {"low": np.array([-1.0, 0.0]), "high": np.array([2.0, 2.0])}),
]


@pytest.mark.parametrize("name,p,q", KL_CASES, ids=[c[0] for c in KL_CASES])
def test_kl_divergence_matches_torch(name, p, q):
    ours = rg.distributions.kl_divergence(_make(rg, name, p)[0], _make(rg, name, q)[0])
    theirs = torch.distributions.kl_divergence(_make(torch, name, p)[0], _make(torch, name, q)[0])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_kl_of_an_unregistered_pair_raises_not_implemented():
    d = rg.distributions
    with pytest.raises(NotImplementedError, match="No KL"):
        d.kl_divergence(d.Normal(rg.tensor(0.0), rg.tensor(1.0)), d.Bernoulli(probs=rg.tensor(0.5)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.distributions.Normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
    lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([1.5])),
    lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([0.5]), logits=lib.tensor([0.0])),
    lambda lib: lib.distributions.Categorical(probs=lib.tensor(0.5)),
    lambda lib: lib.distributions.Uniform(lib.tensor([1.0]), lib.tensor([0.0])),
    lambda lib: lib.distributions.Normal(lib.zeros(1), lib.ones(1)).log_prob([0.0]),
], ids=["negative_scale", "probs_above_one", "probs_and_logits", "probs_0d", "low_above_high", "value_not_tensor"])
def test_bad_arguments_raise_as_torch(call):
    errors = []
    for lib in (rg, torch):
        with pytest.raises(ValueError) as info:
            call(lib)
        errors.append(str(info.value).replace("torch.", "retrograd.").split(", but found")[0].split("\n")[0])
    assert errors[0] == errors[1]


def test_repr_matches_torch():
    assert repr(rg.distributions.Normal(rg.zeros(2), rg.ones(2))) == \
        repr(torch.distributions.Normal(torch.zeros(2), torch.ones(2))).replace("torch.", "retrograd.")
