"""Indexing ops: ``__getitem__``/``__setitem__``, gather/scatter, index_select and masked_fill."""
from __future__ import annotations

import os
import sys
import threading
import warnings

import numpy as np

from .._dtype import scalar_type_name, tensor_type_name, type_meta_name
from .._overrides import dispatch_self
from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Error
from ..autograd.graph import input_metadata
from ..autograd.variable import gradient_edge
from ._declarations import defop, passthrough, tensor_method
from .joining import cat
from .pointwise import formula_arrays, where


def convert_index(index):
    """A PyTorch index as a NumPy index tuple (ending in Ellipsis), and whether it is basic.

    Basic indexing (ints, slices, None, Ellipsis) gives a view; tensors, lists and bools give
    a copy (advanced indexing). The trailing Ellipsis makes NumPy return 0-d arrays, not scalars.
    """
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    basic = True
    for i in index:
        if isinstance(i, Tensor):
            arr = i._data
            if arr.dtype.kind not in "biu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr)
            basic = False
        elif isinstance(i, (bool, np.bool_)):
            out.append(bool(i))
            basic = False
        elif isinstance(i, (int, np.integer)):
            out.append(int(i))
        elif i is None or i is Ellipsis or isinstance(i, slice):
            if isinstance(i, slice) and i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
            out.append(i)
        elif isinstance(i, range):  # a sequence of ints, as PyTorch takes it
            out.append(np.arange(i.start, i.stop, i.step, dtype=np.int64))
            basic = False
        elif isinstance(i, (list, np.ndarray)):
            arr = np.asarray([x.item() if isinstance(x, Tensor) else x for x in i] if isinstance(i, list) else i)
            if arr.dtype.kind not in "biu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr)
            basic = False
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(i).__name__})")
    if not any(i is Ellipsis for i in out):
        out.append(Ellipsis)
    return tuple(out), basic


def _check_bounds(input, indices):
    try:
        return input[indices]
    except IndexError as exc:
        raise IndexError(str(exc).replace("axis", "dimension")) from None


def _index_forward(xp, input, indices):
    return _check_bounds(input, indices)


def _index_backward(grad, input_shape, indices, accumulate):
    zeros = grad.new_zeros(input_shape)
    return index_put(zeros, indices, grad, accumulate)


def last_view(input, indices) -> str:
    """The view PyTorch's basic indexing applies last for ``indices``: Select, Slice, Unsqueeze or Alias.

    It applies the entries in order, an int a select, None an unsqueeze, and a slice a slice unless
    it keeps the whole dim (which it skips, except in ``x[a:b]`` alone); nothing applied is an alias.
    """
    if len(indices) == 2 and isinstance(indices[0], slice) and indices[1] is Ellipsis:
        return "Slice"
    rest = input.ndim - sum(1 for i in indices if i is not None and i is not Ellipsis)
    dim, last = 0, "Alias"
    for i in indices:
        if i is Ellipsis:
            dim += rest
        elif i is None:
            last = "Unsqueeze"
        else:
            if isinstance(i, int):
                last = "Select"
            elif i.indices(input.shape[dim]) != (0, input.shape[dim], 1):
                last = "Slice"
            dim += 1
    return last


def _last_view_is(view):
    return lambda input, indices: last_view(input, indices) == view


# Both name their node after the last view, as PyTorch's chain of views does. See Note [Node names per call]
_BASIC_INDEX_NODES = {f"{view}Backward0": _last_view_is(view) for view in ("Select", "Slice", "Unsqueeze", "Alias")}
def _basic_index_backward(grad, input_shape, indices):
    """The gradient of a basic-indexing view: zeros of the input's shape, ``grad`` written into the view."""
    xp = formula_arrays(grad)
    if xp is None:
        return _index_backward(grad, input_shape, indices, False)
    out = xp.zeros(input_shape, dtype=grad._data.dtype)  # See Note [Formulas on arrays]: no index_put op call
    out[indices] = grad._data
    return Tensor._make(out, grad._device)


_select = defop("select_index", _index_forward, view=True, public=False, node_name="Select",
                node_names=_BASIC_INDEX_NODES, input=_basic_index_backward)
