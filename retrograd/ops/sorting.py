"""Sorting and selection along a dim: sort, argsort, topk, kthvalue, median, nanmedian, mode, msort.

The values of each are the input's elements at the selected positions, so their gradient is the
output's scattered back to those positions (PyTorch's ``value_selecting_reduction_backward``);
the indices are int64 and never require grad. Every order here is NumPy's stable sort, with NaN
the largest value, as PyTorch's CPU kernels order them.
"""
from __future__ import annotations

from .. import _dtype, return_types
from .._creation import zeros
from .._tensor import Tensor, _wrap_dim
from ._declarations import defop, tensor_method
from .pointwise import where
from .reduction import _evenly_distribute


def _order(xp, x, axis, descending):
    """The stable sorting permutation of ``x`` (at least 1-D) along ``axis``; NaN sorts as the largest."""
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    # Ascending on the reversed array keeps equal elements last-first; reversing that result gives
    # descending order with equal elements first-first, and NaN (last ascending) at the front.
    n = x.shape[axis]
    flipped = xp.argsort(xp.flip(x, axis), axis=axis, kind="stable")
    return (n - 1) - xp.flip(flipped, axis)


def _scatter_selected(grads, input_shape, result, dim, keepdim):
    """Gradient of the values of a selection along ``dim``: scattered to the selected indices (``result[1]``)."""
    grad, indices = grads[0], result[1]
    if not input_shape:
        return grad
    d = _wrap_dim(dim, len(input_shape))
    if not keepdim:
        grad, indices = grad.unsqueeze(d), indices.unsqueeze(d)
    return zeros(input_shape, dtype=grad.dtype, device=grad.device).scatter_add(d, indices, grad)


def _scatter_sorted(grads, input_shape, result, dim):
    """Gradient of the values of sort and topk (which keep ``dim``): see ``_scatter_selected``."""
    return _scatter_selected(grads, input_shape, result, dim, True)


def _as_1d(x):
    return x.reshape(1) if x.ndim == 0 else x


def _check_nonempty(name, x, d):
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _pick(xp, input, index, d, keepdim):
    """(values, indices) of ``input`` at ``index`` (size 1 along ``d``), with ``d`` kept or dropped."""
    x = _as_1d(input)
    values = xp.take_along_axis(x, index, axis=d)
    if input.ndim == 0:
        return values.reshape(()), index.reshape(())
    if not keepdim:
        return xp.squeeze(values, axis=d), xp.squeeze(index, axis=d)
    return values, index


# -- sort, argsort ---------------------------------------------------------------------------------
def _sort(xp, input, dim=-1, descending=False, *, stable=False):
    d = _wrap_dim(dim, input.ndim)
    x = _as_1d(input)
    index = _order(xp, x, d, descending)  # always stable: `stable=False` allows any order of ties
    return xp.take_along_axis(x, index, axis=d).reshape(input.shape), index.reshape(input.shape)


_sort_op = defop("sort", _sort, multi_output=True, public=False, input=_scatter_sorted,
                 node_names={"SortBackward1": lambda stable: bool(stable)})  # sort.stable: Note [Node names per call]


@tensor_method
def sort(input, dim=-1, descending=False, *, stable=False):
    """The elements of ``input`` sorted along ``dim``, and their original indices."""
    return return_types.sort(*_sort_op(input, dim, descending, stable=stable))


def _argsort(xp, input, dim=-1, descending=False, *, stable=False):
    d = _wrap_dim(dim, input.ndim)
    return _order(xp, _as_1d(input), d, descending).reshape(input.shape)


argsort = defop("argsort", _argsort, method=True)


@tensor_method
def msort(input):
    """``input`` sorted along its first dim: ``sort(input, 0).values``."""
    return _sort_op(input, 0)[0]


