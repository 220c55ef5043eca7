"""pdist against torch on the same numbers: its errors, its node and saved values, and its gradients where rows are
equal (0, as PyTorch's, for every p). The op sweep (samples_linalg.py) checks values, gradcheck and gradgradcheck."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

ROWS = [[1.0, 2.0, -0.5], [1.0, 2.0, -0.5], [0.0, 5.0, -0.5], [0.25, -1.0, 3.0]]  # rows 0 and 1 are equal


@pytest.mark.parametrize("call", [
    lambda lib: lib.pdist(lib.ones(3)),
    lambda lib: lib.pdist(lib.ones(2, 2, 2)),
    lambda lib: lib.pdist(lib.ones(3, 2), p=-1.0),
    lambda lib: lib.pdist(lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.pdist(lib.ones(3), p=-1.0),
], ids=["1d", "3d", "negative_p", "integers", "functional"])
def test_pdist_refuses_bad_input_with_torchs_error(call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:
        call(rg)
    assert str(ours.value) == str(theirs.value)
    assert rg.pdist(rg.ones(2, 1)).tolist() == [0.0]  # still working


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
def test_pdist_node_values_and_gradients_at_equal_rows_match_torch(p):
    def run(lib):
        x = lib.tensor(ROWS, dtype=lib.float64, requires_grad=True)
        y = lib.pdist(x, p)
        node = y.grad_fn
        seen = [node.name(), node._saved_p, type(node._saved_p).__name__, node._saved_self is x,
                bool(lib.equal(node._saved_result, y)), y.tolist()]
        y.backward(lib.arange(1.0, 7.0, dtype=lib.float64))
        return seen, x.grad.numpy()
    (ours, grad), (theirs, expected) = run(rg), run(torch)
    assert ours[:5] == theirs[:5] and ours[0] == "PdistBackward0" and ours[2] == "float"
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-12)
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-12)
    assert np.isfinite(grad).all()


def test_pdist_second_derivatives_are_finite_at_equal_rows():
    x = rg.tensor(ROWS, dtype=rg.float64, requires_grad=True)
    for p in (0.5, 1.5, 2.0, 3.0):
        g, = rg.autograd.grad(rg.pdist(x, p).sum(), x, create_graph=True)
        gg, = rg.autograd.grad((g * g).sum(), x)
        assert np.isfinite(gg.numpy()).all()


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
def test_cdist_gradients_where_coordinates_coincide_match_torch(p):
    # cdist shares pdist's partials: a coordinate difference of 0 gives a finite gradient for every p, as PyTorch's
    def run(lib):
        a = lib.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[0.0, 2.0], [1.0, 3.0], [0.0, 1.0]], dtype=lib.float64, requires_grad=True)
        lib.cdist(a, b, p=p).backward(lib.arange(1.0, 7.0, dtype=lib.float64).reshape(2, 3))
        return a.grad.numpy(), b.grad.numpy()
    for ours, theirs in zip(run(rg), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
