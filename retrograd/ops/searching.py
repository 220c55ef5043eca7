"""Searching and counting: nonzero, unique, searchsorted, bucketize, isin, histc, bincount, all, any.

None is differentiable: their results are integers or bools, or counts (``histc``, ``bincount``
with weights) that do not require grad. PyTorch marks the floating results of ``unique`` and
weighted ``bincount`` of a tensor that requires grad as requiring grad, with a backward that
raises; here they simply do not.
"""
from __future__ import annotations

import numpy as np

from .._dtype import scalar_type_name
from .._tensor import _wrap_dim
from ._declarations import defop, tensor_method
from ._grad_utils import normalize_dims


def _host(xp, array):
    """``array`` as a NumPy array (a device array is copied to the host)."""
    return array if xp is np else xp.asnumpy(array)


def _ints(xp, array, out_int32=False):
    return xp.asarray(array, dtype="int32" if out_int32 else "int64")


# -- nonzero, argwhere -----------------------------------------------------------------------------
def _nonzero(xp, input):
    """The indices of the nonzero elements, one row per element (a 0-d input counts as one element)."""
    if input.ndim == 0:
        return xp.zeros((int(bool(input)), 0), dtype="int64")
    return xp.stack(xp.nonzero(input), axis=1).astype("int64", copy=False) if input.size else \
        xp.zeros((0, input.ndim), dtype="int64")


_nonzero_op = defop("nonzero", _nonzero, public=False)


@tensor_method
def nonzero(input, *, as_tuple=False):
    """The indices of the nonzero elements of ``input``: rows of a matrix, or one vector per dim."""
    rows = _nonzero_op(input)
    if not as_tuple:
        return rows
    if input.dim() == 0:
        return (rows.new_zeros(rows.shape[0], dtype=rows.dtype),)
    return tuple(rows[:, d].contiguous() for d in range(input.dim()))


@tensor_method
def argwhere(input):
    """The indices of the nonzero elements of ``input``, one row each: ``nonzero(input)``."""
    return _nonzero_op(input)


# -- unique, unique_consecutive --------------------------------------------------------------------
def _unique(xp, input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    x = _host(xp, input)
    if dim is None:
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
        inverse = inverse.reshape(x.shape)
    else:
        d = _wrap_dim(dim, x.ndim)
        values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=d, equal_nan=False)
        inverse = inverse.reshape(-1)
    return xp.asarray(values), _ints(xp, inverse), _ints(xp, counts)


def _underivable(grads, dim):
    """unique's derivative, as PyTorch's: its values require grad, but no backward pass can cross it."""
    name = "_unique2" if dim is None else "unique_dim"
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


_unique_op = defop("unique", _unique, multi_output=True, public=False, nondiff_outputs=(1, 2),
                   node_name="Unique2Backward0", node_names={"UniqueDimBackward0": lambda dim: dim is not None},
                   input=_underivable)


