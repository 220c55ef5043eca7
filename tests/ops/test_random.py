"""Random sampling: shapes, dtypes and errors as PyTorch's, reproducible streams, and the distributions.

The numbers are NumPy's stream (not PyTorch's), so the distributions are checked statistically,
with fixed seeds and bounds of several standard errors.
"""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

N = 20000


def _error(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc), str(exc).split("\n")[0].split(". ")[0].rstrip(".")  # the first sentence
    return None


CALLS = {
    "multinomial": lambda m: m.multinomial(m.tensor([0.2, 0.3, 0.5]), 2),
    "multinomial-replacement-2d": lambda m: m.multinomial(m.tensor([[0.2, 0.8], [1., 0.]]), 4, True),
    "multinomial-method": lambda m: m.tensor([1., 2.]).multinomial(1),
    "bernoulli": lambda m: m.bernoulli(m.tensor([[0.2, 0.7]], dtype=m.float64)),
    "bernoulli-p": lambda m: m.bernoulli(m.zeros(2, 3), 0.5),
    "normal-tensor-float": lambda m: m.normal(m.zeros(2, 3, dtype=m.float64), 1.),
    "normal-float-tensor": lambda m: m.normal(0., m.ones(3)),
    "normal-tensor-tensor": lambda m: m.normal(m.zeros(2, 1), m.ones(3)),
    "normal-size": lambda m: m.normal(0., 1., (2, 3)),
    "normal-size-dtype": lambda m: m.normal(2., 3., size=(4,), dtype=m.float64),
    "poisson": lambda m: m.poisson(m.ones(2, 2)),
    "uniform_": lambda m: m.empty(3, 2).uniform_(-1, 1),
    "normal_": lambda m: m.empty(3, dtype=m.float64).normal_(2., 0.5),
    "exponential_": lambda m: m.empty(3).exponential_(2.),
    "cauchy_": lambda m: m.empty(3).cauchy_(),
    "log_normal_": lambda m: m.empty(3).log_normal_(),
    "geometric_": lambda m: m.empty(3).geometric_(0.3),
    "geometric_-int": lambda m: m.empty(3, dtype=m.int64).geometric_(0.3),
    "random_": lambda m: m.empty(3).random_(2, 5),
    "random_-int": lambda m: m.empty(3, dtype=m.int64).random_(10),
    "random_-bool": lambda m: m.empty(3, dtype=m.bool).random_(),
    "bernoulli_": lambda m: m.empty(3).bernoulli_(0.3),
    "bernoulli_-tensor": lambda m: m.empty(3).bernoulli_(m.tensor([0., 1., 0.5])),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_results_have_torch_shape_and_dtype(name):
    ours, theirs = CALLS[name](rg), CALLS[name](torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


ERRORS = {
    "multinomial-too-many": lambda m: m.multinomial(m.tensor([0.2, 0.8]), 3),
    "multinomial-negative": lambda m: m.multinomial(m.tensor([-0.1, 1.]), 1),
    "multinomial-inf": lambda m: m.multinomial(m.tensor([float("inf"), 1.]), 1),
    "multinomial-zero-sum": lambda m: m.multinomial(m.tensor([[0., 0.], [1., 1.]]), 1),
    "multinomial-3d": lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    "multinomial-integers": lambda m: m.multinomial(m.tensor([1, 2]), 1),
    "multinomial-zero-samples": lambda m: m.multinomial(m.tensor([1., 2.]), 0),
    "bernoulli-out-of-range": lambda m: m.bernoulli(m.tensor([1.5])),
    "bernoulli-integers": lambda m: m.bernoulli(m.tensor([1, 0])),
    "normal-negative-std": lambda m: m.normal(m.zeros(2), -1.),
    "normal-negative-std-tensor": lambda m: m.normal(m.zeros(2), -m.ones(2)),
    "normal-shapes": lambda m: m.normal(m.zeros(2), m.ones(3)),
    "normal-integers": lambda m: m.normal(m.zeros(2, dtype=m.int64), 1.),
    "normal-numbers-without-size": lambda m: m.normal(0., 1.),
    "poisson-negative": lambda m: m.poisson(m.tensor([-1.])),
    "poisson-integers": lambda m: m.poisson(m.tensor([1, 2])),
    "uniform_-range": lambda m: m.empty(2).uniform_(2, 1),
    "uniform_-integers": lambda m: m.empty(2, dtype=m.int64).uniform_(),
    "normal_-std": lambda m: m.empty(2).normal_(0, -1),
    "normal_-integers": lambda m: m.empty(2, dtype=m.int64).normal_(),
    "exponential_-lambda": lambda m: m.empty(2).exponential_(0),
    "cauchy_-sigma": lambda m: m.empty(2).cauchy_(0, -1),
    "log_normal_-std": lambda m: m.empty(2).log_normal_(1, -2),
    "geometric_-p": lambda m: m.empty(2).geometric_(1.5),
    "random_-range": lambda m: m.empty(2).random_(5, 3),
    "bernoulli_-p": lambda m: m.empty(2).bernoulli_(1.5),
    "uniform_-leaf": lambda m: m.zeros(2, requires_grad=True).uniform_(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_arguments_raise_as_torch(name):
    expected = _error(lambda: ERRORS[name](torch))
    assert expected is not None
    assert _error(lambda: ERRORS[name](rg)) == expected


@pytest.mark.parametrize("name", sorted(CALLS))
def test_draws_are_reproducible_under_manual_seed(name):
    rg.manual_seed(11)
    a = CALLS[name](rg)
    rg.manual_seed(11)
    b = CALLS[name](rg)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_generator_argument_is_used_and_leaves_the_default_alone():
    rg.manual_seed(5)
    before = rg.get_rng_state()
    p = rg.tensor([0.1, 0.2, 0.3, 0.4])
    a = rg.multinomial(p, 3, generator=rg.Generator().manual_seed(1))
    b = rg.multinomial(p, 3, generator=rg.Generator().manual_seed(1))
    x = rg.empty(5).normal_(generator=rg.Generator().manual_seed(2))
    y = rg.empty(5).normal_(generator=rg.Generator().manual_seed(2))
    assert rg.equal(a, b) and rg.equal(x, y)
    assert rg.get_rng_state() == before


def test_multinomial_frequencies_follow_the_probabilities():
    rg.manual_seed(0)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    draws = rg.multinomial(rg.tensor(p * 7), N, replacement=True).numpy()  # unnormalised weights
    freq = np.bincount(draws, minlength=4) / N
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / N))


def test_multinomial_without_replacement_draws_distinct_indices_by_weight():
    rg.manual_seed(0)
    rows = rg.multinomial(rg.tensor([[0.7, 0.1, 0.1, 0.1]] * 4000), 2).numpy()
    assert all(len(set(r)) == 2 for r in rows)
    first = np.mean(rows[:, 0] == 0)
    assert abs(first - 0.7) < 5 * np.sqrt(0.21 / 4000)


def test_multinomial_never_draws_a_zero_weight_while_others_remain():
    rg.manual_seed(0)
    with_replacement = rg.multinomial(rg.tensor([0., 1., 0., 3.]), 1000, True).numpy()
    assert set(with_replacement) <= {1, 3}
    without = rg.multinomial(rg.tensor([[0., 1., 0., 3.]] * 200), 2).numpy()
    assert set(without.ravel()) == {1, 3}
    exhausted = rg.multinomial(rg.tensor([0., 1., 1.]), 3).numpy()  # as PyTorch: the zero comes last
    assert sorted(exhausted) == [0, 1, 2] and exhausted[2] == 0


def test_bernoulli_and_poisson_means():
    rg.manual_seed(0)
    b = rg.bernoulli(rg.full((N,), 0.3)).numpy()
    assert set(np.unique(b)) == {0., 1.}
    assert abs(b.mean() - 0.3) < 5 * np.sqrt(0.21 / N)
    r = rg.poisson(rg.full((N,), 4.)).numpy()
    assert np.all(r == np.round(r)) and abs(r.mean() - 4.) < 5 * np.sqrt(4. / N)


def test_normal_overloads_have_their_mean_and_std():
    rg.manual_seed(0)
    for draws, mean, std in ((rg.normal(rg.full((N,), 2.), 3.), 2., 3.),
                             (rg.normal(-1., rg.full((N,), 0.5)), -1., 0.5),
                             (rg.normal(1., 2., (N,)), 1., 2.)):
        x = draws.numpy()
        assert abs(x.mean() - mean) < 5 * std / np.sqrt(N)
        assert abs(x.std() - std) < 5 * std / np.sqrt(2 * N)


def test_inplace_initialisers_follow_their_distributions():
    rg.manual_seed(0)
    t = rg.empty(N, dtype=rg.float64)
    u = t.uniform_(-1., 3.).numpy().copy()
    assert u.min() >= -1. and u.max() < 3. and abs(u.mean() - 1.) < 5 * np.sqrt(16 / 12 / N)
    e = t.exponential_(2.).numpy().copy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 5 * 0.5 / np.sqrt(N)
    g = t.geometric_(0.25).numpy().copy()
    assert g.min() >= 1 and np.all(g == np.round(g)) and abs(g.mean() - 4.) < 5 * np.sqrt(0.75 / 0.0625 / N)
    ln = np.log(t.log_normal_(0.5, 0.25).numpy())
    assert abs(ln.mean() - 0.5) < 5 * 0.25 / np.sqrt(N) and abs(ln.std() - 0.25) < 0.01
    c = t.cauchy_(1., 2.).numpy()
    assert abs(np.median(c) - 1.) < 0.1  # the Cauchy distribution has no mean: its median
    r = t.random_(3, 7).numpy()
    assert set(np.unique(r)) == {3., 4., 5., 6.}
    b = t.bernoulli_(0.25).numpy()
    assert abs(b.mean() - 0.25) < 5 * np.sqrt(0.1875 / N)


def test_random_without_bounds_covers_the_dtype_exactly_representable_range():
    rg.manual_seed(0)
    f = rg.empty(N).random_().numpy()
    assert f.min() >= 0 and f.max() <= 2 ** 24 and f.max() > 2 ** 23
    i = rg.empty(N, dtype=rg.int16).random_().numpy()
    assert i.min() >= 0 and i.max() > 2 ** 14


def test_inplace_initialisers_bump_the_version_and_return_self():
    t = rg.zeros(3)
    v = t._version
    assert t.normal_() is t and t._version == v + 1


@pytest.mark.parametrize("call", [
    lambda m, x: m.normal(x, 1.),
    lambda m, x: m.normal(0., x.exp()),
    lambda m, x: m.bernoulli(x.sigmoid()),
    lambda m, x: m.poisson(x.exp()),
], ids=["normal-mean", "normal-std", "bernoulli", "poisson"])
def test_draws_require_grad_with_a_zero_gradient_as_torch(call):
    grads = []
    for m in (rg, torch):
        x = m.tensor([0.5, -0.2], requires_grad=True)
        y = call(m, x)
        assert y.requires_grad
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0], 0.)


def test_inplace_initialiser_on_a_non_leaf_cuts_the_gradient_as_torch():
    grads = []
    for m in (rg, torch):
        x = m.tensor([0.5, -0.2], requires_grad=True)
        y = x * 2
        y.uniform_()
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0], 0.)
