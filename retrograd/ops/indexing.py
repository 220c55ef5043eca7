"""Indexing ops: ``__getitem__``/``__setitem__``, gather/scatter, index_select and masked_fill."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ._registry import defop


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


_select = defop("select_index", _index_forward, view=True, public=False, node_name="Select",
                input=lambda grad, input_shape, indices: _index_backward(grad, input_shape, indices, False))
_slice = defop("slice_index", _index_forward, view=True, public=False, node_name="Slice",
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
    out = input.copy()
    values = xp.asarray(values, dtype=input.dtype)
    if accumulate:
        xp.add.at(out, indices, values)
    else:
        out[indices] = values
    return out


index_put = defop("index_put", _index_put, tensor_args=("input", "values"),
                  input=lambda grad, indices, accumulate: grad if accumulate else index_put(grad, indices, 0.),
                  values=lambda grad, indices: grad[indices])


def _gather(xp, input, dim, index, *, sparse_grad=False):
    if index.dtype.kind not in "iu":
        raise RuntimeError("gather(): Expected dtype int64 for index")
    d = _wrap_dim(dim, input.ndim)
    return xp.take_along_axis(input, index, axis=d) if input.ndim else input.copy()


gather = defop("gather", _gather, method=True,
               input=lambda grad, input_shape, dim, index: grad.new_zeros(input_shape).scatter_add(dim, index, grad))


def _along(xp, index, dim):
    """A full index tuple that addresses, for each element of ``index``, its position along ``dim``."""
    grids = list(xp.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _scatter_add(xp, input, dim, index, src):
    out = input.copy()
    if index.size:
        d = _wrap_dim(dim, input.ndim)
        src_part = src[tuple(slice(0, s) for s in index.shape)]
        xp.add.at(out, _along(xp, index, d), src_part)
    return out


scatter_add = defop("scatter_add", _scatter_add, method=True,
                    input=lambda grad: grad,
                    src=lambda grad, dim, index, src_shape: _pad_to(grad.gather(dim, index), src_shape))


def _pad_to(g, shape):
    """``g`` placed in the corner of zeros of ``shape`` (src may be larger than index)."""
    if tuple(g.shape) == tuple(shape):
        return g
    return g.new_zeros(shape).index_put(tuple(slice(0, s) for s in g.shape) + (Ellipsis,), g)


def _scatter(xp, input, dim, index, src=None, value=None, *, reduce=None):
    out = input.copy()
    if index.size:
        d = _wrap_dim(dim, input.ndim)
        source = src[tuple(slice(0, s) for s in index.shape)] if src is not None else value
        out[_along(xp, index, d)] = source
    return out


scatter = defop("scatter", _scatter, method=True, tensor_args=("input", "src"),
                input=lambda grad, dim, index: grad.scatter(dim, index, None, 0.),
                src=lambda grad, dim, index, src_shape: _pad_to(grad.gather(dim, index), src_shape))


def _index_select(xp, input, dim, index):
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    return xp.take(input, index, axis=_wrap_dim(dim, input.ndim)) if input.ndim else input[index.reshape(-1)[0:1]].reshape(())


index_select = defop("index_select", _index_select, method=True,
                     input=lambda grad, input_shape, dim, index: grad.new_zeros(input_shape).index_add(dim, index, grad))


def _index_add(xp, input, dim, index, source, *, alpha=1):
    out = input.copy()
    d = _wrap_dim(dim, input.ndim)
    idx = (slice(None),) * d + (index,)
    xp.add.at(out, idx, source if alpha == 1 else source * alpha)
    return out


index_add = defop("index_add", _index_add, method=True,
                  input=lambda grad: grad,
                  source=lambda grad, dim, index, alpha: grad.index_select(dim, index) * alpha)


def _masked_fill(xp, input, mask, value):
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    out = xp.where(mask, xp.asarray(value, dtype=input.dtype), input)
    if out.shape != input.shape:
        raise RuntimeError(f"The expanded size of the mask ({list(mask.shape)}) must match the tensor's size "
                           f"({list(input.shape)})")
    return out


masked_fill = defop("masked_fill", _masked_fill, method=True, tensor_args=("input", "mask", "value"),
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
