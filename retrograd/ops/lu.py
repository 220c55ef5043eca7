"""The LU decomposition with partial pivoting, ``A = P L U``, through SciPy's LAPACK wrappers: ``linalg.lu_factor``
(and ``_ex``), ``linalg.lu``, ``linalg.lu_solve``, ``lu_unpack`` and the old ``torch.lu`` / ``torch.lu_solve``.

As PyTorch's, the factor is packed into one matrix ``LU`` (``L``'s unit diagonal implied) and the row interchanges
are LAPACK's ``pivots``: 1-based int32, row ``i`` swapped with row ``pivots[i] - 1`` in turn.

Note [LU derivatives]
~~~~~~~~~~~~~~~~~~~~~
For a square ``A = P L U`` and gradients ``gL``, ``gU`` of the factors, ``gA = P L^-H (tril(L^H gL, -1) +
triu(gU U^H)) U^-H`` (PyTorch's ``linalg_lu_backward``; ``_factors_backward`` derives the wide and tall cases the
same way); ``lu_factor`` reads ``gL`` and ``gU`` off the packed gradient (its strict lower and its upper
triangle). For ``X = A^-1 B``, ``gB = A^-H gX`` and ``gA = -gB X^H``; the
packed ``LU``'s gradient is then ``tril(P^T gA U^H, -1) + triu(L^H P^T gA)``. Every formula is written with ops of
the table (``lu_unpack`` among them, differentiable in ``LU``), so higher derivatives follow.
"""
from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np
import scipy.linalg

from .._dtype import scalar_type_name
from .._tensor import Tensor
from ._declarations import defop
from .linalg import linalg_solve_triangular
from .joining import cat
from .nn import constant_pad_nd

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_solve", "lu_unpack", "old_lu", "old_lu_solve"]

# The named tuples of torch.return_types that these functions return.
_LuFactor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
_LuFactorEx = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_Lu = namedtuple("linalg_lu", ["P", "L", "U"])
_LuUnpack = namedtuple("lu_unpack", ["P", "L", "U"])
_LuWithInfo = namedtuple("_lu_with_info", ["LU", "pivots", "info"])
for _t in (_LuFactor, _LuFactorEx, _Lu, _LuUnpack, _LuWithInfo):
    _t.__module__ = "retrograd.return_types"