# -- topk, kthvalue -------------------------------------------------------------------------------
def _topk(xp, input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    d = _wrap_dim(dim, input.ndim)
    x = _as_1d(input)
    if not 0 <= k <= x.shape[d]:
        raise RuntimeError("selected index k out of range")
    index = xp.take(_order(xp, x, d, largest), xp.arange(k), axis=d)
    values = xp.take_along_axis(x, index, axis=d)
    if input.ndim == 0:
        return values.reshape(()), index.reshape(())
    return values, index


_topk_op = defop("topk", _topk, multi_output=True, public=False, input=_scatter_sorted)


@tensor_method
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """The ``k`` largest (or smallest) elements of ``input`` along ``dim``, and their indices."""
    return return_types.topk(*_topk_op(input, k, dim, largest, sorted))


def _kthvalue(xp, input, k, dim=-1, keepdim=False):
    d = _wrap_dim(dim, input.ndim)
    x = _as_1d(input)
    _check_nonempty("kthvalue", x, d)
    if not 1 <= k <= x.shape[d]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    index = xp.take(_order(xp, x, d, False), xp.arange(k - 1, k), axis=d)
    return _pick(xp, input, index, d, keepdim)


_kthvalue_op = defop("kthvalue", _kthvalue, multi_output=True, public=False, input=_scatter_selected)


@tensor_method
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element of ``input`` along ``dim``, and its index."""
    return return_types.kthvalue(*_kthvalue_op(input, k, dim, keepdim))


# -- median, mode ---------------------------------------------------------------------------------
def _median_all(xp, input):
    flat = input.reshape(-1)
    if flat.size == 0 or (flat.dtype.kind == "f" and xp.isnan(flat).any()):
        return xp.asarray(float("nan"), dtype=flat.dtype if flat.dtype.kind == "f" else "float64")
    return xp.sort(flat)[(flat.size - 1) // 2]


def _median_all_backward(grad, input, result):
    """Shared evenly among the elements equal to the median, or among the NaNs where it is NaN, as PyTorch."""
    if input.is_floating_point() and bool(result._data != result._data):  # a branch on the data, as PyTorch
        mask = input.isnan()
        return where(mask, grad / mask.sum(), 0.)
    return _evenly_distribute(grad, input, result)


_median_all_op = defop("median_all", _median_all, public=False, node_name="Median", input=_median_all_backward)


def _median_dim(xp, input, dim, keepdim=False):
    d = _wrap_dim(dim, input.ndim)
    x = _as_1d(input)
    _check_nonempty("median", x, d)
    n = x.shape[d]
    index = xp.take(_order(xp, x, d, False), xp.arange((n - 1) // 2, (n - 1) // 2 + 1), axis=d)
    if x.dtype.kind == "f":  # a NaN in the slice is its median, at the first NaN's index
        nan = xp.isnan(x)
        first_nan = xp.expand_dims(xp.argmax(nan, axis=d), d)
        index = xp.where(xp.any(nan, axis=d, keepdims=True), first_nan, index)
    return _pick(xp, input, index, d, keepdim)


_median_dim_op = defop("median_dim", _median_dim, multi_output=True, public=False, node_name="Median",
                       node_names={"MedianBackward1": lambda dim: True},  # median.dim, as PyTorch names it
                       input=_scatter_selected)


@tensor_method
def median(input, dim=None, keepdim=False):
    """The lower median of ``input``; along ``dim``, the medians and their indices."""
    if dim is None:
        return _median_all_op(input)
    return return_types.median(*_median_dim_op(input, dim, keepdim))


def _nanmedian_all(xp, input):
    flat = input.reshape(-1)
    if flat.dtype.kind == "f":
        flat = flat[~xp.isnan(flat)]
        if flat.size == 0:  # nothing but NaN (or nothing): NaN
            return xp.asarray(float("nan"), dtype=input.dtype)
    elif flat.size == 0:
        return xp.asarray(float("nan"), dtype="float64")
    return xp.sort(flat)[(flat.size - 1) // 2]


# The gradient is median's: shared evenly among the elements equal to the result, or among the NaNs where all are.
_nanmedian_all_op = defop("nanmedian_all", _nanmedian_all, public=False, node_name="Nanmedian",
                          input=_median_all_backward)


def _nanmedian_dim(xp, input, dim, keepdim=False):
    d = _wrap_dim(dim, input.ndim)
    x = _as_1d(input)
    _check_nonempty("median", x, d)
    order = _order(xp, x, d, False)  # NaNs sort last: the lower median of the others is at (count - 1) // 2
    if x.dtype.kind == "f":
        count = (~xp.isnan(x)).sum(axis=d, keepdims=True)
    else:
        count = xp.full(x.shape[:d] + (1,) + x.shape[d + 1:], x.shape[d])
    index = xp.take_along_axis(order, xp.maximum(count - 1, 0) // 2, axis=d)
    return _pick(xp, input, index, d, keepdim)


_nanmedian_dim_op = defop("nanmedian_dim", _nanmedian_dim, multi_output=True, public=False, node_name="Nanmedian",
                          node_names={"NanmedianBackward1": lambda dim: True},  # nanmedian.dim, as PyTorch names it
                          input=_scatter_selected)


@tensor_method
def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the values of ``input`` that are not NaN; along ``dim``, the medians and their indices.

    Args:
        input: the tensor.
        dim: the dim to reduce (None: all of them, and no indices).
        keepdim: keep ``dim`` with size 1.

    Returns:
        The median (NaN where every value is NaN); along ``dim``, ``(values, indices)``.

    Raises:
        IndexError: PyTorch's, where ``dim`` has size 0.

    Example::
        >>> import retrograd as rg
        >>> rg.nanmedian(rg.tensor([1., float("nan"), 3., 2.]))
        tensor(2.)
        >>> rg.nanmedian(rg.tensor([[2., float("nan")], [0., 1.]]), 1).indices
        tensor([0, 0])
    """
    if dim is None:
        return _nanmedian_all_op(input)
    return return_types.nanmedian(*_nanmedian_dim_op(input, dim, keepdim))


def _mode(xp, input, dim=-1, keepdim=False):
    d = _wrap_dim(dim, input.ndim)
    x = _as_1d(input)
    _check_nonempty("mode", x, d)
    rows = xp.moveaxis(x, d, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    n = flat.shape[1]
    index = xp.empty(flat.shape[0], dtype="int64")
    for r in range(flat.shape[0]):  # per slice: the most frequent value (the smallest on ties), its last index
        row = flat[r]
        values, counts = xp.unique(row, return_counts=True)
        value = values[int(xp.argmax(counts))]
        index[r] = n - 1 - int(xp.argmax(row[::-1] == value))
    index = xp.moveaxis(index.reshape(rows.shape[:-1] + (1,)), -1, d)
    return _pick(xp, input, index, d, keepdim)


_mode_op = defop("mode", _mode, multi_output=True, public=False, input=_scatter_selected)


@tensor_method
def mode(input, dim=-1, keepdim=False):
    """The most frequent value of ``input`` along ``dim`` (the smallest on ties), and its last index."""
    return return_types.mode(*_mode_op(input, dim, keepdim))

# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
# -- quantile, nanquantile ------------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_checks(input, q, interpolation):
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if isinstance(q, Tensor) and q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor) and q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    values = q.reshape(-1).tolist() if isinstance(q, Tensor) else [q]
    for v in values:
        if not 0 <= v <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {v:g}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's quantile: the sorted values along ``dim`` (all of them for None), each q's fractional rank among
    them, and the values at the ranks around it, interpolated (``lerp_``: LerpBackward1, as PyTorch's)."""
    _quantile_checks(input, q, interpolation)
    scalar_q = not isinstance(q, Tensor) or q.dim() == 0
    qs = (q if isinstance(q, Tensor) else input.new_tensor(q)).reshape(-1)
    if dim is None:
        flat = input.reshape(-1)
        reduced = (1,) * input.dim() if keepdim else ()
    else:
        d = _wrap_dim(dim, input.dim())
        flat = input if d == input.dim() - 1 else input.unsqueeze(-1).transpose(d, -1)
        reduced = tuple(1 if k == d else n for k, n in enumerate(input.shape)) if keepdim else tuple(
            n for k, n in enumerate(input.shape) if k != d)
    ordered = sort(flat, -1).values.reshape(reduced + (flat.shape[-1],))
    nans = ordered.isnan()
    if ignore_nan:
        counts = nans.logical_not().sum(-1, keepdim=True)
    else:
        counts = zeros(reduced + (1,), dtype=_dtype.int64) + ordered.shape[-1]
    ranks = qs * (counts - 1)
    if not ignore_nan:  # a NaN anywhere: the last (NaN) value
        ranks = ranks.masked_fill(nans.any(-1, keepdim=True), ordered.shape[-1] - 1)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    ranks = ranks.clamp(min=0)  # a row of only NaNs: rank -q, as PyTorch's, read as 0
    below = ranks.long()
    values = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks.new_full(tuple(ranks.shape), 0.5) if interpolation == "midpoint" else ranks - below
        values.lerp_(ordered.gather(-1, ranks.ceil().long()), weights)
    if scalar_q:
        return values.squeeze(-1)
    return values.unsqueeze(0).transpose(0, -1).squeeze(-1)


@tensor_method
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles of ``input`` along ``dim`` (of all its elements for None).

    Args:
        input: a float32 or float64 tensor.
        q: a number in [0, 1], or a 0-d or 1-D tensor of them, of ``input``'s dtype.
        dim: the dim to reduce, or None.
        keepdim: keep ``dim`` with size 1.
        interpolation: between the two values around a quantile: 'linear', 'lower', 'higher', 'midpoint' or
            'nearest'.

    Returns:
        The quantiles: ``input``'s reduced shape, after a leading dim of ``len(q)`` for a 1-D ``q``. A row holding
        NaN gives NaN.

    Raises:
        RuntimeError: an empty or integer ``input``, ``q`` outside [0, 1] or of another dtype or more than 1 dim,
            an unknown interpolation (PyTorch's errors).

    Example::
        >>> import retrograd as rg
        >>> rg.quantile(rg.tensor([1., 2., 3., 4.]), 0.5)
        tensor(2.5000)
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


@tensor_method
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaN values: as if they were not there (NaN for a row of only NaN).

    Example::
        >>> import retrograd as rg
        >>> rg.nanquantile(rg.tensor([1., float("nan"), 3.]), 0.5)
        tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, True)


from ._declarations import REDUCED_FROM_BACKWARD, defjvp  # noqa: E402
from .reduction import _gather_reduced  # noqa: E402

defjvp(lambda input_t, dim, result: (input_t.gather(dim, result[1]) if input_t.dim() else input_t.clone(), None),
       "sort", "topk")
defjvp(lambda input_t, dim, keepdim, result: (_gather_reduced(input_t, dim, result[1], keepdim), None),
       "kthvalue", "median_dim", "nanmedian_dim", "mode")
defjvp(REDUCED_FROM_BACKWARD, "median_all", "nanmedian_all")