_slice = defop("slice_index", _index_forward, view=True, public=False, node_name="Slice",
               node_names=_BASIC_INDEX_NODES, input=_basic_index_backward)

def _advanced_forward(xp, input, indices):
    return _check_bounds(input, tuple(i._data if isinstance(i, Tensor) else i for i in indices))


# Its indices hold a tensor for each array index (a list or array made one); its node saves them as
# PyTorch's IndexBackward0 does, so that a freed graph releases them.
_advanced = defop("index", _advanced_forward, public=False, saved_lists=("indices",),
                  input=lambda grad, input_shape, indices: _index_backward(grad, input_shape, tuple(indices), True))


def _index_tensors(index, indices):
    """``indices`` (``convert_index(index)``) with a tensor for each array: the one given, or one made of a list."""
    given = index if isinstance(index, tuple) else (index,)
    return tuple(given[k] if k < len(given) and isinstance(given[k], Tensor) else
                 Tensor._make(i) if isinstance(i, np.ndarray) else i for k, i in enumerate(indices))


def getitem(self, index):
    """``self[index]``: basic indexing gives a view, advanced indexing a copy, as PyTorch."""
    if type(self) is not Tensor:  # See Note [Where __torch_function__ is checked]
        result = dispatch_self(Tensor.__getitem__, self, index)
        if result is not NotImplemented:
            return result
    indices, basic = convert_index(index)
    if not basic:
        return _advanced(self, _index_tensors(index, indices))
    if any(isinstance(i, int) for i in indices):
        return _select(self, indices)
    return _slice(self, indices)


def _index_put(xp, input, indices, values, accumulate=False):
    if not isinstance(indices, tuple):
        indices = tuple(indices)  # PyTorch takes a tuple (or list) of index tensors
    indices = tuple(i._data if isinstance(i, Tensor) else i for i in indices)
    out = input.copy()
    values = xp.asarray(values, dtype=input.dtype)
    if accumulate:
        xp.add.at(out, indices, values)
    else:
        out[indices] = values
    return out


index_put = defop("index_put", _index_put, method=True, inplace=True, tensor_args=("input", "values"),
                  input=lambda grad, indices, accumulate: grad if accumulate else index_put(grad, indices, 0.),
                  values=lambda grad, indices: grad[indices])



def _flat_positions(xp, name, input, index):
    """``index`` as positions into the flattened ``input`` (negative ones from the end), bounds checked."""
    if index.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    n = input.size
    flat = index.reshape(-1).astype(np.int64, copy=False)
    bad = (flat >= n) | (flat < -n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(flat[bad.argmax()])} on a tensor of {n} elements.")
    return xp.where(flat < 0, flat + n, flat)


def _put(xp, input, index, source, accumulate=False):
    if source.size != index.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.size}, index.numel() = {index.size}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{scalar_type_name(input.dtype)} and source.dtype = {scalar_type_name(source.dtype)}")
    at = _flat_positions(xp, "put_", input, index)
    out = input.copy().reshape(-1)
    if accumulate:
        xp.add.at(out, at, source.reshape(-1))
    else:
        out[at] = source.reshape(-1)
    return out.reshape(input.shape)


put = defop("put", _put, method=True, inplace=True,
            input=lambda grad, index, source, accumulate: grad if accumulate else put(
                grad, index, source.new_zeros(source.shape)),
            source=lambda grad, index, source_shape: take(grad, index).reshape(source_shape))


def _take(xp, input, index):
    return input.reshape(-1)[_flat_positions(xp, "take", input, index)].reshape(index.shape)


take = defop("take", _take, method=True,
             input=lambda grad, input_shape, index: put(grad.new_zeros(input_shape), index, grad, True))

def _gather(xp, input, dim, index, *, sparse_grad=False):
    if index.dtype != np.int64 and index.dtype != np.int32:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if input.ndim == 0:
        _wrap_dim(dim, 0)
        return xp.broadcast_to(input, index.shape).copy()
    d = _wrap_dim(dim, input.ndim)
    if index.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    # PyTorch reads only the leading index.size(k) entries of the other dims k.
    part = input[tuple(slice(None) if k == d else slice(0, s) for k, s in enumerate(index.shape))]
    if part.shape[:d] + part.shape[d + 1:] != index.shape[:d] + index.shape[d + 1:]:
        raise RuntimeError(f"Size does not match at dimension {d} expected index {list(index.shape)} to be smaller "
                           f"than self {list(input.shape)} apart from dimension {d}")
    _check_index_bounds(index, input.shape[d], d)
    return xp.take_along_axis(part, index, axis=d)


