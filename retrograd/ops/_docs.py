"""The docstrings of the public ops, kept apart from the op table so that the table reads as a table.

The family modules (pointwise.py, reduction.py, shape.py, indexing.py, joining.py, linalg.py) declare
the ops; this module documents them, as PyTorch keeps its op docstrings in ``torch/_torch_docs.py``.
ops/__init__.py imports it once every op is declared, before ``_attach()`` makes the public functions
Tensor methods (the same objects, so the methods carry the docstrings too).
"""
from __future__ import annotations

from .indexing import gather, index_reduce, index_select, masked_fill, scatter_add
from .joining import cat, split, split_with_sizes, stack, unsafe_split, unsafe_split_with_sizes
from .linalg import bmm, matmul, mm, outer, trace
from .pointwise import (abs, add, clamp, cos, exp, expm1, log, log1p, maximum, minimum, mul, neg, pow, relu, rsqrt,
                        sigmoid, sign, sin, sqrt, sub, tan, tanh, where)
from .reduction import (amax, amin, argmax, argmin, cumsum, log_softmax, logsumexp, mean, norm, prod, softmax, std,
                        sum, var)
from .searching import (all, any, argwhere, bincount, bucketize, count_nonzero, histc, isin, nonzero,  # noqa: A004
                        searchsorted, unique, unique_consecutive)
from .random import bernoulli, multinomial, normal, poisson
from .special import (digamma, entr, erf, erfc, erfcx, erfinv, i0, i0e, i1, i1e, igamma, igammac, lgamma, log_ndtr,
                      logit, ndtr, ndtri, polygamma, sinc, xlog1py, xlogy)
from .sorting import argsort, kthvalue, median, mode, msort, sort, topk
from .shape import diagonal, expand, flip, permute, reshape, roll, squeeze, t, transpose, tril, triu, unsqueeze, view


def add_docstr(fn, doc):
    """Sets ``fn.__doc__`` to ``doc`` and returns ``fn``."""
    fn.__doc__ = doc
    return fn


# -- pointwise -------------------------------------------------------------------------------------
add_docstr(add, """Adds ``other``, multiplied by ``alpha``, to ``input`` elementwise, with broadcasting.

    Args:
        input: the first operand (a Tensor or a number).
        other: the second operand (a Tensor or a number).
        alpha: a number that scales ``other`` first (keyword-only, default 1).

    Returns:
        ``input + alpha * other``, in the promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2., 3.])
        >>> rg.add(x, rg.tensor([10., 20., 30.]), alpha=2)
        tensor([21., 42., 63.])
    """)

add_docstr(sub, """Subtracts ``other``, multiplied by ``alpha``, from ``input`` elementwise, with broadcasting.

    Args:
        input: the minuend (a Tensor or a number).
        other: the subtrahend (a Tensor or a number).
        alpha: a number that scales ``other`` first (keyword-only, default 1).

    Returns:
        ``input - alpha * other``, in the promoted dtype.

    Raises:
        RuntimeError: if an operand is a bool tensor (use ``~`` or ``logical_not()`` to invert a
            mask).

    Example::
        >>> import retrograd as rg
        >>> rg.sub(rg.tensor([5., 5.]), rg.tensor([1., 2.]))
        tensor([4., 3.])
    """)

add_docstr(mul, """Multiplies ``input`` by ``other`` elementwise, with broadcasting.

    Args:
        input: the first factor (a Tensor or a number).
        other: the second factor (a Tensor or a number).

    Returns:
        The product, in the promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.mul(rg.tensor([1., 2., 3.]), 2)
        tensor([2., 4., 6.])
    """)

add_docstr(neg, """Negates every element of ``input``.

    Args:
        input: the tensor.

    Returns:
        ``-input``.

    Example::
        >>> import retrograd as rg
        >>> rg.neg(rg.tensor([1., -2.]))
        tensor([-1.,  2.])
    """)

add_docstr(pow, """Raises ``input`` to the power ``exponent`` elementwise, with broadcasting.

    Args:
        input: the base (a Tensor or a number).
        exponent: the exponent (a Tensor or a number).

    Returns:
        ``input ** exponent``, in the promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.pow(rg.tensor([1., 2., 3.]), 2)
        tensor([1., 4., 9.])
    """)

add_docstr(exp, """The exponential ``e ** x`` of every element.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.exp(rg.tensor([0., 1.]))
        tensor([1.0000, 2.7183])
    """)

add_docstr(log, """The natural logarithm of every element (``nan`` below zero, ``-inf`` at zero).

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.log(rg.tensor([1., 2.7182817]))
        tensor([0., 1.])
    """)

add_docstr(log1p, """The natural logarithm of ``1 + x`` for every element, accurate for small ``x``.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.log1p(rg.tensor([0., 1e-8]))
        tensor([0.0000e+00, 1.0000e-08])
    """)

add_docstr(expm1, """``e ** x - 1`` for every element, accurate for small ``x``.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.expm1(rg.tensor([0., 1e-8]))
        tensor([0.0000e+00, 1.0000e-08])
    """)

add_docstr(sqrt, """The square root of every element (``nan`` below zero).

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.sqrt(rg.tensor([4., 9.]))
        tensor([2., 3.])
    """)

add_docstr(rsqrt, """The reciprocal of the square root of every element.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.rsqrt(rg.tensor([4., 16.]))
        tensor([0.5000, 0.2500])
    """)

add_docstr(sin, """The sine of every element, in radians.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.sin(rg.tensor([0., 1.5707964]))
        tensor([0., 1.])
    """)

add_docstr(cos, """The cosine of every element, in radians.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.cos(rg.tensor([0., 3.1415927]))
        tensor([ 1., -1.])
    """)

add_docstr(tan, """The tangent of every element, in radians.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.tan(rg.tensor([0., 0.7853982]))
        tensor([0., 1.])
    """)

add_docstr(tanh, """The hyperbolic tangent of every element.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape, with values in (-1, 1).

    Example::
        >>> import retrograd as rg
        >>> rg.tanh(rg.tensor([0., 1.]))
        tensor([0.0000, 0.7616])
    """)

add_docstr(sigmoid, """The logistic function ``1 / (1 + e ** -x)`` of every element.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape, with values in (0, 1).

    Example::
        >>> import retrograd as rg
        >>> rg.sigmoid(rg.tensor([0., 2.]))
        tensor([0.5000, 0.8808])
    """)

