"""``retrograd.linalg``: linear algebra under PyTorch's ``torch.linalg`` names, each with its derivative.

The decompositions, inverses and solvers are the ops of ``retrograd.ops.linalg`` (NumPy's and
SciPy's LAPACK routines, with PyTorch's derivative formulas); the norms and the rest are built on
them and on the other ops, so their gradients come from those. As in PyTorch, the derivatives of
``svd``, ``eigh`` and ``qr`` hold where the decomposition is unique: distinct singular values or
eigenvalues, full rank, and a function of the singular vectors or eigenvectors that does not depend
on their signs. Singular and non-positive-definite inputs raise ``LinAlgError``, a RuntimeError.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import _dtype
from ._creation import tensor as _tensor
from ._tensor import _wrap_dim
from .ops import linalg as _ops
from .ops.linalg import LinAlgError, linalg_cross, matmul, matrix_power
from .ops.joining import cat as _cat
from .ops.reduction import amax, amin, norm as _norm, sum as _sum

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "inv_ex", "lstsq", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "vander",
           "vecdot", "vector_norm"]

# The named tuples of torch.return_types that these functions return.
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"])
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_solve_ex = namedtuple("linalg_solve_ex", ["result", "info"])


def _cast(x, dtype):
    return x if dtype is None else x.to(dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 - PyTorch's name
    """The ``ord``-norm of ``x`` as a vector over ``dim`` (all of it by default): ``sum(|x|**ord)**(1/ord)``.

    Args:
        x: the tensor.
        ord: the order: a number, ``inf`` (largest magnitude), ``-inf`` (smallest) or 0 (count of non-zeros).
        dim: the dim or dims to reduce (None: all of them).
        keepdim: keep each reduced dim with size 1.
        dtype: cast ``x`` to this dtype first (keyword-only).

    Returns:
        The norms, as a floating-point tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.vector_norm(rg.tensor([3., 4.]))
        tensor(5.)
    """
    x = _cast(x, dtype)
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(x._data.dtype)}")
    if isinstance(dim, int):
        dim = (dim,)
    return _norm(x, ord, None if dim is None else tuple(dim), keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002, N803
    """The ``ord``-norm of the matrices of ``A`` over the two dims ``dim``.

    ``ord`` is ``'fro'`` (Frobenius), ``'nuc'`` (sum of singular values), ``2``/``-2`` (largest/smallest
    singular value), ``1``/``-1`` (largest/smallest column sum of magnitudes) or ``inf``/``-inf`` (rows).

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.matrix_norm(rg.tensor([[1., 2.], [3., 4.]]), ord=1)
        tensor(6.)
    """
    A = _cast(A, dtype)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (_wrap_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        s = svdvals(moved)
        out = s.sum(-1) if ord == "nuc" else amax(s, -1) if ord == 2 else amin(s, -1)
        return _restore_dims(out, (d0, d1), keepdim)
    if ord in (1, -1, float("inf"), float("-inf")):
        summed, reduced = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(summed, keepdim=keepdim)
        if not keepdim and reduced > summed:
            reduced -= 1
        extreme = amax if ord in (1, float("inf")) else amin
        return extreme(sums, reduced, keepdim=keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _restore_dims(out, dims, keepdim):
    """A reduction over the last two dims, with those dims put back at ``dims`` (size 1) where ``keepdim``."""
    if not keepdim:
        return out
    return out.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), dims)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002, N803
    """A vector norm (``dim`` an int, or a 1-D input) or a matrix norm (``dim`` two dims, or a 2-D input).

    Without ``ord`` and ``dim``: the 2-norm of all of ``A`` flattened.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.norm(rg.tensor([[1., 2.], [2., 4.]]))
        tensor(5.)
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                       f"{A.dim()}D.")


def det(A):  # noqa: N803
    """The determinant of each square matrix of ``A``.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.det(rg.tensor([[1., 2.], [3., 4.]]))
        tensor(-2.)
    """
    return _ops.linalg_det(A)


