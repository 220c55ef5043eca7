"""Neural-network primitives: convolution, pooling, normalization, activations, embedding, padding.

These are the ops ``retrograd.nn.functional`` is built on. They are private to the registry
(not exported from ``retrograd``): the functional layer gives them PyTorch's signatures and
argument checks. Every formula is written with retrograd ops, so double backward works.

Note [Convolution as im2col]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Convolution unfolds its input into columns (``im2col``: for each output position, the
receptive field as one column, PyTorch's ``F.unfold`` layout ``(N, C*kh*kw, L)``) and
multiplies them by the weight reshaped to a matrix. ``im2col`` and ``col2im`` (``F.fold``) are
each other's adjoint, so each is the other's gradient. The ``convolution`` op takes the
columns as its input (so they are saved for the weight's gradient, not recomputed): the
gradient of the columns is ``W^T @ grad`` (which im2col's formula folds back onto the input)
and that of the weight ``grad @ cols^T``, all built from registered ops, which makes higher
derivatives exact.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from .._creation import tensor, zeros, zeros_like
from .._dtype import tensor_type_name
from .._tensor import Tensor
from ..autograd.saved_variable import SavedTensor
from ._declarations import REGISTRY, defop, op_call
from ._node import OpNode
from ._rows import fast_rows, layer_norm_input_rows, layer_norm_rows, lead_sum, row_sum, rows_apply
from .joining import cat
from .pointwise import formula_arrays, sigmoid_array, where
from .shape import expand
from .special import _kernels

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_A = 0.044715
_SQRT_HALF = math.sqrt(0.5)
_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # where the one-buffer forms below run


def _zeros(shape, like):
    return zeros(tuple(shape), dtype=like.dtype, device=like.device)


# -- im2col / col2im ----------------------------------------------------------------------------------
def conv_out_size(size, kernel, stride, padding, dilation):
    """Output length of a convolution or pooling window sweep (floor mode)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


# Note [Small planes as products]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# im2col copies each kernel offset's window with one strided NumPy copy, and col2im adds it back the same way. Each
# such copy runs its inner loop along an output row: on the 4x4 planes of a small convnet that is four elements a
# loop, and the loop overhead is the whole cost (col2im of W8's second convolution: 9 copies of 2,048 rows of 4,
# about 300 µs). Both are linear maps of one (H, W) plane, the same for every sample and channel: a 0/1 matrix
# ``S`` (H*W, kh*kw*L) whose column (k, l) holds a 1 at the input position that kernel offset k reads for output
# position l (none where it reads padding). On planes of at most ``_SMALL_PLANE`` elements (an 8x8 plane's rows are
# long enough for the copies, and the product grows with the square of the plane), im2col is one product
# ``planes @ S`` and col2im ``columns @ S^T`` (there 68 and 91 µs against 126 and 350, measured side by side on a
# busy machine), each term an input times exactly 1 or 0. A 0 times an infinity or a NaN would spread NaN over the
# whole plane, so an input whose sum is not finite takes the copies. ``S`` is made once per geometry and dtype.
_SMALL_PLANE = 32
_WINDOWS = {}  # (h, w, kernel_size, dilation, padding, stride, dtype) -> S, read-only


def _window_matrix(h, w, kernel_size, dilation, padding, stride, dtype):
    """The 0/1 matrix ``S`` of Note [Small planes as products]."""
    key = (h, w, kernel_size, dilation, padding, stride, dtype)
    mat = _WINDOWS.get(key)
    if mat is None:
        (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
        oh, ow = conv_out_size(h, kh, sh, ph, dh), conv_out_size(w, kw, sw, pw, dw)
        mat = np.zeros((h * w, kh * kw * oh * ow), dtype=dtype)
        oy, ox = np.meshgrid(np.arange(oh), np.arange(ow), indexing="ij")
        for i in range(kh):
            for j in range(kw):
                y, x = oy * sh + i * dh - ph, ox * sw + j * dw - pw
                inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
                cols = (i * kw + j) * oh * ow + oy * ow + ox
                mat[(y * w + x)[inside], cols[inside]] = 1
        mat.flags.writeable = False
        if len(_WINDOWS) > 64:
            _WINDOWS.clear()
        _WINDOWS[key] = mat
    return mat


def _small_planes(xp, a, h, w):
    """Whether Note [Small planes as products] applies to ``a`` (planes of ``h`` x ``w``)."""
    return (xp is np and h * w <= _SMALL_PLANE and a.dtype in _FUSED_DTYPES and a.size
            and np.isfinite(np.add.reduce(a, axis=None)))


@functools.lru_cache(maxsize=256)
def _windows(kernel_size, dilation, stride, out_size):
    """For each kernel offset (in row-major order), the index of the (N, C, *spatial) positions it reads: one
    strided slice per spatial dim. Made once per geometry: building the slices costs as much as a small copy."""
    return tuple((slice(None), slice(None)) + tuple(slice(k * d, k * d + s * (o - 1) + 1, s)
                                                     for k, d, s, o in zip(ks, dilation, stride, out_size, strict=True))
                 for ks in itertools.product(*map(range, kernel_size)))


def _im2col_array(xp, input, kernel_size, dilation, padding, stride):
    """(N, C, *spatial) -> (N, C * prod(kernel_size), L): each output position's receptive field as a column."""
    if input.ndim == len(kernel_size) + 1:  # unbatched (C, *spatial): one node, as PyTorch's
        return _im2col_array(xp, input[None], kernel_size, dilation, padding, stride)[0]
    n, c, *spatial = input.shape
    out = tuple(conv_out_size(*a) for a in zip(spatial, kernel_size, stride, padding, dilation, strict=True))
    length, taps = math.prod(out), math.prod(kernel_size)
    if len(spatial) == 2 and length > 0 and _small_planes(xp, input, *spatial):  # See Note [Small planes as products]
        mat = _window_matrix(*spatial, tuple(kernel_size), tuple(dilation), tuple(padding), tuple(stride), input.dtype)
        return np.matmul(input.reshape(n * c, -1), mat).reshape(n, c * taps, length)
    if any(padding):
        x = xp.zeros((n, c) + tuple(s + 2 * p for s, p in zip(spatial, padding, strict=True)), dtype=input.dtype)
        x[(slice(None), slice(None)) + tuple(slice(p, p + s) for s, p in zip(spatial, padding, strict=True))] = input
    else:
        x = input
    cols = xp.empty((n, c, taps) + out, dtype=input.dtype)
    # one strided copy per kernel offset beats one copy through a transposed window view of twice the rank
    for k, window in enumerate(_windows(tuple(kernel_size), tuple(dilation), tuple(stride), out)):
        cols[:, :, k] = x[window]
    return cols.reshape(n, c * taps, length)


def _col2im_array(xp, input, output_size, kernel_size, dilation, padding, stride):
    """The adjoint of ``_im2col_array``: each column added back onto the (N, C, *output_size) positions it read."""
    if input.ndim == 2:  # unbatched (C * prod(kernel_size), L)
        return _col2im_array(xp, input[None], output_size, kernel_size, dilation, padding, stride)[0]
    n, ckk, length = input.shape
    out = tuple(conv_out_size(*a) for a in zip(output_size, kernel_size, stride, padding, dilation, strict=True))
    taps = math.prod(kernel_size)
    if ckk % taps or math.prod(out) != length:
        (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh, ow) = (output_size, kernel_size, dilation, padding,
                                                                     stride, out)  # only F.fold's 2-d reaches here
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), "
                           f"padding=({ph}, {pw}), stride=({sh}, {sw}), expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {oh} * {ow} = {oh * ow}, but got "
                           f"input.size(2)={length}.")
    c = ckk // taps
    # See Note [Small planes as products]
    if len(output_size) == 2 and length > 0 and _small_planes(xp, input, *output_size):
        mat = _window_matrix(*output_size, tuple(kernel_size), tuple(dilation), tuple(padding), tuple(stride),
                             input.dtype)
        return np.matmul(input.reshape(n * c, taps * length), mat.T).reshape((n, c) + tuple(output_size))
    cols = input.reshape((n, c, taps) + out)
    result = xp.zeros((n, c) + tuple(s + 2 * p for s, p in zip(output_size, padding, strict=True)), dtype=input.dtype)
    for k, window in enumerate(_windows(tuple(kernel_size), tuple(dilation), tuple(stride), out)):
        result[window] += cols[:, :, k]
    if any(padding):
        inner = tuple(slice(p, p + s) for s, p in zip(output_size, padding, strict=True))
        return xp.ascontiguousarray(result[(slice(None), slice(None)) + inner])
    return result


im2col = defop("im2col", _im2col_array, public=False,
               input=lambda grad, input_shape, kernel_size, dilation, padding, stride:
               col2im(grad, tuple(input_shape[-len(kernel_size):]), kernel_size, dilation, padding, stride))
col2im = defop("col2im", _col2im_array, public=False,
               input=lambda grad, kernel_size, dilation, padding, stride:
               im2col(grad, kernel_size, dilation, padding, stride))