def _check_index_bounds(index, size, dim):
    """PyTorch's RuntimeError for the first entry of ``index`` outside ``[0, size)`` (NumPy wraps a negative one)."""
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)].reshape(-1)[0]
        raise RuntimeError(f"index {int(bad)} is out of bounds for dimension {dim} with size {size}")


_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _gather_grad(grad, input_shape, dim, index):
    """PyTorch's ``grad.new_zeros(input_shape).scatter_add(dim, index, grad)``; see Note [Formulas on arrays]."""
    xp = formula_arrays(grad)
    g = grad._data
    if xp is not np or g.dtype not in _FLOATS or not input_shape:
        return grad.new_zeros(input_shape).scatter_add(dim, index, grad)
    # On the arrays: the zeros and the sum in one buffer, with no op calls. With one index along dim (a gather of
    # one class per row: the NLL of gather), no two entries of index address the same element, so the sum is an
    # assignment, without ufunc.at (a tenth of the time on (128, 1) of (128, 10)).
    idx = index._data
    return Tensor._make(_scatter_into(np, np.zeros(input_shape, g.dtype), dim, idx, g,
                                      idx.shape[_wrap_dim(dim, len(input_shape))] != 1), grad._device)


gather = defop("gather", _gather, method=True, input=_gather_grad)


