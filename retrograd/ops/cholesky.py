"""Solves and inverses from a Cholesky factor: ``cholesky_solve`` and ``cholesky_inverse``, with PyTorch's
derivatives (derivatives.yaml's, written with retrograd ops so that higher derivatives work).

``A = L L^H`` for a lower factor ``L`` (``upper=False``), ``A = U^H U`` for an upper one. As PyTorch's, the
derivative of the factor is that of ``A``'s formula in the whole factor, its other triangle included.
"""
from __future__ import annotations

import warnings

from .. import return_types
from ._declarations import defop, tensor_method
from .linalg import _cholesky, _cholesky_backward, _solve_triangular, linalg_solve_triangular


def _gram(xp, factor, upper):
    t = xp.swapaxes(factor, -1, -2)
    return t @ factor if upper else factor @ t


def _cholesky_solve(xp, input, input2, upper=False):
    return xp.linalg.solve(_gram(xp, input2, upper), input)


def _factor_grad(input2, common, upper):
    return -(input2 @ common) if upper else -(common @ input2)


def _solve_factor_grad(grad, input2, upper, result):
    grad_b = cholesky_solve(grad, input2, upper)
    common = grad_b @ result.mT
    return _factor_grad(input2, common + common.mT, upper)


cholesky_solve = defop("cholesky_solve", _cholesky_solve, method=True, promote="binary",
                       input=lambda grad, input, input2, upper: cholesky_solve(grad, input2, upper),  # keeps
                       # input, as PyTorch's node
                       input2=_solve_factor_grad,
                       doc="""Solves ``A X = input`` for ``A`` given by its Cholesky factor ``input2``.

    Args:
        input: the right-hand sides, ``(*, n, k)``.
        input2: the factor, ``(*, n, n)``: lower (``A = L L^T``), or upper with ``upper`` (``A = U^T U``).
        upper: whether ``input2`` is upper triangular.

    Returns:
        ``X``, of ``input``'s shape (batch dims broadcast).

    Example::
        >>> import retrograd as rg
        >>> rg.cholesky_solve(rg.tensor([[2.], [4.]]), rg.tensor([[1., 0.], [0., 2.]]))
        tensor([[2.],
                [1.]])
    """)


def _cholesky_inverse(xp, input, upper=False):
    return xp.linalg.inv(_gram(xp, input, upper))


def _inverse_factor_grad(grad, input, upper, result):
    common = result @ ((grad + grad.mT) @ result)
    return _factor_grad(input, common, upper)


cholesky_inverse = defop("cholesky_inverse", _cholesky_inverse, method=True, input=_inverse_factor_grad,
                         doc="""The inverse of ``A`` given by its Cholesky factor ``input``.

    Args:
        input: the factor, ``(*, n, n)``: lower (``A = L L^T``), or upper with ``upper``.
        upper: whether ``input`` is upper triangular.

    Returns:
        ``A^-1``, of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.cholesky_inverse(rg.tensor([[2., 0.], [0., 1.]]))
        tensor([[0.2500, 0.0000],
                [0.0000, 1.0000]])
    """)


# -- the old names with nodes of their own: torch.cholesky (CholeskyBackward0), torch.triangular_solve -------------
_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch release.\n"
    "L = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
    "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")
_warned = set()


def _deprecated_cholesky(xp, input, upper=False):
    if "cholesky" not in _warned:  # once a process, as PyTorch's
        _warned.add("cholesky")
        warnings.warn(_CHOLESKY_DEPRECATED, UserWarning, stacklevel=2)
    return _cholesky(xp, input, upper=upper, check_errors=True)[0]


cholesky = defop("cholesky", _deprecated_cholesky,
                 method=True, input=lambda grad, result, upper: _cholesky_backward((grad,), (result,), upper),
                 doc="""The Cholesky factor of each symmetric positive-definite matrix of ``input``: ``linalg.cholesky``
    under its old name, recorded as PyTorch's ``CholeskyBackward0``.

    Args:
        input: the matrices, ``(*, n, n)``.
        upper: return the upper factor ``U`` (``A = U^T U``) instead of the lower one.

    Returns:
        The factor, of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.cholesky(rg.tensor([[4., 2.], [2., 5.]]))
        tensor([[2., 0.],
                [1., 2.]])
    """)


def _triangular_solve(xp, input, A, upper=True, transpose=False, unitriangular=False):
    a = xp.swapaxes(A, -1, -2) if transpose else A
    return _solve_triangular(xp, a, input, upper=upper != transpose, unitriangular=unitriangular), A.copy()


def _triangular_solve_grads(grads, input, A, upper, transpose, unitriangular, result):
    a = A.mT if transpose else A
    effective_upper = upper != transpose
    g_b = linalg_solve_triangular(a.mT, grads[0], upper=not effective_upper, unitriangular=unitriangular)
    g_a = -g_b.matmul(result[0].mT)
    g_a = g_a.triu(1 if unitriangular else 0) if effective_upper else g_a.tril(-1 if unitriangular else 0)
    return g_b, (g_a.mT if transpose else g_a) + grads[1]


_triangular_solve_op = defop(
    "triangular_solve", _triangular_solve, public=False, multi_output=True, promote="binary",
    input=lambda grads, input, A, upper, transpose, unitriangular, result: _triangular_solve_grads(
        grads, input, A, upper, transpose, unitriangular, result)[0],
    A=lambda grads, input, A, upper, transpose, unitriangular, result: _triangular_solve_grads(
        grads, input, A, upper, transpose, unitriangular, result)[1])


@tensor_method
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """Solves ``A X = input`` (``A^T X = input`` with ``transpose``) for triangular ``A``.

    Args:
        input: the right-hand sides, ``(*, n, k)``.
        A: the triangular matrices, ``(*, n, n)`` (only their ``upper`` or lower triangle is read).
        upper: whether ``A`` is upper triangular.
        transpose: solve with ``A``'s transpose.
        unitriangular: take ``A``'s diagonal as ones.

    Returns:
        A named tuple ``(solution, cloned_coefficient)``, the second a copy of ``A``
        (``TriangularSolveBackward0``, as PyTorch's).

    Example::
        >>> import retrograd as rg
        >>> rg.triangular_solve(rg.tensor([[2.], [4.]]), rg.tensor([[1., 1.], [0., 2.]])).solution
        tensor([[0.],
                [2.]])
    """
    return return_types.triangular_solve(*_triangular_solve_op(input, A, upper, transpose, unitriangular))
