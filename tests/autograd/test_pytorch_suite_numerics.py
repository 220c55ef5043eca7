"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), sixth part: gradcheck's failure, cycles in
the graph's Python objects, subgradients at zero, lobpcg's eigenpairs and gradients. See test_pytorch_suite_basics.py for the method.
"""
import functools
import gc

import numpy as np
import pytest

import retrograd as rg
from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")


def test_gradcheck_fails_when_no_output_is_differentiable_but_the_numerical_gradient_is_not_zero():
    def scenario(lib):
        lib.autograd.gradcheck(lambda x: x.detach(), lib.ones(5, 5, dtype=lib.float64, requires_grad=True),
                               eps=1e-6, atol=1e-4)
    result = same_in_both(scenario)
    assert result[0] == "GradcheckError" and "Numerical gradient for function expected to be zero" in result[1]


def test_a_view_kept_in_an_unreferenced_cycle_does_not_break_backward():
    def scenario(lib):
        def make():
            inp = randn(lib, 10, requires_grad=True)
            tmp = inp.view(10, 1)
            cycle = [tmp]
            cycle.append(cycle)
            return tmp.view(10), inp
        out, inp = make()
        gc.collect()
        out.backward(randn(lib, 10, seed=1))
        return inp.grad
    same_in_both(scenario)


@pytest.mark.parametrize("size,p", [((10,), 2), ((10, 10), 2), ((10,), 3), ((10,), 1), ((10,), 1.5)])
def test_norm_subgradient_at_zero_is_zero(size, p):
    def scenario(lib):
        x = lib.zeros(*size, dtype=lib.float64, requires_grad=True)
        x.norm(p).backward()
        return x.grad.abs().sum().item()
    assert same_in_both(scenario) == ("ok", 0.0)


@pytest.mark.parametrize("exponent", ["zeros10", "zeros10x10", 0])
def test_pow_with_a_zero_exponent_has_a_zero_gradient_at_zero(exponent):
    def scenario(lib):
        size = (10, 10) if exponent == "zeros10x10" else (10,)
        e = lib.zeros(*size, dtype=lib.float64) if isinstance(exponent, str) else exponent
        x = lib.zeros(*size, dtype=lib.float64, requires_grad=True)
        x.pow(e).sum().backward()
        return x.grad.abs().sum().item()
    assert same_in_both(scenario) == ("ok", 0.0)


def test_pow_with_a_scalar_base_gradcheck():
    def scenario(lib):
        a = lib.arange(1, 13, dtype=lib.float64).view(3, 4).requires_grad_()
        return lib.autograd.gradcheck(lambda a: lib.pow(2, a), (a,))
    assert same_in_both(scenario) == ("ok", True)


@pytest.mark.parametrize("dims", [[5, 10, 15, 5], [3, 5, 2, 6], [6, 2, 4, 8, 10]], ids=str)
def test_chain_matmul_gradcheck(dims):
    def scenario(lib):
        ms = [randn(lib, a, b, requires_grad=True, seed=i) for i, (a, b) in enumerate(zip(dims[:-1], dims[1:]))]
        f = lambda *m: functools.reduce(lambda a, b: a.mm(b), m)  # noqa: E731 - what torch.chain_matmul computes
        return lib.autograd.gradcheck(f, ms), lib.autograd.gradgradcheck(f, ms)
    assert same_in_both(scenario) == ("ok", (True, True))


def test_gradcheck_and_gradgradcheck_with_an_input_the_function_does_not_use():
    def scenario(lib):
        x, y = randn(lib, 10, requires_grad=True), randn(lib, 10, requires_grad=True, seed=1)
        f = lambda x, y: x * x  # noqa: E731
        return lib.autograd.gradcheck(f, (x, y)), lib.autograd.gradgradcheck(f, (x, y))
    assert same_in_both(scenario) == ("ok", (True, True))


def _incomplete_gamma_args(lib):
    a = lib.tensor([2.0, 3.0, 0.7], dtype=lib.float64)
    x = lib.tensor([1.5, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
    return a, x


@pytest.mark.parametrize("op", ["igamma", "igammac"])
def test_a_missing_derivative_raises_not_implemented_in_backward_only_where_it_is_needed(op):
    def scenario(lib):
        a, x = _incomplete_gamma_args(lib)
        y = getattr(lib, op)(a, x)
        y.sum().backward()  # the derivative in ``other`` exists
        a.requires_grad_()
        try:
            getattr(lib, op)(a, x).sum().backward()
        except NotImplementedError as e:
            return y, x.grad, y.grad_fn.name(), str(e)
    result = same_in_both(scenario)
    assert result[1][3] == f"the derivative for '{op}: input' is not implemented."


def test_a_missing_forward_derivative_raises_not_implemented():
    def scenario(lib):
        a, x = _incomplete_gamma_args(lib)
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(x.detach(), lib.ones(3, dtype=lib.float64))
            lib.igamma(dual, dual)
    result = same_in_both(scenario)
    assert result == ("NotImplementedError", "Trying to use forward AD with igamma that does not support it because "
                                             "it has not been implemented yet.")


def _lobpcg_signed(lib, k, A, largest):
    """PyTorch's test's function: lobpcg from the first k columns of the identity, each eigenvector's sign set by
    its entry of largest magnitude, so that the result is one function of A."""
    X = lib.eye(A.size(-2), k, dtype=A.dtype).expand(*A.shape[:-1], k)
    D, U = lib.lobpcg(A=A, k=k, X=X, largest=largest)
    _, idx = U.abs().max(-2, keepdim=True)
    return D, U * U.gather(-2, idx).sign()


@pytest.mark.parametrize("k,sizes", [(1, (6, 6)), (1, (2, 6, 6)), (2, (2, 2, 6, 6)), (2, (6, 6)), (3, (9, 9)),
                                     (3, (2, 9, 9))], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_eigenpairs_and_their_symmetric_gradient(k, sizes, largest):
    rng = np.random.default_rng(k + len(sizes))
    a = rng.random(sizes)
    a = a @ np.swapaxes(a, -1, -2) / 10
    grads = rng.random(sizes[:-2] + (k,)) / 100, rng.random(sizes[:-1] + (k,)) / 100
    seen = []
    for lib in (rg, torch):
        A = lib.tensor(a, requires_grad=True)
        D, U = _lobpcg_signed(lib, k, A, largest)
        (D.sum() + U.sum()).backward()
        D_grad, U_grad = lib.tensor(grads[0]), lib.tensor(grads[1])
        A2 = lib.tensor(a, requires_grad=True)
        D2, U2 = _lobpcg_signed(lib, k, A2, largest)
        ((D2 * D_grad).sum() + (U2 * U_grad).sum()).backward()
        assert lib.equal(A.grad, A.grad.mT)  # the gradient is symmetric, as A is
        seen.append([t.detach().numpy() for t in (D, U, A.grad, A2.grad)])
    for ours, theirs in zip(*seen, strict=True):  # PyTorch iterates to a tolerance of sqrt(eps)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_gradcheck_and_gradgradcheck(largest):
    rng = np.random.default_rng(3)
    a = rng.random((2, 6, 6))
    A = rg.tensor(a @ np.swapaxes(a, -1, -2) / 10, requires_grad=True)
    f = functools.partial(_lobpcg_signed, rg, 2, largest=largest)
    assert rg.autograd.gradcheck(f, A, check_batched_grad=False)
    assert rg.autograd.gradgradcheck(f, A, [rg.tensor(rng.random((2, 2)) / 100), rg.tensor(rng.random((2, 6, 2)) / 100)],
                                     atol=1e-4, check_batched_grad=False)


def test_lobpcg_errors():
    def scenario(lib):
        errors = []
        for call in (lambda: lib.lobpcg(lib.eye(5), k=2), lambda: lib.lobpcg(lib.eye(9), k=1, X=lib.eye(9, 4), n=2),
                     lambda: lib.lobpcg(lib.eye(9)[:, :8], k=1), lambda: lib.lobpcg(lib.eye(9), B=lib.eye(6))):
            try:
                call()
            except (ValueError, AssertionError) as e:
                errors.append((type(e).__name__, str(e).replace("torch.", "retrograd.")))
        return errors
    assert same_in_both(scenario)[1] == [
        ("ValueError", "LOBPCG algorithm is not applicable when the number of A rows (=5) is smaller than 3 x the "
                       "number of requested eigenpairs (=2)"),
        ("ValueError", "LOBPCG algorithm is not applicable when the number of A rows (=9) is smaller than 3 x the "
                       "number of requested eigenpairs (=4)"),
        ("AssertionError", "A must be square, got shape retrograd.Size([9, 8])"),
        ("AssertionError", "A and B must have same shape, got retrograd.Size([9, 9]) vs retrograd.Size([6, 6])")]


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_of_a_pencil(largest):
    # A x = lambda B x: PyTorch's eigenpairs, B-orthonormal; retrograd's also differentiate in B (PyTorch's refuse).
    rng = np.random.default_rng(4)
    a, b = rng.random((6, 6)), rng.random((6, 6))
    a, b = a @ a.T / 10, b @ b.T / 10 + np.eye(6)
    seen = []
    for lib in (rg, torch):
        seen.append(_lobpcg_signed_pencil(lib, lib.tensor(a), lib.tensor(b), largest))
    for ours, theirs in zip(*seen, strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=1e-5)
    A, B = rg.tensor(a, requires_grad=True), rg.tensor(b, requires_grad=True)
    assert rg.autograd.gradcheck(functools.partial(_lobpcg_signed_pencil, rg, largest=largest), (A, B))


def _lobpcg_signed_pencil(lib, A, B, largest):
    D, U = lib.lobpcg(A, k=2, B=B, X=lib.eye(6, 2, dtype=lib.float64), largest=largest)
    return D, U * U.gather(-2, U.abs().max(-2, keepdim=True)[1]).sign()
