"""Composite ops: built from primitives, so their gradients come from the primitives' formulas."""
from __future__ import annotations

from .._tensor import _wrap_dim
from ._declarations import tensor_method


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

