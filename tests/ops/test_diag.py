"""diag and diagonal_copy: their arguments, errors and node names as PyTorch's (values and gradients are in the op sweep)."""
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def outcome(make, lib):
    try:
        out = make(lib)
        return ("returned", tuple(out.shape), out.tolist(), out.grad_fn.name() if out.grad_fn else None)
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("make", [
    lambda lib: lib.diag(lib.arange(3.0, requires_grad=True), 2),
    lambda lib: lib.diag(lib.arange(12.0).reshape(3, 4).requires_grad_(), -1),
    lambda lib: lib.arange(12.0).reshape(3, 4).diag(9),
    lambda lib: lib.diag(lib.ones(0)),
    lambda lib: lib.diag(lib.ones(2, 2, 2)),
    lambda lib: lib.diag(lib.tensor(1.0)),
    lambda lib: lib.diagonal_copy(lib.ones(2, 3, requires_grad=True), 0, 1, 1),
    lambda lib: lib.ones(2, 3).diagonal(0, -1, 1),
], ids=["vector_above", "matrix_below", "past_the_matrix", "empty", "3d", "0d", "copy_same_dims", "same_dims"])
def test_diag_arguments_and_errors_match_torch(make):
    assert outcome(make, rg) == outcome(make, torch)
