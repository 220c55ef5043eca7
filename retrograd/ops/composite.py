"""Composite ops: built from primitives, so their gradients come from the primitives' formulas."""
from __future__ import annotations

from .._tensor import Tensor, _wrap_dim
from ._declarations import tensor_method
from .copy import contiguous
from .shape import diag_embed, diagonal_copy, reshape, view


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


@tensor_method
def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal of ``self`` (2-D, or every dim of one length) with ``fill_value``, in place.

    Recorded as PyTorch's: a fill of a view of the diagonal, so the tensor's node is a ``CopySlices``.

    Args:
        fill_value: the number to write.
        wrap: for a 2-D tensor taller than it is wide, start the diagonal again every ``width + 1`` rows,
            as NumPy's ``fill_diagonal``.

    Returns:
        ``self``.

    Raises:
        RuntimeError: fewer than 2 dims, or dims of different lengths beyond 2 (PyTorch's errors).

    Example::
        >>> import retrograd as rg
        >>> rg.zeros(2, 3).fill_diagonal_(5.)
        tensor([[5., 0., 0.],
                [0., 5., 0.]])
    """
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(s != shape[0] for s in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    step = sum(self.stride())
    self.as_strided((min(shape),), (step,), self.storage_offset()).fill_(fill_value)
    height, width = shape[0], shape[-1]
    if wrap and len(shape) == 2 and height > width + 1:  # the diagonal again from every (width + 1)-th row
        for row in range(width + 1, height, width + 1):
            block = self[row:row + width]
            block.as_strided((min(width, height - row),), (step,), block.storage_offset()).fill_(fill_value)
    return self


@tensor_method
def ravel(input):
    """``input`` as one dim: a view where its elements are contiguous, else a view of a contiguous copy.

    Example::
        >>> import retrograd as rg
        >>> rg.ravel(rg.tensor([[1, 2], [3, 4]]))
        tensor([1, 2, 3, 4])
    """
    return view(contiguous(input), (-1,))  # as PyTorch's: a copy's ViewBackward0, not reshape's _unsafe_view


@tensor_method
def diagflat(input, offset=0):
    """A square matrix with the elements of ``input`` (flattened) on its ``offset``-th diagonal, zeros elsewhere.

    Args:
        input: the tensor of diagonal values (any shape: flattened first).
        offset: the diagonal: 0 the main one, above it positive, below it negative.

    Returns:
        A new 2-D tensor of side ``input.numel() + abs(offset)`` (``DiagEmbedBackward0``, as PyTorch's).

    Example::
        >>> import retrograd as rg
        >>> rg.diagflat(rg.tensor([[1, 2]]), 1)
        tensor([[0, 1, 0],
                [0, 0, 2],
                [0, 0, 0]])
    """
    return diag_embed(reshape(input, (-1,)), offset)


@tensor_method
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in its columns).

    Args:
        input: a 1-D (one variable) or 2-D tensor.
        correction: the difference between the observations' (weighted) count and the divisor (1: Bessel's).
        fweights: an integer weight per observation (how often it occurs), or None.
        aweights: a floating weight per observation (its importance), or None.

    Returns:
        The ``(variables, variables)`` covariances, squeezed (a 0-d tensor for one variable).

    Raises:
        RuntimeError: ``input`` of more than 2 dims (PyTorch's error).

    Example::
        >>> import retrograd as rg
        >>> rg.cov(rg.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape((1, -1)) if input.dim() < 2 else input
    observations = x.shape[1]
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = observations
        avg = x.mean(1)
        norm_factor = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        norm_factor = (w_sum - correction * (w * aweights).sum() / w_sum if aweights is not None and correction
                       else w_sum - correction)
    if not isinstance(norm_factor, Tensor):
        norm_factor = max(norm_factor, 0)
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t())
    return (c / norm_factor).squeeze()


@tensor_method
def corrcoef(input):
    """The Pearson correlation coefficients of the variables in the rows of ``input``, clipped to [-1, 1].

    Example::
        >>> import retrograd as rg
        >>> rg.corrcoef(rg.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    c = cov(input)
    if c.dim() == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.unsqueeze(1)
    c = c / stddev.unsqueeze(0)
    return c.clamp(-1, 1)
