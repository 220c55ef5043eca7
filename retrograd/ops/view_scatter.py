"""The scatters of PyTorch's views: ``select_scatter``, ``slice_scatter``, ``diagonal_scatter``.

Each returns a copy of ``input`` with ``src`` written where the view (``select``, a slice, ``diagonal``) would
look, as ``as_strided_scatter`` (shape.py) does for ``as_strided``. The gradient of ``input`` is the incoming
one with that region zeroed, the gradient of ``src`` the region itself: both written with retrograd ops.
"""
from __future__ import annotations

from .._tensor import _wrap_dim
from ._declarations import LINEAR, defjvp, defop


def _check_src(src, region):
    if tuple(src.shape) != tuple(region.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(region.shape)}")


def _select_index(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return (slice(None),) * d + (index,)


def _slice_index(input, dim, start, end, step):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return (slice(None),) * _wrap_dim(dim, input.ndim) + (slice(start, end, step),)


def _diagonal_positions(xp, moved, offset):
    """The row and column indices of the ``offset``-th diagonal of the last two dims of ``moved``."""
    rows, cols = moved.shape[-2], moved.shape[-1]
    first_row, first_col = max(0, -offset), max(0, offset)
    k = xp.arange(max(0, min(rows - first_row, cols - first_col)))
    return k + first_row, k + first_col


def _select_scatter(xp, input, src, dim, index):
    out = input.copy()
    where = _select_index(input, dim, index)
    _check_src(src, out[where])
    out[where] = src
    return out


def _slice_scatter(xp, input, src, dim=0, start=None, end=None, step=1):
    out = input.copy()
    where = _slice_index(input, dim, start, end, step)
    _check_src(src, out[where])
    out[where] = src
    return out


def _diagonal_scatter(xp, input, src, offset=0, dim1=0, dim2=1):
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = input.copy()
    moved = xp.moveaxis(out, (d1, d2), (-2, -1))  # a view: writing into it writes into out
    rows, cols = _diagonal_positions(xp, moved, offset)
    _check_src(src, moved[..., rows, cols])
    moved[..., rows, cols] = src
    return out


def _doc(summary, args, example, shown):
    return f"""{summary}

    Args:
        input: the tensor to copy.
        src: the values to write; its shape is the view's.
{args}
    Returns:
        A new tensor of ``input``'s shape and dtype.

    Raises:
        RuntimeError: ``src`` of another shape than the view (PyTorch's error).

    Example::
        >>> import retrograd as rg
        >>> {example}
{shown}
    """


select_scatter = defop(
    "select_scatter", _select_scatter, method=True, tensor_args=("input", "src"),
    input=lambda grad, src_shape, dim, index: select_scatter(grad, grad.new_zeros(src_shape), dim, index),
    src=lambda grad, dim, index: grad.select(dim, index),
    doc=_doc("A copy of ``input`` with ``src`` written at ``index`` of ``dim`` (where ``select`` looks).",
             "        dim: the dim to select along.\n        index: the position along ``dim``.\n",
             "rg.select_scatter(rg.zeros(2, 2), rg.ones(2), 0, 1)",
             "        tensor([[0., 0.],\n                [1., 1.]])"))
slice_scatter = defop(
    "slice_scatter", _slice_scatter, method=True, tensor_args=("input", "src"),
    input=lambda grad, src_shape, dim, start, end, step: slice_scatter(grad, grad.new_zeros(src_shape), dim, start,
                                                                       end, step),
    src=lambda grad, dim, start, end, step: grad[(slice(None),) * _wrap_dim(dim, grad.dim()) +
                                                 (slice(start, end, step),)],
    doc=_doc("A copy of ``input`` with ``src`` written in the slice ``start:end:step`` of ``dim``.",
             "        dim: the dim to slice.\n        start: the first position (None: 0).\n"
             "        end: the position after the last (None: the end).\n        step: the stride (positive).\n",
             "rg.slice_scatter(rg.zeros(2, 3), rg.ones(2, 1), 1, start=2)",
             "        tensor([[0., 0., 1.],\n                [0., 0., 1.]])"))
diagonal_scatter = defop(
    "diagonal_scatter", _diagonal_scatter, method=True, tensor_args=("input", "src"),
    input=lambda grad, src_shape, offset, dim1, dim2: diagonal_scatter(grad, grad.new_zeros(src_shape), offset, dim1,
                                                                       dim2),
    src=lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2),
    doc=_doc("A copy of ``input`` with ``src`` written on the ``offset``-th diagonal of dims ``dim1``, ``dim2``.",
             "        offset: the diagonal: 0 the main one, above it positive, below it negative.\n"
             "        dim1: the first dim of the matrices.\n        dim2: the second.\n",
             "rg.diagonal_scatter(rg.zeros(2, 2), rg.ones(2))",
             "        tensor([[1., 0.],\n                [0., 1.]])"))

defjvp(LINEAR, "select_scatter", "slice_scatter", "diagonal_scatter")