# -- the arrays ----------------------------------------------------------------------------------------------------
def _factor(xp, A):
    """(LU, 1-based int32 pivots, int32 info) of each matrix of ``A``; info is the 1-based index of U's first zero
    diagonal element (0: none)."""
    m, n = A.shape[-2:]
    k = min(m, n)
    flat = np.asarray(A).reshape((int(np.prod(A.shape[:-2])), m, n))
    LU = np.empty_like(flat)
    piv = np.tile(np.arange(1, k + 1, dtype=np.int32), (flat.shape[0], 1))
    info = np.zeros(flat.shape[0], np.int32)
    if flat.size == 0:
        return flat.reshape(A.shape), piv.reshape(A.shape[:-2] + (k,)), info.reshape(A.shape[:-2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # a singular matrix: info says so
        for b, a in enumerate(flat):
            if a.size == 0:
                LU[b] = a
                continue
            LU[b], p = scipy.linalg.lu_factor(a, check_finite=False)
            piv[b] = p[:k] + 1
            zero = np.flatnonzero(np.diagonal(LU[b])[:k] == 0)
            info[b] = zero[0] + 1 if zero.size else 0
    batch = A.shape[:-2]
    return LU.reshape(A.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _permutation(pivots, m):
    """The matrices ``P`` (m, m) of 1-based ``pivots`` (*, k): ``A = P L U``."""
    batch = pivots.shape[:-1]
    flat = np.asarray(pivots).reshape((int(np.prod(batch)), pivots.shape[-1])) - 1
    out = np.zeros((flat.shape[0], m, m))
    for b, p in enumerate(flat):
        perm = np.arange(m)
        for i, j in enumerate(p):
            perm[i], perm[j] = perm[j], perm[i]
        out[b, perm, np.arange(m)] = 1
    return out.reshape(batch + (m, m))


def _unpack(xp, LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):  # noqa: N803 - PyTorch's names
    LU, pivots = LU_data, LU_pivots
    m, n = LU.shape[-2:]
    k = min(m, n)
    batch = LU.shape[:-2]
    if unpack_data:
        L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
        U = np.triu(LU[..., :k, :])
    else:
        L = U = np.empty((0,), LU.dtype)
    if unpack_pivots:
        P = np.broadcast_to(_permutation(np.asarray(pivots), m), batch + (m, m)).astype(LU.dtype)
    else:
        P = np.empty((0,), LU.dtype)
    return P, L, U


def _check_factor(name, A, pivot):
    if A.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} "
                           f"instead")
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def _lu_factor_ex(xp, A, *, pivot=True, check_errors=False):
    _check_factor("linalg.lu_factor", A, pivot)
    LU, piv, info = _factor(xp, A)
    if check_errors:
        _raise_singular("torch.linalg.lu_factor", info)
    return LU, piv, info


def _raise_singular(name, info):
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat > 0)
    if bad.size:
        where = f"(Batch element {bad[0]}): " if info.ndim else ""
        i = flat[bad[0]]
        raise RuntimeError(f"{name}: {where}U[{i},{i}] is zero and using it on lu_solve would result in a division "
                           f"by zero. If you still want to perform the factorization, consider calling "
                           f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _lu(xp, A, *, pivot=True):
    _check_factor("linalg.lu", A, pivot)
    LU, piv, _ = _factor(xp, A)
    return _unpack(xp, LU, piv)


def _lu_solve(xp, LU, pivots, B, *, left=True, adjoint=False):
    x = _solve_arrays(LU, pivots, B if left else np.swapaxes(B, -1, -2), adjoint if left else not adjoint)
    return x if left else np.swapaxes(x, -1, -2)


def _solve_arrays(LU, pivots, B, adjoint):
    """``op(A)^-1 B`` for ``A = P L U`` packed in ``LU``, ``op`` the transpose where ``adjoint``."""
    batch = np.broadcast_shapes(LU.shape[:-2], B.shape[:-2])
    n = LU.shape[-1]
    lu = np.broadcast_to(LU, batch + LU.shape[-2:]).reshape((-1, n, n))
    piv = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape((-1, pivots.shape[-1]))
    b = np.broadcast_to(B, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
    out = np.empty(b.shape, np.result_type(LU.dtype, B.dtype))
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(b.shape[0]):
            out[k] = scipy.linalg.lu_solve((lu[k], piv[k] - 1), b[k], trans=1 if adjoint else 0,
                                           check_finite=False) if b[k].size and n else b[k]
    return out.reshape(batch + B.shape[-2:])


# -- the derivatives: Note [LU derivatives] ------------------------------------------------------------------------
def _square_only(A):
    if A.shape[-1] != A.shape[-2]:
        raise NotImplementedError("retrograd implements the derivatives of lu_solve for square matrices only")


def _factors_backward(P, L, U, gL, gU):
    """``gA`` of ``A = P L U`` (Note [LU derivatives]); a wide ``A = P L [U1 U2]`` or a tall ``P [L1; L2] U`` adds
    the gradients of the block past the square one."""
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        phi = L.mT.matmul(gL).tril(-1) + gU.matmul(U.mT).triu()
        y = linalg_solve_triangular(L.mT, phi, upper=True, left=True, unitriangular=True)
        return P.matmul(linalg_solve_triangular(U.mT, y, upper=False, left=False))
    if m < n:  # gX = [gU1 + psi U1^-H, gU2], gA = P L^-H gX
        psi = (L.mT.matmul(gL) - gU.matmul(U.mT)).tril(-1)
        u1 = U.narrow(-1, 0, m)
        g1 = gU.narrow(-1, 0, m) + linalg_solve_triangular(u1.mT, psi, upper=False, left=False)
        gx = cat([g1, gU.narrow(-1, m, n - m)], -1)
        return P.matmul(linalg_solve_triangular(L.mT, gx, upper=True, left=True, unitriangular=True))
    # tall: gY = gL + [L1^-H omega; 0], gA = P gY U^-H
    omega = (gU.matmul(U.mT) - L.mT.matmul(gL)).triu()
    l1 = L.narrow(-2, 0, n)
    top = linalg_solve_triangular(l1.mT, omega, upper=True, left=True, unitriangular=True)
    gy = gL + constant_pad_nd(top, (0, 0, 0, m - n))
    return P.matmul(linalg_solve_triangular(U.mT, gy, upper=False, left=False))


def _lu_factor_backward(grads, result):
    LU, piv = result[0], result[1]
    P, L, U = lu_unpack_op(LU, piv)
    m, n = LU.shape[-2:]
    g = grads[0]
    gL = (g if m >= n else g.narrow(-1, 0, m)).tril(-1)
    gU = (g if m <= n else g.narrow(-2, 0, n)).triu()
    return _factors_backward(P.detach(), L, U, gL, gU)


def _lu_backward(grads, result):
    P, L, U = result
    return _factors_backward(P, L, U, grads[1], grads[2])


def _unpack_backward(grads, LU_data, unpack_data):
    if not unpack_data:
        return None
    m, n = LU_data.shape[-2:]
    gL, gU = grads[1].tril(-1), grads[2].triu()
    if m > n:  # U is (n, n): the rows below it are L's alone
        gU = constant_pad_nd(gU, (0, 0, 0, m - n))
    elif n > m:  # L is (m, m): the columns right of it are U's alone
        gL = constant_pad_nd(gL, (0, n - m))
    return gL + gU


def _solve_grads(grad, LU, pivots, left, adjoint, result):
    """(gLU, gB) of ``X = op(A)^-1 B`` (``left``) or ``X = B op(A)^-1``."""
    X, gX = (result, grad) if left else (result.mT, grad.mT)
    adj = adjoint if left else not adjoint
    gB = linalg_lu_solve(LU, pivots, gX, adjoint=not adj)
    gA = -gB.matmul(X.mT) if not adj else -X.matmul(gB.mT)
    P, L, U = lu_unpack_op(LU, pivots)
    ptga = P.detach().mT.matmul(gA)
    gLU = ptga.matmul(U.mT).tril(-1) + L.mT.matmul(ptga).triu()
    return gLU, gB if left else gB.mT


def _lu_grad(grad, LU, pivots, left, adjoint, result):
    _square_only(LU)
    return _solve_grads(grad, LU, pivots, left, adjoint, result)[0].sum_to_size(tuple(LU.shape))


def _b_grad(grad, LU, pivots, B_shape, left, adjoint, result):
    return _solve_grads(grad, LU, pivots, left, adjoint, result)[1].sum_to_size(tuple(B_shape))


linalg_lu_factor_ex = defop("linalg_lu_factor_ex", _lu_factor_ex, public=False, multi_output=True,
                            nondiff_outputs=(1, 2), node_name="LinalgLuFactorEx", A=_lu_factor_backward)
linalg_lu = defop("linalg_lu", _lu, public=False, multi_output=True, nondiff_outputs=(0,), node_name="LinalgLu",
                  A=_lu_backward)
lu_unpack_op = defop("lu_unpack", _unpack, public=False, multi_output=True, nondiff_outputs=(0,),
                     tensor_args=("LU_data", "LU_pivots"), LU_data=_unpack_backward)
linalg_lu_solve = defop("linalg_lu_solve", _lu_solve, public=False, node_name="LinalgLuSolve",
                        tensor_args=("LU", "pivots", "B"), LU=_lu_grad, B=_b_grad)


# -- the public functions ------------------------------------------------------------------------------------------
def _check_pivots(name, LU, pivots):
    if not isinstance(pivots, Tensor) or pivots.dtype.np != np.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")


def lu_factor_ex(A, *, pivot=True, check_errors=False):  # noqa: N803 - PyTorch's names
    """``lu_factor`` that reports in ``info`` where ``U`` has its first zero on the diagonal (1-based; 0: none)
    instead of raising.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.lu_factor_ex(rg.tensor([[1., 2.], [2., 4.]])).info
        tensor(2, dtype=retrograd.int32)
    """
    return _LuFactorEx(*linalg_lu_factor_ex(A, pivot=pivot, check_errors=check_errors))


def lu_factor(A, *, pivot=True):  # noqa: N803 - PyTorch's names
    """The LU factorization of each matrix of ``A`` with partial pivoting, packed: ``(LU, pivots)``, ``L``'s unit
    diagonal implied, ``pivots`` LAPACK's 1-based int32 row interchanges. Raises where ``U`` has a zero on its
    diagonal (``lu_factor_ex`` reports it instead).

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.lu_factor(rg.tensor([[1., 2.], [3., 4.]]))
        linalg_lu_factor(LU=tensor([[3.0000, 4.0000],
                [0.3333, 0.6667]]), pivots=tensor([2, 2], dtype=retrograd.int32))
    """
    LU, pivots, _ = linalg_lu_factor_ex(A, pivot=pivot, check_errors=True)
    return _LuFactor(LU, pivots)


def lu(A, *, pivot=True):  # noqa: N803 - PyTorch's names
    """The LU decomposition with partial pivoting, unpacked: ``(P, L, U)`` with ``A = P L U``, ``L`` unit lower
    triangular ``(*, m, k)``, ``U`` upper ``(*, k, n)``, ``k = min(m, n)``.

    Example::
        >>> import retrograd as rg
        >>> rg.linalg.lu(rg.tensor([[0., 1.], [1., 0.]])).P
        tensor([[0., 1.],
                [1., 0.]])
    """
    return _Lu(*linalg_lu(A, pivot=pivot))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):  # noqa: N803 - PyTorch's names
    """Solves ``A X = B`` (``left``; ``X A = B`` otherwise) for ``A`` given by ``lu_factor``'s ``(LU, pivots)``;
    ``adjoint``: with ``A^H`` for ``A``.

    Example::
        >>> import retrograd as rg
        >>> LU, pivots = rg.linalg.lu_factor(rg.tensor([[2., 0.], [0., 4.]]))
        >>> rg.linalg.lu_solve(LU, pivots, rg.tensor([[2.], [4.]]))
        tensor([[1.],
                [1.]])
    """
    _check_pivots("linalg.lu_solve", LU, pivots)
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{scalar_type_name(LU.dtype)} and B of type {scalar_type_name(B.dtype)} instead")
    if LU.dim() < 2 or LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"linalg.lu_solve: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2] if LU.dim() > 1 else 1} by {LU.shape[-1]} matrices")
    n, (rows, cols) = LU.shape[-1], tuple(B.shape[-2:])
    if (rows if left else cols) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{rows}x{cols})")
    return linalg_lu_solve(LU, pivots, B, left=left, adjoint=adjoint)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):  # noqa: N803 - PyTorch's names
    """``(P, L, U)`` of a packed factorization ``(LU_data, LU_pivots)`` (``lu_factor``'s): ``A = P L U``.

    Example::
        >>> import retrograd as rg
        >>> rg.lu_unpack(*rg.linalg.lu_factor(rg.tensor([[1., 2.], [3., 4.]]))).L
        tensor([[1.0000, 0.0000],
                [0.3333, 1.0000]])
    """
    _check_pivots("torch.lu_unpack", LU_data, LU_pivots)
    return _LuUnpack(*lu_unpack_op(LU_data, LU_pivots, unpack_data, unpack_pivots))


_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed in a "
    "future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
    "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch release."
    "\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
    "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
_warned = set()


def _warn_once(key, text):
    if key not in _warned:  # once a process, as PyTorch's
        _warned.add(key)
        warnings.warn(text, UserWarning, stacklevel=3)


def old_lu(A, pivot=True, get_infos=False):  # noqa: N803 - PyTorch's names
    """``torch.lu``: ``(LU, pivots)``, or ``(LU, pivots, info)`` with ``get_infos`` (deprecated for
    ``linalg.lu_factor``, and warns once as PyTorch).
    """
    _warn_once("lu", _LU_DEPRECATED)
    LU, pivots, info = linalg_lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return _LuWithInfo(LU, pivots, info) if get_infos else (LU, pivots)


def old_lu_solve(b, LU_data, LU_pivots):  # noqa: N803 - PyTorch's names
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve(LU_data, LU_pivots, b)`` (deprecated, and warns
    once as PyTorch)."""
    _warn_once("lu_solve", _LU_SOLVE_DEPRECATED)
    return lu_solve(LU_data, LU_pivots, b)