# -- convolution (PyTorch: ConvolutionBackward0) --------------------------------------------------------
def _conv_cols(xp, columns, weight, bias, output_size, groups):
    n, _, length = columns.shape
    o = weight.shape[0]
    k = columns.shape[1] // groups
    if groups == 1:
        out = xp.matmul(weight.reshape(o, k), columns)
    else:
        out = xp.matmul(weight.reshape(groups, o // groups, k), columns.reshape(n, groups, k, length))
    out = out.reshape((n, o) + tuple(output_size))
    if bias is not None:
        out += bias.reshape((1, o) + (1,) * len(output_size))
    return out


def conv_columns_backward(grad, weight, groups):
    """Gradient of the input's columns: the weight, transposed, times the output gradient."""
    n, o = grad.shape[0], grad.shape[1]
    k = weight.numel() // o
    if formula_arrays(grad) is np and grad.dtype == weight.dtype:  # See Note [Formulas on arrays]
        g = grad._data.reshape(n, groups, o // groups, math.prod(grad.shape[2:]))
        cols = np.matmul(weight._data.reshape(groups, o // groups, k).swapaxes(1, 2), g)
        return Tensor._make(cols.reshape(n, groups * k, g.shape[3]), grad._device)
    g = grad.reshape(n, groups, o // groups, math.prod(grad.shape[2:]))
    cols = weight.reshape(groups, o // groups, k).mT.matmul(g)  # (N, G, k, L)
    return cols.reshape(n, groups * k, g.shape[3])


def conv_weight_backward(grad, columns, weight_shape, groups):
    """Gradient of the weight: the output gradient times the input's columns, summed over the batch."""
    n, o = grad.shape[0], grad.shape[1]
    length = math.prod(grad.shape[2:])
    if formula_arrays(grad) is np and grad.dtype == columns.dtype and grad._data.dtype in _FUSED_DTYPES and n:
        # See Note [Formulas on arrays]: the per-sample products summed by one vector-matrix product, or, where
        # those (O/G, k) products outweigh copies of the gradient and the columns, one product over samples and
        # positions together
        k = columns.shape[1] // groups
        g = grad._data.reshape(n, groups, o // groups, length)
        cols = columns._data.reshape(n, groups, k, length)
        if (o // groups) * k >= (o // groups + k) * length:
            g = np.ascontiguousarray(g.transpose(1, 2, 0, 3)).reshape(groups, o // groups, n * length)
            cols = np.ascontiguousarray(cols.transpose(1, 0, 3, 2)).reshape(groups, n * length, k)
            return Tensor._make(np.matmul(g, cols).reshape(weight_shape), grad._device)
        per = np.matmul(g, cols.swapaxes(-1, -2))
        total = np.matmul(np.ones(n, dtype=per.dtype), per.reshape(n, -1))
        return Tensor._make(total.reshape(weight_shape), grad._device)
    g = grad.reshape(n, groups, o // groups, length)
    cols = columns.reshape(n, groups, columns.shape[1] // groups, length)
    # Per-sample products summed over the batch: measured faster here than one large product
    # over transposed (copied) operands.
    return g.matmul(cols.mT).sum(0).reshape(weight_shape)


def _bias_backward(grad):
    g = grad._data
    if formula_arrays(grad) is np and g.dtype in _FUSED_DTYPES and g.flags.c_contiguous and g.size:
        # See Note [Formulas on arrays]: the sums over positions and then samples as two products with ones
        n, o = g.shape[0], g.shape[1]
        per = row_sum(g.reshape(n * o, -1)).reshape(n, o)
        return Tensor._make(np.matmul(np.ones(n, dtype=g.dtype), per), grad._device)
    return grad.sum((0,) + tuple(range(2, grad.dim())))


# The product of the weight with the input's columns (im2col); see Note [Convolution as im2col].
# The weight's and bias's formulas take ``bias_shape`` so that the node keeps it, as PyTorch's
# ConvolutionBackward0 keeps ``bias_sym_sizes_opt``; () is no bias.
# The columns are saved for the weight's gradient, so backward does not unfold the input again.
# ``output_size`` is the output's spatial shape: (L,) for conv1d, (H, W) for conv2d.
convolution = defop("convolution", _conv_cols, public=False, promote="binary",
                    columns=lambda grad, weight, groups: conv_columns_backward(grad, weight, groups),
                    weight=lambda grad, columns, weight_shape, groups, bias_shape:
                    conv_weight_backward(grad, columns, weight_shape, groups),
                    bias=lambda grad, bias_shape: _bias_backward(grad))


# -- transposed convolution (PyTorch: ConvolutionBackward0 too) ----------------------------------------
def _as_2d(shape):
    """A 1-d spatial shape (L,) as the 2-d (1, L) the column ops work on."""
    return (1,) + tuple(shape) if len(shape) == 1 else tuple(shape)


def _conv_transpose(xp, input, weight, bias, output_size, stride, padding, dilation, groups):
    """The adjoint of convolution: each input position scatters the weight into the output (col2im)."""
    n, c = input.shape[0], input.shape[1]
    length = math.prod(input.shape[2:])
    k = weight.size // c  # (C_out / groups) * kernel elements
    x = input.reshape(n, groups, c // groups, length)
    cols = xp.matmul(weight.reshape(groups, c // groups, k).swapaxes(1, 2), x).reshape(n, groups * k, length)
    out = _col2im_array(xp, cols, _as_2d(output_size), _as_2d(weight.shape[2:]), dilation, padding, stride)
    o = out.shape[1]
    out = out.reshape((n, o) + tuple(output_size))
    if bias is not None:
        out += bias.reshape((1, o) + (1,) * len(output_size))
    return out


def _transpose_grad_columns(grad, weight_shape, stride, padding, dilation):
    """The output gradient unfolded into the columns that the transposed convolution scattered."""
    g = grad.unsqueeze(2) if grad.dim() == 3 else grad
    return im2col(g, _as_2d(weight_shape[2:]), dilation, padding, stride)


# Padding, stride and dilation are the column ops' tuples: pairs for 2-d ((0, p) and (1, s) for 1-d), triples for 3-d.
convolution_transpose = defop(
    "convolution_transpose", _conv_transpose, public=False, promote="binary", node_name="Convolution",
    input=lambda grad, weight, input_shape, stride, padding, dilation, groups: convolution(
        _transpose_grad_columns(grad, weight.shape, stride, padding, dilation), weight, None,
        tuple(input_shape[2:]), groups),
    weight=lambda grad, input, weight_shape, stride, padding, dilation, groups, bias_shape: conv_weight_backward(
        input, _transpose_grad_columns(grad, weight_shape, stride, padding, dilation), weight_shape, groups),
    bias=lambda grad, bias_shape: _bias_backward(grad))


# -- pooling ------------------------------------------------------------------------------------------
def pool_out_size(size, kernel, stride, padding, dilation, ceil_mode):
    """Output length of a pooling sweep, with PyTorch's ceil_mode rule (the last window starts in bounds)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


@functools.lru_cache(maxsize=256)
def _window_offsets(kernel_size, dilation, spatial):
    """The flat offset in a (*spatial) plane of each kernel element from the window's corner (read-only), and
    the flat stride of each spatial dim."""
    place = tuple(math.prod(spatial[i + 1:]) for i in range(len(spatial)))
    offsets = np.asarray([sum(k * d * m for k, d, m in zip(ks, dilation, place, strict=True))
                          for ks in itertools.product(*map(range, kernel_size))], dtype=np.int64)
    offsets.flags.writeable = False
    return offsets, place


def _max_pool(xp, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Max pooling over the last ``len(kernel_size)`` dims (1, 2 or 3 of them after (N, C) or (C,)); the indices
    are flat in each unpadded plane or volume."""
    nd = len(kernel_size)
    if input.ndim == nd + 1:  # unbatched (C, *spatial): one node, as PyTorch's
        best, idx = _max_pool(xp, input[None], kernel_size, stride, padding, dilation, ceil_mode)
        return best[0], idx[0]
    n, c, *spatial = input.shape
    out = tuple(pool_out_size(*a, ceil_mode) for a in zip(spatial, kernel_size, stride, padding, dilation, strict=True))
    padded = tuple(max(size + 2 * p, (o - 1) * s + d * (k - 1) + 1)
                   for size, k, s, p, d, o in zip(spatial, kernel_size, stride, padding, dilation, out, strict=True))
    if padded != tuple(spatial):
        low = -xp.inf if input.dtype.kind == "f" else xp.iinfo(input.dtype).min
        x = xp.full((n, c) + padded, low, dtype=input.dtype)
        x[(slice(None), slice(None)) + tuple(slice(p, p + size) for size, p in zip(spatial, padding, strict=True))] = \
            input
    else:
        x = input
    views = [x[w] for w in _windows(tuple(kernel_size), tuple(dilation), tuple(stride), out)]
    # Flat index into the unpadded plane (volume): the window's corner plus the offset of its element k.
    offsets, place = _window_offsets(tuple(kernel_size), tuple(dilation), tuple(spatial))
    offsets = xp.asarray(offsets)
    if input.dtype.kind == "f" and bool(xp.isnan(input).any()):
        best, idx = _max_pool_with_nan(xp, views, offsets)
    else:
        best = views[0].copy()
        for v in views[1:]:
            xp.maximum(best, v, out=best)
        # Which window element holds the maximum, the first one on ties (as PyTorch): with ne_k
        # whether element k differs from the maximum, which = ne_0 (1 + ne_1 (1 + ... ne_{last-1})).
        # Arithmetic on small integers is several times faster than putmask or copyto here.
        last = len(views) - 1
        dtype = xp.uint8 if last < 256 else xp.int64
        if last == 0:
            which = xp.zeros(best.shape, dtype=dtype)
        else:
            which = (views[last - 1] != best).astype(dtype)
            for k in range(last - 2, -1, -1):
                which += 1
                which *= views[k] != best
        idx = xp.take(offsets, which)
    corner = 0  # each window's corner, flat in the unpadded plane: one small grid, added once
    for i in range(nd):
        corner = corner + ((xp.arange(out[i]) * stride[i] - padding[i]) * place[i]).reshape((-1,) + (1,) * (nd - 1 - i))
    idx += corner
    return best, idx


def _max_pool_with_nan(xp, views, offsets):
    """Max pooling where NaN propagates and the last NaN of a window gives the index, as PyTorch."""
    best = views[0].copy()
    for v in views[1:]:
        xp.maximum(best, v, out=best)
    idx = xp.zeros(best.shape, dtype=xp.int64)
    for k in range(len(views) - 1, -1, -1):  # backwards, so the first maximum wins
        xp.putmask(idx, views[k] == best, offsets[k])
    for k in range(len(views)):
        xp.putmask(idx, xp.isnan(views[k]), offsets[k])
    return best, idx


def _max_pool_backward_fwd(xp, grad_output, input, indices, overlapping=True, spatial=2):
    """The scatter of ``grad_output`` to the flat ``indices`` in each of ``input``'s last ``spatial`` dims."""
    input_shape = input.shape  # (N, C, *spatial) or (C, *spatial); only its shape is read
    planes, plane = math.prod(input_shape[:-spatial]), math.prod(input_shape[-spatial:])
    flat = (indices.reshape(planes, -1) + (xp.arange(planes) * plane).reshape(-1, 1)).reshape(-1)
    g = grad_output.reshape(-1)
    if overlapping:  # two windows may pick the same element: sum
        out = xp.bincount(flat, weights=g, minlength=planes * plane).astype(grad_output.dtype, copy=False)
    else:
        out = xp.zeros(planes * plane, dtype=grad_output.dtype)
        out[flat] = g
    return out.reshape(input_shape)


def _gather_at(grad, indices, spatial=2):
    """``grad``'s values at the flat ``indices`` of each plane (volume) of its last ``spatial`` dims."""
    planes = math.prod(indices.shape[:-spatial])
    return grad.reshape(planes, -1).gather(1, indices.reshape(planes, -1)).reshape(indices.shape)


def _zeros_like_grad(grad):
    return zeros_like(grad)


def _volumetric(name):
    """Note [Node names per call]: the 3-d call's PyTorch name (``spatial`` is 3) beside the op's 2-d one."""
    return {name: lambda spatial: spatial == 3}


# PyTorch's own pair: the gradient scatters to the argmax positions; its gradient gathers from them.
# As PyTorch's, the backward takes the pooled input (for its shape) and records an edge for it, whose
# gradient is zero (the backward is constant in it): the double-backward graph is PyTorch's.
# ``spatial`` is how many trailing dims are pooled (1-d pools as 2-d with a height of one).
max_pool2d_backward = defop("max_pool2d_backward", _max_pool_backward_fwd, public=False,
                            tensor_args=("grad_output", "input", "indices"), node_name="MaxPool2DWithIndicesBackward",
                            node_names=_volumetric("MaxPool3DWithIndicesBackwardBackward0"),
                            grad_output=lambda grad, indices, spatial: _gather_at(grad, indices, spatial),
                            input=_zeros_like_grad)
# PyTorch's adaptive_max_pool2d_backward: the same scatter, under its own name.
adaptive_max_pool2d_backward = defop(
    "adaptive_max_pool2d_backward", lambda xp, grad_output, input, indices, spatial=2: _max_pool_backward_fwd(
        xp, grad_output, input, indices, True, spatial), public=False, tensor_args=("grad_output", "input", "indices"),
    node_name="AdaptiveMaxPool2DBackward", node_names=_volumetric("AdaptiveMaxPool3DBackwardBackward0"),
    grad_output=lambda grad, indices, spatial: _gather_at(grad, indices, spatial), input=_zeros_like_grad)


def _max_pool_backward(grads, input, result, kernel_size, stride, dilation):
    overlapping = any(s < d * (k - 1) + 1 for k, s, d in zip(kernel_size, stride, dilation, strict=True))
    return max_pool2d_backward(grads[0], input, result[1], overlapping, len(kernel_size))


# One op for 1-d (as 2-d with a height of one, as PyTorch), 2-d and 3-d windows: ``len(kernel_size)`` dims.
max_pool2d_with_indices = defop("max_pool2d_with_indices", _max_pool, public=False, multi_output=True,
                                nondiff_outputs=(1,), node_name="MaxPool2DWithIndices",
                                node_names={"MaxPool3DWithIndicesBackward0": lambda kernel_size: len(kernel_size) == 3},
                                input=_max_pool_backward)


def _window_counts(out, stride, kernel, lo, hi):
    """How many positions of each window (in padded coordinates) fall within [lo, hi)."""
    start = np.arange(out) * stride
    return np.clip(np.minimum(start + kernel, hi) - np.maximum(start, lo), 0, None).astype(np.float64)


def _avg_pool_geometry(spatial, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """The output's spatial size, the zeros a ceil_mode window reads past the padding (per dim), and the
    divisor of each output position: the padded window, its part inside the input, or ``divisor_override``."""
    stride = stride or kernel_size  # PyTorch's empty stride (the default) is the kernel
    out = tuple(pool_out_size(size, k, s, p, 1, ceil_mode)
                for size, k, s, p in zip(spatial, kernel_size, stride, padding, strict=True))
    extra = tuple(max(0, (o - 1) * s + k - (size + 2 * p))
                  for o, s, k, size, p in zip(out, stride, kernel_size, spatial, padding, strict=True))
    if divisor_override:
        return out, extra, float(divisor_override)
    counts = [_window_counts(o, s, k, 0 if count_include_pad else p, size + (2 if count_include_pad else 1) * p)
              for o, s, k, size, p in zip(out, stride, kernel_size, spatial, padding, strict=True)]
    return out, extra, functools.reduce(np.multiply.outer, counts).reshape(-1)


def _avg_pool(xp, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Average pooling over the last ``len(kernel_size)`` dims: the sums of im2col's columns over each window,
    divided by PyTorch's count."""
    nd = len(kernel_size)
    lead, spatial = input.shape[:-nd], input.shape[-nd:]
    out, extra, div = _avg_pool_geometry(spatial, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override)
    x = input.reshape((-1, 1) + spatial)
    if any(extra):  # ceil_mode windows that run past the padding read zeros that the divisor leaves out
        x = xp.pad(x, ((0, 0), (0, 0)) + tuple((0, e) for e in extra))
    sums = _im2col_array(xp, x, kernel_size, (1,) * nd, padding, stride or kernel_size).sum(1)
    return (sums / xp.asarray(div, dtype=sums.dtype)).astype(input.dtype, copy=False).reshape(lead + out)


def _avg_pool_backward(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Each output's gradient, divided by its divisor, spread over its window (col2im), written with ops. The
    node saves the input (for its shape), as PyTorch's does."""
    input_shape = tuple(input.shape)
    nd = len(kernel_size)
    spatial = tuple(input_shape[-nd:])
    out, extra, div = _avg_pool_geometry(spatial, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override)
    g = grad.reshape(-1, 1, math.prod(out))
    g = g / (div if isinstance(div, float) else tensor(div, dtype=grad.dtype, device=grad.device))
    cols = expand(g, (g.shape[0], math.prod(kernel_size), g.shape[2]))
    full = col2im(cols, tuple(size + e for size, e in zip(spatial, extra, strict=True)), kernel_size, (1,) * nd,
                  padding, stride or kernel_size)
    if any(extra):
        full = constant_pad_nd(full, tuple(v for e in reversed(extra) for v in (0, -e)), 0)
    return full.reshape(tuple(input_shape))


# PyTorch's avg_pool2d and avg_pool3d (AvgPool3DBackward0 where the window has three dims); 1-d pools as 2-d.
avg_pool2d = defop("avg_pool2d", _avg_pool, public=False,
                   node_names={"AvgPool3DBackward0": lambda kernel_size: len(kernel_size) == 3},
                   input=_avg_pool_backward)


def adaptive_matrix(in_size, out_size):
    """The (out, in) matrix averaging each of PyTorch's adaptive windows of one dim."""
    m = np.zeros((out_size, in_size))
    for i, (start, end) in enumerate(adaptive_bounds(in_size, out_size)):
        m[i, start:end] = 1.0 / (end - start)
    return m


def _along_dims(x, mats, matmul):
    """``mats[i]`` applied along the ``i``-th of ``x``'s last ``len(mats)`` dims (each a product with the dim
    moved second to last and the ones after it flattened)."""
    first = len(x.shape) - len(mats)
    for i, m in enumerate(mats):
        d = first + i
        shape = tuple(x.shape)
        x = matmul(m, x.reshape(shape[:d] + (shape[d], -1))).reshape(shape[:d] + (m.shape[0],) + shape[d + 1:])
    return x


def _adaptive_avg_pool(xp, input, output_size):
    """Average pooling of the last ``len(output_size)`` dims over PyTorch's adaptive windows: a product per dim."""
    spatial = input.shape[-len(output_size):]
    mats = [xp.asarray(adaptive_matrix(size, o), dtype=input.dtype) for size, o in zip(spatial, output_size,
                                                                                        strict=True)]
    return xp.ascontiguousarray(_along_dims(input, mats, xp.matmul))


def _adaptive_avg_pool_backward(grad, input, output_size):
    """The transposed averaging matrices applied to the gradient; the node saves the input, as PyTorch's."""
    spatial = tuple(input.shape[-len(output_size):])
    mats = [tensor(adaptive_matrix(size, o).T.copy(), dtype=grad.dtype, device=grad.device)
            for size, o in zip(spatial, output_size, strict=True)]
    return _along_dims(grad, mats, lambda m, x: m.matmul(x))


# PyTorch's adaptive_avg_pool2d and adaptive_avg_pool3d (AdaptiveAvgPool3DBackward0 where three dims are pooled).
adaptive_avg_pool2d = defop("adaptive_avg_pool2d", _adaptive_avg_pool, public=False,
                            node_names={"AdaptiveAvgPool3DBackward0": lambda output_size: len(output_size) == 3},
                            input=_adaptive_avg_pool_backward)


def adaptive_bounds(in_size, out_size):
    """PyTorch's adaptive pooling windows of one dim: [floor(i * in / out), ceil((i + 1) * in / out))."""
    return [((i * in_size) // out_size, -((-(i + 1) * in_size) // out_size)) for i in range(out_size)]


def _adaptive_max_pool(xp, input, output_size):
    """Max over PyTorch's adaptive windows of the last ``len(output_size)`` dims; indices flat in each plane."""
    nd = len(output_size)
    spatial, lead = input.shape[-nd:], input.shape[:-nd]
    place = [math.prod(spatial[i + 1:]) for i in range(nd)]
    best = xp.empty(lead + tuple(output_size), dtype=input.dtype)
    idx = xp.empty(best.shape, dtype=xp.int64)
    bounds = [adaptive_bounds(size, o) for size, o in zip(spatial, output_size, strict=True)]
    for cell in np.ndindex(*output_size):
        box = [bounds[i][j] for i, j in enumerate(cell)]
        window = input[(Ellipsis,) + tuple(slice(lo, hi) for lo, hi in box)].reshape(lead + (-1,))
        if input.dtype.kind == "f":  # NaN propagates, the first one's index, as PyTorch
            k = xp.where(xp.isnan(window).any(-1), xp.argmax(xp.isnan(window), -1), xp.argmax(window, -1))
        else:
            k = xp.argmax(window, -1)
        best[(Ellipsis,) + cell] = xp.take_along_axis(window, k[..., None], -1)[..., 0]
        flat = xp.zeros(k.shape, dtype=xp.int64)
        for i, pos in enumerate(xp.unravel_index(k, tuple(hi - lo for lo, hi in box))):
            flat += (box[i][0] + pos) * place[i]
        idx[(Ellipsis,) + cell] = flat
    return best, idx


# Max over PyTorch's adaptive windows; the indices and the gradient are max_pool2d's (flat in the plane or volume).
adaptive_max_pool2d = defop(
    "adaptive_max_pool2d", _adaptive_max_pool, public=False, multi_output=True, nondiff_outputs=(1,),
    node_name="AdaptiveMaxPool2D",
    node_names={"AdaptiveMaxPool3DBackward0": lambda output_size: len(output_size) == 3},
    input=lambda grads, input, result, output_size: adaptive_max_pool2d_backward(grads[0], input, result[1],
                                                                                 len(output_size)))


def _max_unpool(xp, input, indices, output_size):
    """Each value of ``input`` put at its flat index of a zero plane (volume) of ``output_size``."""
    spatial = len(output_size)
    planes = math.prod(input.shape[:-spatial])
    plane = math.prod(output_size)
    flat = indices.reshape(planes, -1)
    if flat.size and (flat.min() < 0 or flat.max() >= plane):
        bad = int(flat.max() if flat.max() >= plane else flat.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, output_size))})")
    out = xp.zeros((planes, plane), dtype=input.dtype)
    xp.put_along_axis(out, flat, input.reshape(planes, -1), axis=1)
    return out.reshape(input.shape[:-spatial] + tuple(output_size))


# The inverse of max pooling: each value to its index in a zero plane (PyTorch: MaxUnpool2DBackward0, and
# MaxUnpool3DBackward0 for a volume).
max_unpool2d = defop("max_unpool2d", _max_unpool, public=False, tensor_args=("input", "indices"),
                     node_name="MaxUnpool2D",
                     node_names={"MaxUnpool3DBackward0": lambda output_size: len(output_size) == 3},
                     input=lambda grad, indices, output_size: _gather_at(grad, indices, len(output_size)))


def _pixel_shuffle(xp, input, upscale_factor):
    r = upscale_factor
    *lead, c, h, w = input.shape
    x = input.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    k = len(lead)
    x = x.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _pixel_unshuffle(xp, input, downscale_factor):
    r = downscale_factor
    *lead, c, h, w = input.shape
    x = input.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    k = len(lead)
    x = x.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


# Each other's adjoint, so each is the other's gradient.
pixel_shuffle = defop("pixel_shuffle", _pixel_shuffle, public=False,
                      input=lambda grad, upscale_factor: pixel_unshuffle(grad, upscale_factor))
pixel_unshuffle = defop("pixel_unshuffle", _pixel_unshuffle, public=False,
                        input=lambda grad, downscale_factor: pixel_shuffle(grad, downscale_factor))


# -- interpolation (PyTorch: UpsampleNearest1DBackward0, UpsampleBilinear2DBackward0...) --------------
def interpolation_matrix(in_size, out_size, mode, align_corners=False, scale=None):
    """The (out, in) matrix that resamples one dim as PyTorch's upsample kernels do.

    ``scale`` is the user's scale factor for the dim (None: in / out is used), ``mode`` one of
    ``"nearest"``, ``"nearest-exact"`` and ``"linear"``.
    """
    m = np.zeros((out_size, in_size))
    dst = np.arange(out_size)
    if mode in ("nearest", "nearest-exact"):
        # PyTorch computes the nearest source index in single precision.
        step = np.float32(in_size / out_size if scale is None else 1.0 / scale)
        pos = dst.astype(np.float32) + np.float32(0.5 if mode == "nearest-exact" else 0.0)
        src = np.minimum(np.floor(pos * step).astype(np.int64), in_size - 1)
        if mode == "nearest" and out_size == in_size:
            src = dst
        m[dst, src] = 1.0
        return m
    if align_corners:
        step = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        src = dst * step
    else:
        step = in_size / out_size if scale is None else 1.0 / scale
        src = np.maximum((dst + 0.5) * step - 0.5, 0.0)
    i0 = np.minimum(src.astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    frac = src - i0
    np.add.at(m, (dst, i0), 1.0 - frac)
    np.add.at(m, (dst, i1), frac)
    return m


def _resample(xp, input, output_size, mode, align_corners, scales):
    x = input
    k = len(output_size)
    for j in range(k):
        d = input.ndim - k + j
        m = xp.asarray(interpolation_matrix(input.shape[d], output_size[j], mode, align_corners,
                                            None if scales is None else scales[j]), dtype=input.dtype)
        x = xp.moveaxis(xp.tensordot(m, x, axes=(1, d)), 0, d)
    return xp.ascontiguousarray(x)


def _resample_backward(grad, input_shape, output_size, mode, align_corners, scales):
    """The transposed resampling: the output gradient multiplied back through each dim's matrix."""
    g = grad
    k = len(output_size)
    for j in range(k):
        d = len(input_shape) - k + j
        m = tensor(interpolation_matrix(input_shape[d], output_size[j], mode, align_corners,
                                        None if scales is None else scales[j]), dtype=grad.dtype, device=grad.device)
        g = g.movedim(d, -1).matmul(m).movedim(-1, d)
    return g


upsample_nearest = defop(
    "upsample_nearest", lambda xp, input, output_size, scales=None, exact=False:
    _resample(xp, input, output_size, "nearest-exact" if exact else "nearest", False, scales), public=False,
    node_names={"UpsampleNearest1DBackward0": lambda output_size, exact: len(output_size) == 1 and not exact,
                "UpsampleNearest2DBackward0": lambda output_size, exact: len(output_size) == 2 and not exact,
                "UpsampleNearestExact1DBackward0": lambda output_size: len(output_size) == 1,
                "UpsampleNearestExact2DBackward0": lambda output_size: len(output_size) == 2},
    input=lambda grad, input_shape, output_size, scales, exact: _resample_backward(
        grad, input_shape, output_size, "nearest-exact" if exact else "nearest", False, scales))
upsample_linear = defop(
    "upsample_linear", lambda xp, input, output_size, align_corners=False, scales=None:
    _resample(xp, input, output_size, "linear", align_corners, scales), public=False,
    node_names={"UpsampleLinear1DBackward0": lambda output_size: len(output_size) == 1,
                "UpsampleBilinear2DBackward0": lambda output_size: len(output_size) == 2},
    input=lambda grad, input_shape, output_size, align_corners, scales: _resample_backward(
        grad, input_shape, output_size, "linear", align_corners, scales))


# -- padding (PyTorch: ConstantPadNdBackward0) -----------------------------------------------------------
def _constant_pad_nd(xp, input, pad, value=0):
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}" if len(pad) % 2 else
                           f"Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)} while the input has {input.ndim} dimensions.")
    crop = [slice(None)] * input.ndim
    widths = [(0, 0)] * input.ndim
    for k in range(len(pad) // 2):
        d = input.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        size = input.shape[d]
        if size + lo + hi < 0:
            raise RuntimeError(f"The input size {size}, plus negative padding {lo} and {hi} resulted in a negative "
                               f"output size, which is invalid. Check dimension {d} of your input.")
        crop[d] = slice(max(-lo, 0), size - max(-hi, 0))
        widths[d] = (max(lo, 0), max(hi, 0))
    x = input[tuple(crop)]
    if any(a or b for a, b in widths):
        return xp.pad(x, widths, mode="constant", constant_values=value)
    return x.copy()


constant_pad_nd = defop("constant_pad_nd", _constant_pad_nd, public=False,
                        input=lambda grad, pad: constant_pad_nd(grad, tuple(-p for p in pad)))


def pad_positions(size, lo, hi, mode):
    """For each output position of a dim padded by (lo, hi), the input position it copies."""
    pos = np.arange(-lo, size + hi)
    if mode == "replicate":
        return np.clip(pos, 0, size - 1)
    if mode == "circular":
        return pos % size
    period = 2 * (size - 1) if size > 1 else 1
    pos = np.abs(pos) % period
    return np.where(pos >= size, period - pos, pos)


def _pad_gather(xp, input, pad, mode):
    x = input
    for k in range(len(pad) // 2):
        d = input.ndim - 1 - k
        x = xp.take(x, xp.asarray(pad_positions(input.shape[d], pad[2 * k], pad[2 * k + 1], mode)), axis=d)
    return x


def _pad_scatter(grad, input_shape, pad, mode):
    """The adjoint of the gather: each output gradient added into the input position it copied."""
    g = grad
    for k in range(len(pad) // 2):
        d = len(input_shape) - 1 - k
        pos = tensor(pad_positions(input_shape[d], pad[2 * k], pad[2 * k + 1], mode), device=grad.device)
        shape = list(g.shape)
        shape[d] = input_shape[d]
        g = _zeros(shape, g).index_add(d, pos, g)
    return g


def _pad_names(stem):
    return {f"{stem}{n}DBackward0": (lambda n: lambda pad: len(pad) == 2 * n)(n) for n in (1, 2, 3)}


# Reflection and replication padding of the last 1-3 dims (PyTorch: ReflectionPad1DBackward0...):
# a gather of positions, whose gradient scatters back (index_add).
reflection_pad = defop("reflection_pad", lambda xp, input, pad: _pad_gather(xp, input, pad, "reflect"),
                       public=False, node_names=_pad_names("ReflectionPad"),
                       input=lambda grad, input_shape, pad: _pad_scatter(grad, input_shape, pad, "reflect"))
replication_pad = defop("replication_pad", lambda xp, input, pad: _pad_gather(xp, input, pad, "replicate"),
                        public=False, node_names=_pad_names("ReplicationPad"),
                        input=lambda grad, input_shape, pad: _pad_scatter(grad, input_shape, pad, "replicate"))


# -- normalization (PyTorch: NativeLayerNormBackward0, NativeBatchNormBackward0) ---------------------
def _normalize_array(xp, input, axes, eps):
    mean = input.mean(axis=axes, keepdims=True)
    centered = input - mean
    var = (centered * centered).mean(axis=axes, keepdims=True)
    return centered / xp.sqrt(var + eps), mean, var


def norm_input_backward(grad, input, weight, dims, eps, weight_shape):
    """Gradient of ``(x - mean) / sqrt(var + eps) * weight`` over ``dims`` (statistics of the batch)."""
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = centered * rstd
    g = grad if weight is None else grad * weight.reshape(weight_shape)
    return rstd * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))


def _xhat(input, dims, eps):
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    return centered * ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()


def _ln_dims(input_shape, normalized_shape):
    return tuple(range(len(input_shape) - len(normalized_shape), len(input_shape)))


def _layer_norm(xp, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """PyTorch's ``native_layer_norm``: the output, and the mean and rstd over the normalized dims (kept as
    size-1 dims), which the node saves for its formulas."""
    dims = _ln_dims(input.shape, normalized_shape)
    if input.dtype not in _FUSED_DTYPES:  # half precision: NumPy's mean accumulates in float32
        out, mean, var = _normalize_array(xp, input, dims, eps)
        if weight is not None:
            out = out * weight
        rstd = (1 / xp.sqrt(var + eps)).astype(mean.dtype, copy=False)
        return (out if bias is None else out + bias), mean, rstd
    n = math.prod(input.shape[d] for d in dims)
    if xp is np and n and input.flags.c_contiguous and fast_rows(input.reshape(-1, n)):
        return layer_norm_rows(input, dims, n, weight, bias, eps)  # See Note [Row reductions as products]
    inv_n = input.dtype.type(1.0 / n)
    mean = input.sum(axis=dims, keepdims=True)
    mean *= inv_n
    out = input - mean
    sq = out * out
    rstd = sq.sum(axis=dims, keepdims=True)
    del sq
    rstd *= inv_n
    rstd += rstd.dtype.type(eps)
    xp.reciprocal(xp.sqrt(rstd, out=rstd), out=rstd)
    out *= rstd  # every step below in that one buffer
    if weight is not None:
        out = xp.multiply(out, weight, out=out) if weight.dtype == out.dtype else out * weight
    if bias is not None:
        out = xp.add(out, bias, out=out) if bias.dtype == out.dtype else out + bias
    return out, mean, rstd


def _ln_rows(grad, input, result):
    """``(g, x, mean, rstd)`` as (rows, n) and (rows, 1) arrays where the formulas may use the kernels of Note [Row
    reductions as products] (every array C-contiguous), else None."""
    x, g = input._data, grad._data
    mean, rstd = result[1]._data, result[2]._data
    n = x.size // mean.size if mean.size else 0
    if not n or not g.flags.c_contiguous or not x.flags.c_contiguous or not fast_rows(x.reshape(-1, n)):
        return None
    return g.reshape(-1, n), x.reshape(-1, n), mean.reshape(-1, 1), rstd.reshape(-1, 1)


def _ln_xhat_array(input, result):
    """``(x - mean) * rstd`` in a fresh buffer, from the forward's saved mean and rstd."""
    xhat = input._data - result[1]._data
    xhat *= result[2]._data
    return xhat


def _ln_on_arrays(grads, input, weight, result):
    """The array module where the formulas may compute on arrays with the saved statistics (Note [Formulas on
    arrays]), else None."""
    grad = grads[0]
    xp = formula_arrays(grad)
    if (xp is None or input._data.dtype not in _FUSED_DTYPES or input.dtype != grad.dtype
            or (weight is not None and weight.dtype != grad.dtype) or result[1].dtype != grad.dtype):
        return None
    return xp


def _layer_norm_input(grads, input, normalized_shape, weight, eps, result):
    dims = _ln_dims(input.shape, normalized_shape)
    grad = grads[0]
    if _ln_on_arrays(grads, input, weight, result) is None:
        return norm_input_backward(grad, input, weight, dims, eps, tuple(normalized_shape))
    # See Note [Formulas on arrays]: rstd * (g - mean(g) - xhat * mean(g * xhat)), g = grad * weight
    rows = _ln_rows(grad, input, result)
    if rows is not None:
        g, x, mean, rstd = rows
        xc = np.empty_like(x)
        rows_apply(np.subtract, x, mean, xc)
        w = None if weight is None else weight._data.reshape(-1)
        return Tensor._make(layer_norm_input_rows(g, xc, rstd, w, g * xc).reshape(input.shape), grad._device)
    xhat = _ln_xhat_array(input, result)
    g = grad._data * weight._data if weight is not None else grad._data.copy()
    inv_n = g.dtype.type(1.0 / math.prod(g.shape[d] for d in dims))
    proj = (g * xhat).sum(axis=dims, keepdims=True)
    proj *= inv_n
    g -= g.sum(axis=dims, keepdims=True) * inv_n
    xhat *= proj
    g -= xhat
    g *= result[2]._data
    return Tensor._make(g, grad._device)


def _layer_norm_weight(grads, input, normalized_shape, eps, result):
    dims = _ln_dims(input.shape, normalized_shape)
    grad = grads[0]
    if _ln_on_arrays(grads, input, None, result) is None:
        return _sum_lead(grad * _xhat(input, dims, eps), input.shape, normalized_shape)
    rows = _ln_rows(grad, input, result)
    if rows is not None:  # sum over rows of grad * (x - mean) * rstd: rstd^T @ (grad * (x - mean))
        g, x, mean, rstd = rows
        xc = np.empty_like(x)
        rows_apply(np.subtract, x, mean, xc)
        xc *= g
        return Tensor._make(np.matmul(rstd.reshape(-1), xc).reshape(tuple(normalized_shape)), grad._device)
    xhat = _ln_xhat_array(input, result)  # See Note [Formulas on arrays]
    xhat *= grad._data
    lead = tuple(range(input.dim() - len(normalized_shape)))
    return Tensor._make(xhat.sum(axis=lead) if lead else xhat, grad._device)


def _sum_lead(t, input_shape, normalized_shape):
    """``t`` summed over the dims in front of ``normalized_shape`` (none: ``t`` itself, since
    ``sum(dim=())`` reduces every dim, as in PyTorch)."""
    lead = tuple(range(len(input_shape) - len(normalized_shape)))
    return t.sum(lead) if lead else t


def _layer_norm_bias(grad, input_shape, normalized_shape):
    n = math.prod(normalized_shape)
    g = grad._data
    if formula_arrays(grad) is np and n and g.flags.c_contiguous and fast_rows(g.reshape(-1, n)):
        # See Note [Row reductions as products]: one vector-matrix product
        return Tensor._make(lead_sum(g.reshape(-1, n)).reshape(tuple(normalized_shape)), grad._device)
    return _sum_lead(grad, input_shape, normalized_shape)


# PyTorch's native_layer_norm: (output, mean, rstd), one node saving the input, the weight and the two statistics
# (result1, result2), whose formulas on arrays start from them instead of recomputing them.
layer_norm = defop(
    "layer_norm", _layer_norm, public=False, node_name="NativeLayerNorm", promote="binary", multi_output=True,
    nondiff_outputs=(1, 2), input=_layer_norm_input, weight=_layer_norm_weight,
    bias=lambda grads, input_shape, normalized_shape: _layer_norm_bias(grads[0], input_shape, normalized_shape))


# Note [layer_norm's gradients from one centred input]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The input's and the weight's formulas of NativeLayerNormBackward0 both need the centred input ``xc = x - mean``
# and the product of the gradient with it: computed apart, each pays for them (a per-row subtraction and a product,
# about 8 µs of 40 on W15's (8, 32, 64)), and each pays the glue of a formula call. Where the formulas compute on
# arrays (Note [Formulas on arrays]) and the rows suit the kernels of Note [Row reductions as products], the node's
# apply computes ``u = g * xc`` once: the weight's gradient is ``rstd^T u``, and the input's takes its row sums of
# ``g w xc`` as ``u w`` (a matrix-vector product). Everything else goes through the formulas as declared. The apply
# unpacks what the formulas of the needed edges would (Note [One unpack per saved tensor and apply]).
def _native_layer_norm_apply(self, grads):
    grad, saved, edges = grads[0], self._saved, self.next_edges
    if grad is None or not saved or formula_arrays(grad) is not np or (edges[0] is None and edges[1] is None):
        return OpNode.apply(self, grads)
    at = self.op.save_index
    input, result = _unpacked(saved[at["input"]]), _unpacked(saved[at["result"]], self)
    weight = _unpacked(saved[at["weight"]]) if edges[0] is not None else None
    normalized_shape, eps = saved[at["normalized_shape"]], saved[at["eps"]]
    rows = None
    if _ln_on_arrays(grads, input, weight, result) is not None:
        rows = _ln_rows(grad, input, result)
    if rows is None:
        return [None if edges[0] is None else _layer_norm_input(grads, input, normalized_shape, weight, eps, result),
                None if edges[1] is None else _layer_norm_weight(grads, input, normalized_shape, eps, result),
                None if edges[2] is None else _layer_norm_bias(grad, saved[at["input_shape"]], normalized_shape)]
    g, x, mean, rstd = rows
    xc = np.empty_like(x)
    rows_apply(np.subtract, x, mean, xc)
    u = g * xc
    out = [None, None, None]
    if edges[1] is not None:
        out[1] = Tensor._make(np.matmul(rstd.reshape(-1), u).reshape(tuple(normalized_shape)), grad._device)
    if edges[2] is not None:
        out[2] = Tensor._make(lead_sum(g).reshape(tuple(normalized_shape)), grad._device)
    if edges[0] is not None:
        w = None if weight is None else weight._data.reshape(-1)
        out[0] = Tensor._make(layer_norm_input_rows(g, xc, rstd, w, u).reshape(input.shape), grad._device)
    return out


def _unpacked(value, node=None):
    """A saved value as a formula receives it (``_resolve`` in _node.py): tensors unpacked, the result's too."""
    if type(value) is SavedTensor:
        return value.unpack(node)
    if type(value) is tuple and node is not None:
        return tuple(v.unpack(node) if type(v) is SavedTensor else v for v in value)
    return value


REGISTRY["layer_norm"].node_cls.apply = _native_layer_norm_apply


def _bn_dims(ndim):
    return (0,) + tuple(range(2, ndim))


def _bn_shape(ndim, c):
    return (1, c) + (1,) * (ndim - 2)


def _batch_norm_train(xp, input, weight=None, bias=None, eps=1e-5):
    dims = _bn_dims(input.ndim)
    out, mean, var = _normalize_array(xp, input, dims, eps)
    shape = _bn_shape(input.ndim, input.shape[1])
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean.reshape(-1), var.reshape(-1)


# Training-mode batch norm; returns (output, batch mean, biased batch variance) for the running stats.
native_batch_norm = defop(
    "native_batch_norm", _batch_norm_train, public=False, multi_output=True, nondiff_outputs=(1, 2),
    promote="binary",
    input=lambda grads, input, weight, eps: norm_input_backward(
        grads[0], input, weight, _bn_dims(input.dim()), eps, _bn_shape(input.dim(), input.shape[1])),
    weight=lambda grads, input, eps: (grads[0] * _xhat(input, _bn_dims(input.dim()), eps)).sum(
        _bn_dims(input.dim())),
    bias=lambda grads, input_shape: grads[0].sum(_bn_dims(len(input_shape))))


def _group_norm(xp, input, num_groups, weight=None, bias=None, eps=1e-5):
    n = input.shape[0]
    out, _, _ = _normalize_array(xp, input.reshape(n, num_groups, -1), (2,), eps)
    out = out.reshape(input.shape)
    shape = _bn_shape(input.ndim, input.shape[1])
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _grouped(t, num_groups):
    return t.reshape(t.shape[0], num_groups, -1)


def _group_norm_input(grad, input, num_groups, weight, eps):
    g = grad if weight is None else grad * weight.reshape(_bn_shape(input.dim(), input.shape[1]))
    return norm_input_backward(_grouped(g, num_groups), _grouped(input, num_groups), None, (2,), eps,
                               None).reshape(input.shape)


# Normalization over groups of channels, with a per-channel affine (PyTorch: NativeGroupNormBackward0).
group_norm = defop(
    "group_norm", _group_norm, public=False, node_name="NativeGroupNorm", promote="binary",
    input=_group_norm_input,
    weight=lambda grad, input, num_groups, eps: (grad * _xhat(_grouped(input, num_groups), (2,), eps).reshape(
        input.shape)).sum(_bn_dims(input.dim())),
    bias=lambda grad: grad.sum(_bn_dims(grad.dim())))


# -- embedding (PyTorch: EmbeddingBackward0) ----------------------------------------------------------
def _embedding(xp, weight, indices, padding_idx=None, scale_grad_by_freq=False):
    if indices.dtype != np.int64 and indices.dtype != np.int32:
        got = "CPUBoolType" if indices.dtype == np.bool_ else tensor_type_name(indices.dtype)  # PyTorch's words
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {got} instead (while checking arguments for embedding)")
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return xp.take(weight, indices, axis=0)


def embedding_backward(grad, weight_shape, indices, padding_idx, scale_grad_by_freq):
    """Gradient of the embedding table: each looked-up row's gradient added into its row."""
    xp = formula_arrays(grad)
    if xp is np and not scale_grad_by_freq and len(weight_shape) == 2:
        return Tensor._make(_embedding_backward_array(grad._data, weight_shape, indices._data, padding_idx),
                            grad._device)
    flat = indices.reshape(-1)
    g = grad.reshape(-1, weight_shape[1])
    if padding_idx is not None:
        g = g.masked_fill((flat == padding_idx).unsqueeze(1), 0.)
    if scale_grad_by_freq:
        idx = flat._host()
        counts = np.bincount(idx, minlength=weight_shape[0])[idx].astype(np.float64)
        g = g / tensor(counts, dtype=g.dtype, device=g.device).unsqueeze(1)
    return _zeros(weight_shape, grad).index_add(0, flat, g)


# Note [A small embedding's gradient as a product]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The gradient of an embedding table sums the gradient's rows by index. ``np.add.reduceat`` over the rows sorted by
# index costs about 0.5 µs per (row, column) segment pair beside the sort and the gather. For a small table the sum is
# instead one product ``one_hot(indices)^T @ grad`` ((rows, n) times (n, dim)), one BLAS call whose terms are the
# gradient's rows each times exactly 1 and zeros: W15's token table, (65, 64) from 256 rows, 50 -> 28 µs, its (32, 64)
# position table 35 -> 13 µs, W14's (65, 32) from 512 rows 41 -> 31 µs (measured side by side). It is taken where the
# table has no more rows than the gradient and the product is at most _ONE_HOT_UP_TO multiply-adds (past that the
# product's cost, rows x n x dim, outgrows the segments' cost: (65, 64) from 2,048 rows took 215 against 164 µs). A
# zero times an infinity or a NaN is NaN, which would spread a non-finite gradient row into every row of the table: a
# result that is not all finite is computed again by reduceat.
_ONE_HOT_UP_TO = 2_500_000


def _embedding_backward_array(grad, weight_shape, indices, padding_idx):
    """``embedding_backward`` on NumPy arrays: the rows of each index summed in one ``add.reduceat`` over the
    gradient's rows sorted by index (``np.add.at`` adds row by row, 3 to 5 times slower), or for a small table by one
    product (Note [A small embedding's gradient as a product]). See Note [Formulas on arrays]."""
    flat = indices.reshape(-1)
    g = grad.reshape(-1, weight_shape[1])
    n = flat.size
    if n and g.dtype in _FUSED_DTYPES and weight_shape[0] <= n and weight_shape[0] * g.size <= _ONE_HOT_UP_TO:
        hot = np.zeros((weight_shape[0], n), dtype=g.dtype)
        hot[flat, np.arange(n)] = 1
        out = np.matmul(hot, g)
        if np.isfinite(out).all():
            if padding_idx is not None:
                out[padding_idx] = 0
            return out
    out = np.zeros(weight_shape, dtype=grad.dtype)
    if n:
        order = np.argsort(flat, kind="stable")
        rows = flat[order]
        starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
        out[rows[starts]] = np.add.reduceat(g[order], starts, axis=0)
        if padding_idx is not None:
            out[padding_idx] = 0
    return out


embedding = defop("embedding", _embedding, public=False, tensor_args=("weight", "indices"),
                  weight=embedding_backward)


def bag_ids(offsets, count, include_last_offset):
    """The bag of each of ``count`` flat indices (-1 before the first offset), and the number of bags.

    With ``include_last_offset`` the last offset only ends the bag count: the last bag runs to the
    end of the indices, as on PyTorch's CPU.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    bags = len(offsets) - 1 if include_last_offset else len(offsets)
    ids = np.searchsorted(offsets[:bags], np.arange(count), side="right") - 1
    return ids, bags


def _embedding_bag(xp, weight, indices, offsets, mode, per_sample_weights=None, padding_idx=None,
                   include_last_offset=False):
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    ids, bags = bag_ids(offsets, indices.size, include_last_offset)
    keep = ids >= 0
    if padding_idx is not None:
        keep &= indices != padding_idx
    ids, idx = xp.asarray(ids[keep]), indices[keep]
    rows = weight[idx]
    d = weight.shape[1]
    which = xp.full((bags, d), -1, dtype=xp.int64)
    if mode == "max":
        out = xp.full((bags, d), -xp.inf, dtype=weight.dtype)
        xp.maximum.at(out, ids, rows)
        hit = rows == out[ids]  # the first row of each bag holding its maximum, per feature
        for k in range(len(idx) - 1, -1, -1):
            which[ids[k]] = xp.where(hit[k], idx[k], which[ids[k]])
        out[which < 0] = 0
        return out, which
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[keep][:, None]
    out = xp.zeros((bags, d), dtype=xp.result_type(weight, rows))
    xp.add.at(out, ids, rows)
    if mode == "mean":
        counts = xp.bincount(ids, minlength=bags)
        out /= xp.maximum(counts, 1)[:, None]
    return out, which


def _bag_coefficients(indices, offsets, mode, padding_idx, include_last_offset):
    """For each flat index: its bag (0 where none), and its share of the bag (0 where none, 1/count for a mean)."""
    flat = indices._host().reshape(-1)
    ids, bags = bag_ids(offsets._host(), flat.size, include_last_offset)
    keep = ids >= 0
    if padding_idx is not None:
        keep &= flat != padding_idx
    coef = keep.astype(np.float64)
    if mode == "mean":
        counts = np.bincount(ids[keep], minlength=bags)
        coef = coef / np.maximum(counts, 1)[np.maximum(ids, 0)]
    return np.maximum(ids, 0), coef


def _embedding_bag_weight(grads, weight_shape, indices, offsets, mode, per_sample_weights, padding_idx,
                          include_last_offset, result):
    grad = grads[0]
    if mode == "max":
        which = result[1]
        d = weight_shape[1]
        g = where(which >= 0, grad, 0.).reshape(-1)
        pos = (which.clamp(min=0) * d + tensor(np.arange(d), device=grad.device)).reshape(-1)
        return _zeros((weight_shape[0] * d,), grad).index_add(0, pos, g).reshape(weight_shape)
    ids, coef = _bag_coefficients(indices, offsets, mode, padding_idx, include_last_offset)
    rows = grad.index_select(0, tensor(ids, device=grad.device)) * tensor(coef, dtype=grad.dtype,
                                                                           device=grad.device).unsqueeze(1)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    return _zeros(weight_shape, grad).index_add(0, indices, rows)


def _embedding_bag_psw(grads, weight, indices, offsets, mode, padding_idx, include_last_offset):
    ids, coef = _bag_coefficients(indices, offsets, mode, padding_idx, include_last_offset)
    rows = grads[0].index_select(0, tensor(ids, device=weight.device))
    return (rows * weight.index_select(0, indices)).sum(1) * tensor(coef, dtype=rows.dtype, device=rows.device)


# Sums, means or maxima of bags of embedding rows (PyTorch: EmbeddingBagBackward0); the second output is,
# for ``mode="max"``, the row each maximum came from (-1 for an empty bag).
embedding_bag = defop(
    "embedding_bag", _embedding_bag, public=False, multi_output=True, nondiff_outputs=(1,),
    tensor_args=("weight", "indices", "offsets", "per_sample_weights"),
    weight=_embedding_bag_weight, per_sample_weights=_embedding_bag_psw)


def _one_hot(xp, input, num_classes=-1):
    if input.dtype != xp.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if input.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(input.max()) + 1
    if input.size and (input.min() < 0 or input.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if input.min() >= 0
                           else "Class values must be non-negative.")
    return (input[..., None] == xp.arange(num_classes)).astype(xp.int64)


one_hot = defop("one_hot", _one_hot, public=False)  # integer result: not differentiable


# -- activations --------------------------------------------------------------------------------------
def _log1p_exp(xp, z):
    return xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))  # log(1 + e^z) without overflow


def _softplus(xp, input, beta=1.0, threshold=20.0):
    z = input * beta
    return xp.where(z > threshold, input, _log1p_exp(xp, z) / beta).astype(input.dtype, copy=False)


# PyTorch: SoftplusBackward0; the composite log1p(exp(x)) overflows.
softplus = defop("softplus", _softplus, public=False,
                 input=lambda grad, input, beta, threshold:
                 where(input * beta > threshold, grad, grad * (input * beta).sigmoid()))


def _erf_array(xp, x):
    """erf of an array, in its own dtype: the special-function kernels of ``xp`` (SciPy's on NumPy)."""
    return _kernels(xp).erf(x)


# Note [float32 GELU]
# ~~~~~~~~~~~~~~~~~~~
# SciPy's erf costs about 100 times NumPy's exp per element in float32 (it computes in double, one element at a
# time). PyTorch's own CPU gelu in float32 evaluates erf by Abramowitz and Stegun's 7.1.26, ``erfc(z) = t (a1 + a2 t
# + ... + a5 t^4) exp(-z^2)`` with ``t = 1 / (1 + p z)``, absolute error under 1.5e-7 (about float32's rounding of
# numbers near 1). retrograd's float32 exact gelu and gelu_backward use the same approximation on whole arrays, on
# ``|x|`` only: with ``Q = Phi(-|x|) = erfc(|x| / sqrt 2) / 2`` (the coefficients halved),
#
#     gelu(x) = x Phi(x) = max(x, 0) - |x| Q = max(x - |x| Q, -|x| Q)
#     gelu'(x) = Phi(x) + x phi(x) = 1/2 + sign(x) (1/2 - Q + |x| phi(x))
#
# and the density ``phi(x) = exp(-x^2 / 2) / sqrt(2 pi)`` the approximation's own exponential. The sign is applied by
# flipping the sign bit of the float32 bit pattern (an integer xor, one fast pass; NumPy's ``copysign`` costs four
# passes and a masked write forty). The polynomial is evaluated in ``s = lam t`` with ``lam`` the fifth root of its
# leading coefficient, so that Horner's scheme starts with an addition (no pass for the leading product), and ``s``
# is computed as ``(lam / p) / (1 / p + |x|)``, three passes where ``t``'s form takes four. Where NumPy's float32
# ``exp2`` is a vector loop (its AVX512_SKX dispatch) the exponential is ``exp2(x^2 * (-1 / (2 ln 2)))``: half the
# time of NumPy's ``exp`` there (15 against 31 µs on (8, 32, 256)); without AVX512 ``exp2`` is libm's, one element at a
# time, twice as slow as ``exp`` (235 against 110 µs with NumPy's AVX512 dispatch turned off), and ``exp`` is kept. The
# scaled exponent's one more rounding moves ``e`` by about ``x^2 / 2`` float32 ulps relative, under 1e-8 of ``Q`` or
# ``phi`` absolute over all ``x``. The forward's last form is one pass fewer than ``x / 2 + |x| (1/2 - Q)``, has no
# cancellation for negative ``x``, and gives PyTorch's NaN at +inf and its signed zeros; ``-|x|`` is the sign bit set
# (one pass), and ``np.maximum`` of two arrays is one fast pass (against a scalar, four times slower). About 19 array
# passes of NumPy's fast loops, a twentieth of SciPy's erf; the results are within 3.5e-7 of the exact function's,
# 1.5e-6 of PyTorch's. float64 keeps SciPy's erf, as PyTorch keeps an accurate erf in double.
_AS_P = 0.3275911 * _SQRT_HALF  # t = 1 / (1 + p |x| / sqrt 2)
_AS_Q = tuple(0.5 * a for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))  # a5 .. a1, / 2
_AS_LAM = _AS_Q[0] ** 0.2  # Q = sum of _AS_Q[5 - k] t^k = sum of _AS_S[5 - k] s^k with s = lam t, _AS_S[0] = 1
_AS_S = tuple(c / _AS_LAM ** (5 - k) for k, c in enumerate(_AS_Q))
_SIGN_BIT = np.uint32(0x80000000)
_HALF_LOG2E = -0.5 / math.log(2.0)  # exp(-x^2 / 2) = exp2(x^2 * _HALF_LOG2E)


def _vector_exp2() -> bool:
    """Whether NumPy's float32 ``exp2`` runs a vector loop on this CPU (its AVX512_SKX dispatch). See Note [float32
    GELU]."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # NumPy's private name moved: keep exp, which is vectorised everywhere
        return False
    return bool(__cpu_features__.get("AVX512_SKX"))


_VECTOR_EXP2 = _vector_exp2()


def _gelu_parts_f32(x):
    """``(t, q, e)`` of a float32 array, each in a fresh buffer: ``q e = Q = Phi(-|x|)``, ``e = exp(-x^2 / 2)``, and
    ``t`` a buffer for the caller (three buffers, not four: the callers take ``|x|`` again). See Note [float32
    GELU]."""
    f = np.float32
    e = x * x
    if _VECTOR_EXP2:
        e *= f(_HALF_LOG2E)
        np.exp2(e, out=e)  # exp(-x^2 / 2)
    else:
        e *= f(-0.5)
        np.exp(e, out=e)
    t = np.abs(x)
    t += f(1 / _AS_P)
    np.divide(f(_AS_LAM / _AS_P), t, out=t)  # s = lam t; np.divide is twice as fast as np.reciprocal here
    q = t + f(_AS_S[1])
    q *= t
    for c in _AS_S[2:]:
        q += f(c)
        q *= t
    return t, q, e


def _gelu(xp, input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if input.dtype not in _FUSED_DTYPES or not input.ndim:
        if approximate == "tanh":
            out = 0.5 * input * (1 + xp.tanh(_SQRT_2_OVER_PI * (input + _GELU_A * input ** 3)))
        else:
            out = 0.5 * input * (1 + _erf_array(xp, input / math.sqrt(2.0)))
        return _cast(xp, out, input) if input.dtype.kind == "f" else out  # half precision stays half
    # float32 / float64: every pass in one buffer
    if approximate == "tanh":
        out = input * input
        out *= _GELU_A
        out += 1
        out *= input
        out *= _SQRT_2_OVER_PI  # sqrt(2 / pi) * (x + a x^3)
        xp.tanh(out, out=out)
    elif xp is np and input.dtype == np.float32:  # max(x - |x| Q, -|x| Q): see Note [float32 GELU]
        t, q, e = _gelu_parts_f32(input)
        q *= e
        q *= np.bitwise_or(input.view(np.uint32), _SIGN_BIT, out=t.view(np.uint32)).view(np.float32)  # -|x| Q
        del t
        out = np.add(input, q, out=e)
        return np.maximum(q, out, out=out)  # at x = +0.0 a tie of -0.0 and +0.0: NumPy returns the second, as PyTorch
    else:
        out = input * _SQRT_HALF
        _kernels(xp).erf(out, out=out)
    out += 1
    out *= input
    out *= 0.5
    return out


def _gelu_backward(xp, grad_output, input, approximate="none"):
    if input.dtype not in _FUSED_DTYPES or grad_output.dtype != input.dtype or not input.ndim:
        if approximate == "tanh":
            u = _SQRT_2_OVER_PI * (input + _GELU_A * input ** 3)
            t = xp.tanh(u)
            du = _SQRT_2_OVER_PI * (1 + 3 * _GELU_A * input * input)
            return grad_output * (0.5 * (1 + t) + 0.5 * input * (1 - t * t) * du)
        cdf = 0.5 * (1 + _erf_array(xp, input / math.sqrt(2.0)))
        return grad_output * (cdf + input * xp.exp(-0.5 * input * input) * _INV_SQRT_2PI)
    # float32 / float64: the same expressions, in two buffers
    if approximate == "tanh":  # 0.5 (1 + t) + 0.5 x (1 - t^2) du, t = tanh(u)
        sq = input * input
        out = sq * _GELU_A
        out += 1
        out *= input
        out *= _SQRT_2_OVER_PI
        xp.tanh(out, out=out)  # t
        sq *= 3 * _GELU_A
        sq += 1
        sq *= _SQRT_2_OVER_PI  # du
        sq *= input
        sq *= 0.5
        sq *= 1 - out * out  # 0.5 x (1 - t^2) du
        out += 1
        out *= 0.5
    elif xp is np and input.dtype == np.float32:  # 1/2 + sign(x) (1/2 - Q + |x| phi(x)): Note [float32 GELU]
        out, q, e = _gelu_parts_f32(input)
        np.abs(input, out=out)
        out *= np.float32(_INV_SQRT_2PI)
        out -= q
        out *= e  # |x| phi(x) - Q
        out += np.float32(0.5)
        sign = np.bitwise_and(input.view(np.uint32), _SIGN_BIT, out=q.view(np.uint32))
        np.bitwise_xor(out.view(np.uint32), sign, out=out.view(np.uint32))
        out += np.float32(0.5)
        out *= grad_output
        return out
    else:  # Phi(x) + x phi(x)
        out = input * _SQRT_HALF
        _kernels(xp).erf(out, out=out)
        out += 1
        out *= 0.5
        sq = input * input
        sq *= -0.5
        xp.exp(sq, out=sq)
        sq *= input
        sq *= _INV_SQRT_2PI
    out += sq
    out *= grad_output
    return out


def _gelu_second(grad, grad_output, input, approximate):
    """d/dx of gelu_backward: grad * grad_output * gelu''(x)."""
    if approximate == "tanh":
        t = ((input + input ** 3 * _GELU_A) * _SQRT_2_OVER_PI).tanh()
        du = (input * input * (3 * _GELU_A) + 1) * _SQRT_2_OVER_PI
        d2u = input * (6 * _GELU_A * _SQRT_2_OVER_PI)
        return grad * grad_output * (1 - t * t) * (du + input * 0.5 * (d2u - t * du * du * 2))
    pdf = (input * input * -0.5).exp() * _INV_SQRT_2PI
    return grad * grad_output * pdf * (2 - input * input)


# PyTorch's own pair: gelu's formula is gelu_backward, itself an op (GeluBackwardBackward0).
gelu_backward = defop("gelu_backward", _gelu_backward, public=False, promote="binary",
                      grad_output=lambda grad, input, approximate: gelu_backward(grad, input, approximate),
                      input=_gelu_second)
gelu = defop("gelu", _gelu, public=False,
             input=lambda grad, input, approximate: gelu_backward(grad, input, approximate))


def _sigmoid_array(xp, x):
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _silu(xp, input):
    if xp is not np or input.dtype not in _FUSED_DTYPES or not input.ndim:
        return input * _sigmoid_array(xp, input)
    out = sigmoid_array(input)  # then the product into it
    out *= input
    return out


def _silu_grad(grad, input):
    xp = formula_arrays(grad)
    if xp is np and input._data.dtype in _FUSED_DTYPES and grad.dtype == input.dtype and input.dim():
        x = input._data  # See Note [Formulas on arrays]
        s = sigmoid_array(x)  # grad * s * (1 + x (1 - s))
        out = 1 - s
        out *= x
        out += 1
        out *= s
        out *= grad._data
        return Tensor._make(out, grad._device)
    s = input.sigmoid()
    return grad * s * (1 + input * (1 - s))


# PyTorch: SiluBackward0 (one node instead of sigmoid and mul).
silu = defop("silu", _silu, public=False, input=_silu_grad)
# PyTorch: LeakyReluBackward0 and EluBackward0 (piecewise; a composite needs where and two branches).
leaky_relu = defop("leaky_relu", lambda xp, input, negative_slope=0.01:
                   xp.where(input > 0, input, input * negative_slope).astype(input.dtype, copy=False),
                   public=False, inplace_node_name="LeakyReluBackward1",
                   input=lambda grad, input, negative_slope: where(input > 0, grad, grad * negative_slope))
# ``scale`` makes selu this same op (PyTorch's elu has it too: SELU is EluBackward0).
elu = defop("elu", lambda xp, input, alpha=1.0, scale=1.0:
            (scale * xp.where(input > 0, input, alpha * xp.expm1(xp.minimum(input, 0)))).astype(input.dtype,
                                                                                                 copy=False),
            public=False, inplace_node_name="EluBackward1",
            input=lambda grad, input, alpha, scale:
            where(input > 0, grad * scale, grad * (scale * alpha) * input.exp()))


def _cast(xp, out, like):
    return out.astype(like.dtype, copy=False)


def _inside(input, low, high):
    return (input > low).logical_and(input < high)


# Piecewise activations, each one op and one node as in PyTorch (HardtanhBackward0...); the
# gradient at a kink is PyTorch's side of it.
hardtanh = defop("hardtanh", lambda xp, input, min_val=-1.0, max_val=1.0: _cast(xp, xp.clip(input, min_val, max_val),
                                                                                input),
                 public=False,
                 input=lambda grad, input, min_val, max_val: where(_inside(input, min_val, max_val), grad, 0.))
# As PyTorch's, x <= threshold ? value : x: a NaN input, or threshold, keeps x and its gradient.
threshold = defop("threshold", lambda xp, input, threshold, value:
                  _cast(xp, xp.where(input <= threshold, value, input), input), public=False,
                  inplace_node_name="ThresholdBackward1",
                  input=op_call("threshold_backward", "grad", "input", "threshold"))
hardshrink = defop("hardshrink", lambda xp, input, lambd=0.5:
                   _cast(xp, xp.where(xp.abs(input) > lambd, input, 0), input), public=False,
                   input=lambda grad, input, lambd: where(_inside(input, -lambd, lambd), 0., grad))
softshrink = defop("softshrink", lambda xp, input, lambd=0.5:
                   _cast(xp, xp.where(input > lambd, input - lambd, xp.where(input < -lambd, input + lambd, 0)),
                         input), public=False,
                   input=lambda grad, input, lambd: where(_inside(input, -lambd, lambd), 0., grad))
hardsigmoid = defop("hardsigmoid", lambda xp, input: _cast(xp, xp.clip(input / 6 + 0.5, 0, 1), input),
                    public=False, input=lambda grad, input: where(_inside(input, -3., 3.), grad / 6, 0.))


def _hardswish_grad(grad, input):
    return where(input <= -3, 0., where(input < 3, grad * (input / 3 + 0.5), grad))


hardswish = defop("hardswish", lambda xp, input: _cast(xp, input * xp.clip(input / 6 + 0.5, 0, 1), input),
                  public=False, input=_hardswish_grad)
celu = defop("celu", lambda xp, input, alpha=1.0:
             _cast(xp, xp.where(input > 0, input, alpha * xp.expm1(xp.minimum(input, 0) / alpha)), input),
             public=False, inplace_node_name="CeluBackward1",
             input=lambda grad, input, alpha: where(input > 0, grad, grad * (input / alpha).exp()))


def _mish_grad(grad, input):
    t = softplus(input).tanh()
    return grad * (t + input * input.sigmoid() * (1 - t * t))


mish = defop("mish", lambda xp, input: input * xp.tanh(_softplus(xp, input)), public=False, input=_mish_grad)


# Randomized leaky ReLU: ``slope`` is a number (evaluation: the mean of the range) or, in training,
# the per-element noise, 1 where the input is non-negative (PyTorch: RreluWithNoiseBackward0).
rrelu_with_noise = defop("rrelu_with_noise", lambda xp, input, slope:
                         _cast(xp, xp.where(input >= 0, input, input * slope), input), public=False,
                         tensor_args=("input", "slope"), inplace_node_name="RreluWithNoiseBackward1",
                         input=lambda grad, input, slope: where(input > 0, grad, grad * slope))


def _channel_shape(ndim, weight_numel):
    """The shape PReLU's weight broadcasts as: along dim 1, or one value (below 2 dims there is one channel)."""
    shape = [1] * ndim
    if weight_numel != 1:
        shape[1] = weight_numel
    return tuple(shape)


def _prelu(xp, input, weight):
    w = weight.reshape(_channel_shape(input.ndim, weight.size))
    return xp.where(input > 0, input, w * input).astype(xp.result_type(input, weight), copy=False)


def _prelu_weight_grad(grad, input, weight):
    shape = _channel_shape(input.dim(), weight.numel())
    g = where(input > 0, 0., grad * input)
    dims = tuple(d for d in range(input.dim()) if shape[d] == 1)
    return (g.sum(dims) if dims else g).reshape(weight.shape)


prelu = defop("prelu", _prelu, public=False, promote="binary", node_name="PreluKernel",
              input=lambda grad, input, weight:
              where(input > 0, grad, grad * weight.reshape(_channel_shape(input.dim(), weight.numel()))),
              weight=_prelu_weight_grad)


def _glu(xp, input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.ndim
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    a, b = xp.split(input, 2, axis=d)
    return a * _sigmoid_array(xp, b)


def _glu_grad(grad, input, dim):
    a, b = input.chunk(2, dim)
    s = b.sigmoid()
    return cat([grad * s, grad * a * s * (1 - s)], dim)


glu = defop("glu", _glu, public=False, input=_glu_grad)


# -- losses with dedicated formulas -------------------------------------------------------------------
def _reduce_losses(xp, losses, reduction):
    """The elementwise ``losses`` reduced as ``reduction`` ('none', 'mean' or 'sum') says."""
    if reduction == "none":
        return losses
    if reduction == "sum":
        total = losses.sum()
    else:  # the mean of nothing is nan, as PyTorch's, without NumPy's "Mean of empty slice" warning
        total = losses.mean() if losses.size else np.nan
    return xp.asarray(total, dtype=losses.dtype)


def _losses_grad(grad, input_shape, weight, reduction):
    """The gradient of each elementwise loss (times its weight) from that of the reduced loss."""
    if reduction != "none":
        numel = math.prod(input_shape)
        grad = expand(grad, tuple(input_shape))
        if reduction == "mean":
            grad = grad / numel if numel else grad * float("nan")
    return grad if weight is None else grad * weight


def _bce(xp, input, target, weight=None, reduction="mean"):
    if input.size and ((input < 0).any() or (input > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = xp.maximum(xp.log(input), -100)  # PyTorch clamps the logs at -100
    log_1mx = xp.maximum(xp.log1p(-input), -100)
    losses = -(target * log_x + (1 - target) * log_1mx)
    return _reduce_losses(xp, losses if weight is None else losses * weight, reduction)


# PyTorch: BinaryCrossEntropyBackward0, reducing in the op; the clamped logs would give a composite
# zero gradients at 0 and 1. As PyTorch, the weight is not differentiated: no formula, no edge
# (nn/_losses.py refuses a weight that requires grad with PyTorch's error).
binary_cross_entropy = defop(
    "binary_cross_entropy", _bce, public=False, promote="binary", tensor_args=("input", "target", "weight"),
    input=lambda grad, input, target, weight, reduction: _losses_grad(grad, input.shape, weight, reduction) *
    (input - target) / ((1 - input) * input).clamp(min=1e-12),
    target=lambda grad, input, weight, reduction: _losses_grad(grad, input.shape, weight, reduction) *
    ((-input).log1p().clamp(min=-100) - input.log().clamp(min=-100)))


def _bce_logits(xp, input, target, weight=None, pos_weight=None, reduction="mean"):
    sp = _log1p_exp(xp, -input)  # -log(sigmoid(x)), stable
    if pos_weight is None:
        losses = (1 - target) * input + sp
    else:
        losses = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    return _reduce_losses(xp, losses if weight is None else losses * weight, reduction)


def _bce_logits_input(grad, input, target, weight, pos_weight, reduction):
    grad = _losses_grad(grad, input.shape, weight, reduction)
    if pos_weight is None:
        return grad * (input.sigmoid() - target)
    return grad * ((1 - target) - (1 + (pos_weight - 1) * target) * (-input).sigmoid())


def _bce_logits_target(grad, input, weight, pos_weight, reduction):
    grad = _losses_grad(grad, input.shape, weight, reduction)
    return grad * (-input if pos_weight is None else -input + (pos_weight - 1) * _softplus_neg(input))


def _softplus_neg(input):
    return softplus(-input)


# PyTorch: BinaryCrossEntropyWithLogitsBackward0, reducing in the op; the stable composite uses |x|,
# whose gradient is wrong at 0. As PyTorch, neither weight nor pos_weight is differentiated (see
# binary_cross_entropy above).
binary_cross_entropy_with_logits = defop(
    "binary_cross_entropy_with_logits", _bce_logits, public=False, promote="binary",
    tensor_args=("input", "target", "weight", "pos_weight"),
    input=_bce_logits_input,
    target=_bce_logits_target)


# -- nll_loss (PyTorch: NllLossBackward0 and NllLossBackwardBackward0) ------------------------------------
def _nll_weights(xp, target, weight, ignore_index, dtype):
    """Each target's class index (0 where ignored), its weight (0 where ignored), and where it is not."""
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    if weight is None:
        return safe, valid.astype(dtype), valid
    return safe, weight[safe].astype(dtype, copy=False) * valid, valid


def class_indices_below(target, classes) -> bool:
    """Whether every index of the non-empty int64 or uint8 array ``target`` is in [0, classes): a few as Python
    ints (a NumPy reduction costs some 8,000 instructions, whatever the size), else by one reduction: read as
    unsigned, a negative index is above every class count."""
    if target.size <= 16:
        values = target.ravel().tolist()
        return min(values) >= 0 and max(values) < classes
    if target.dtype == np.int64:
        target = target.view(np.uint64)
    return bool(np.maximum.reduce(target, axis=None) < classes)


def _plain_targets(xp, target, weight, ignore_index, shape):
    """Whether nll_loss over (N, C) (``shape``) has no weight and no ignored target (N > 0): then every weight is
    1 and the forward and backward skip the weight arrays, the masks and the ``errstate`` (the same numbers).

    With an ``ignore_index`` that is no class (PyTorch's -100), targets that are all classes are none of
    them ignored: one reduction instead of a comparison and ``any``."""
    if not (xp is np and weight is None and shape[0] and target.ndim == 1):
        return False
    if not 0 <= ignore_index < shape[1] and target.dtype in (np.int64, np.uint8):
        return class_indices_below(target, shape[1])
    return not (target == ignore_index).any()


def _nll_loss(xp, input, target, weight=None, reduction="mean", ignore_index=-100):
    """input (N, C, *) log-probabilities, target (N, *) class indices; or unbatched, (C,) and ()."""
    if input.ndim == 1:  # one node for the unbatched loss, as PyTorch's
        out = _nll_loss(xp, input[None], target.reshape(1), weight, reduction, ignore_index)
        return out.reshape(()) if reduction == "none" else out
    n = input.shape[0]
    if input.ndim == 2 and reduction != "none" and _plain_targets(xp, target, weight, ignore_index, input.shape):
        total = -np.add.reduce(input[np.arange(n), target])
        return total if reduction == "sum" else (total / input.dtype.type(n)).astype(input.dtype, copy=False)
    safe, w, _ = _nll_weights(xp, target, weight, ignore_index, input.dtype)
    if input.ndim == 2:  # (N, C): plain fancy indexing, several times cheaper than take_along_axis
        picked = input[xp.arange(input.shape[0]), safe]
    else:
        picked = xp.take_along_axis(input, safe[:, None], axis=1)[:, 0]
    losses = -(picked * w)
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "sum":
        return total
    with np.errstate(invalid="ignore", divide="ignore"):  # every target ignored: nan, as in PyTorch
        return (total / w.sum()).astype(input.dtype, copy=False)


def _nll_loss_backward_fwd(xp, grad_output, input, target, weight, reduction, ignore_index):
    """The gradient of nll_loss for its input: -weight * grad at each target's class, 0 elsewhere."""
    if input.ndim == 1:  # unbatched
        grad_output = grad_output.reshape(1) if reduction == "none" else grad_output
        return _nll_loss_backward_fwd(xp, grad_output, input[None], target.reshape(1), weight, reduction,
                                      ignore_index).reshape(input.shape)
    input_shape = input.shape  # only the input's shape is read
    n = input_shape[0]
    if len(input_shape) == 2 and _plain_targets(xp, target, weight, ignore_index, input_shape):
        coef = -grad_output
        if reduction == "mean":
            coef = coef / grad_output.dtype.type(n)
        out = np.zeros(input_shape, dtype=grad_output.dtype)
        out[np.arange(n), target] = coef
        return out
    safe, w, valid = _nll_weights(xp, target, weight, ignore_index, grad_output.dtype)
    coef = -w * grad_output
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            coef = xp.where(valid, coef / w.sum(), 0)  # ignored targets get 0, even when all are
    out = xp.zeros(input_shape, dtype=grad_output.dtype)
    coef = coef.astype(grad_output.dtype, copy=False)
    if len(input_shape) == 2:
        out[xp.arange(input_shape[0]), safe] = coef
    else:
        xp.put_along_axis(out, safe[:, None], coef[:, None], axis=1)
    return out


def _is_2d_loss(input):
    return input.ndim in (3, 4)  # PyTorch's nll_loss2d (and its backward)


# The backward is linear in grad_output, and its adjoint is nll_loss itself with the same reduction.
# As PyTorch's, it takes the loss's input (for its shape) and records an edge for it, whose gradient
# is zero: the double-backward graph is PyTorch's.
nll_loss_backward = defop(
    "nll_loss_backward", _nll_loss_backward_fwd, public=False,
    tensor_args=("grad_output", "input", "target", "weight"),
    node_names={"NllLoss2DBackwardBackward0": _is_2d_loss},
    grad_output=lambda grad, target, weight, reduction, ignore_index: nll_loss(grad, target, weight, reduction,
                                                                              ignore_index),
    input=_zeros_like_grad)

nll_loss = defop(
    "nll_loss", _nll_loss, public=False, tensor_args=("input", "target", "weight"),
    node_names={"NllLoss2DBackward0": _is_2d_loss},
    input=lambda grad, input, target, weight, reduction, ignore_index: nll_loss_backward(
        grad, input, target, weight, reduction, ignore_index))


# -- ctc_loss (PyTorch: CtcLossBackward0) -------------------------------------------------------------
def _ctc_targets(targets, target_lengths):
    """Each sample's target sequence, from (N, S) padded targets or their 1-d concatenation."""
    if targets.ndim == 2:
        return [targets[b, :n] for b, n in enumerate(target_lengths)]
    ends = np.cumsum(target_lengths)
    return [targets[e - n:e] for e, n in zip(ends, target_lengths, strict=True)]


def _logsumexp(*terms):
    top = np.max(terms, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(sum(np.exp(t - safe) for t in terms))


def _ctc_lattice(lp, target, blank):
    """log alpha and log beta (each (T, 2S+1)) of one sample's CTC lattice, and the extended labels."""
    ext = np.full(2 * len(target) + 1, blank, dtype=np.int64)
    ext[1::2] = target
    t_len, width = lp.shape[0], len(ext)
    skip = np.zeros(width, dtype=bool)  # s may come from s - 2: a label unlike the one two back
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    emit = lp[:, ext]
    alpha = np.full((t_len, width), -np.inf)
    beta = np.full((t_len, width), -np.inf)
    if t_len == 0:
        return alpha, beta, ext
    alpha[0, :min(2, width)] = emit[0, :min(2, width)]
    for t in range(1, t_len):
        a = alpha[t - 1]
        a1 = np.concatenate(([-np.inf], a[:-1]))
        a2 = np.where(skip, np.concatenate(([-np.inf, -np.inf], a[:-2])), -np.inf)
        alpha[t] = _logsumexp(a, a1, a2) + emit[t]
    beta[-1, max(width - 2, 0):] = emit[-1, max(width - 2, 0):]
    skip_back = np.concatenate((skip[2:], [False, False]))  # s + 2 may come after s
    for t in range(t_len - 2, -1, -1):
        b = beta[t + 1]
        b1 = np.concatenate((b[1:], [-np.inf]))
        b2 = np.where(skip_back, np.concatenate((b[2:], [-np.inf, -np.inf])), -np.inf)
        beta[t] = _logsumexp(b, b1, b2) + emit[t]
    return alpha, beta, ext


def _ctc_loss(xp, log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    lp_all = np.asarray(log_probs, dtype=np.float64)
    out = np.zeros(lp_all.shape[1])
    for b, (lp_t, target) in enumerate(zip(input_lengths, _ctc_targets(np.asarray(targets), target_lengths),
                                           strict=True)):
        alpha, _, _ = _ctc_lattice(lp_all[:lp_t, b], target, blank)
        nll = -_logsumexp(*alpha[-1, -2:]) if lp_t else (0.0 if len(target) == 0 else np.inf)
        out[b] = nll  # inf for an impossible target; functional.ctc_loss zeroes it where zero_infinity
    return xp.asarray(out, dtype=log_probs.dtype)


def _ctc_loss_backward_fwd(xp, grad_output, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """The gradient of ctc_loss for its log-probabilities: minus the posterior of each label at each time."""
    lp_all = np.asarray(log_probs, dtype=np.float64)
    g_out = np.asarray(grad_output, dtype=np.float64)
    grad = np.zeros_like(lp_all)
    for b, (lp_t, target) in enumerate(zip(input_lengths, _ctc_targets(np.asarray(targets), target_lengths),
                                           strict=True)):
        lp = lp_all[:lp_t, b]
        alpha, beta, ext = _ctc_lattice(lp, target, blank)
        if not lp_t:
            continue
        nll = -_logsumexp(*alpha[-1, -2:])
        if np.isinf(nll):
            grad[:lp_t, b] = 0.0 if zero_infinity else np.nan
            continue
        ab = alpha + beta  # log of the paths through (t, s), each counting lp[t, ext[s]] twice
        post = np.zeros_like(lp)
        for c in np.unique(ext):
            with np.errstate(divide="ignore"):
                post[:, c] = np.exp(_logsumexp(*ab[:, ext == c].T) - lp[:, c] + nll)
        grad[:lp_t, b] = -post * g_out[b]
    return xp.asarray(grad, dtype=log_probs.dtype)


def _no_ctc_second_derivative(grad):
    raise RuntimeError("derivative for ctc_loss_backward is not implemented")


ctc_loss_backward = defop("ctc_loss_backward", _ctc_loss_backward_fwd, public=False,
                          tensor_args=("grad_output", "log_probs", "targets"),
                          grad_output=_no_ctc_second_derivative, log_probs=_no_ctc_second_derivative)

# The negative log-likelihood of each sample's target under CTC: a forward-backward over the lattice
# of blanks and labels, in NumPy; no second derivative, as in PyTorch. ``zero_infinity`` zeroes the
# gradient of an impossible target (its loss is zeroed after the op, as PyTorch does).
ctc_loss = defop("ctc_loss", _ctc_loss, public=False, tensor_args=("log_probs", "targets"),
                 log_probs=lambda grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity:
                 ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity))

# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import FROM_BACKWARD, LINEAR, defjvp  # noqa: E402


def _max_pool_jvp(input_t, result, nd):
    """The tangent of a max pool's values: the input's tangent at the indices (flat in each of the ``nd``-d planes)."""
    indices = result[1]
    return input_t.flatten(-nd).gather(-1, indices.flatten(-nd)).reshape(tuple(indices.shape)), None


def _glu_jvp(input_t, input, dim):
    a, b = input.chunk(2, dim)
    a_t, b_t = input_t.chunk(2, dim)
    s = b.sigmoid()
    return a_t * s + a * s * (1 - s) * b_t


def _normalized_jvp(input, input_t, dims, eps):
    """``(xhat, xhat_t)`` of the normalization of ``input`` over ``dims`` (biased variance), and its tangent."""
    centered = input - input.mean(dims, True)
    rstd = (centered * centered).mean(dims, True).add(eps).rsqrt()
    normed = centered * rstd
    t = input_t - input_t.mean(dims, True)
    return normed, (t - normed * (t * normed).mean(dims, True)) * rstd


def _affine_jvp(normed, normed_t, weight, weight_t, bias_t, shape):
    """The tangent of ``xhat * weight + bias`` (weight and bias reshaped to ``shape``; either may be None)."""
    out = normed_t if weight is None else normed_t * weight.reshape(shape) + normed * weight_t.reshape(shape)
    return out if bias_t is None else out + bias_t.reshape(shape)


def _layer_norm_jvp(input_t, weight_t, bias_t, input, normalized_shape, weight, eps):
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    normed, normed_t = _normalized_jvp(input, input_t, dims, eps)
    return _affine_jvp(normed, normed_t, weight, weight_t, bias_t, tuple(normalized_shape)), None, None


def _batch_norm_jvp(input_t, weight_t, bias_t, input, weight, eps):
    normed, normed_t = _normalized_jvp(input, input_t, _bn_dims(input.dim()), eps)
    return _affine_jvp(normed, normed_t, weight, weight_t, bias_t, _bn_shape(input.dim(), input.shape[1])), None, None


def _group_norm_jvp(input_t, weight_t, bias_t, input, num_groups, weight, eps):
    normed, normed_t = _normalized_jvp(_grouped(input, num_groups), _grouped(input_t, num_groups), (2,), eps)
    shape = tuple(input.shape)
    return _affine_jvp(normed.reshape(shape), normed_t.reshape(shape), weight, weight_t, bias_t,
                       _bn_shape(input.dim(), input.shape[1]))


def _prelu_jvp(input_t, weight_t, input, weight):
    shape = (-1,) + (1,) * (input.dim() - 2) if input.dim() >= 2 and weight.numel() > 1 else ()
    w, w_t = weight.reshape(shape), weight_t.reshape(shape)
    return where(input > 0, input_t, w * input_t + w_t * input)


def _reduce_loss(elementwise, reduction):
    if reduction == "mean":
        return elementwise.mean()
    return elementwise.sum() if reduction == "sum" else elementwise


def _bce_jvp(input_t, target_t, input, target, weight, reduction):
    """The weight's tangent counts for nothing, as in PyTorch (which differentiates no weight)."""
    log_x, log_1mx = input.log().clamp_min(-100), (1 - input).log().clamp_min(-100)
    d_input = (input - target) / (input * (1 - input)).clamp_min(1e-12)
    out = d_input * input_t - (log_x - log_1mx) * target_t
    if weight is not None:
        out = out * weight
    return _reduce_loss(out, reduction)


def _log_sigmoid(x):
    return x.clamp_max(0) - (-x.abs()).exp().log1p()


def _bce_with_logits_jvp(input_t, target_t, input, target, weight, pos_weight, reduction):
    """The tangents of weight and pos_weight count for nothing, as in PyTorch."""
    log_s, log_1ms = _log_sigmoid(input), _log_sigmoid(-input)
    py = target if pos_weight is None else pos_weight * target
    out = ((py + 1 - target) * input.sigmoid() - py) * input_t + (log_1ms - (
        log_s if pos_weight is None else pos_weight * log_s)) * target_t
    if weight is not None:
        out = out * weight
    return _reduce_loss(out, reduction)


def _embedding_bag_jvp(weight_t, per_sample_weights_t, weight, indices, offsets, mode, per_sample_weights,
                       padding_idx, include_last_offset, result):
    """The tangent of the bags: a maximum's is its row's tangent (0 for an empty bag); a sum or mean is linear in
    the weight and in the per-sample weights apart."""
    if mode == "max":
        which = result[1]
        return where(which >= 0, weight_t.gather(0, which.clamp(min=0)), 0.), None
    out = embedding_bag(weight_t, indices, offsets, mode, per_sample_weights, padding_idx, include_last_offset)[0]
    if per_sample_weights is not None:
        out = out + embedding_bag(weight, indices, offsets, mode, per_sample_weights_t, padding_idx,
                                  include_last_offset)[0]
    return out, None


def _ctc_loss_jvp(log_probs_t, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result):
    """Each sample's loss tangent: its gradient for the log-probabilities (the backward with a unit seed) dotted
    with their tangent."""
    grad = ctc_loss_backward(result.new_ones(tuple(result.shape)), log_probs, targets, input_lengths, target_lengths,
                             blank, zero_infinity)
    return (grad * log_probs_t).sum((0, 2))


defjvp(LINEAR, "im2col", "col2im", "avg_pool2d", "adaptive_avg_pool2d", "max_pool2d_backward",
       "adaptive_max_pool2d_backward", "max_unpool2d",
       "pixel_shuffle", "pixel_unshuffle", "upsample_nearest", "upsample_linear", "reflection_pad", "replication_pad",
       "embedding", "nll_loss", "nll_loss_backward")
defjvp(FROM_BACKWARD, "softplus", "gelu_backward", "gelu", "silu", "leaky_relu", "elu", "hardtanh", "threshold",
       "hardshrink", "softshrink", "hardsigmoid", "hardswish", "celu", "mish", "rrelu_with_noise")
defjvp(lambda input_t, pad: constant_pad_nd(input_t, pad, 0), "constant_pad_nd")
defjvp(lambda columns_t, weight_t, bias_t, columns, weight, output_size, groups:
       convolution(columns_t, weight, bias_t, output_size, groups)
       + convolution(columns, weight_t, None, output_size, groups), "convolution")
defjvp(lambda input_t, weight_t, bias_t, input, weight, output_size, stride, padding, dilation, groups:
       convolution_transpose(input_t, weight, bias_t, output_size, stride, padding, dilation, groups)
       + convolution_transpose(input, weight_t, None, output_size, stride, padding, dilation, groups),
       "convolution_transpose")
defjvp(lambda input_t, result, kernel_size: _max_pool_jvp(input_t, result, len(kernel_size)), "max_pool2d_with_indices")
defjvp(lambda input_t, result, output_size: _max_pool_jvp(input_t, result, len(output_size)), "adaptive_max_pool2d")
defjvp(_glu_jvp, "glu")
defjvp(_layer_norm_jvp, "layer_norm")
defjvp(_batch_norm_jvp, "native_batch_norm")
defjvp(_group_norm_jvp, "group_norm")
defjvp(_prelu_jvp, "prelu")
defjvp(_bce_jvp, "binary_cross_entropy")
defjvp(_bce_with_logits_jvp, "binary_cross_entropy_with_logits")
defjvp(_embedding_bag_jvp, "embedding_bag")
defjvp(_ctc_loss_jvp, "ctc_loss")
