"""Kernels over the last axis of NumPy arrays: row sums, softmax's shift, per-row broadcasting.

Note [Row reductions as products]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
NumPy reduces the last axis of a C-contiguous array one row at a time, at a fixed cost per row:
summing the 1,024 rows of 32 floats of W15's attention scores takes about 23 µs and their maxima
55 µs, where the exponential of the whole array takes 17 µs. So do the per-row broadcasts of a
(rows, 1) operand (15 µs against 3 µs for the same operation on two whole arrays). PyTorch's
kernels are single fused loops. Where rows are short and many (``fast_rows``), retrograd's
softmax, log_softmax, layer_norm and bias gradients use instead:

- sums over the last axis as a product with a vector of ones (one BLAS gemv: 4.5 µs for the
  same rows), and sums over the leading axes as the product of a row of ones with the matrix.
  The terms are the same, each times exactly 1; only the order of the additions differs, as it
  differs between NumPy's pairwise sum and PyTorch's vectorised one;
- a per-row operand repeated along the row (``np.repeat``, one fast pass) where the rows are
  short enough for that to beat broadcasting;
- for softmax, a shift by the maximum of the whole array (one vectorised pass) instead of each
  row's maximum. Softmax does not depend on the shift; a row's maximum only guards against
  overflow and underflow. The whole array's maximum guards against overflow, and each row's sum
  of exponentials says how far below it the row's maximum lies (the sum is at most ``n`` times
  its largest term): where a row's sum is under ``n * exp(-20)``, or not finite, that row alone
  is computed again shifted by its own maximum (``_exact_rows``). Every other row's largest term
  is then at least ``exp(-20)``, so the terms that float32 rounds to zero are those under about
  ``exp(-67)`` times the row's largest, where PyTorch's are those under ``exp(-87)``: a change below
  1e-29 in a probability. A NaN or an infinity in the array makes every row go the exact way.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["fast_rows", "row_sum", "lead_sum", "rows_apply", "softmax_rows", "log_softmax_rows", "layer_norm_rows",
           "layer_norm_input_rows"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_ONES = {}  # (length, dtype) -> read-only vector of ones
_SLACK = math.exp(-20.0)  # See Note [Row reductions as products]: how far below the shift a row's maximum may lie
_REPEAT_UP_TO = 64  # rows this short are repeated rather than broadcast (measured on 32, 64 and 65 elements)


def fast_rows(x) -> bool:
    """Whether ``x`` is a C-contiguous float32/float64 NumPy array of at least 8 rows of 2 to 2,048 elements
    (its last axis): where the kernels of Note [Row reductions as products] beat NumPy's reductions."""
    if type(x) is not np.ndarray or x.dtype not in _FLOATS or x.ndim < 2 or not x.flags.c_contiguous:
        return False
    n = x.shape[-1]
    return 2 <= n <= 2048 and x.size >= 8 * n


def _ones(n, dtype):
    key = (n, dtype)
    v = _ONES.get(key)
    if v is None:
        v = np.ones(n, dtype=dtype)
        v.flags.writeable = False
        if len(_ONES) > 256:
            _ONES.clear()
        _ONES[key] = v
    return v


def row_sum(x):
    """The sum over the last axis, kept as a size-1 axis, as one matrix-vector product (``fast_rows`` arrays)."""
    return np.matmul(x, _ones(x.shape[-1], x.dtype))[..., None]


