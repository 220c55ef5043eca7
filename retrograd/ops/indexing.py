"""Indexing ops: ``__getitem__``/``__setitem__``, gather/scatter, index_select and masked_fill."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ._declarations import defop, passthrough


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
_select = defop("select_index", _index_forward, view=True, public=False, node_name="Select",
                node_names=_BASIC_INDEX_NODES,
                input=lambda grad, input_shape, indices: _index_backward(grad, input_shape, indices, False))
_slice = defop("slice_index", _index_forward, view=True, public=False, node_name="Slice",
               node_names=_BASIC_INDEX_NODES,
               input=lambda grad, input_shape, indices: _index_backward(grad, input_shape, indices, False))
_advanced = defop("index", _index_forward, public=False,
                  input=lambda grad, input_shape, indices: _index_backward(grad, input_shape, indices, True))


def getitem(self, index):
    """``self[index]``: basic indexing gives a view, advanced indexing a copy, as PyTorch."""
    indices, basic = convert_index(index)
    if not basic:
        return _advanced(self, indices)
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


def _gather(xp, input, dim, index, *, sparse_grad=False):
    if index.dtype.kind not in "iu":
        raise RuntimeError("gather(): Expected dtype int64 for index")
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
    return xp.take_along_axis(part, index, axis=d)


gather = defop("gather", _gather, method=True,
               input=lambda grad, input_shape, dim, index: grad.new_zeros(input_shape).scatter_add(dim, index, grad))


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
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is not supported; use scatter_add or scatter_reduce")
    if value is None:  # scatter(input, dim, index, value) with a number in src's place, as PyTorch allows
        value = src
    return _scatter_into(xp, input.copy(), dim, index, value, False)


scatter = defop("scatter", _scatter, method=True, inplace=True, tensor_args=("input", "src"),
                node_names={"ScatterBackward1": lambda src: not isinstance(src, Tensor)},  # a number for src
                input=lambda grad, dim, index: grad.scatter(dim, index, None, 0.),
                src=lambda grad, dim, index, src_shape: _pad_to(grad.gather(dim, index), src_shape))


def _index_select(xp, input, dim, index):
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0:  # the only valid index is 0
        _wrap_dim(dim, 0)
        if index.size != 1 or index.reshape(-1)[0] != 0:
            raise IndexError("index_select(): Index out of range in self")
        return input.copy()
    return xp.take(input, index, axis=_wrap_dim(dim, input.ndim))


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


def _masked_fill(xp, input, mask, value):
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    out = xp.where(mask, xp.asarray(value, dtype=input.dtype), input)
    if out.shape != input.shape:
        raise RuntimeError(f"The expanded size of the mask ({list(mask.shape)}) must match the tensor's size "
                           f"({list(input.shape)})")
    return out


masked_fill = defop("masked_fill", _masked_fill, method=True, inplace=True, tensor_args=("input", "mask", "value"),
                    node_names={"MaskedFillBackward1": lambda value: isinstance(value, Tensor)},
                    input=lambda grad, mask: grad.masked_fill(mask, 0.),
                    value=lambda grad, mask: grad.masked_fill(mask.logical_not(), 0.).sum())


def _masked_select(xp, input, mask):
    shape = np.broadcast_shapes(input.shape, mask.shape)
    return xp.broadcast_to(input, shape)[xp.broadcast_to(mask, shape)]


masked_select = defop("masked_select", _masked_select, method=True,
                      input=lambda grad, input_shape, mask: _masked_select_backward(grad, input_shape, mask))


def _masked_select_backward(grad, input_shape, mask):
    shape = tuple(np.broadcast_shapes(tuple(input_shape), tuple(mask.shape)))
    full = grad.new_zeros(shape)
    return index_put(full, (mask.expand(shape)._data, Ellipsis), grad)
