"""The pooling functions of ``retrograd.nn.functional``: max, average, adaptive and power-average pooling over
1, 2 or 3 spatial dims, max unpooling, and the ``*_with_indices`` names PyTorch gives the max pools.

One function per family does the work for every number of spatial dims (``nd``); the public names check
arguments as PyTorch does and call it. The pools and unpooling are ops of ``retrograd/ops/nn.py`` that take
the rank from their window or output size: average pooling sums the columns of ``im2col``, adaptive average
pooling is a product with one averaging matrix per spatial dim.
"""
from __future__ import annotations

import numpy as np

from .._creation import tensor as _tensor
from ..ops import nn as _nn
from ..ops import relu as _relu

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d"]


def _ntuple(x, n, name="argument"):
    """``x`` as ``n`` ints: an int repeated, or a sequence of one or ``n`` values (PyTorch's message otherwise)."""
    if isinstance(x, (tuple, list)):
        if len(x) == 1:
            return (int(x[0]),) * n
        if len(x) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {name}={list(x)}")
        return tuple(int(v) for v in x)
    return (int(x),) * n


def _pair(x, name="argument"):
    return _ntuple(x, 2, name)


def _pool_args(kernel_size, stride, padding, dilation=1, nd=2):
    """Kernel, stride (the kernel where None or empty), padding and dilation as ``nd`` ints each; PyTorch's check
    that the padding is at most half the effective kernel."""
    k = _ntuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _ntuple(stride, nd)
    p, d = _ntuple(padding, nd), _ntuple(dilation, nd)
    for pi, ki, di in zip(p, k, d, strict=True):
        if pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                               f"kernel_size={ki} and dilation={di}")
    return k, s, p, d


# -- max pooling -----------------------------------------------------------------------------------------
def _max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, nd)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    out, idx = _nn.max_pool2d_with_indices(input, k, s, p, d, bool(ceil_mode))  # unbatched too: one node
    return (out, idx) if return_indices else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling over (N, C, H, W) or (C, H, W); with ``return_indices`` also the flat argmax indices.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.max_pool2d(rg.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W); with ``return_indices`` also the argmax indices,
    flat in each D*H*W volume.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.max_pool3d(rg.arange(8.).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        (tensor([[[[[7.]]]]]), tensor([[[[[7]]]]]))
    """
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _one(x, what, name):
    """A 1-d pooling parameter as one int: an int, or a sequence of one."""
    if isinstance(x, (tuple, list)):
        if len(x) != 1:
            raise RuntimeError(f"{name}() argument '{what}' should contain one int (got {len(x)})")
        return int(x[0])
    return int(x)


def _check_1d(input, name):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling over (N, C, L) or (C, L); with ``return_indices`` also the argmax positions.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.max_pool1d(rg.tensor([[1., 3., 2., 0.]]), 2)
        tensor([[3., 2.]])
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    k = _one(kernel_size, "kernel_size", "max_pool1d")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _one(stride, "stride",
                                                                                            "max_pool1d")
    p, d = _one(padding, "padding", "max_pool1d"), _one(dilation, "dilation", "max_pool1d")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    # as a 2-d pool of height one, as PyTorch's
    out, idx = _nn.max_pool2d_with_indices(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), bool(ceil_mode))
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool1d`` with its indices whatever ``return_indices`` says: ``(values, indices)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool2d`` with its indices whatever ``return_indices`` says: ``(values, indices)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool3d`` with its indices whatever ``return_indices`` says: ``(values, indices)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# -- average pooling -------------------------------------------------------------------------------------
def _avg_pool(input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, name):
    """Average pooling over the last ``nd`` dims (PyTorch's divisor rules: the ops' ``avg_pool2d``)."""
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1, nd)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}"
                           if nd == 2 else f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    default = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    # the node keeps PyTorch's empty stride where none was given (ATen's default: the kernel)
    return _nn.avg_pool2d(input, k, () if default else s, p, bool(ceil_mode), bool(count_include_pad),
                          divisor_override)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-d average pooling over (N, C, H, W) or (C, H, W), with PyTorch's divisor rules.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.avg_pool2d(rg.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-d average pooling over (N, C, D, H, W) or (C, D, H, W), with PyTorch's divisor rules.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.avg_pool3d(rg.arange(8.).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[3.5000]]]]])
    """
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool3d")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-d average pooling over (N, C, L) or (C, L); see ``avg_pool2d``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.avg_pool1d(rg.tensor([[1., 3., 2., 0.]]), 2)
        tensor([[2., 1.]])
    """
    _check_1d(input, "avg_pool1d")
    k = _one(kernel_size, "kernel_size", "avg_pool1d")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _one(stride, "stride",
                                                                                            "avg_pool1d")
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _one(padding, "padding", "avg_pool1d")), ceil_mode,
                     count_include_pad)
    return out.squeeze(-2)


# -- adaptive pooling ------------------------------------------------------------------------------------
def _adaptive_size(input, output_size, nd):
    """``output_size`` as ``nd`` ints, None keeping the input's size of that dim."""
    sizes = (output_size,) * nd if isinstance(output_size, int) or output_size is None else tuple(output_size)
    return tuple(input.shape[-nd + i] if v is None else int(v) for i, v in enumerate(sizes))


def _adaptive_avg_pool(input, output_size, nd):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_avg_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    return _nn.adaptive_avg_pool2d(input, _adaptive_size(input, output_size, nd))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size, with PyTorch's window bounds (floor start, ceil end).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.adaptive_avg_pool2d(rg.ones(1, 2, 5, 7), 1).shape
        retrograd.Size([1, 2, 1, 1])
    """
    return _adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to a fixed size (an int, a triple, None keeps a dim).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.adaptive_avg_pool3d(rg.ones(1, 2, 5, 7, 3), (1, 2, None)).shape
        retrograd.Size([1, 2, 1, 2, 3])
    """
    return _adaptive_avg_pool(input, output_size, 3)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) to ``output_size`` positions.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.adaptive_avg_pool1d(rg.tensor([[1., 3., 2.]]), 2)
        tensor([[2.0000, 2.5000]])
    """
    _check_1d(input, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size, "output_size",
                                                              "adaptive_avg_pool1d"))).squeeze(-2)


def _adaptive_max_pool(input, output_size, return_indices, nd):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_max_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    out, idx = _nn.adaptive_max_pool2d(input, _adaptive_size(input, output_size, nd))
    return (out, idx) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (an int, a pair, None keeps a dim).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.adaptive_max_pool2d(rg.arange(9.).reshape(1, 3, 3), 2)
        tensor([[[4., 5.],
                 [7., 8.]]])
    """
    return _adaptive_max_pool(input, output_size, return_indices, 2)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (an int, a triple, None keeps a dim).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.adaptive_max_pool3d(rg.arange(8.).reshape(1, 2, 2, 2), 1)
        tensor([[[[7.]]]])
    """
    return _adaptive_max_pool(input, output_size, return_indices, 3)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) to ``output_size`` positions; see ``adaptive_max_pool2d``."""
    _check_1d(input, "adaptive_max_pool1d")
    size = _one(output_size, "output_size", "adaptive_max_pool1d")
    out, idx = _nn.adaptive_max_pool2d(input.unsqueeze(-2), (1, size))
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d`` with its indices whatever ``return_indices`` says: ``(values, indices)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d`` with its indices whatever ``return_indices`` says: ``(values, indices)``."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d`` with its indices whatever ``return_indices`` says: ``(values, indices)``."""
    return adaptive_max_pool3d(input, output_size, True)


