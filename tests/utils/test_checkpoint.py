"""Checkpointing, reentrant and non-reentrant: exact gradients, RNG state, and .grad() rules."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential

pytestmark = pytest.mark.timeout(60)


def segment(x, w):
    """A segment with dropout-like randomness drawn from the default generator."""
    h = (x @ w).tanh()
    keep = (rg.rand(*h.shape, dtype=h.dtype) > 0.3).to(h.dtype)
    return (h * keep / 0.7).sin()


def _inputs():
    x = rg.randn(4, 3, dtype=rg.float64, requires_grad=True)
    w = rg.randn(3, 5, dtype=rg.float64, requires_grad=True)
    return x, w


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_gives_exactly_the_plain_gradients(use_reentrant):
    x, w = _inputs()
    state = rg.get_rng_state()
    (segment(x, w) ** 2).sum().backward()
    expected = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    rg.set_rng_state(state)
    (checkpoint(segment, x, w, use_reentrant=use_reentrant) ** 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected[0])
    np.testing.assert_array_equal(w.grad.numpy(), expected[1])


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_without_preserved_rng_state_the_recomputation_draws_new_numbers(use_reentrant):
    x, w = _inputs()
    state = rg.get_rng_state()
    (segment(x, w) ** 2).sum().backward()
    expected = x.grad.numpy().copy()
    x.grad = w.grad = None
    rg.set_rng_state(state)
    (checkpoint(segment, x, w, use_reentrant=use_reentrant, preserve_rng_state=False) ** 2).sum().backward()
    assert not np.array_equal(x.grad.numpy(), expected)


def test_rng_state_after_backward_is_the_callers():
    x, w = _inputs()
    out = checkpoint(segment, x, w)
    state = rg.get_rng_state()
    out.sum().backward()
    assert rg.get_rng_state() == state


def test_reentrant_checkpoint_refuses_autograd_grad():
    x, w = _inputs()
    out = checkpoint(segment, x, w, use_reentrant=True).sum()
    with pytest.raises(RuntimeError, match=r"^When use_reentrant=True, torch\.utils\.checkpoint is incompatible "
                                           r"with \.grad\(\) or passing an `inputs` parameter to \.backward\(\)\."):
        rg.autograd.grad(out, x)


def test_non_reentrant_checkpoint_works_with_autograd_grad_and_double_backward():
    x, w = _inputs()
    state = rg.get_rng_state()
    expected = rg.autograd.grad((segment(x, w) ** 2).sum(), x)[0]
    rg.set_rng_state(state)
    got = rg.autograd.grad((checkpoint(segment, x, w, use_reentrant=False) ** 2).sum(), x)[0]
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    y = rg.randn(3, dtype=rg.float64, requires_grad=True)
    (g,) = rg.autograd.grad(checkpoint(lambda t: (t ** 3).sum(), y, use_reentrant=False), y, create_graph=True)
    (h,) = rg.autograd.grad(g.sum(), y)
    np.testing.assert_allclose(h.numpy(), 6 * y.detach().numpy())


def test_non_reentrant_checkpoint_keeps_no_saved_arrays():
    x, w = _inputs()
    out = checkpoint(lambda a, b: (a @ b).exp().sum(), x, w, use_reentrant=False)
    node = out.grad_fn.next_functions[0][0]  # ExpBackward0
    saved = node.saved_values()["result"]
    assert saved.array is None and saved.packed is not None


def test_is_checkpoint_valid_inside_backward_and_grad():
    seen = []

    class Probe(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            seen.append(rg.autograd.is_checkpoint_valid())
            return grad

    x = rg.ones(2, requires_grad=True)
    Probe.apply(x).sum().backward()
    rg.autograd.grad(Probe.apply(x).sum(), x)
    assert seen == [True, False]
    assert rg.autograd.is_checkpoint_valid()


def test_warns_when_no_input_requires_grad_and_rejects_unknown_kwargs():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. Gradients will be None"):
        checkpoint(lambda t: t * 2, rg.ones(2))
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint(lambda t: t * 2, rg.ones(2, requires_grad=True), foo=1)


def test_checkpoint_sequential_matches_plain():
    fns = [lambda t: t.tanh(), lambda t: t * 3, lambda t: t.sin(), lambda t: t.exp()]
    x = rg.randn(5, dtype=rg.float64, requires_grad=True)
    plain = x
    for f in fns:
        plain = f(plain)
    (g_plain,) = rg.autograd.grad(plain.sum(), x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint_sequential(fns, 2, x, use_reentrant=True).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), g_plain.numpy())


def test_checkpoint_with_parameters_inside_accumulates_them():
    w = rg.randn(3, dtype=rg.float64, requires_grad=True)
    x = rg.randn(3, dtype=rg.float64, requires_grad=True)
    checkpoint(lambda t: (t * w).sum(), x).backward()
    np.testing.assert_allclose(w.grad.numpy(), x.detach().numpy())