add_docstr(relu, """Replaces the negative elements of ``input`` by zero.

    Args:
        input: the tensor.

    Returns:
        ``max(input, 0)``, in the dtype of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.relu(rg.tensor([-1., 0.5]))
        tensor([0.0000, 0.5000])
    """)

add_docstr(abs, """The absolute value of every element.

    Args:
        input: the tensor.

    Returns:
        A tensor of the same shape and dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.abs(rg.tensor([-1.5, 2.]))
        tensor([1.5000, 2.0000])
    """)

add_docstr(sign, """The sign of every element: -1, 0 or 1.

    Args:
        input: the tensor.

    Returns:
        A tensor of the same shape and dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.sign(rg.tensor([-3., 0., 2.]))
        tensor([-1.,  0.,  1.])
    """)

add_docstr(clamp, """Limits every element of ``input`` to the range [``min``, ``max``].

    Args:
        input: the tensor.
        min: the lower bound (a number or a Tensor; None for none).
        max: the upper bound (a number or a Tensor; None for none).

    Returns:
        A tensor of the broadcast shape.

    Raises:
        RuntimeError: if both ``min`` and ``max`` are None.

    Example::
        >>> import retrograd as rg
        >>> rg.clamp(rg.tensor([-2., 0.5, 3.]), min=-1, max=1)
        tensor([-1.0000,  0.5000,  1.0000])
    """)

add_docstr(maximum, """The larger of ``input`` and ``other``, elementwise, with broadcasting.

    Args:
        input: the first tensor.
        other: the second tensor.

    Returns:
        A tensor of the broadcast shape.

    Example::
        >>> import retrograd as rg
        >>> rg.maximum(rg.tensor([1., 4.]), rg.tensor([3., 2.]))
        tensor([3., 4.])
    """)

add_docstr(minimum, """The smaller of ``input`` and ``other``, elementwise, with broadcasting.

    Args:
        input: the first tensor.
        other: the second tensor.

    Returns:
        A tensor of the broadcast shape.

    Example::
        >>> import retrograd as rg
        >>> rg.minimum(rg.tensor([1., 4.]), rg.tensor([3., 2.]))
        tensor([1., 2.])
    """)

add_docstr(where, """Picks ``input`` where ``condition`` is true and ``other`` elsewhere, with broadcasting.

    Args:
        condition: a bool tensor.
        input: the values where ``condition`` holds (a Tensor or a number).
        other: the values elsewhere (a Tensor or a number).

    Returns:
        A tensor of the broadcast shape.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([-1., 2., -3.])
        >>> rg.where(x > 0, x, rg.zeros(3))
        tensor([0., 2., 0.])
    """)


# -- reduction -------------------------------------------------------------------------------------
add_docstr(sum, """Sums the elements of ``input`` over ``dim``.

    Args:
        input: the tensor.
        dim: the dim or tuple of dims to reduce (None: all of them).
        keepdim: keep each reduced dim with size 1.
        dtype: the dtype to compute and return in (keyword-only).

    Returns:
        The sums; booleans and integers sum to int64.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([[1., 2.], [3., 4.]])
        >>> rg.sum(x)
        tensor(10.)
        >>> rg.sum(x, dim=0)
        tensor([4., 6.])
    """)

add_docstr(mean, """The arithmetic mean of the elements of ``input`` over ``dim``.

    Args:
        input: a floating-point tensor.
        dim: the dim or tuple of dims to reduce (None: all of them).
        keepdim: keep each reduced dim with size 1.
        dtype: the dtype to compute and return in (keyword-only).

    Returns:
        The means.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([[1., 2.], [3., 4.]])
        >>> rg.mean(x, dim=1, keepdim=True)
        tensor([[1.5000],
                [3.5000]])
    """)

add_docstr(amax, """The largest value of ``input`` over ``dim``; the gradient is shared evenly among ties.

    Args:
        input: the tensor.
        dim: the dim or dims to reduce (``()``: all of them).
        keepdim: keep each reduced dim with size 1.

    Returns:
        The maxima.

    Example::
        >>> import retrograd as rg
        >>> rg.amax(rg.tensor([[1., 5.], [3., 2.]]), dim=0)
        tensor([3., 5.])
    """)

add_docstr(amin, """The smallest value of ``input`` over ``dim``; the gradient is shared evenly among ties.

    Args:
        input: the tensor.
        dim: the dim or dims to reduce (``()``: all of them).
        keepdim: keep each reduced dim with size 1.

    Returns:
        The minima.

    Example::
        >>> import retrograd as rg
        >>> rg.amin(rg.tensor([[1., 5.], [3., 2.]]), dim=0)
        tensor([1., 2.])
    """)

add_docstr(logsumexp, """``log(sum(exp(input)))`` over ``dim``, computed without overflow.

    Args:
        input: the tensor.
        dim: the dim or dims to reduce.
        keepdim: keep each reduced dim with size 1.

    Returns:
        The reduced values.

    Example::
        >>> import retrograd as rg
        >>> rg.logsumexp(rg.tensor([0., 0.]), dim=0)
        tensor(0.6931)
    """)

add_docstr(softmax, """Rescales ``input`` along ``dim`` to positive values that sum to one: ``exp(x) / sum(exp(x))``.

    Args:
        input: the tensor.
        dim: the dim to normalize over.
        dtype: the dtype to compute and return in.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.softmax(rg.tensor([0., 0., 0., 0.]), dim=0)
        tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """)

add_docstr(log_softmax, """The logarithm of ``softmax(input, dim)``, computed stably.

    Args:
        input: the tensor.
        dim: the dim to normalize over.
        dtype: the dtype to compute and return in.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.log_softmax(rg.tensor([1., 1.]), dim=0)
        tensor([-0.6931, -0.6931])
    """)

add_docstr(argmax, """The index of the largest value of ``input`` (first one on ties), along ``dim``.

    Args:
        input: the tensor.
        dim: the dim to search (None: the flattened tensor).
        keepdim: keep each reduced dim with size 1.

    Returns:
        An int64 tensor of indices (not differentiable).

    Example::
        >>> import retrograd as rg
        >>> rg.argmax(rg.tensor([[1., 5.], [3., 2.]]), dim=1)
        tensor([1, 0])
    """)