def _along(xp, index, dim):
    """A full index tuple that addresses, for each element of ``index``, its position along ``dim``."""
    grids = list(xp.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _scatter_into(xp, out, dim, index, source, accumulate):
    """Writes (or adds) ``source`` (an array at least as large as ``index``, or a scalar) into ``out``."""
    if not index.size:
        return out
    if out.ndim == 0:
        _wrap_dim(dim, 0)
        value = source.reshape(-1)[0] if getattr(source, "ndim", 0) else source
        return out + value if accumulate else xp.full_like(out, value)
    d = _wrap_dim(dim, out.ndim)
    if getattr(source, "ndim", 0):
        source = source[tuple(slice(0, s) for s in index.shape)]
    where = _along(xp, index, d)
    if accumulate:
        xp.add.at(out, where, source)
    else:
        out[where] = source
    return out


def _scatter_add(xp, input, dim, index, src):
    return _scatter_into(xp, input.copy(), dim, index, src, True)


scatter_add = defop("scatter_add", _scatter_add, method=True, inplace=True,
                    input=passthrough,
                    src=lambda grad, dim, index, src_shape: _pad_to(grad.gather(dim, index), src_shape))


def _pad_to(g, shape):
    """``g`` placed in the corner of zeros of ``shape`` (src may be larger than index)."""
    if tuple(g.shape) == tuple(shape):
        return g
    return g.new_zeros(shape).index_put(tuple(slice(0, s) for s in g.shape) + (Ellipsis,), g)


def _scatter(xp, input, dim, index, src=None, value=None, *, reduce=None):
    if value is None:  # scatter(input, dim, index, value) with a number in src's place, as PyTorch allows
        value = src
    if reduce is not None:
        return _scatter_legacy_reduce(xp, input.copy(), dim, index, value, reduce)
    return _scatter_into(xp, input.copy(), dim, index, value, False)


def _no_derivative_with_reduce(reduce):
    if reduce is not None:  # PyTorch records a NotImplemented node for it; here the node's backward raises
        raise RuntimeError("derivative for aten::scatter is not implemented")


def _scatter_input_grad(grad, dim, index, reduce):
    _no_derivative_with_reduce(reduce)
    return grad.scatter(dim, index, None, 0.)


def _scatter_src_grad(grad, dim, index, src_shape, reduce):
    _no_derivative_with_reduce(reduce)
    return _pad_to(grad.gather(dim, index), src_shape)


scatter = defop("scatter", _scatter, method=True, inplace=True, tensor_args=("input", "index", "src"),
                node_names={"ScatterBackward1": lambda src: not isinstance(src, Tensor)},  # a number for src
                node_edges={"ScatterBackward1": ("input",)},
                input=_scatter_input_grad, src=_scatter_src_grad)


def _index_select(xp, input, dim, index):
    if index.dtype != xp.int64 and index.dtype != xp.int32:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0:  # the only valid index is 0
        _wrap_dim(dim, 0)
        if index.size != 1 or index.reshape(-1)[0] != 0:
            raise IndexError("index_select(): Index out of range in self")
        return input.copy()
    d = _wrap_dim(dim, input.ndim)
    if index.size and (index.min() < 0 or index.max() >= input.shape[d]):  # NumPy would wrap a negative one
        raise IndexError("index out of range in self")
    return xp.take(input, index, axis=d)


index_select = defop("index_select", _index_select, method=True,
                     input=lambda grad, input_shape, dim, index: grad.new_zeros(input_shape).index_add(dim, index, grad))


def _index_add(xp, input, dim, index, source, *, alpha=1):
    out = input.copy()
    source = source if alpha == 1 else source * alpha
    if input.ndim == 0:
        _wrap_dim(dim, 0)
        return out + source.sum()
    d = _wrap_dim(dim, input.ndim)
    xp.add.at(out, (slice(None),) * d + (index.reshape(-1),), source)
    return out


index_add = defop("index_add", _index_add, method=True, inplace=True,
                  input=passthrough,
                  source=lambda grad, dim, index, alpha: grad.index_select(dim, index) * alpha)


# Note [masked_fill as a copy]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``np.where(mask, value, input)`` reads three operands per element; a copy of the input and a masked write of the
# value (``np.copyto(..., where=mask)``) is the same result at about two thirds of the time (39 against 25 µs for
# W15's (8, 4, 32, 32) scores and a broadcast (1, 1, 32, 32) mask). masked_fill's forward and its input's formula
# on arrays take that form wherever the mask broadcasts to the input's shape. The copy is row-major, as PyTorch's
# masked_fill clones its input contiguous before it fills.
def _filled_copy(input, mask, value):
    """``input`` with ``value`` (an array of its dtype) where ``mask`` holds, in a fresh row-major NumPy array; None
    where the mask does not broadcast to ``input``'s shape. See Note [masked_fill as a copy]."""
    if mask.ndim > input.ndim or any(m not in (1, n) for m, n in zip(mask.shape[::-1], input.shape[::-1])):
        return None
    out = np.array(input, order="C")  # PyTorch's result is row-major whatever the input's layout
    np.copyto(out, value, where=mask)
    return out


def _masked_fill(xp, input, mask, value):
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {type_meta_name(mask.dtype)}")
    value = xp.asarray(value, dtype=input.dtype)
    if xp is np and value.ndim == 0:
        out = _filled_copy(input, mask, value)
        if out is not None:
            return out
    out = xp.where(mask, value, input)
    if out.shape != input.shape:
        raise RuntimeError(f"The expanded size of the mask ({list(mask.shape)}) must match the tensor's size "
                           f"({list(input.shape)})")
    return out


masked_fill = defop("masked_fill", _masked_fill, method=True, inplace=True, tensor_args=("input", "mask", "value"),
                    node_names={"MaskedFillBackward1": lambda value: isinstance(value, Tensor)},
                    node_edges={"MaskedFillBackward0": ("input",)},
                    input=lambda grad, mask: _masked_fill_input(grad, mask),
                    value=lambda grad, mask: grad.masked_fill(mask.logical_not(), 0.).sum())


def _masked_fill_input(grad, mask):
    if formula_arrays(grad) is np and mask._data.dtype == np.bool_:  # See Note [Formulas on arrays]
        out = _filled_copy(grad._data, mask._data, np.zeros((), grad._data.dtype))
        if out is not None:
            return Tensor._make(out, grad._device)
    return grad.masked_fill(mask, 0.)


def _masked_select(xp, input, mask):
    shape = np.broadcast_shapes(input.shape, mask.shape)
    return xp.broadcast_to(input, shape)[xp.broadcast_to(mask, shape)]


masked_select = defop("masked_select", _masked_select, method=True,
                      input=lambda grad, input_shape, mask: _masked_select_backward(grad, input_shape, mask))


def _masked_select_backward(grad, input_shape, mask):
    shape = tuple(np.broadcast_shapes(tuple(input_shape), tuple(mask.shape)))
    full = grad.new_zeros(shape)
    return index_put(full, (mask.expand(shape)._data, Ellipsis), grad)


# -- more of PyTorch's indexing ops: take_along_dim, index_copy/index_fill, masked_scatter, scatter_reduce --
@tensor_method
def take_along_dim(input, indices, dim=None):
    """The elements of ``input`` at ``indices`` along ``dim`` (of the flattened input without one), as gather
    after broadcasting both but along ``dim``.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([[10., 30., 20.], [60., 40., 50.]])
        >>> rg.take_along_dim(x, x.argmax(1, keepdim=True), dim=1)
        tensor([[30.],
                [60.]])
    """
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    nd = input.dim()
    d = _wrap_dim(dim, nd)
    if indices.dim() != nd:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {nd} dimensions for input, and {indices.dim()} dimensions for indices")
    shape = list(np.broadcast_shapes(tuple(input.shape[:d]) + (1,) + tuple(input.shape[d + 1:]),
                                     tuple(indices.shape[:d]) + (1,) + tuple(indices.shape[d + 1:])))
    index_shape, input_shape = list(shape), list(shape)
    index_shape[d], input_shape[d] = indices.shape[d], input.shape[d]
    if tuple(indices.shape) != tuple(index_shape):
        indices = indices.expand(tuple(index_shape))
    if tuple(input.shape) != tuple(input_shape):
        input = input.expand(tuple(input_shape))
    return gather(input, d, indices)


def _along_dim(d, index):
    """The index tuple that picks ``index`` (a vector) along dim ``d``."""
    return (slice(None),) * d + (index.reshape(-1),)


def _index_copy(xp, input, dim, index, source):
    out = input.copy()
    if input.ndim == 0:
        _wrap_dim(dim, 0)
        return source.reshape(()).astype(input.dtype) if index.size else out
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got " + str(index.ndim) + ")")
    out[_along_dim(d, index)] = source if source.ndim == input.ndim else source.reshape(
        input.shape[:d] + (index.size,) + input.shape[d + 1:])
    return out


