"""Composite ops: built from primitives, so their gradients come from the primitives' formulas."""
from __future__ import annotations

from .._tensor import _wrap_dim
from ._declarations import tensor_method
from .shape import diag_embed, diagonal_copy


@tensor_method
def square(input):
    return input ** 2  # as PyTorch: a PowBackward0 node, and bools square to int64


@tensor_method
def narrow(input, dim, start, length):
    """A view of ``length`` elements of ``input`` along ``dim`` from ``start``."""
    d = _wrap_dim(dim, input.dim())
    n = input._data.shape[d]
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return input[(slice(None),) * d + (slice(start, start + length),)]


@tensor_method
def select(input, dim, index):
    d = _wrap_dim(dim, input.dim())
    return input[(slice(None),) * d + (index,)]



@tensor_method
def diag(input, diagonal=0):
    """A 1-d ``input`` as the ``diagonal``-th diagonal of a square matrix, or that diagonal of a 2-d ``input``.

    As PyTorch's, a composite: ``diag_embed`` of a vector (DiagEmbedBackward0), ``diagonal_copy`` of a
    matrix (DiagonalBackward0_copy).
    """
    if input.dim() == 1:
        return diag_embed(input, diagonal)
    if input.dim() == 2:
        return diagonal_copy(input, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