def slogdet(A):  # noqa: N803
    """The sign and the log of the magnitude of the determinant of each square matrix of ``A``.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.slogdet(rg.tensor([[2., 0.], [0., -3.]]))
        linalg_slogdet(sign=tensor(-1.), logabsdet=tensor(1.7918))
    """
    return linalg_slogdet(*_ops.linalg_slogdet(A))


def inv(A):  # noqa: N803
    """The inverse of each square matrix of ``A``.

    Raises:
        LinAlgError: if a matrix is singular (an exactly zero pivot).

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.inv(rg.tensor([[2., 0.], [0., 4.]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    return _ops.linalg_inv(A)


def inv_ex(A, *, check_errors=False):  # noqa: N803
    """``inv`` that reports singular matrices in ``info`` (the 1-based zero pivot, 0 where fine) instead of raising.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.inv_ex(rg.tensor([[2., 0.], [0., 4.]])).info
        tensor(0, dtype=retrograd.int32)
    """
    try:
        inverse = _ops.linalg_inv(A)
    except LinAlgError:
        if check_errors:
            raise
        info = np.zeros(tuple(A.shape[:-2]), np.int32).reshape(-1)
        flat = A._host().reshape((-1,) + tuple(A.shape[-2:]))
        for k, m in enumerate(flat):
            found = _ops._lu_zero_pivot(m)
            info[k] = 0 if found is None else found[1]
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.full(A.shape, np.nan, dtype=A._data.dtype)
        return linalg_inv_ex(_tensor(values, device=A.device), _tensor(info.reshape(tuple(A.shape[:-2]))))
    return linalg_inv_ex(inverse, _tensor(np.zeros(tuple(A.shape[:-2]), np.int32), device=A.device))


def solve(A, B, *, left=True):  # noqa: N803
    """The solution X of ``A X = B`` (``X A = B`` with ``left=False``); ``B`` may be a vector or a batch of them.

    Raises:
        LinAlgError: if ``A`` is singular.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.solve(rg.tensor([[2., 0.], [0., 4.]]), rg.tensor([2., 2.]))
        tensor([1.0000, 0.5000])
    """
    return _ops.linalg_solve(A, B, left=left)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):  # noqa: N803
    """The solution X of ``A X = B`` (``X A = B``) for a triangular ``A``: only its ``upper`` or lower triangle is
    read, and with ``unitriangular`` its diagonal is taken as ones.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.solve_triangular(rg.tensor([[2., 1.], [0., 1.]]), rg.tensor([[3.], [1.]]), upper=True)
        tensor([[1.],
                [1.]])
    """
    return _ops.linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def cholesky(A, *, upper=False):  # noqa: N803
    """The Cholesky factor L of each symmetric positive-definite matrix of ``A`` (``A = L L^T``; ``upper``: L^T).

    Raises:
        LinAlgError: if a matrix is not positive-definite.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.cholesky(rg.tensor([[4., 2.], [2., 2.]]))
        tensor([[2., 0.],
                [1., 1.]])
    """
    return _ops.linalg_cholesky_ex(A, upper=upper, check_errors=True)[0]


def cholesky_ex(A, *, upper=False, check_errors=False):  # noqa: N803
    """``cholesky`` that reports in ``info`` the order of the first leading minor that is not positive-definite.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.cholesky_ex(rg.tensor([[1., 2.], [2., 1.]])).info
        tensor(2, dtype=retrograd.int32)
    """
    return linalg_cholesky_ex(*_ops.linalg_cholesky_ex(A, upper=upper, check_errors=check_errors))


def qr(A, mode="reduced"):  # noqa: N803
    """The QR decomposition ``A = Q R`` (Q with orthonormal columns, R upper triangular).

    ``mode``: ``'reduced'`` (k = min(m, n) columns), ``'complete'`` (Q square) or ``'r'`` (R only; Q empty).

    Example::
        >>> import retrograd as rg
        >>> Q, R = rg.linalg.qr(rg.tensor([[3., 0.], [4., 5.]]))
        >>> (Q @ R).round(decimals=4)
        tensor([[3., 0.],
                [4., 5.]])
    """
    return linalg_qr(*_ops.linalg_qr(A, mode))


def svd(A, full_matrices=True, *, driver=None):  # noqa: N803
    """The singular value decomposition ``A = U diag(S) Vh``, singular values in descending order.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.svd(rg.tensor([[3., 0.], [0., -2.]])).S
        tensor([3., 2.])
    """
    return linalg_svd(*_ops.linalg_svd(A, full_matrices))


def svdvals(A, *, driver=None):  # noqa: N803
    """The singular values of each matrix of ``A``, in descending order.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.svdvals(rg.tensor([[3., 0.], [0., -2.]]))
        tensor([3., 2.])
    """
    return _ops.linalg_svd(A, False)[1]


def eigh(A, UPLO="L"):  # noqa: N803
    """The eigenvalues (ascending) and orthonormal eigenvectors of each symmetric matrix of ``A``, reading its
    lower (``UPLO='L'``) or upper triangle.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.eigh(rg.tensor([[2., 0.], [0., 1.]])).eigenvalues
        tensor([1., 2.])
    """
    return linalg_eigh(*_ops.linalg_eigh(A, UPLO))


def eigvalsh(A, UPLO="L"):  # noqa: N803
    """The eigenvalues (ascending) of each symmetric matrix of ``A``.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.eigvalsh(rg.tensor([[2., 1.], [1., 2.]]))
        tensor([1., 3.])
    """
    return _ops.linalg_eigh(A, UPLO)[0]


def pinv(A, *, atol=None, rtol=None, hermitian=False):  # noqa: N803
    """The Moore-Penrose pseudo-inverse of each matrix of ``A``; singular values at most
    ``max(atol, rtol * largest)`` count as zero (default: ``rtol = eps * max(m, n)``).

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.pinv(rg.tensor([[2., 0.], [0., 0.]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.0000]])
    """
    return _ops.linalg_pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):  # noqa: N803
    """The number of singular values of each matrix of ``A`` above ``max(atol, rtol * largest)``.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.matrix_rank(rg.ones(3, 3))
        tensor(1)
    """
    s = A._host()
    values = np.linalg.svd(s, compute_uv=False) if s.size else np.zeros(s.shape[:-2] + (0,), s.dtype)
    if atol is None and rtol is None:
        rtol = np.finfo(s.dtype).eps * max(s.shape[-2:])
    largest = values.max(-1) if values.shape[-1] else np.zeros(values.shape[:-1], s.dtype)
    tol = np.maximum(0. if atol is None else atol, (0. if rtol is None else rtol) * largest)
    return _tensor((values > tol[..., None]).sum(-1).astype(np.int64), device=A.device)


def lstsq(A, B, rcond=None, *, driver=None):  # noqa: N803
    """The least-squares solution of ``A X = B``, with PyTorch's ``(solution, residuals, rank, singular_values)``.

    As PyTorch's default CPU driver ``'gelsy'``, residuals and singular values are empty; with ``'gelsd'`` or
    ``'gelss'`` they hold the squared residuals (full-rank tall ``A``) and the singular values.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.lstsq(rg.tensor([[1., 0.], [0., 1.], [0., 0.]]), rg.tensor([[1.], [2.], [3.]])).solution
        tensor([[1.],
                [2.]])
    """
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    m, n = A.shape[-2], A.shape[-1]
    rtol = np.finfo(A._data.dtype).eps * max(m, n) if rcond is None else rcond
    vector = B.dim() == A.dim() - 1
    solution = _ops.linalg_lstsq(A, B.unsqueeze(-1) if vector else B, rcond=rtol)
    if vector:
        solution = solution.squeeze(-1)
    rank = matrix_rank(A.detach(), rtol=rtol)
    empty = A.new_zeros((0,))
    if driver in ("gelsd", "gelss"):
        values = svdvals(A.detach())
        residuals = empty
        if m > n and bool((rank == n).all()):
            fitted = matmul(A.detach(), solution.detach().unsqueeze(-1) if vector else solution.detach())
            residuals = ((fitted.squeeze(-1) if vector else fitted) - B.detach()).pow(2).sum(-2 if not vector else -1)
        return linalg_lstsq(solution, residuals, rank, values)
    return linalg_lstsq(solution, empty, rank, empty)


def cross(input, other, *, dim=-1):  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (the last by default).

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.cross(rg.tensor([0., 1., 0.]), rg.tensor([0., 0., 1.]))
        tensor([1., 0., 0.])
    """
    return linalg_cross(input, other, dim)