index_copy = defop("index_copy", _index_copy, method=True, inplace=True,
                   input=lambda grad, dim, index: grad.index_fill(dim, index, 0.),
                   source=lambda grad, dim, index, source_shape: grad.index_select(dim, index.reshape(-1))
                   .reshape(source_shape))


def _index_fill(xp, input, dim, index, value):
    out = input.copy()
    if getattr(value, "ndim", 0):
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if input.ndim == 0:
        _wrap_dim(dim, 0)
        return xp.full_like(out, value) if index.size else out
    out[_along_dim(_wrap_dim(dim, input.ndim), index)] = value
    return out


index_fill = defop("index_fill", _index_fill, method=True, inplace=True, tensor_args=("input", "index", "value"),
                   node_names={"IndexFillBackward1": lambda value: isinstance(value, Tensor)},
                   node_edges={"IndexFillBackward0": ("input",)},
                   input=lambda grad, dim, index: grad.index_fill(dim, index, 0.),
                   value=lambda grad, dim, index: grad.index_select(dim, index.reshape(-1).unique()).sum()
                   if grad.dim() else grad)  # a position named twice was filled once


def _masked_scatter(xp, input, mask, source):
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_type_name(mask.dtype)}")
    shape = np.broadcast_shapes(input.shape, mask.shape)
    out = xp.broadcast_to(input, shape).copy()
    where = xp.broadcast_to(mask, shape)
    count = int(where.sum())
    if source.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[where] = source.reshape(-1)[:count]
    return out


def _masked_scatter_source_grad(grad, mask, source_shape):
    """The gradient of masked_scatter's source: the masked gradients in order, then zeros."""
    picked = grad.masked_select(mask)
    n = 1
    for s in source_shape:
        n *= s
    if picked.numel() < n:
        picked = cat([picked, picked.new_zeros((n - picked.numel(),))])
    return picked.reshape(source_shape)


