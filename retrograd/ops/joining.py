"""Joining and splitting: cat, stack, split, chunk and unbind."""
from __future__ import annotations

import numpy as np

from .._tensor import _wrap_dim
from ._declarations import defop, tensor_method


def _cat(xp, tensors, dim=0):
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    arrays = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    d = _wrap_dim(dim, arrays[0].ndim)
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        dtype = np.promote_types(dtype, a.dtype)
    try:
        return xp.concatenate([a.astype(dtype, copy=False) for a in arrays], axis=d)
    except ValueError as exc:
        raise RuntimeError(f"Sizes of tensors must match except in dimension {d}: {exc}") from None


def _cat_backward(grad, tensors_shape, dim):
    nd = grad.dim()
    d = _wrap_dim(dim, nd)
    sizes = [s[d] if len(s) == nd else 0 for s in tensors_shape]
    pieces = grad.split(sizes, d)
    return [p if len(s) == nd else None for p, s in zip(pieces, tensors_shape, strict=True)]


cat = defop("cat", _cat, lists=("tensors",), tensor_args=("tensors",), tensors=_cat_backward)
concat = concatenate = cat


def _stack(xp, tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, a in enumerate(tensors):
        if a.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                               f"{list(a.shape)} at entry {i}")
    return xp.stack(tensors, axis=_wrap_dim(dim, len(shape) + 1))


stack = defop("stack", _stack, lists=("tensors",), tensor_args=("tensors",),
              tensors=lambda grad, dim: list(grad.unbind(dim if dim >= 0 else dim + grad.dim())))


def _split(xp, tensor, split_size_or_sections, dim=0):
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size and n else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
    offsets = np.cumsum([0] + sizes)
    index = [slice(None)] * tensor.ndim
    out = []
    for start, stop in zip(offsets[:-1], offsets[1:], strict=True):
        index[d] = slice(int(start), int(stop))
        out.append(tensor[tuple(index)])
    return tuple(out)


split = defop("split", _split, view=True, multi_output=True,
              node_names={"SplitWithSizesBackward0": lambda split_size_or_sections: not isinstance(
                  split_size_or_sections, int)},
              tensor=lambda grads, dim: _cat_grads(grads, dim))


def _cat_grads(grads, dim):
    return cat(list(grads), dim)


@tensor_method
def chunk(input, chunks, dim=0):
    """Splits ``input`` along ``dim`` into ``chunks`` pieces of (nearly) equal size.

    Args:
        input: the tensor.
        chunks: how many pieces (> 0).
        dim: the dim to split.

    Returns:
        A tuple of views of ``input``; the last may be smaller, and there may be fewer than
        ``chunks``.

    Raises:
        RuntimeError: if ``chunks`` is not positive.

    Example::
        >>> import retrograd as rg
        >>> rg.chunk(rg.arange(5.), 2)
        (tensor([0., 1., 2.]), tensor([3., 4.]))
    """
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = input._data.shape[_wrap_dim(dim, input.dim())]
    size = -(-n // chunks) if n else 1
    return split(input, size, dim)


def _unbind(xp, input, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return tuple(input[(slice(None),) * d + (i, Ellipsis)] for i in range(input.shape[d]))


unbind = defop("unbind", _unbind, method=True, view=True, multi_output=True,
               input=lambda grads, dim: stack(list(grads), dim))