add_docstr(argmin, """The index of the smallest value of ``input`` (first one on ties), along ``dim``.

    Args:
        input: the tensor.
        dim: the dim to search (None: the flattened tensor).
        keepdim: keep each reduced dim with size 1.

    Returns:
        An int64 tensor of indices (not differentiable).

    Example::
        >>> import retrograd as rg
        >>> rg.argmin(rg.tensor([[1., 5.], [3., 2.]]), dim=1)
        tensor([0, 1])
    """)

add_docstr(cumsum, """The running sum of ``input`` along ``dim``.

    Args:
        input: the tensor.
        dim: the dim to accumulate along.
        dtype: the dtype to compute and return in (keyword-only).

    Returns:
        A tensor of the same shape; integers accumulate in int64.

    Example::
        >>> import retrograd as rg
        >>> rg.cumsum(rg.tensor([1., 2., 3.]), dim=0)
        tensor([1., 3., 6.])
    """)

add_docstr(prod, """Multiplies the elements of ``input`` over ``dim``.

    Args:
        input: the tensor.
        dim: the dim to reduce (None: all of them).
        keepdim: keep each reduced dim with size 1.
        dtype: the dtype to compute and return in (keyword-only).

    Returns:
        The products.

    Example::
        >>> import retrograd as rg
        >>> rg.prod(rg.tensor([[1., 2.], [3., 4.]]), dim=1)
        tensor([ 2., 12.])
    """)

add_docstr(norm, """The vector ``p``-norm of ``input`` over ``dim`` (the Frobenius norm by default).

    Args:
        input: a floating-point tensor.
        p: the order: a number, ``inf``, ``-inf`` or ``'fro'``.
        dim: the dim or dims to reduce (None: all of them).
        keepdim: keep each reduced dim with size 1.

    Returns:
        The norms.

    Example::
        >>> import retrograd as rg
        >>> rg.norm(rg.tensor([3., 4.]))
        tensor(5.)
        >>> rg.norm(rg.tensor([3., -4.]), p=1)
        tensor(7.)
    """)


# -- shape -----------------------------------------------------------------------------------------
add_docstr(view, """A view of ``input`` with another shape, sharing its memory.

    Args:
        input: the tensor.
        shape: the new shape; one size may be -1 (inferred).

    Returns:
        A view of ``input``.

    Raises:
        RuntimeError: if the shape does not fit the number of elements.

    Example::
        >>> import retrograd as rg
        >>> rg.view(rg.arange(6.), (2, 3))
        tensor([[0., 1., 2.],
                [3., 4., 5.]])
    """)

add_docstr(reshape, """``input`` with another shape: a view where the memory layout allows it, else a copy.

    Args:
        input: the tensor.
        shape: the new shape; one size may be -1 (inferred).

    Returns:
        A tensor with the same elements.

    Raises:
        RuntimeError: if the shape does not fit the number of elements.

    Example::
        >>> import retrograd as rg
        >>> rg.reshape(rg.arange(6.), (3, -1))
        tensor([[0., 1.],
                [2., 3.],
                [4., 5.]])
    """)

add_docstr(transpose, """Swaps dims ``dim0`` and ``dim1`` of ``input``.

    Args:
        input: the tensor.
        dim0: the first dim.
        dim1: the second dim.

    Returns:
        A view of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.transpose(rg.ones(2, 3), 0, 1).shape
        retrograd.Size([3, 2])
    """)

add_docstr(t, """Transposes a 2-D tensor; 0-D and 1-D tensors come back unchanged.

    Args:
        input: a tensor of at most 2 dims.

    Returns:
        A view of ``input``.

    Raises:
        RuntimeError: if ``input`` has more than 2 dims.

    Example::
        >>> import retrograd as rg
        >>> rg.t(rg.tensor([[1., 2.]]))
        tensor([[1.],
                [2.]])
    """)

add_docstr(var, """The variance of ``input`` over ``dim``, with Bessel's ``correction`` (1 by default).

    Args:
        input: a floating-point tensor.
        dim: the dim or tuple of dims to reduce (None: all of them).
        unbiased: legacy switch: False means ``correction=0``.
        keepdim: keep each reduced dim with size 1.
        correction: the difference between the number of elements and the divisor (keyword-only).

    Returns:
        The variances.

    Raises:
        RuntimeError: if ``input`` is not floating-point.

    Example::
        >>> import retrograd as rg
        >>> rg.var(rg.tensor([1., 2., 3., 4.]))
        tensor(1.6667)
        >>> rg.var(rg.tensor([1., 2., 3., 4.]), correction=0)
        tensor(1.2500)
    """)

add_docstr(std, """The standard deviation of ``input`` over ``dim``, with Bessel's ``correction`` (1 by default).

    Args:
        input: a floating-point tensor.
        dim: the dim or tuple of dims to reduce (None: all of them).
        unbiased: legacy switch: False means ``correction=0``.
        keepdim: keep each reduced dim with size 1.
        correction: the difference between the number of elements and the divisor (keyword-only).

    Returns:
        The standard deviations.

    Raises:
        RuntimeError: if ``input`` is not floating-point.

    Example::
        >>> import retrograd as rg
        >>> rg.std(rg.tensor([1., 3.]))
        tensor(1.4142)
    """)

add_docstr(permute, """Reorders the dims of ``input``.

    Args:
        input: the tensor.
        dims: the new order, a permutation of the dims.

    Returns:
        A view of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.permute(rg.ones(2, 3, 4), (2, 0, 1)).shape
        retrograd.Size([4, 2, 3])
    """)

add_docstr(unsqueeze, """Inserts a dim of size one at position ``dim``.

    Args:
        input: the tensor.
        dim: where the new dim goes (negative counts from the end).

    Returns:
        A view of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.unsqueeze(rg.tensor([1., 2.]), 0)
        tensor([[1., 2.]])
    """)

add_docstr(squeeze, """Removes dims of size one: all of them, or only ``dim``.

    Args:
        input: the tensor.
        dim: a dim or tuple of dims to remove if their size is one (None: all).

    Returns:
        A view of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.squeeze(rg.ones(1, 2, 1)).shape
        retrograd.Size([2])
    """)

add_docstr(expand, """Repeats the size-one dims of ``input`` to ``size`` without copying.

    Args:
        input: the tensor.
        size: the new shape; -1 keeps a dim's size, new dims go in front.

    Returns:
        A read-only view of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.expand(rg.tensor([[1.], [2.]]), (2, 3))
        tensor([[1., 1., 1.],
                [2., 2., 2.]])
    """)