masked_scatter = defop("masked_scatter", _masked_scatter, method=True, inplace=True,
                       input=lambda grad, mask: grad.masked_fill(mask, 0.),
                       source=_masked_scatter_source_grad)

_REDUCE_UFUNCS = {"sum": "add", "prod": "multiply", "mean": "add", "amax": "maximum", "amin": "minimum"}
_REDUCE_ALIASES = {"max": "amax", "min": "amin"}  # PyTorch takes these too


def _scatter_reduce(xp, input, dim, index, src, reduce, *, include_self=True):
    reduce = _REDUCE_ALIASES.get(reduce, reduce)
    if reduce not in _REDUCE_UFUNCS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    out = input.copy()
    if not index.size:
        return out
    if input.ndim == 0:
        _wrap_dim(dim, 0)
        out, index, src, d = out.reshape(1), index.reshape(1), src.reshape(1), 0
    else:
        d = _wrap_dim(dim, input.ndim)
    where = _along(xp, index, d)
    src = src[tuple(slice(0, s) for s in index.shape)]
    if not include_self:
        identity = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
        if identity is None:
            info = np.finfo(out.dtype) if out.dtype.kind == "f" else np.iinfo(out.dtype)
            identity = (-np.inf if out.dtype.kind == "f" else info.min) if reduce == "amax" else \
                (np.inf if out.dtype.kind == "f" else info.max)
        out[where] = identity
    getattr(xp, _REDUCE_UFUNCS[reduce]).at(out, where, src)
    if reduce == "mean":
        count = xp.zeros(out.shape, dtype=out.dtype)
        xp.add.at(count, where, 1)
        count = count + 1 if include_self else xp.maximum(count, 1)
        out = out / count if out.dtype.kind == "f" else xp.floor_divide(out, count.astype(out.dtype))
    return out.reshape(input.shape)


def _delayed_error(msg, t):
    """``t``'s value through an Error node that raises ``msg`` if a backward pass reaches it (PyTorch's DelayedError)."""
    node = Error(msg, [gradient_edge(t)], [input_metadata(t._data, t._device)])
    out = Tensor._alias_of(t)
    out._node, out._output_nr, out._requires_grad = node, 0, True
    return out


def _scattered_count(dim, index, like):
    """How many elements of src land on each position of ``like`` (a tensor of ``like``'s dtype)."""
    return like.new_zeros(like.shape).scatter_add(dim, index, like.new_ones(index.shape))


def _scatter_reduce_grads(grad, input, dim, index, src, reduce, include_self, result):
    """(gradient of input, gradient of src) of scatter_reduce, as PyTorch's scatter_reduce_backward."""
    reduce = _REDUCE_ALIASES.get(reduce, reduce)
    if src.dim() and tuple(src.shape) != tuple(index.shape):  # only src's leading part was read
        src = src[tuple(slice(0, s) for s in index.shape)]
    hit = _scattered_count(dim, index, grad) > 0
    if reduce == "sum":
        g_input = grad if include_self else grad.masked_fill(hit, 0.)
        return g_input, grad.gather(dim, index)
    if reduce == "mean":
        n = _scattered_count(dim, index, grad) + (1 if include_self else 0)
        n = n.masked_fill(n == 0, 1.)
        g_input = grad / n if include_self else (grad / n).masked_fill(hit, 0.)
        return g_input, (grad / n).gather(dim, index)
    if reduce == "prod":
        # The product of a factor's others: result / x where x != 0, else the product with x taken
        # as 1, made differentiable in the others that way (a zero of input among them included).
        if include_self:
            kept = input.masked_fill(input == 0, 1.)
            g_input = grad * kept.scatter_reduce(dim, index, src, "prod", include_self=True) / kept
        else:
            g_input = grad.masked_fill(hit, 0.)
        src_zero = src == 0
        src_zeros = grad.new_zeros(grad.shape).scatter_add(dim, index, src_zero.to(grad.dtype)).gather(dim, index)
        single = src_zero & (src_zeros == 1)
        rest = input.scatter_reduce(dim, index, src.masked_fill(single, 1.), "prod", include_self=include_self)
        g_src = where(single, (grad * rest).gather(dim, index),
                      (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1.))
        if g_src.requires_grad and bool((src_zeros > 1).any()):
            # Where two zeros of src meet, the product's second derivative in them is not 0, but this
            # formula's derivative is: refuse to differentiate it, as PyTorch does.
            g_src = _delayed_error("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src "
                                   "are scattered to the same position in self", g_src)
        return g_input, g_src
    # amax, amin: the gradient shared evenly among the elements equal to the result
    value = result.gather(dim, index)
    src_hit = (src == value).to(grad.dtype)
    input_hit = (input == result if include_self else hit.logical_not()).to(grad.dtype)  # untouched: the input
    n = input_hit.scatter_add(dim, index, src_hit)
    share = grad / n.masked_fill(n == 0, 1.)
    return share * input_hit, share.gather(dim, index) * src_hit


