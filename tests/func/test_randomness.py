"""vmap's randomness modes against torch.func.vmap's: which draws raise (and with which error), the shapes, and
whether the samples share their numbers. See Note [Randomness under vmap]."""
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.func import vmap
from retrograd.ops._call import interposition

torch = pytest.importorskip("torch")
import torch.func  # noqa: E402


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    assert interposition.stack == ()
    assert rg._random.vmap_randomness() is None


def _rows_equal(out):
    a = np.asarray(out.detach().numpy() if hasattr(out, "detach") else out)
    a = a.reshape(a.shape[0], -1)
    return bool((a == a[:1]).all())


# Each: a function of one sample (a row of ones of 6) in library m. Draws of 8 samples of at least 6 numbers
# (or 3 from 10 values, or a permutation of 5) are all equal by chance with a probability below 1e-9.
DRAWS = {
    "rand": lambda m, a: a + m.rand(3),
    "randn": lambda m, a: m.randn(3),
    "rand_like": lambda m, a: m.rand_like(a),
    "randn_like": lambda m, a: m.randn_like(a),
    "randint": lambda m, a: m.randint(0, 10, (3,)),
    "randperm": lambda m, a: m.randperm(5),
    "rand_generator": lambda m, a: m.rand(3, generator=m.Generator().manual_seed(0)),
    "normal_of_numbers": lambda m, a: m.normal(0.0, 1.0, size=(3,)),
    "bernoulli_batched": lambda m, a: m.bernoulli(a * 0.5),
    "bernoulli_unbatched": lambda m, a: m.bernoulli(m.full((6,), 0.5)),
    "bernoulli_method_p": lambda m, a: a.bernoulli(0.5),
    "normal_batched": lambda m, a: m.normal(a, 1.0),
    "normal_unbatched": lambda m, a: m.normal(m.zeros(6), 1.0),
    "poisson_batched": lambda m, a: m.poisson(a),
    "multinomial_batched": lambda m, a: m.multinomial(a, 2),
    "dropout": lambda m, a: m.nn.functional.dropout(a, 0.5),
    "dropout_eval": lambda m, a: m.nn.functional.dropout(a, 0.5, training=False),
    "dropout_p1": lambda m, a: m.nn.functional.dropout(a, 1.0),
    "dropout_module": lambda m, a: m.nn.Dropout(0.5)(a),
    "alpha_dropout": lambda m, a: m.nn.functional.alpha_dropout(a, 0.5, training=True),
    "dropout1d": lambda m, a: m.nn.functional.dropout1d(a.reshape(6, 1), 0.5),
    "attention_dropout": lambda m, a: m.nn.functional.scaled_dot_product_attention(
        a.reshape(3, 2), a.reshape(3, 2), a.reshape(3, 2), dropout_p=0.5),
    "normal_into_batched": lambda m, a: a.clone().normal_(),
    "normal_into_unbatched": lambda m, a: m.empty(6).normal_(),
    "uniform_into_batched": lambda m, a: a.clone().uniform_(),
    "exponential_into_batched": lambda m, a: a.clone().exponential_(),
    "random_into_batched": lambda m, a: a.clone().random_(0, 10),
    "bernoulli_into_batched": lambda m, a: a.clone().bernoulli_(0.5),
    "bernoulli_into_unbatched": lambda m, a: m.empty(6).bernoulli_(0.5),
    "init_normal": lambda m, a: m.nn.init.normal_(a.clone()),
}


def _outcome(m, name, mode):
    """What vmap(draw, randomness=mode) does on 8 samples: ('raises', type, first sentence) or ('ok', shape, equal)."""
    x = m.ones(8, 6)
    try:
        out = m.func.vmap(lambda a: DRAWS[name](m, a), randomness=mode)(x)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return ("raises", type(e).__name__, str(e).split(". ")[0])
    return ("ok", tuple(out.shape), _rows_equal(out))


@pytest.mark.parametrize("mode", ["error", "same", "different"])
@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_draw_under_each_randomness_does_what_torch_func_does(name, mode):
    assert _outcome(rg, name, mode) == _outcome(torch, name, mode)


def test_batched_probabilities_drawn_in_place_follow_each_sample():
    p = [[0.0] * 6, [1.0] * 6, [0.0] * 6, [1.0] * 6]
    f = {m: (lambda a, q, m=m: a.clone().bernoulli_(q)) for m in (rg, torch)}
    ours = vmap(f[rg], randomness="different")(rg.zeros(4, 6), rg.tensor(p))
    theirs = torch.func.vmap(f[torch], randomness="different")(torch.zeros(4, 6), torch.tensor(p))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(ours.numpy(), np.array(p))