add_docstr(diagonal, """The diagonal of ``input`` in the plane of ``dim1`` and ``dim2``, as a new last dim.

    Args:
        input: a tensor of at least 2 dims.
        offset: which diagonal (0: the main one, >0 above, <0 below).
        dim1: the first dim of the plane.
        dim2: the second dim of the plane.

    Returns:
        A view of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.diagonal(rg.tensor([[1., 2.], [3., 4.]]))
        tensor([1., 4.])
    """)

add_docstr(flip, """Reverses the order of the elements along ``dims``.

    Args:
        input: the tensor.
        dims: the dims to reverse.

    Returns:
        A new tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.flip(rg.tensor([[1., 2.], [3., 4.]]), (1,))
        tensor([[2., 1.],
                [4., 3.]])
    """)

add_docstr(roll, """Shifts the elements along ``dims`` by ``shifts``, wrapping around the end.

    Args:
        input: the tensor.
        shifts: an int or tuple of ints.
        dims: the dims to shift (None: the flattened tensor, then the shape is restored).

    Returns:
        A new tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.roll(rg.tensor([1., 2., 3.]), 1)
        tensor([3., 1., 2.])
    """)

add_docstr(tril, """Keeps the lower triangle of the last two dims of ``input`` and zeros the rest.

    Args:
        input: a tensor of at least 2 dims.
        diagonal: which diagonal bounds the triangle (0: the main one, >0 above).

    Returns:
        A new tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.tril(rg.ones(3, 3))
        tensor([[1., 0., 0.],
                [1., 1., 0.],
                [1., 1., 1.]])
    """)

add_docstr(triu, """Keeps the upper triangle of the last two dims of ``input`` and zeros the rest.

    Args:
        input: a tensor of at least 2 dims.
        diagonal: which diagonal bounds the triangle (0: the main one, >0 above).

    Returns:
        A new tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.triu(rg.ones(3, 3), diagonal=1)
        tensor([[0., 1., 1.],
                [0., 0., 1.],
                [0., 0., 0.]])
    """)


# -- indexing --------------------------------------------------------------------------------------
add_docstr(gather, """Picks values of ``input`` along ``dim`` at the positions in ``index``.

    Args:
        input: the source tensor.
        dim: the dim to index along.
        index: an int64 tensor with as many dims as ``input``.
        sparse_grad: accepted for compatibility; the gradient is dense.

    Returns:
        A tensor shaped like ``index``: for ``dim=1``, ``out[i][j] = input[i][index[i][j]]``.

    Example::
        >>> import retrograd as rg
        >>> rg.gather(rg.tensor([[1., 2.], [3., 4.]]), 1, rg.tensor([[1], [0]]))
        tensor([[2.],
                [3.]])
    """)

add_docstr(scatter_add, """Adds ``src`` into a copy of ``input`` at the positions in ``index`` along ``dim``.

    Args:
        input: the tensor to add into.
        dim: the dim to index along.
        index: an int64 tensor with as many dims as ``input``.
        src: the values to add, at least as large as ``index``.

    Returns:
        A tensor shaped like ``input``; repeated positions accumulate.

    Example::
        >>> import retrograd as rg
        >>> rg.scatter_add(rg.zeros(3), 0, rg.tensor([0, 2, 0]), rg.tensor([1., 2., 3.]))
        tensor([4., 0., 2.])
    """)

add_docstr(index_select, """Selects the entries of ``input`` along ``dim`` at the positions in ``index``.

    Args:
        input: the tensor.
        dim: the dim to index along.
        index: a 1-D int64 tensor.

    Returns:
        A new tensor whose ``dim`` has ``len(index)`` entries.

    Example::
        >>> import retrograd as rg
        >>> rg.index_select(rg.tensor([[1., 2.], [3., 4.]]), 0, rg.tensor([1, 1]))
        tensor([[3., 4.],
                [3., 4.]])
    """)

add_docstr(index_reduce, """Reduces the slices of ``source`` along ``dim`` into a copy of ``input``, at the positions in ``index``.

    Args:
        input: the tensor.
        dim: the dim to index along.
        index: a 1-D int64 (or int32) tensor, one position per slice of ``source``.
        source: a tensor of ``input``'s dtype and shape but along ``dim``, where it has ``len(index)`` entries.
        reduce: 'prod', 'mean', 'amax' or 'amin'.
        include_self: whether ``input``'s own values take part (else a position named by ``index`` holds the
            reduction of ``source`` alone).

    Returns:
        A new tensor of ``input``'s shape (``IndexReduceBackward0``; the gradient of 'amax' and 'amin' is shared
        evenly among ties, and a double backward through two zeros reduced by 'prod' into one position raises,
        as PyTorch's).

    Raises:
        RuntimeError: PyTorch's, for another ``reduce``, an index that is not int64 or int32, or shapes or dtypes
            that do not match; IndexError for an index out of range.

    Example::
        >>> import retrograd as rg
        >>> rg.index_reduce(rg.ones(3), 0, rg.tensor([0, 2, 0]), rg.tensor([2., 5., 3.]), "prod")
        tensor([6., 1., 5.])
    """)

add_docstr(masked_fill, """Replaces the elements of ``input`` where ``mask`` is true by ``value``.

    Args:
        input: the tensor.
        mask: a bool tensor that broadcasts to ``input``.
        value: a number or a 0-d tensor.

    Returns:
        A new tensor.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., -2., 3.])
        >>> rg.masked_fill(x, x < 0, 0.)
        tensor([1., 0., 3.])
    """)


# -- joining ---------------------------------------------------------------------------------------
add_docstr(cat, """Joins ``tensors`` along an existing dim.

    Args:
        tensors: a sequence of tensors of the same shape except in ``dim``.
        dim: the dim to join along.

    Returns:
        A new tensor.

    Raises:
        RuntimeError: if the shapes differ outside ``dim``.

    Example::
        >>> import retrograd as rg
        >>> rg.cat([rg.tensor([1., 2.]), rg.tensor([3.])])
        tensor([1., 2., 3.])
    """)