scatter_reduce = defop(
    "scatter_reduce", _scatter_reduce, method=True, inplace=True,
    input=lambda grad, input, dim, index, src, reduce, include_self, result:
    _scatter_reduce_grads(grad, input, dim, index, src, reduce, include_self, result)[0],
    src=lambda grad, input, dim, index, src, reduce, include_self, result:
    _pad_to(_scatter_reduce_grads(grad, input, dim, index, src, reduce, include_self, result)[1], src.shape))


# -- index_reduce: source reduced into input along a dim, at the positions an index vector names -------------------
_INDEX_REDUCE_IDENTITY = {"prod": 1, "mean": 0}


def _index_reduce(xp, input, dim, index, source, reduce, *, include_self=True):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{scalar_type_name(index.dtype)} and size: {list(index.shape)}")
    if index.dtype != xp.int64 and index.dtype != xp.int32:
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {scalar_type_name(index.dtype)}")
    x, src = input.reshape(1) if input.ndim == 0 else input, source.reshape(1) if source.ndim == 0 else source
    if index.size != src.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.size}) should be equal to source.size(dim): "
                           f"({src.shape[d]}), for dim: {d}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({scalar_type_name(input.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    if x.ndim != src.ndim or x.shape[:d] + x.shape[d + 1:] != src.shape[:d] + src.shape[d + 1:]:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    idx = index.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[d]):
        raise IndexError("index out of range in self")
    if not _beta_warned.is_set():
        _warn_beta_once()
    out = xp.moveaxis(x.copy(), d, 0)  # a view of the copy: writes land in it
    src = xp.moveaxis(src, d, 0)
    if not include_self:
        identity = _INDEX_REDUCE_IDENTITY.get(reduce)
        if identity is None:
            info = np.finfo(out.dtype) if out.dtype.kind == "f" else np.iinfo(out.dtype)
            identity = (-np.inf if out.dtype.kind == "f" else info.min) if reduce == "amax" else \
                (np.inf if out.dtype.kind == "f" else info.max)
        out[idx] = identity
    getattr(xp, _REDUCE_UFUNCS[reduce]).at(out, idx, src)
    if reduce == "mean":
        count = xp.zeros(out.shape[0], dtype=out.dtype)
        xp.add.at(count, idx, 1)
        count = (count + 1 if include_self else xp.maximum(count, 1)).reshape((-1,) + (1,) * (out.ndim - 1))
        out = out / count if out.dtype.kind == "f" else xp.floor_divide(out, count)
    return xp.moveaxis(out, 0, d).reshape(input.shape)


_beta_warned = threading.Event()
_beta_lock = threading.Lock()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _warn_beta_once():
    """PyTorch's UserWarning that index_reduce is in beta: once per process (its TORCH_WARN_ONCE), whatever the
    warnings filters, at the first call that gets past the argument checks; shown at the caller's line."""
    with _beta_lock:
        if _beta_warned.is_set():
            return
        _beta_warned.set()
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the caller of this function
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=level)


def _refuse_double_backward(t, msg):
    """``t``, whose own backward raises ``msg`` (PyTorch's DelayedError) where it is part of a graph."""
    if not t.requires_grad:
        return t
    node = Error(msg, (gradient_edge(t),), (input_metadata(t._data, t._device),))
    out = Tensor._alias_of(t)
    out._node, out._output_nr, out._requires_grad = node, 0, True
    return out


