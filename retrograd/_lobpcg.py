"""``lobpcg``: the k largest (or smallest) eigenpairs of a symmetric positive definite matrix, as ``torch.lobpcg``.

PyTorch finds them by LOBPCG iterations from the starting basis ``X`` (random where none is given), to
within ``tol``, and differentiates the result as exact eigenpairs of the symmetric part of ``A``. retrograd
computes them exactly, with ``linalg.eigh`` of that symmetric part (generalized through the Cholesky factor
of ``B`` where one is given), so the values are those the iterations converge to, and the gradients are
``eigh``'s: symmetric, and differentiable again. The arguments that steer the iterations are accepted and
checked as PyTorch checks them. Where ``B`` is given, the result is differentiable in ``A`` and ``B`` alike,
where PyTorch's backward refuses (it "does not support backward with B != I yet").
"""
from __future__ import annotations

from . import linalg
from ._tensor import Tensor

__all__ = ["lobpcg"]


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,  # noqa: N803
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The ``k`` largest (``largest=True``, the default) or smallest eigenvalues of the symmetric positive
    definite ``A`` (batched over its leading dims), or of the pencil ``A x = lambda B x``, and their eigenvectors.

    Args:
        A (Tensor): ``(*, m, m)``, symmetric positive definite (its symmetric part is used).
        k (int, optional): how many eigenpairs; by default ``X``'s columns, or 1.
        B (Tensor, optional): ``(*, m, m)`` symmetric positive definite, for the generalized problem.
        X (Tensor, optional): ``(*, m, n)`` starting basis of PyTorch's iterations (only its shape counts here).
        n (int, optional): the size of that basis where no ``X`` is given; ``k`` by default.
        largest (bool, optional): the largest eigenpairs (True) or the smallest.
        iK, niter, tol, method, tracker, ortho_iparams, ortho_fparams, ortho_bparams: steer PyTorch's
            iterations; accepted for its signature.

    Returns:
        ``(E, X)``: the eigenvalues ``(*, k)``, largest first (smallest first where ``largest=False``), and the
        eigenvectors ``(*, m, k)`` as columns (B-orthonormal in the generalized problem); each column's sign
        is ``eigh``'s, where PyTorch's depends on its iterations.

    Raises:
        ValueError: ``A`` has fewer than ``3 * n`` rows, as PyTorch's LOBPCG requires.
        AssertionError: ``A`` is not square, or ``B`` is not of ``A``'s shape (PyTorch's types).

    Example::
        >>> import retrograd as rg
        >>> A = rg.diag_embed(rg.tensor([1., 2., 3., 4., 5., 6.]))
        >>> rg.lobpcg(A, k=2)[0]
        tensor([6., 5.])
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"lobpcg(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and B.shape != A.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    m = A.shape[-1]
    if k is None:
        k = 1 if X is None else X.shape[-1]
    if X is not None:  # the basis gives the size of PyTorch's iterations, whatever n says
        n = X.shape[-1]
    elif n is None:
        n = k
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    symmetric = (A + A.mT) / 2
    if B is None:
        values, vectors = linalg.eigh(symmetric)
    else:  # A x = lambda B x, with B = L L^T: the ordinary problem of L^-1 A L^-T, whose vectors are L^T x
        factor = linalg.cholesky((B + B.mT) / 2)
        half = linalg.solve_triangular(factor, symmetric, upper=False)
        values, vectors = linalg.eigh(linalg.solve_triangular(factor, half.mT, upper=False))
        vectors = linalg.solve_triangular(factor.mT, vectors, upper=True)
    if largest is None or largest:
        return values[..., -k:].flip(-1), vectors[..., -k:].flip(-1)
    return values[..., :k], vectors[..., :k]
