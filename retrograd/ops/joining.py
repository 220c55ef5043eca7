"""Joining and splitting: cat, stack, split (and its unsafe forms, Note [Unsafe splits]), chunk and unbind."""
from __future__ import annotations

import itertools

import numpy as np

from .. import _dtype
from .._size import ints
from .._tensor import Tensor, _wrap_dim
from ._declarations import defop, tensor_method
from .pointwise import formula_arrays


def _cat(xp, tensors, dim=0):
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")  # PyTorch's type, from its binding
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
    if formula_arrays(grad) is not None:  # See Note [Formulas on arrays]: views of the array, no split op call
        lead, arr, device, out, start = (slice(None),) * d, grad._data, grad._device, [], 0
        for size, s in zip(sizes, tensors_shape, strict=True):
            piece = arr[lead + (slice(start, start + size), Ellipsis)] if len(s) == nd else arr[:0].reshape(s)
            out.append(Tensor._make(piece, device))
            start += size
        return out
    pieces = grad.split(sizes, d)
    # a legacy empty 1-d input (skipped by cat) gets an empty gradient, as in PyTorch
    return [p if len(s) == nd else grad.new_zeros(s) for p, s in zip(pieces, tensors_shape, strict=True)]


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


def _split_sizes(tensor, split_size_or_sections, dim):
    """The dim (wrapped) and the sizes of the pieces of a split of array ``tensor``, checked as PyTorch's."""
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        return d, [size] * (n // size) + ([n % size] if n % size else []) if size and n else [0]
    sizes = list(split_size_or_sections)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    return d, sizes


def _pieces(tensor, d, sizes):
    """The slices of array ``tensor`` along ``d`` of ``sizes``, in order (views of it)."""
    lead = (slice(None),) * d  # plain slices, without a cumsum
    out = []
    start = 0
    for size in sizes:
        out.append(tensor[lead + (slice(start, start + size), Ellipsis)])
        start += size
    return tuple(out)


def _split(xp, tensor, split_size_or_sections, dim=0):
    return _pieces(tensor, *_split_sizes(tensor, split_size_or_sections, dim))


split = defop("split", _split, view=True, multi_output=True,
              node_names={"SplitWithSizesBackward0": lambda split_size_or_sections: not isinstance(
                  split_size_or_sections, int)},
              tensor=lambda grads, dim: _cat_grads(grads, dim))


def _cat_grads(grads, dim):
    xp = formula_arrays(grads[0]) if grads and grads[0] is not None else None
    if xp is not None and all(g is not None and g.dtype == grads[0].dtype for g in grads):
        # See Note [Formulas on arrays]: one concatenation, without the op call's checks and promotion
        return Tensor._make(xp.concatenate([g._data for g in grads], axis=_wrap_dim(dim, grads[0].dim())),
                            grads[0]._device)
    return cat(list(grads), dim)


def _int_list(name, value, param="split_sizes"):
    """``value``, a sequence of ints; PyTorch's TypeError for anything else."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{name}(): argument '{param}' (position 2) must be tuple of ints, not {type(value).__name__}")
    return ints((value,), name, param)


def _int_size(name, value):
    if not isinstance(value, int):
        raise TypeError(f"{name}(): argument 'split_size' (position 2) must be int, not {type(value).__name__}")
    return value


def _split_with_sizes(xp, input, split_sizes, dim=0):
    return _pieces(input, *_split_sizes(input, list(_int_list("split_with_sizes", split_sizes)), dim))


def _split_backward(grads, input_shape, split_sizes, dim):
    """The gradient of a split: its outputs' joined. The node keeps the input's shape and the sizes, as PyTorch's."""
    return cat(list(grads), dim)


split_with_sizes = defop("split_with_sizes", _split_with_sizes, method=True, view=True, multi_output=True,
                         input=_split_backward)


# Note [Unsafe splits]
# ~~~~~~~~~~~~~~~~~~~~
# ``unsafe_split``, ``unsafe_split_with_sizes`` and ``unsafe_chunk`` are PyTorch's splits without the
# autograd restriction on writing into their outputs in place: the outputs share the input's memory,
# as a split's, but they are not views (no base, a version counter of their own), so an in-place op on
# one is recorded as on any tensor. Writing into both the input and an output leaves the gradients
# silently wrong, as in PyTorch.
def _unsafe_split(xp, input, split_size, dim=0):
    return _pieces(input, *_split_sizes(input, _int_size("unsafe_split", split_size), dim))


unsafe_split = defop("unsafe_split", _unsafe_split, method=True, multi_output=True,
                     input=lambda grads, input_shape, split_size, dim: cat(list(grads), dim))


def _unsafe_split_with_sizes(xp, input, split_sizes, dim=0):
    return _pieces(input, *_split_sizes(input, list(_int_list("unsafe_split_with_sizes", split_sizes)), dim))


unsafe_split_with_sizes = defop("unsafe_split_with_sizes", _unsafe_split_with_sizes, method=True, multi_output=True,
                                input=_split_backward)


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
    return split(input, _chunk_size(input, chunks, dim), dim)


@tensor_method
def unsafe_chunk(input, chunks, dim=0):
    """:func:`chunk` whose outputs are not views: see Note [Unsafe splits].

    Args:
        input: the tensor.
        chunks: how many pieces (> 0).
        dim: the dim to split.

    Returns:
        A tuple of tensors sharing ``input``'s memory (``UnsafeSplitBackward0``).

    Raises:
        RuntimeError: if ``chunks`` is not positive.

    Example::
        >>> import retrograd as rg
        >>> rg.unsafe_chunk(rg.arange(5.), 2)
        (tensor([0., 1., 2.]), tensor([3., 4.]))
    """
    return unsafe_split(input, _chunk_size(input, chunks, dim), dim)


def _chunk_size(input, chunks, dim):
    """The split size that cuts ``input`` into ``chunks`` pieces along ``dim``, checked as PyTorch's chunk."""
    if input.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = input._data.shape[_wrap_dim(dim, input.dim())]
    size = -(-n // chunks) if n else 1
    return size


def _unbind(xp, input, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return tuple(input[(slice(None),) * d + (i, Ellipsis)] for i in range(input.shape[d]))


unbind = defop("unbind", _unbind, method=True, view=True, multi_output=True,
               input=lambda grads, dim: stack(list(grads), dim))


# -- grids, block matrices and products of sets ------------------------------------------------------------
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-D ``tensors``: output ``i`` holds ``tensors[i]`` along dim ``i`` ('ij'), or with
    the first two dims swapped ('xy').

    Example::
        >>> import retrograd as rg
        >>> xs, ys = rg.meshgrid(rg.tensor([1., 2.]), rg.tensor([3., 4., 5.]), indexing="ij")
        >>> xs.shape
        retrograd.Size([2, 3])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tuple(tensors[2:])
    shape = tuple(t.numel() for t in tensors)
    grids = []
    for i, t in enumerate(tensors):
        view = (1,) * i + (-1,) + (1,) * (len(tensors) - i - 1)
        grids.append(t.reshape(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _as_block(a):
    return a.reshape(1, 1) if a.ndim == 0 else a.reshape(1, -1) if a.ndim == 1 else a


def _block_diag(xp, tensors):
    blocks = [_as_block(a) for a in tensors]
    for i, (a, b) in enumerate(zip(tensors, blocks, strict=True)):
        if a.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{a.ndim} dimensions")
    dtype = blocks[0].dtype if blocks else np.float32
    for b in blocks[1:]:
        dtype = np.promote_types(dtype, b.dtype)
    out = xp.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _block_diag_backward(grad, tensors_shape):
    out, r, c = [], 0, 0
    for shape in tensors_shape:
        rows, cols = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape
        out.append(grad[r:r + rows, c:c + cols].reshape(shape))
        r, c = r + rows, c + cols
    return out


_block_diag_op = defop("block_diag", _block_diag, public=False, lists=("tensors",), tensor_args=("tensors",),
                       tensors=_block_diag_backward)


def block_diag(*tensors):
    """The block-diagonal matrix of ``tensors`` (each 0-, 1- or 2-D), in order along the diagonal.

    Example::
        >>> import retrograd as rg
        >>> rg.block_diag(rg.tensor([[1., 2.]]), rg.tensor(3.))
        tensor([[1., 2., 0.],
                [0., 0., 3.]])
    """
    return _block_diag_op(list(tensors))


def cartesian_prod(*tensors):
    """The Cartesian product of 1-D ``tensors``: one row per combination, as ``itertools.product``.

    Example::
        >>> import retrograd as rg
        >>> rg.cartesian_prod(rg.tensor([1, 2]), rg.tensor([3, 4]))
        tensor([[1, 3],
                [1, 4],
                [2, 3],
                [2, 4]])
    """
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.flatten() for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of the 1-D ``input``, as ``itertools.combinations``
    (``combinations_with_replacement`` with ``with_replacement=True``), one per row.

    Example::
        >>> import retrograd as rg
        >>> rg.combinations(rg.tensor([1, 2, 3]))
        tensor([[1, 2],
                [1, 3],
                [2, 3]])
    """
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_zeros((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return stack([input[rows[:, j]] for j in range(r)], 1)


# -- stacking along the first, second and third dims (PyTorch's composites: views, then cat) --------------
def _as_sequence(tensors):
    return tuple(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors


def _at_least(tensors, promote):
    seq = _as_sequence(tensors)
    out = tuple(promote(t) for t in seq)
    return out[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else out


def _to_1d(t):
    return t.reshape(1) if t.dim() == 0 else t


def _to_2d(t):
    return t.reshape(1, 1) if t.dim() == 0 else t.unsqueeze(0) if t.dim() == 1 else t


def _to_3d(t):
    n = t.dim()
    return t.reshape(1, 1, 1) if n == 0 else t.unsqueeze(0).unsqueeze(-1) if n == 1 else t.unsqueeze(-1) if n == 2 \
        else t


def atleast_1d(*tensors):
    """Each tensor with at least one dim (a 0-d one reshaped to ``(1,)``); one tensor in, one out, else a tuple.

    Example::
        >>> import retrograd as rg
        >>> rg.atleast_1d(rg.tensor(2.))
        tensor([2.])
    """
    return _at_least(tensors, _to_1d)


def atleast_2d(*tensors):
    """Each tensor with at least two dims (a 1-d one gets a leading dim); one tensor in, one out, else a tuple.

    Example::
        >>> import retrograd as rg
        >>> rg.atleast_2d(rg.tensor([1., 2.])).shape
        retrograd.Size([1, 2])
    """
    return _at_least(tensors, _to_2d)


def atleast_3d(*tensors):
    """Each tensor with at least three dims (``(n,)`` becomes ``(1, n, 1)``, ``(m, n)`` becomes ``(m, n, 1)``).

    Example::
        >>> import retrograd as rg
        >>> rg.atleast_3d(rg.ones(2, 3)).shape
        retrograd.Size([2, 3, 1])
    """
    return _at_least(tensors, _to_3d)


def _nonempty(name, tensors):
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    """``tensors`` joined column-wise: along dim 1, or dim 0 where they are 1-d (0-d ones count as 1-d).

    Args:
        tensors: a non-empty sequence of tensors.

    Raises:
        RuntimeError: for an empty sequence, or sizes that do not match.

    Example::
        >>> import retrograd as rg
        >>> rg.hstack([rg.tensor([1., 2.]), rg.tensor([3.])])
        tensor([1., 2., 3.])
    """
    rep = atleast_1d(list(_nonempty("hstack", tensors)))
    return cat(list(rep), 0 if rep[0].dim() == 1 else 1)


def vstack(tensors):
    """``tensors`` joined row-wise: along dim 0, each made at least 2-d first (``(n,)`` becomes ``(1, n)``).

    Example::
        >>> import retrograd as rg
        >>> rg.vstack([rg.tensor([1., 2.]), rg.tensor([3., 4.])])
        tensor([[1., 2.],
                [3., 4.]])
    """
    return cat(list(atleast_2d(list(_nonempty("vstack", tensors)))), 0)


def dstack(tensors):
    """``tensors`` joined depth-wise: along dim 2, each made at least 3-d first.

    Example::
        >>> import retrograd as rg
        >>> rg.dstack([rg.tensor([1., 2.]), rg.tensor([3., 4.])]).shape
        retrograd.Size([1, 2, 2])
    """
    return cat(list(atleast_3d(list(_nonempty("dstack", tensors)))), 2)


row_stack = vstack


def broadcast_tensors(*tensors):
    """``tensors`` expanded to their common broadcast shape; one that has it already is returned as it is.

    Raises:
        RuntimeError: PyTorch's, where two sizes of a dim differ and neither is 1.

    Example::
        >>> import retrograd as rg
        >>> [t.shape for t in rg.broadcast_tensors(rg.ones(3), rg.ones(2, 1))]
        [retrograd.Size([2, 3]), retrograd.Size([2, 3])]
    """
    tensors = _as_sequence(tensors)
    shape = ()
    for t in tensors:
        shape = _broadcast_shape(shape, tuple(t.shape))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def _broadcast_shape(a, b):
    """The broadcast of shapes ``a`` and ``b``, with PyTorch's error where they do not broadcast."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


# -- tensor_split and the NumPy-style splits --------------------------------------------------------------------
def _split_points(input, indices_or_sections, d):
    """The start of each piece of ``tensor_split`` along ``d``, and the end of the last."""
    n = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.dtype is not _dtype.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{_dtype.scalar_type_name(t._data.dtype)}")
        if t.dim() > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {t.dim()} dims")
        indices_or_sections = t.tolist()  # a 0-d tensor: a number of sections
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(n, sections)  # the first ``extra`` pieces one element longer
        starts = [k * size + min(k, extra) for k in range(sections)]
        return starts, n
    indices = [int(i) for i in indices_or_sections]
    return [0] + indices, n


@tensor_method
def tensor_split(input, indices_or_sections, dim=0):
    """Splits ``input`` along ``dim`` into views: ``sections`` pieces as equal as they can be, or at ``indices``.

    Args:
        input: the tensor (at least 1-d).
        indices_or_sections: an int, the number of pieces (the first ``size % n`` one longer); or a sequence (or
            an int64 tensor of at most 1 dim; a 0-d one is a number of sections) of indices to split before, as
            NumPy's ``array_split``.
        dim: the dim to split.

    Returns:
        A tuple of views of ``input`` (``SliceBackward0`` each).

    Raises:
        RuntimeError: a 0-d ``input``, a number of sections below 1, or an index tensor that is not int64 or has
            more than 1 dim (PyTorch's errors).

    Example::
        >>> import retrograd as rg
        >>> rg.tensor_split(rg.arange(7), 3)
        (tensor([0, 1, 2]), tensor([3, 4]), tensor([5, 6]))
    """
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, input.dim())
    starts, n = _split_points(input, indices_or_sections, d)
    lead = (slice(None),) * d
    pieces = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else n
        start, end = min(max(start + n if start < 0 else start, 0), n), min(max(end + n if end < 0 else end, 0), n)
        pieces.append(input[lead + (slice(start, max(start, end)),)])
    return tuple(pieces)


def _numpy_split(name, dim_of, least):
    def split_fn(input, indices_or_sections):
        if input.dim() < least:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor "
                               f"with {input.dim()} dimensions!")
        d = dim_of(input.dim())
        if isinstance(indices_or_sections, int):
            n = input.shape[d]
            if indices_or_sections != 0 and n % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {n} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    split_fn.__name__ = split_fn.__qualname__ = name
    where = {"hsplit": "dim 1 (dim 0 of a 1-d tensor)", "vsplit": "dim 0", "dsplit": "dim 2"}[name]
    split_fn.__doc__ = (f"``tensor_split`` of ``input`` along {where}, as NumPy's ``{name}``: a number of "
                        f"sections must divide that dim.")
    return tensor_method(split_fn)


hsplit = _numpy_split("hsplit", lambda ndim: 1 if ndim > 1 else 0, 1)
vsplit = _numpy_split("vsplit", lambda ndim: 0, 2)
dsplit = _numpy_split("dsplit", lambda ndim: 2, 3)


# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import LINEAR, defjvp  # noqa: E402

defjvp(LINEAR, "cat", "stack", "split", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unbind",
       "block_diag")