def _chosen(result, return_inverse, return_counts):
    values, inverse, counts = result
    if not (return_inverse or return_counts):
        return values
    return (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


@tensor_method
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements (or slices along ``dim``) of ``input``, sorted; optionally inverse and counts."""
    return _chosen(_unique_op(input, sorted, return_inverse, return_counts, dim), return_inverse, return_counts)


def _unique_consecutive(xp, input, return_inverse=False, return_counts=False, dim=None):
    x = _host(xp, input)
    if dim is None:
        flat = x.reshape(-1)
        starts = np.ones(flat.shape[0], dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        values = flat[starts]
        inverse = (np.cumsum(starts) - 1).reshape(x.shape)
    else:
        d = _wrap_dim(dim, x.ndim)
        moved = np.moveaxis(x, d, 0).reshape(x.shape[d], -1)
        starts = np.ones(moved.shape[0], dtype=bool)
        starts[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        values = np.take(x, np.flatnonzero(starts), axis=d)
        inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), starts.shape[0]))
    return xp.asarray(values), _ints(xp, inverse), _ints(xp, counts)


def _underivable_consecutive(grads):
    raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


_unique_consecutive_op = defop("unique_consecutive", _unique_consecutive, multi_output=True, public=False,
                               nondiff_outputs=(1, 2), input=_underivable_consecutive)


@tensor_method
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` with each run of equal consecutive elements (or slices along ``dim``) kept once."""
    return _chosen(_unique_consecutive_op(input, return_inverse, return_counts, dim), return_inverse, return_counts)


# -- searchsorted, bucketize, isin -----------------------------------------------------------------
def _searchsorted(xp, sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    if side is not None and (side == "right") != bool(right) and right:
        raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of {side} "
                           f"while right was True")
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    which = side or ("right" if right else "left")
    seq = _host(xp, sorted_sequence)
    values = _host(xp, xp.asarray(input))
    if sorter is not None:
        seq = np.take_along_axis(seq, _host(xp, sorter), axis=-1)
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=which)
    else:
        if values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               f"dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
        rows, vals = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        out = np.stack([np.searchsorted(r, v, side=which) for r, v in zip(rows, vals, strict=True)])
        out = out.reshape(values.shape)
    return _ints(xp, out, out_int32)


searchsorted = defop("searchsorted", _searchsorted, tensor_args=("sorted_sequence", "input", "sorter"))


def _bucketize(xp, input, boundaries, *, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    out = np.searchsorted(_host(xp, boundaries), _host(xp, xp.asarray(input)), side="right" if right else "left")
    return _ints(xp, out, out_int32)


bucketize = defop("bucketize", _bucketize, tensor_args=("input", "boundaries"))


def _isin(xp, elements, test_elements, *, assume_unique=False, invert=False):
    return xp.isin(xp.asarray(elements), xp.asarray(test_elements), assume_unique=assume_unique, invert=invert)


isin = defop("isin", _isin, tensor_args=("elements", "test_elements"))


# -- histc, bincount, count_nonzero, all, any ------------------------------------------------------
def _histc(xp, input, bins=100, min=0, max=0):  # noqa: A002
    if input.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = _host(xp, input).reshape(-1)
    low, high = float(min), float(max)
    if low == high and x.size:  # the data's own range
        low, high = float(x.min()), float(x.max())
    if low == high:
        low, high = low - 1, high + 1
    counts, _ = np.histogram(x[(x >= low) & (x <= high)], bins=bins, range=(low, high))
    return xp.asarray(counts.astype(input.dtype))


histc = defop("histc", _histc, method=True)


def _bincount(xp, input, weights=None, minlength=0):
    if input.dtype.kind not in "iub":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    x = _host(xp, input)
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = None
    if weights is not None:
        w = _host(xp, weights)
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
    out = np.bincount(x, weights=w, minlength=minlength)
    return xp.asarray(out.astype(w.dtype if w is not None and w.dtype.kind == "f" else
                                 "float64" if w is not None else "int64"))


bincount = defop("bincount", _bincount, method=True, tensor_args=("input", "weights"))


def _axes(dim, ndim):
    return None if dim is None else normalize_dims(dim, ndim) if ndim else None


def _count_nonzero(xp, input, dim=None):
    return xp.count_nonzero(input, axis=_axes(dim, input.ndim)).astype("int64")


count_nonzero = defop("count_nonzero", _count_nonzero, method=True)


def _truth(name):
    """The forward of ``all``/``any`` (``name``) over ``dim``."""
    def forward(xp, input, dim=None, keepdim=False):
        out = getattr(xp, name)(input, axis=_axes(dim, input.ndim), keepdims=keepdim)
        return out.astype("uint8") if input.dtype == np.uint8 else out  # PyTorch keeps uint8
    return forward


all = defop("all", _truth("all"), method=True)  # noqa: A001
any = defop("any", _truth("any"), method=True)  # noqa: A001
