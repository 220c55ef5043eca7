"""The two factorisations MultivariateNormal needs, differentiable: Cholesky and triangular solves.

Each is a custom Function whose forward is NumPy's and whose backward is written with retrograd's
ops and these Functions, so that it can be differentiated again. Both broadcast over leading
batch dims. The formulas are PyTorch's (``cholesky_backward``, ``linalg_solve_triangular``'s
derivative in derivatives.yaml).
"""
from __future__ import annotations

import numpy as np

from .. import _creation
from ..autograd.function import Function

__all__ = ["cholesky", "solve_triangular"]


def _mT(t):
    return t.transpose(-2, -1)


class _Cholesky(Function):
    """``L`` lower triangular with ``L @ L.mT == A`` (A symmetric positive definite)."""

    @staticmethod
    def forward(ctx, a):
        arr = a.detach().numpy()
        try:
            out = np.linalg.cholesky(arr)
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.cholesky: The factorization could not be completed because the input is not "
                               "positive-definite.") from None
        result = _creation.tensor(out, dtype=a.dtype)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (L,) = ctx.saved_tensors
        g = (_mT(L) @ grad).tril()
        g = 0.5 * (g + _mT(g.tril(-1)))
        g = solve_triangular(_mT(L), g, upper=True)  # L^-H g
        return _mT(solve_triangular(L, _mT(g), upper=False, transpose=True))  # ... L^-1


class _SolveTriangular(Function):
    """``X`` with ``A @ X == B`` for a triangular ``A`` (lower unless ``upper``)."""

    @staticmethod
    def forward(ctx, a, b, upper):
        A = a.detach().numpy()
        A = np.triu(A) if upper else np.tril(A)
        B = b.detach().numpy()
        shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        x = np.linalg.solve(np.broadcast_to(A, shape + A.shape[-2:]), np.broadcast_to(B, shape + B.shape[-2:]))
        result = _creation.tensor(x, dtype=b.dtype)
        ctx.upper = upper
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        a = a.triu() if ctx.upper else a.tril()
        grad_b = solve_triangular(_mT(a), grad, upper=not ctx.upper)
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = -grad_b @ _mT(x)
            grad_a = grad_a.triu() if ctx.upper else grad_a.tril()
        return grad_a, grad_b, None


def cholesky(a):
    """The lower Cholesky factor of the symmetric positive-definite ``a`` (batched).

    Raises:
        RuntimeError: if ``a`` is not positive definite.
    """
    return _Cholesky.apply(a)


def solve_triangular(a, b, upper, transpose=False):
    """``X`` with ``A @ X == B`` (``A.mT @ X == B`` with ``transpose``), for ``A = a``'s triangle (batched)."""
    if transpose:
        return _SolveTriangular.apply(_mT(a), b, not upper)
    return _SolveTriangular.apply(a, b, upper)