def vecdot(x, y, *, dim=-1):
    """The dot products of ``x`` and ``y`` along ``dim`` (broadcasting the rest).

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.vecdot(rg.tensor([[1., 2.], [3., 4.]]), rg.tensor([1., 1.]))
        tensor([3., 7.])
    """
    if x.dim() == 1 and y.dim() == 1 and _wrap_dim(dim, 1) == 0:
        return _ops.vdot(x, y)
    return _sum(x * y, dim)


def multi_dot(tensors):
    """The product of the matrices ``tensors`` (the first and last may be vectors), as ``A @ B @ ... @ Z``.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.multi_dot([rg.ones(2, 3), rg.ones(3, 4), rg.ones(4)])
        tensor([12., 12.])
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    out_shape = (() if first.dim() == 1 else (first.shape[0],)) + (() if last.dim() == 1 else (last.shape[-1],))
    if first.dim() == 1:
        tensors[0] = first.unsqueeze(0)
    if last.dim() == 1:
        tensors[-1] = last.unsqueeze(-1)
    for i, t in enumerate(tensors):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    result = tensors[0]
    for t in tensors[1:]:
        result = result.mm(t)
    return result.view(out_shape)


def cond(A, p=None):  # noqa: N803
    """The condition number of each matrix of ``A`` in the ``p``-norm (None: the 2-norm, by singular values).

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.cond(rg.tensor([[2., 0.], [0., 1.]]))
        tensor(2.)
    """
    if p in (None, 2, -2):
        s = svdvals(A)
        ratio = s.narrow(-1, 0, 1) / s.narrow(-1, s.shape[-1] - 1, 1)
        out = ratio.squeeze(-1)
        return out if p != -2 else 1 / out
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):  # noqa: N803
    """The diagonals of the matrices of ``A`` (over its last two dims by default).

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.diagonal(rg.tensor([[1., 2.], [3., 4.]]))
        tensor([1., 4.])
    """
    return A.diagonal(offset, dim1, dim2)



def solve_ex(A, B, *, left=True, check_errors=False):  # noqa: N803
    """``solve`` that reports a singular ``A`` in ``info`` (non-zero) instead of raising.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.solve_ex(rg.eye(2), rg.ones(2)).info
        tensor(0, dtype=retrograd.int32)
    """
    try:
        result = solve(A, B, left=left)
    except LinAlgError:
        if check_errors:
            raise
        return linalg_solve_ex(B.new_full(tuple(B.shape), float("nan")), inv_ex(A.detach()).info)
    return linalg_solve_ex(result, _tensor(np.zeros(tuple(A.shape[:-2]), np.int32), device=A.device))


def matrix_exp(A):  # noqa: N803
    """The matrix exponential of each square matrix of ``A`` (``sum A^k / k!``), by SciPy's Pade approximation.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.matrix_exp(rg.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    return _ops.linalg_matrix_exp(A)


def vander(x, *, N=None):  # noqa: N803
    """The Vandermonde matrices of the vectors of ``x``: columns ``x ** 0`` up to ``x ** (N - 1)``.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.vander(rg.tensor([1., 2., 3.]))
        tensor([[1., 1., 1.],
                [1., 2., 4.],
                [1., 3., 9.]])
    """
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: Expected tensor with at least 1 dimension, but got tensor with 0 "
                           "dimensions")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        if n < 1:
            raise RuntimeError("N must be greater than 1.")
        return x.unsqueeze(-1) ** 0
    dtype = _dtype.promote_types(x.dtype, _dtype.int64)
    column = x.to(dtype).unsqueeze(-1)
    powers = column.expand(tuple(x.shape) + (n - 1,)).cumprod(-1)
    return _cat([column ** 0, powers], -1)


# -- the LU decomposition (ops/lu.py) -------------------------------------------------------------------------------
from .ops.lu import lu, lu_factor, lu_factor_ex, lu_solve  # noqa: E402
__all__ += ["lu", "lu_factor", "lu_factor_ex", "lu_solve"]