# -- max unpooling ---------------------------------------------------------------------------------------
def _unpool_size(input, kernel_size, stride, padding, output_size, nd):
    """The output's spatial size: the largest a pooling with these parameters maps to the input's, or
    ``output_size`` (``nd`` or ``nd + 2`` values) where it is one of the sizes that pool to the same."""
    k = _ntuple(kernel_size, nd)
    s = k if stride is None else _ntuple(stride, nd)
    p = _ntuple(padding, nd)
    default = [(input.shape[-nd + d] - 1) * s[d] - 2 * p[d] + k[d] for d in range(nd)]
    if output_size is None:
        return tuple(default)
    size = [int(v) for v in output_size]
    if len(size) == nd + 2:
        size = size[2:]
    if len(size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(size)}'")
    for d in range(nd):
        lo, hi = default[d] - s[d], default[d] + s[d]
        if not lo < size[d] < hi:
            raise ValueError(f'invalid output_size "{tuple(size)}" (dim {d} must be between {lo} and {hi})')
    return tuple(size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: each value put back at its index, zeros elsewhere.

    Raises:
        ValueError: for an ``output_size`` no pooling with these parameters comes from.
        RuntimeError: for an index outside the output.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.max_unpool2d(*F.max_pool2d(rg.arange(4.).reshape(1, 2, 2), 2, return_indices=True), 2)
        tensor([[[0., 0.],
                 [0., 3.]]])
    """
    return _nn.max_unpool2d(input, indices, _unpool_size(input, kernel_size, stride, padding, output_size, 2))


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``: each value put back at its index (flat in D*H*W), zeros elsewhere.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.max_unpool3d(*F.max_pool3d(rg.arange(8.).reshape(1, 2, 2, 2), 2, return_indices=True), 2)[0, 1]
        tensor([[0., 0.],
                [0., 7.]])
    """
    return _nn.max_unpool2d(input, indices, _unpool_size(input, kernel_size, stride, padding, output_size, 3))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: each value put back at its position, zeros elsewhere.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.max_unpool1d(*F.max_pool1d(rg.tensor([[1., 3., 2., 0.]]), 2, return_indices=True), 2)
        tensor([[0., 3., 2., 0.]])
    """
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    # as a 2-d unpooling of planes of width one, as PyTorch's
    return _nn.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size + (1,)).squeeze(-1)


# -- power-average pooling -------------------------------------------------------------------------------
def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    """``(sum over each window of x ** p) ** (1 / p)``: the average of ``x ** p`` times the window's size, with
    a negative average (an odd ``p``) kept at its sign times zero, as PyTorch."""
    k = _ntuple(kernel_size, nd)
    pooled = (avg_pool1d(input.pow(norm_type), k[0], stride, 0, ceil_mode) if nd == 1 else
              _avg_pool(input.pow(norm_type), nd, k, stride, 0, ceil_mode, True, None, f"avg_pool{nd}d"))
    return (pooled.sign() * _relu(pooled.abs())).mul(int(np.prod(k))).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-d power-average pooling over (N, C, L) or (C, L): each window's ``p``-norm, ``p = norm_type``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.lp_pool1d(rg.tensor([[3., 4., 1., 0.]]), 2, 2)
        tensor([[5., 1.]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-d power-average pooling over (N, C, H, W) or (C, H, W): each window's ``p``-norm, ``p = norm_type``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.lp_pool2d(rg.full((1, 2, 2), 2.), 1, 2)
        tensor([[[8.]]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-d power-average pooling over (N, C, D, H, W) or (C, D, H, W): each window's ``p``-norm.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.lp_pool3d(rg.ones(1, 2, 2, 2), 2, 2)
        tensor([[[[2.8284]]]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