add_docstr(stack, """Joins ``tensors`` along a new dim.

    Args:
        tensors: a sequence of tensors of the same shape.
        dim: the position of the new dim.

    Returns:
        A new tensor with one more dim.

    Example::
        >>> import retrograd as rg
        >>> rg.stack([rg.tensor([1., 2.]), rg.tensor([3., 4.])], dim=1)
        tensor([[1., 3.],
                [2., 4.]])
    """)

add_docstr(split, """Splits ``tensor`` along ``dim`` into pieces of a given size, or of the given sizes.

    Args:
        tensor: the tensor.
        split_size_or_sections: an int (the last piece may be smaller) or a list of sizes.
        dim: the dim to split.

    Returns:
        A tuple of views of ``tensor``.

    Example::
        >>> import retrograd as rg
        >>> rg.split(rg.arange(5.), 2)
        (tensor([0., 1.]), tensor([2., 3.]), tensor([4.]))
    """)


add_docstr(split_with_sizes, """Splits ``input`` along ``dim`` into pieces of the given sizes.

    Args:
        input: the tensor (at least 1-D).
        split_sizes: the size of each piece, summing to ``input.size(dim)``.
        dim: the dim to split.

    Returns:
        A tuple of views of ``input`` (``SplitWithSizesBackward0``).

    Raises:
        RuntimeError: PyTorch's, where the sizes do not sum to the dim's size or one is negative.

    Example::
        >>> import retrograd as rg
        >>> rg.split_with_sizes(rg.arange(5.), [1, 4])
        (tensor([0.]), tensor([1., 2., 3., 4.]))
    """)

add_docstr(unsafe_split, """:func:`split` into pieces of ``split_size`` whose outputs are not views (Note [Unsafe splits]).

    Args:
        input: the tensor (at least 1-D).
        split_size: the size of each piece; the last may be smaller.
        dim: the dim to split.

    Returns:
        A tuple of tensors sharing ``input``'s memory, each writable in place (``UnsafeSplitBackward0``).

    Example::
        >>> import retrograd as rg
        >>> rg.unsafe_split(rg.arange(5.), 2)
        (tensor([0., 1.]), tensor([2., 3.]), tensor([4.]))
    """)

add_docstr(unsafe_split_with_sizes, """:func:`split_with_sizes` whose outputs are not views (Note [Unsafe splits]).

    Args:
        input: the tensor (at least 1-D).
        split_sizes: the size of each piece, summing to ``input.size(dim)``.
        dim: the dim to split.

    Returns:
        A tuple of tensors sharing ``input``'s memory, each writable in place (``UnsafeSplitWithSizesBackward0``).

    Example::
        >>> import retrograd as rg
        >>> rg.unsafe_split_with_sizes(rg.arange(3.), [2, 1])
        (tensor([0., 1.]), tensor([2.]))
    """)

# -- linalg ----------------------------------------------------------------------------------------
add_docstr(matmul, """The matrix product of ``input`` and ``other``; 1-D and batched operands follow NumPy's rules.

    Args:
        input: the first tensor (at least 1-D).
        other: the second tensor (at least 1-D).

    Returns:
        The product; 1-D operands lose the dim they were promoted with.

    Raises:
        RuntimeError: if the inner sizes differ.

    Example::
        >>> import retrograd as rg
        >>> rg.matmul(rg.tensor([[1., 2.], [3., 4.]]), rg.tensor([1., 1.]))
        tensor([3., 7.])
    """)

add_docstr(mm, """The matrix product of two 2-D tensors.

    Args:
        input: an (n, m) tensor.
        mat2: an (m, p) tensor.

    Returns:
        An (n, p) tensor.

    Raises:
        RuntimeError: if the shapes cannot be multiplied.

    Example::
        >>> import retrograd as rg
        >>> rg.mm(rg.tensor([[1., 2.], [3., 4.]]), rg.tensor([[1.], [1.]]))
        tensor([[3.],
                [7.]])
    """)

add_docstr(bmm, """The matrix product of each pair of matrices in two batches.

    Args:
        input: a (b, n, m) tensor.
        mat2: a (b, m, p) tensor.

    Returns:
        A (b, n, p) tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.bmm(rg.ones(2, 1, 3), rg.ones(2, 3, 1)).shape
        retrograd.Size([2, 1, 1])
    """)

add_docstr(outer, """The outer product of two vectors: ``out[i, j] = input[i] * vec2[j]``.

    Args:
        input: a 1-D tensor of size n.
        vec2: a 1-D tensor of size m.

    Returns:
        An (n, m) tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.outer(rg.tensor([1., 2.]), rg.tensor([1., 10., 100.]))
        tensor([[  1.,  10., 100.],
                [  2.,  20., 200.]])
    """)

add_docstr(trace, """The sum of the main diagonal of a 2-D tensor.

    Args:
        input: a 2-D tensor.

    Returns:
        A 0-d tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.trace(rg.tensor([[1., 2.], [3., 4.]]))
        tensor(5.)
    """)

# -- sorting and selection ----------------------------------------------------------------------------
add_docstr(sort, """The elements of ``input`` sorted along ``dim``, and where each came from.

    The order is stable (equal elements keep their order) whatever ``stable`` says, and NaN sorts
    as the largest value. The values are differentiable: their gradient goes back to the
    positions they came from.

    Args:
        input: the tensor.
        dim: the dim to sort along (default the last).
        descending: largest first.
        stable: keep equal elements in their order (keyword-only; always done).

    Returns:
        A named tuple ``(values, indices)``; ``indices`` is int64.

    Example::
        >>> import retrograd as rg
        >>> rg.sort(rg.tensor([3., 1., 2.]), descending=True)
        sort(values=tensor([3., 2., 1.]), indices=tensor([0, 2, 1]))
    """)

add_docstr(argsort, """The indices that sort ``input`` along ``dim``: ``sort(input, dim, descending).indices``.

    Args:
        input: the tensor.
        dim: the dim to sort along (default the last).
        descending: largest first.
        stable: keep equal elements in their order (keyword-only; always done).

    Returns:
        An int64 tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.argsort(rg.tensor([3., 1., 2.]))
        tensor([1, 2, 0])
    """)

add_docstr(msort, """``input`` sorted along its first dim: ``sort(input, 0).values``.

    Args:
        input: the tensor.

    Returns:
        The sorted values.

    Example::
        >>> import retrograd as rg
        >>> rg.msort(rg.tensor([[2., 1.], [0., 3.]]))
        tensor([[0., 1.],
                [2., 3.]])
    """)

