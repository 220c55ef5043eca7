"""Composite ops: built from primitives, so their gradients come from the primitives' formulas."""
from __future__ import annotations

from .. import return_types
from .._tensor import _wrap_dim
from ._declarations import tensor_method
from ._grad_utils import normalize_dims


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _count(input, dim):
    shape = input._data.shape
    n = 1
    for d in normalize_dims(dim, len(shape)):
        n *= shape[d] if shape else 1
    return n


@tensor_method
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The variance of ``input`` over ``dim``, with Bessel's ``correction`` (1 by default).

    Args:
        input: a floating-point tensor.
        dim: the dim or tuple of dims to reduce (None: all of them).
        unbiased: legacy switch: False means ``correction=0``.
        keepdim: keep each reduced dim with size 1.
        correction: the difference between the number of elements and the divisor (keyword-only).

    Returns:
        The variances.

    Example::
        >>> import retrograd as rg
        >>> rg.var(rg.tensor([1., 2., 3., 4.]))
        tensor(1.6667)
        >>> rg.var(rg.tensor([1., 2., 3., 4.]), correction=0)
        tensor(1.2500)
    """
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    mean = input.mean(dim, keepdim=True)
    diff = input - mean
    return (diff * diff).sum(dim, keepdim=keepdim) / max(_count(input, dim) - c, 0)


@tensor_method
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The standard deviation of ``input`` over ``dim``, with Bessel's ``correction`` (1 by default).

    Args:
        input: a floating-point tensor.
        dim: the dim or tuple of dims to reduce (None: all of them).
        unbiased: legacy switch: False means ``correction=0``.
        keepdim: keep each reduced dim with size 1.
        correction: the difference between the number of elements and the divisor (keyword-only).

    Returns:
        The standard deviations.

    Example::
        >>> import retrograd as rg
        >>> rg.std(rg.tensor([1., 3.]))
        tensor(1.4142)
    """
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


@tensor_method
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return return_types.var_mean(var(input, dim, unbiased, keepdim, correction=correction), input.mean(dim, keepdim=keepdim))


@tensor_method
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return return_types.std_mean(std(input, dim, unbiased, keepdim, correction=correction), input.mean(dim, keepdim=keepdim))


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