def lead_sum(x):
    """The sum over every axis but the last (a bias gradient), as one vector-matrix product."""
    n = x.shape[-1]
    return np.matmul(_ones(x.size // n, x.dtype), x.reshape(-1, n))


def rows_apply(ufunc, x, r, out):
    """``ufunc(x, r, out=out)`` with ``r`` of shape (..., 1): one value per row of ``x``."""
    n = x.shape[-1]
    if n <= _REPEAT_UP_TO and x.size >= 64 * n:
        r = np.repeat(r, n, axis=-1)
    return ufunc(x, r, out=out)


def _shifted_exp(x):
    """``(e, s, top, bad)``: ``exp(x - top)`` with ``top`` the array's maximum, its row sums and the rows that must
    be computed exactly (a bool array, or None when there are none); None where ``top`` is not finite."""
    top = np.fmax.reduce(x, axis=None)
    if not np.isfinite(top):
        return None
    e = np.subtract(x, top)
    np.exp(e, out=e)
    s = row_sum(e)
    ok = s >= s.dtype.type(x.shape[-1] * _SLACK)  # NaN sums fail it too
    bad = None if ok.all() else ~ok[..., 0]
    return e, s, top, bad


def softmax_rows(x, safe=False):
    """softmax over the last axis of a ``fast_rows`` array, in a fresh array. See Note [Row reductions as products].

    ``safe``: a row whose every element is -inf gets zeros (attention's "safe softmax"), not NaN."""
    shifted = _shifted_exp(x)
    if shifted is None:
        return _exact_rows(x, log=False, safe=safe)
    e, s, _, bad = shifted
    np.reciprocal(s, out=s)
    rows_apply(np.multiply, e, s, e)
    if bad is not None:
        e[bad] = _exact_rows(x[bad], log=False, safe=safe)
    return e


def log_softmax_rows(x):
    """log_softmax over the last axis of a ``fast_rows`` array, in a fresh array."""
    shifted = _shifted_exp(x)
    if shifted is None:
        return _exact_rows(x, log=True)
    e, s, top, bad = shifted
    np.log(s, out=s)
    s += top
    rows_apply(np.subtract, x, s, e)
    if bad is not None:
        e[bad] = _exact_rows(x[bad], log=True)
    return e


def _exact_rows(x, log, safe=False):
    """softmax (or log_softmax) over the last axis, each row shifted by its own maximum."""
    top = np.amax(x, axis=-1, keepdims=True)
    dead = None
    if safe:
        dead = top == -np.inf
        top[dead] = 0
    e = x - top
    if log:
        e -= np.log(np.sum(np.exp(e), axis=-1, keepdims=True))
        return e
    np.exp(e, out=e)
    total = np.sum(e, axis=-1, keepdims=True)
    if dead is not None:
        total[dead] = 1  # exp(-inf) = 0 throughout: zeros
    e /= total
    return e


def layer_norm_rows(input, dims, n, weight, bias, eps):
    """layer_norm's ``(output, mean, rstd)`` on the rows of ``n`` elements of a ``fast_rows`` input (normalized over
    ``dims``): the two statistics as products with ones, each per-row step one pass."""
    x = input.reshape(-1, n)
    inv_n = x.dtype.type(1.0 / n)
    mean = row_sum(x)
    mean *= inv_n
    out = np.empty_like(x)
    rows_apply(np.subtract, x, mean, out)
    sq = out * out
    rstd = row_sum(sq)
    del sq
    rstd *= inv_n
    rstd += rstd.dtype.type(eps)
    np.reciprocal(np.sqrt(rstd, out=rstd), out=rstd)
    rows_apply(np.multiply, out, rstd, out)
    if weight is not None:
        w = weight.reshape(n)
        out = np.multiply(out, w, out=out) if w.dtype == out.dtype else out * w
    if bias is not None:
        b = bias.reshape(n)
        out = np.add(out, b, out=out) if b.dtype == out.dtype else out + b
    stat = tuple(1 if d in dims else size for d, size in enumerate(input.shape))
    return out.reshape(input.shape), mean.reshape(stat), rstd.reshape(stat)


def layer_norm_input_rows(g, xc, rstd, weight, u):
    """layer_norm's input gradient on (rows, n) arrays, as ``rstd * (gw - mean(gw)) - xc * (rstd^3 mean(gw * xc))``
    with ``gw`` the gradient times ``weight`` (a vector, or None), ``xc = x - mean`` (overwritten) and ``u = g * xc``
    (the product before the weight, which the weight's gradient shares): four per-row passes, the row means as
    matrix-vector products."""
    inv_n = g.dtype.type(1.0 / g.shape[1])
    if weight is None:
        gw, k, gm = g.copy(), row_sum(u), row_sum(g)
    else:
        gw, k, gm = g * weight, np.matmul(u, weight)[:, None], np.matmul(g, weight)[:, None]
    k *= inv_n  # then k = rstd^3 * mean(gw * xc), the factor of xc
    k *= rstd
    k *= rstd
    k *= rstd
    gm *= inv_n
    rows_apply(np.subtract, gw, gm, gw)
    rows_apply(np.multiply, gw, rstd, gw)
    rows_apply(np.multiply, xc, k, xc)
    gw -= xc
    return gw
