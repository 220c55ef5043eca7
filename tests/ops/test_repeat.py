"""Tensor.repeat: its arguments and errors as PyTorch's (values and gradients are in the op sweep)."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def outcome(make, lib):
    try:
        return ("returned", tuple(make(lib).shape))
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2, 3).repeat(2),
    lambda lib: lib.ones(2, 3).repeat(-1, 2),
    lambda lib: lib.ones(2, 3).repeat(),
    lambda lib: lib.ones(()).repeat(),
    lambda lib: lib.ones(2, 3).repeat(lib.tensor(2), 1),
    lambda lib: lib.ones(2, 3).repeat(1, 2, 0),
], ids=["fewer_dims", "negative", "nothing", "nothing_for_0d", "tensor_count", "zero_copies"])
def test_repeat_arguments_and_errors_match_torch(make):
    assert outcome(make, rg) == outcome(make, torch)


def test_repeat_copies():
    x = rg.tensor([1.0, 2.0])
    y = x.repeat(2)
    x.add_(1)
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0, 1.0, 2.0])
    assert y._version == 0 and y._base is None


def test_repeat_gradient_sums_the_copies_as_torch():
    grads = []
    for lib in (rg, torch):
        x = lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64, requires_grad=True)
        y = x.repeat(2, 2, 1)
        (y * lib.arange(12, dtype=lib.float64).reshape(2, 2, 3)).sum().backward()
        assert type(y.grad_fn).__name__ == y.grad_fn.name() == "RepeatBackward0"
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
