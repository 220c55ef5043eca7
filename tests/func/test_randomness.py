"""vmap's randomness='same' against torch.func's semantics: the shapes, and the same numbers for every sample."""
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


def _rows_equal(out):
    a = out.detach().numpy().reshape(out.shape[0], -1)
    return bool((a == a[:1]).all())


# Each: (the vmapped call of library m, on a (4, 6) batch of ones), whose samples must all be equal.
SAME = {
    "rand_like": lambda m, x: m.func.vmap(lambda a: m.rand_like(a), randomness="same")(x),
    "rand_like_in_dims_1": lambda m, x: m.func.vmap(lambda a: m.rand_like(a), in_dims=1, randomness="same")(x),
    "chunked": lambda m, x: m.func.vmap(lambda a: m.randn_like(a) + a, randomness="same", chunk_size=3)(x),
    "chunked_dropout": lambda m, x: m.func.vmap(lambda a: m.nn.functional.dropout(a, 0.5), randomness="same",
                                                chunk_size=1)(x),
    "uniform_into_batched": lambda m, x: m.func.vmap(lambda a: a.clone().uniform_(), randomness="same")(x),
    "dropout_module": lambda m, x: m.func.vmap(m.nn.Dropout(0.5), randomness="same")(x),
    "nested": lambda m, x: m.func.vmap(m.func.vmap(lambda a: m.rand_like(a) + a, randomness="same"),
                                      randomness="same")(x.reshape(2, 2, 6)).reshape(4, 6),
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_same_randomness_gives_every_sample_the_same_numbers_as_torch_func(name):
    ours = SAME[name](rg, rg.ones(4, 6))
    theirs = SAME[name](torch, torch.ones(4, 6))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _rows_equal(ours) and _rows_equal(theirs)


def test_different_randomness_in_chunks_still_differs_between_samples():
    out = vmap(lambda a: rg.rand_like(a), randomness="different", chunk_size=2)(rg.ones(4, 6))
    assert len({row.tobytes() for row in out.numpy()}) == 4


@pytest.mark.parametrize("op", ["bernoulli", "normal", "poisson"])
def test_same_randomness_of_a_random_op_with_a_batched_input_draws_once_for_all_samples(op):
    # PyTorch refuses these ("Vmap does not currently support same randomness with a batched tensor input"):
    # here every sample draws the numbers one unbatched draw would, and the generator moves on as after one.
    fns = {"bernoulli": lambda a: rg.bernoulli(a), "normal": lambda a: rg.normal(a, 1.0) - a,
           "poisson": lambda a: rg.poisson(a)}
    p = rg.full((6,), 0.5)
    rg.manual_seed(5)
    one = fns[op](p)
    after_one = rg.rand(3)
    rg.manual_seed(5)
    out = vmap(fns[op], randomness="same")(p.expand(4, 6).clone())
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(one.numpy(), (4, 6)))
    np.testing.assert_array_equal(rg.rand(3).numpy(), after_one.numpy())


def test_same_randomness_with_batched_probabilities_shares_the_uniform_draws():
    # bernoulli(p) of the same draws: a sample with larger probabilities has ones wherever a smaller one has
    probs = rg.tensor(np.linspace(0.05, 0.95, 5)[:, None] * np.ones((5, 40)))
    out = vmap(rg.bernoulli, randomness="same")(probs).numpy()
    assert (np.diff(out, axis=0) >= 0).all() and out[0].sum() < out[-1].sum()