add_docstr(topk, """The ``k`` largest (or smallest) elements of ``input`` along ``dim``, and their indices.

    Args:
        input: the tensor.
        k: how many to keep (0 to the size of ``dim``).
        dim: the dim to select along (default the last).
        largest: the largest ones (False: the smallest).
        sorted: return them in order (they always are).

    Returns:
        A named tuple ``(values, indices)`` with size ``k`` along ``dim``; the values' gradient
        goes back to the selected positions.

    Raises:
        RuntimeError: if ``k`` is out of range.

    Example::
        >>> import retrograd as rg
        >>> rg.topk(rg.tensor([1., 4., 2., 3.]), 2)
        topk(values=tensor([4., 3.]), indices=tensor([1, 3]))
    """)

add_docstr(kthvalue, """The ``k``-th smallest element of ``input`` along ``dim`` (``k`` from 1), and its index.

    Args:
        input: the tensor.
        k: which one (1 is the smallest).
        dim: the dim to select along (default the last).
        keepdim: keep ``dim`` with size 1.

    Returns:
        A named tuple ``(values, indices)``.

    Raises:
        RuntimeError: if ``k`` is out of range.
        IndexError: if ``dim`` is empty.

    Example::
        >>> import retrograd as rg
        >>> rg.kthvalue(rg.tensor([5., 1., 4.]), 2)
        kthvalue(values=tensor(4.), indices=tensor(2))
    """)

add_docstr(median, """The lower median of ``input``; along ``dim``, the medians and their indices.

    The lower median of ``n`` values is the ``(n - 1) // 2``-th smallest. A NaN makes the median
    NaN. Without ``dim`` the gradient is shared among the elements equal to the median.

    Args:
        input: the tensor.
        dim: the dim to reduce (None: all of them, returning a 0-d tensor).
        keepdim: keep ``dim`` with size 1.

    Returns:
        A tensor, or with ``dim`` a named tuple ``(values, indices)``.

    Raises:
        IndexError: if ``dim`` is empty.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([[1., 4., 2., 3.], [0., 5., 9., 8.]])
        >>> rg.median(x)
        tensor(3.)
        >>> rg.median(x, 1)
        median(values=tensor([2., 5.]), indices=tensor([2, 1]))
    """)

add_docstr(mode, """The most frequent value of ``input`` along ``dim``, and the index of its last occurrence.

    Among equally frequent values, the smallest.

    Args:
        input: the tensor.
        dim: the dim to reduce (default the last).
        keepdim: keep ``dim`` with size 1.

    Returns:
        A named tuple ``(values, indices)``.

    Raises:
        IndexError: if ``dim`` is empty.

    Example::
        >>> import retrograd as rg
        >>> rg.mode(rg.tensor([2., 1., 2., 1., 3.]))
        mode(values=tensor(1.), indices=tensor(3))
    """)

# -- special functions ---------------------------------------------------------------------------

add_docstr(erf, """The error function ``2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt`` of every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.erf(rg.tensor([0., 1.]))
        tensor([0.0000, 0.8427])
    """)

add_docstr(erfc, """The complementary error function ``1 - erf(x)`` of every element, accurate where erf is near 1.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.erfc(rg.tensor([0., 1.]))
        tensor([1.0000, 0.1573])
    """)

add_docstr(erfinv, """The inverse of the error function, for every element in [-1, 1] (``nan`` outside).

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.erfinv(rg.tensor([0., 0.5]))
        tensor([0.0000, 0.4769])
    """)

add_docstr(lgamma, """The logarithm of the absolute value of the gamma function of every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.lgamma(rg.tensor([0.5, 3.]))
        tensor([0.5724, 0.6931])
    """)

add_docstr(digamma, """The digamma function, the derivative of ``lgamma``, of every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.digamma(rg.tensor([1., 2.]))
        tensor([-0.5772,  0.4228])
    """)

add_docstr(i0, """The modified Bessel function of the first kind of order zero of every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.i0(rg.tensor([0., 1.]))
        tensor([1.0000, 1.2661])
    """)

add_docstr(sinc, """The normalized sinc function ``sin(pi x) / (pi x)`` of every element (1 at 0).

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.sinc(rg.tensor([0., 0.5]))
        tensor([1.0000, 0.6366])
    """)

add_docstr(ndtr, """The standard normal distribution's cumulative distribution function at every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.ndtr(rg.tensor([0., 1.]))
        tensor([0.5000, 0.8413])
    """)

add_docstr(ndtri, """The inverse of ``ndtr``: the standard normal quantile of every element in [0, 1].

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.ndtri(rg.tensor([0.5, 0.9]))
        tensor([0.0000, 1.2816])
    """)

add_docstr(log_ndtr, """The logarithm of ``ndtr``, accurate far into the lower tail.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.log_ndtr(rg.tensor([0., -10.]))
        tensor([ -0.6931, -53.2313])
    """)

add_docstr(i1, """The modified Bessel function of the first kind of order one of every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.i1(rg.tensor([0., 1.]))
        tensor([0.0000, 0.5652])
    """)

add_docstr(entr, """The elementwise entropy term ``-x log x`` (0 at 0, ``-inf`` below 0).

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.entr(rg.tensor([0., 0.5]))
        tensor([0.0000, 0.3466])
    """)

add_docstr(polygamma, """The ``n``-th derivative of the digamma function of every element.

    Args:
        n: the order, 0 or more (0 is ``digamma``).
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Raises:
        RuntimeError: if ``n`` is negative.

    Example::
        >>> import retrograd as rg
        >>> rg.polygamma(1, rg.tensor([1.]))
        tensor([1.6449])
    """)

add_docstr(xlogy, """``input * log(other)`` elementwise, with broadcasting, and 0 wherever ``input`` is 0.

    Args:
        input: the factor (a Tensor or a number).
        other: the argument of the logarithm (a Tensor or a number).

    Returns:
        A floating tensor of the broadcast shape.

    Example::
        >>> import retrograd as rg
        >>> rg.xlogy(rg.tensor([0., 2.]), rg.tensor([0., 3.]))
        tensor([0.0000, 2.1972])
    """)

add_docstr(logit, """The log-odds ``log(x / (1 - x))`` of every element, optionally clamped to [eps, 1 - eps] first.

    Args:
        input: the probabilities.
        eps: None, or the clamping bound (then the gradient is 0 outside the bounds).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.logit(rg.tensor([0.5, 0.75]))
        tensor([0.0000, 1.0986])
    """)