@pytest.mark.parametrize("outer,inner", [("same", "different"), ("different", "same"), ("different", "different")])
def test_nested_levels_draw_per_sample_only_where_their_level_asks(outer, inner):
    def run(m):
        f = m.func.vmap(m.func.vmap(lambda a: a + m.rand(6), randomness=inner), randomness=outer)
        out = f(m.zeros(3, 4, 6)).numpy()
        across_outer = all(_rows_equal(out[:, j]) for j in range(4))
        across_inner = all(_rows_equal(out[i]) for i in range(3))
        return out.shape, across_outer, across_inner

    assert run(rg) == run(torch)


def test_an_error_level_outside_a_same_one_still_refuses_the_draw():
    def run(m):
        with pytest.raises(RuntimeError) as info:
            m.func.vmap(m.func.vmap(lambda a: a + m.rand(2), randomness="same"), randomness="error")(m.ones(2, 3, 2))
        return str(info.value)

    assert run(rg) == run(torch)


# Each: the vmapped call of library m on a (4, 6) batch of ones, chunked, whose samples must all be equal.
CHUNKED_SAME = {
    "randn_like": lambda m, x: m.func.vmap(lambda a: m.randn_like(a) + a, randomness="same", chunk_size=3)(x),
    "dropout": lambda m, x: m.func.vmap(lambda a: m.nn.functional.dropout(a, 0.5), randomness="same",
                                        chunk_size=1)(x),
    "in_dims_1": lambda m, x: m.func.vmap(lambda a: m.rand_like(a), in_dims=1, randomness="same",
                                          chunk_size=2)(x.t()),
}


@pytest.mark.parametrize("name", sorted(CHUNKED_SAME))
def test_same_randomness_in_chunks_gives_every_sample_the_same_numbers_as_torch_func(name):
    ours = CHUNKED_SAME[name](rg, rg.ones(4, 6))
    theirs = CHUNKED_SAME[name](torch, torch.ones(4, 6))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _rows_equal(ours) and _rows_equal(theirs)


def test_different_randomness_in_chunks_still_differs_between_samples():
    out = vmap(lambda a: rg.rand_like(a), randomness="different", chunk_size=2)(rg.ones(4, 6))
    assert len({row.tobytes() for row in out.numpy()}) == 4


def test_rrelu_draws_its_slopes_as_the_randomness_says():
    # PyTorch has no batching rule for rrelu; here it follows the randomness as the other draws do
    x = rg.full((5, 8), -1.0)
    f = lambda a: rg.nn.functional.rrelu(a, 0.1, 0.3, training=True)  # noqa: E731
    different = vmap(f, randomness="different")(x).numpy()
    same = vmap(f, randomness="same")(x).numpy()
    for out in (different, same):
        assert ((out <= -0.1) & (out >= -0.3)).all()
    assert not _rows_equal(different) and _rows_equal(same)
    with pytest.raises(RuntimeError, match="^vmap: called random operation while in randomness error mode"):
        vmap(f)(x)
    np.testing.assert_allclose(vmap(lambda a: rg.nn.functional.rrelu(a, 0.1, 0.3))(x).numpy(), np.full((5, 8), -0.2))


def test_trunc_normal_init_draws_per_sample_within_its_bounds():
    # PyTorch's resamples by data-dependent control flow, which its vmap refuses
    out = vmap(lambda a: rg.nn.init.trunc_normal_(a.clone(), a=-0.5, b=0.5), randomness="different")(rg.ones(6, 40))
    assert (out.abs() <= 0.5).all() and not _rows_equal(out)


def test_a_vmap_in_one_thread_leaves_the_draws_of_another_alone():
    # the randomness is the calling thread's: nothing process-wide is replaced while a vmap runs
    inside, release = threading.Event(), threading.Event()
    names = {"rand": rg.rand, "randn_like": rg.randn_like, "dropout": rg.nn.functional.dropout}
    failures = []

    def blocked(a):
        inside.set()
        if not release.wait(30):
            failures.append("never released")
        return a

    def hold():
        try:
            vmap(blocked, randomness="error")(rg.ones(3, 2))
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert inside.wait(30)
        assert rg.rand is names["rand"] and rg.randn_like is names["randn_like"]
        assert rg.nn.functional.dropout is names["dropout"]
        assert rg.rand(2, 3).shape == (2, 3)
        assert rg.bernoulli(rg.full((4,), 0.5)).shape == (4,)
        assert rg.nn.functional.dropout(rg.ones(5), 0.5).shape == (5,)
        assert rg.empty(3).normal_().shape == (3,)
        mine = vmap(lambda a: a + rg.rand(2), randomness="different")(rg.zeros(4, 2)).numpy()
        assert mine.shape == (4, 2) and not _rows_equal(mine)
    finally:
        release.set()
        t.join(30)
    assert failures == []