def _index_reduce_grad(which, grad, input, dim, index, source, reduce, include_self, result):
    """The gradient of ``input`` (``which`` 0) or ``source`` (1) of index_reduce, as PyTorch's index_reduce_backward."""
    if reduce == "prod":
        if which == 0:
            masked = input.masked_fill(input == 0, 1.)
            g = grad * masked.index_reduce(dim, index, source, reduce, include_self=include_self) / masked
        else:
            src_zero = source == 0
            zeros_at = grad.new_zeros(grad.shape).index_add(dim, index, src_zero.to(grad.dtype)).index_select(
                dim, index)
            single_zero = src_zero & (zeros_at == 1)
            rest = input.index_reduce(dim, index, source.masked_fill(single_zero, 1.), reduce,
                                      include_self=include_self)
            g = where(single_zero, (grad * rest).index_select(dim, index),
                      (grad * result).index_select(dim, index) / source.masked_fill(src_zero, 1.))
            if bool((zeros_at._data > 1).any()):
                return _refuse_double_backward(g, "index_reduce(): Double backward is unsupported for source when >1 "
                                               "zeros in source are scattered to the same position in self")
            return g
    elif reduce == "mean":
        n = (grad.new_ones(grad.shape) if include_self else grad.new_zeros(grad.shape)).index_add(
            dim, index, source.new_ones(source.shape))
        n = n.masked_fill(n == 0, 1.)
        g = grad / n if which == 0 else grad.index_select(dim, index) / n.index_select(dim, index)
    else:  # amax, amin: shared evenly among the elements equal to the result
        input_hit = (input == result).to(grad.dtype)
        source_hit = (source == result.index_select(dim, index)).to(grad.dtype)
        share = grad / input_hit.index_add(dim, index, source_hit)
        g = input_hit * share if which == 0 else source_hit * share.index_select(dim, index)
    return g.index_fill(dim, index, 0.) if which == 0 and not include_self else g


index_reduce = defop(
    "index_reduce", _index_reduce, method=True, inplace=True,
    input=lambda grad, input, dim, index, source, reduce, include_self, result:
    _index_reduce_grad(0, grad, input, dim, index, source, reduce, include_self, result),
    source=lambda grad, input, dim, index, source, reduce, include_self, result:
    _index_reduce_grad(1, grad, input, dim, index, source, reduce, include_self, result))


def _scatter_legacy_reduce(xp, out, dim, index, source, reduce):
    """``scatter(..., reduce='add' | 'multiply')``: the source added or multiplied in, not written."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    if not index.size:
        return out
    d = _wrap_dim(dim, out.ndim) if out.ndim else 0
    if getattr(source, "ndim", 0):
        source = source[tuple(slice(0, s) for s in index.shape)]
    getattr(xp, reduce).at(out, _along(xp, index, d), source)
    return out



# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import LINEAR, REGISTRY, defjvp  # noqa: E402
from ._forward import not_implemented  # noqa: E402


def _scatter_jvp(input_t, src_t, dim, index, src, value, reduce):
    if reduce not in (None, "add"):
        raise not_implemented(f"scatter with reduce={reduce!r}")
    if src is None:
        return REGISTRY["scatter"](input_t, dim, index, None, 0, reduce)
    return REGISTRY["scatter"](input_t, dim, index, src_t, None, reduce)


def _scatter_reduce_jvp(input_t, src_t, dim, index, reduce, include_self):
    if reduce != "sum":
        raise not_implemented(f"scatter_reduce with reduce={reduce!r}")
    return REGISTRY["scatter_reduce"](input_t, dim, index, src_t, reduce, include_self)


defjvp(LINEAR, "select_index", "slice_index", "index", "index_put", "gather", "scatter_add", "index_select",
       "index_add", "masked_fill", "masked_select", "index_copy", "index_fill", "masked_scatter", "put", "take")
defjvp(_scatter_jvp, "scatter")
defjvp(_scatter_reduce_jvp, "scatter_reduce")


def _index_reduce_jvp(input_t, source_t, dim, index, reduce, include_self):
    if reduce != "mean":  # the mean is linear in both; PyTorch has no forward derivative of the others
        raise not_implemented("index_reduce")
    return REGISTRY["index_reduce"](input_t, dim, index, source_t, reduce, include_self)


defjvp(_index_reduce_jvp, "index_reduce")