add_docstr(i0e, """The exponentially scaled Bessel function ``exp(-|x|) * i0(x)`` of every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.i0e(rg.tensor([0., 1.]))
        tensor([1.0000, 0.4658])
    """)

add_docstr(i1e, """The exponentially scaled Bessel function ``exp(-|x|) * i1(x)`` of every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.i1e(rg.tensor([0., 1.]))
        tensor([0.0000, 0.2079])
    """)

add_docstr(erfcx, """The scaled complementary error function ``exp(x^2) * erfc(x)`` of every element.

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.erfcx(rg.tensor([0., 10.]))
        tensor([1.0000, 0.0561])
    """)

add_docstr(xlog1py, """``input * log1p(other)`` elementwise, with broadcasting, and 0 wherever ``input`` is 0.

    Args:
        input: the factor (a Tensor or a number).
        other: the argument of ``log1p`` (a Tensor or a number).

    Returns:
        A floating tensor of the broadcast shape.

    Example::
        >>> import retrograd as rg
        >>> rg.special.xlog1py(rg.tensor([0., 2.]), rg.tensor([-1., 1.]))
        tensor([0.0000, 1.3863])
    """)

add_docstr(igamma, """The regularized lower incomplete gamma function P(input, other), elementwise.

    ``P(a, x)`` is the integral of ``t^(a-1) e^(-t)`` from 0 to ``x``, divided by ``Gamma(a)``.
    Only ``other`` has a derivative, as in PyTorch: a backward that needs the gradient of
    ``input`` raises NotImplementedError.

    Args:
        input: the positive parameter ``a`` (a floating Tensor).
        other: the non-negative argument ``x`` (a floating Tensor), broadcast with ``input``.

    Returns:
        A tensor of the broadcast shape and promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.igamma(rg.tensor([1., 2.]), rg.tensor([1., 1.]))
        tensor([0.6321, 0.2642])
    """)

add_docstr(igammac, """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other).

    See :func:`igamma`; as there, only ``other`` has a derivative.

    Args:
        input: the positive parameter ``a`` (a floating Tensor).
        other: the non-negative argument ``x`` (a floating Tensor), broadcast with ``input``.

    Returns:
        A tensor of the broadcast shape and promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.igammac(rg.tensor([1., 2.]), rg.tensor([1., 1.]))
        tensor([0.3679, 0.7358])
    """)

# -- random sampling -------------------------------------------------------------------------------
add_docstr(multinomial, """Draws ``num_samples`` indices from each row of weights ``input`` (1-D or 2-D).

    The weights need not sum to one. Without replacement, each index is drawn at most once per
    row (indices of zero weight come only after all the others).

    Args:
        input: non-negative floating weights, a vector or a matrix of rows.
        num_samples: how many indices per row.
        replacement: draw with replacement.
        generator: the generator to draw from (keyword-only; default the default generator).

    Returns:
        An int64 tensor of shape ``input.shape[:-1] + (num_samples,)``.

    Raises:
        RuntimeError: for weights that are negative, infinite or NaN, a row that sums to zero,
            more samples than weights without replacement, or ``num_samples <= 0``.

    Example::
        >>> import retrograd as rg
        >>> rg.multinomial(rg.tensor([0., 0., 1.]), 2, replacement=True)
        tensor([2, 2])
    """)

add_docstr(bernoulli, """Draws 1 with probability ``input`` (or ``p``) elementwise, else 0, in ``input``'s dtype.

    Args:
        input: the probabilities, in [0, 1] (with ``p``, only the shape and dtype count).
        p: one probability for every element instead.
        generator: the generator to draw from (keyword-only).

    Returns:
        A tensor of ``input``'s shape and dtype; it requires grad where ``input`` does, with a
        zero gradient, as PyTorch's.

    Example::
        >>> import retrograd as rg
        >>> rg.bernoulli(rg.tensor([0., 1.]))
        tensor([0., 1.])
    """)

add_docstr(poisson, """Draws a Poisson count of rate ``input`` elementwise, in ``input``'s floating dtype.

    Args:
        input: the non-negative rates.
        generator: the generator to draw from.

    Returns:
        A tensor of ``input``'s shape and dtype (zero gradient, as PyTorch's).

    Example::
        >>> import retrograd as rg
        >>> rg.poisson(rg.tensor([0., 0.]))
        tensor([0., 0.])
    """)

add_docstr(normal, """Draws from normal distributions of means ``mean`` and standard deviations ``std``.

    Either argument may be a tensor (they broadcast; the result has the mean's dtype, and a zero
    gradient with respect to both, as PyTorch's), or both are numbers and ``size`` gives the shape.

    Args:
        mean: a tensor or a number.
        std: a tensor or a non-negative number.
        size: the shape, when both are numbers.
        generator: the generator to draw from (keyword-only).
        dtype, device, requires_grad: of the result, when both are numbers.

    Returns:
        The draws.

    Raises:
        RuntimeError: for a negative standard deviation, or shapes that do not broadcast.

    Example::
        >>> import retrograd as rg
        >>> rg.normal(rg.tensor([1., 2.]), 0.).tolist()
        [1.0, 2.0]
    """)

# -- searching and counting ---------------------------------------------------------------------------

add_docstr(nonzero, """The indices of the nonzero elements of ``input``.

    Args:
        input: the tensor.
        as_tuple: one index vector per dim instead of one row per element (keyword-only).

    Returns:
        An int64 tensor of shape ``(count, input.dim())``, or with ``as_tuple`` a tuple of vectors.

    Example::
        >>> import retrograd as rg
        >>> rg.nonzero(rg.tensor([[0., 2.], [3., 0.]]))
        tensor([[0, 1],
                [1, 0]])
    """)

add_docstr(argwhere, """The indices of the nonzero elements of ``input``, one row each: ``nonzero(input)``.

    Args:
        input: the tensor.

    Returns:
        An int64 tensor of shape ``(count, input.dim())``.

    Example::
        >>> import retrograd as rg
        >>> rg.argwhere(rg.tensor([0, 5, 7]))
        tensor([[1],
                [2]])
    """)

add_docstr(unique, """The distinct elements of ``input`` (or its distinct slices along ``dim``), sorted.

    Args:
        input: the tensor.
        sorted: sort the result (it always is).
        return_inverse: also return where each element of ``input`` went.
        return_counts: also return how often each distinct element occurs.
        dim: the dim whose slices to compare (None: the flattened elements).

    Returns:
        The distinct values; with ``return_inverse`` or ``return_counts`` a tuple with those (int64).

    Example::
        >>> import retrograd as rg
        >>> rg.unique(rg.tensor([3, 1, 3]), return_counts=True)
        (tensor([1, 3]), tensor([1, 2]))
    """)

add_docstr(unique_consecutive, """``input`` with each run of equal consecutive elements (or slices) kept once.

    Args:
        input: the tensor.
        return_inverse: also return which run each element belongs to.
        return_counts: also return the length of each run.
        dim: the dim whose slices to compare (None: flattened).

    Returns:
        The values; with ``return_inverse`` or ``return_counts`` a tuple with those (int64).

    Example::
        >>> import retrograd as rg
        >>> rg.unique_consecutive(rg.tensor([1, 1, 2, 1]))
        tensor([1, 2, 1])
    """)

add_docstr(searchsorted, """Where each value of ``input`` would go in ``sorted_sequence`` to keep it sorted.

    Args:
        sorted_sequence: a sorted 1-D tensor, or one sorted row per leading index of ``input``.
        input: the values (a tensor or a number).
        out_int32: return int32 instead of int64 (keyword-only).
        right: the position after equal elements instead of before (keyword-only).
        side: ``'left'`` or ``'right'``, as ``right`` (keyword-only).
        sorter: the indices that sort an unsorted ``sorted_sequence`` (keyword-only).

    Returns:
        The insertion indices, of ``input``'s shape.

    Raises:
        RuntimeError: for ``side`` opposite to ``right``, or leading dims that do not match.

    Example::
        >>> import retrograd as rg
        >>> rg.searchsorted(rg.tensor([1, 3, 5]), rg.tensor([3, 6]))
        tensor([1, 3])
    """)

add_docstr(bucketize, """The index of the bucket of ``boundaries`` each element of ``input`` falls in.

    Args:
        input: the values (a tensor or a number).
        boundaries: sorted 1-D bucket boundaries.
        out_int32: return int32 instead of int64 (keyword-only).
        right: a value equal to a boundary goes to the bucket after it (keyword-only).

    Returns:
        The bucket indices, of ``input``'s shape.

    Raises:
        RuntimeError: if ``boundaries`` is not 1-D.

    Example::
        >>> import retrograd as rg
        >>> rg.bucketize(rg.tensor([1, 3, 6]), rg.tensor([1, 3, 5]))
        tensor([0, 1, 3])
    """)

add_docstr(isin, """Whether each element of ``elements`` occurs in ``test_elements``.

    Args:
        elements: a tensor or a number.
        test_elements: a tensor or a number.
        assume_unique: both hold distinct values (keyword-only; a speed hint).
        invert: whether each does not occur instead (keyword-only).

    Returns:
        A bool tensor of ``elements``' shape.

    Example::
        >>> import retrograd as rg
        >>> rg.isin(rg.tensor([1, 2, 3]), rg.tensor([2, 5]))
        tensor([False,  True, False])
    """)

add_docstr(histc, """The histogram of ``input``: counts in ``bins`` equal bins over [``min``, ``max``].

    Args:
        input: a floating tensor.
        bins: the number of bins.
        min: the lower end (with ``max``, both 0: the data's range).
        max: the upper end; elements outside are left out.

    Returns:
        A tensor of ``bins`` counts, in ``input``'s dtype.

    Raises:
        RuntimeError: if ``bins`` is not positive or ``min > max``.

    Example::
        >>> import retrograd as rg
        >>> rg.histc(rg.tensor([1., 2., 1.]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """)

add_docstr(bincount, """How often each value ``0 .. max(input)`` occurs in the non-negative integers ``input``.

    Args:
        input: a 1-D tensor of non-negative integers.
        weights: a weight per element, summed instead of counted.
        minlength: the least length of the result.

    Returns:
        An int64 tensor, or in the weights' dtype.

    Raises:
        RuntimeError: for negative values, a non-1-D input, or weights of another length.

    Example::
        >>> import retrograd as rg
        >>> rg.bincount(rg.tensor([1, 1, 3]))
        tensor([0, 2, 0, 1])
    """)

add_docstr(count_nonzero, """The number of nonzero elements of ``input`` over ``dim``.

    Args:
        input: the tensor.
        dim: a dim or a tuple of dims (None: all of them).

    Returns:
        An int64 tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.count_nonzero(rg.tensor([[0, 1], [2, 3]]), dim=0)
        tensor([1, 2])
    """)

add_docstr(all, """Whether every element of ``input`` is nonzero, over ``dim``.

    Args:
        input: the tensor.
        dim: a dim or a tuple of dims (None: all of them).
        keepdim: keep the reduced dims with size 1.

    Returns:
        A bool tensor (uint8 for a uint8 input).

    Example::
        >>> import retrograd as rg
        >>> rg.all(rg.tensor([[True, False], [True, True]]), dim=1)
        tensor([False,  True])
    """)

add_docstr(any, """Whether any element of ``input`` is nonzero, over ``dim``.

    Args:
        input: the tensor.
        dim: a dim or a tuple of dims (None: all of them).
        keepdim: keep the reduced dims with size 1.

    Returns:
        A bool tensor (uint8 for a uint8 input).

    Example::
        >>> import retrograd as rg
        >>> rg.any(rg.tensor([[0, 0], [0, 3]]), dim=1)
        tensor([False,  True])
    """)


# -- copies ----------------------------------------------------------------------------------------
from .copy import clone  # noqa: E402

add_docstr(clone, """Returns a copy of ``input`` with its own memory, recorded as ``CloneBackward0``.

    Args:
        input: the tensor to copy.
        memory_format: the order of the copy's elements in memory (keyword-only): by default
            ``preserve_format``, which keeps the strides of a dense non-overlapping input and packs any other
            in the order of its strides (Note [Memory formats] in retrograd/_creation.py).

    Raises:
        RuntimeError: a channels_last format for a tensor of another rank (PyTorch's error).

    Example::
        >>> import retrograd as rg
        >>> x = rg.zeros(3, 2).t()
        >>> x.clone().stride(), x.clone(memory_format=rg.contiguous_format).stride()
        ((1, 2), (3, 1))
    """)
