"""``retrograd.nn.functional``: PyTorch's ``torch.nn.functional`` names and arguments.

Primitives (convolution, pooling, normalization, activations, embedding, padding) are ops
declared in ``retrograd/ops/nn.py``; this module checks arguments the way PyTorch does and
composes the rest (linear, dropout, the losses) from registered ops.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _creation
from .._creation import drawn as _drawn_tensors, tensor as _tensor
from .._random import default_generator as _default_generator, vmap_randomness as _vmap_randomness
from ..autograd import grad_mode as _grad_mode
from ..ops import nn as _nn
from ..ops._call import composite_call as _composite_call
from ..ops._call import interposition as _interposition
from ..ops._declarations import REGISTRY as _REGISTRY
from ..ops._inplace import apply_inplace as _apply_inplace
from ..ops import addmm as _addmm, div as _div, log_softmax as _log_softmax, relu as _relu, softmax as _softmax
from ..ops import pdist, where as _where
from . import _pooling
from ._pooling import *  # noqa: F401,F403 - the pooling functions
from ._pooling import _ntuple, _pair  # noqa: F401 - the modules' argument checks

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold",
           *_pooling.__all__, "pixel_shuffle", "interpolate", "upsample", "pixel_unshuffle",
           "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "embedding",
           "embedding_bag", "layer_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm",
           "batch_norm", "linear", "one_hot", "pad", "softplus", "gelu", "silu", "leaky_relu", "elu", "relu", "selu",
           "celu", "hardtanh", "relu6", "threshold", "threshold_", "hardsigmoid", "hardswish", "mish", "hardshrink",
           "softshrink", "softsign", "tanhshrink", "glu", "prelu", "rrelu", "softmin", "sigmoid", "tanh", "softmax",
           "log_softmax",
           "cross_entropy", "ctc_loss", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss", "logsigmoid", "multilabel_soft_margin_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "pairwise_distance", "cosine_similarity", "cosine_embedding_loss", "normalize",
           "triplet_margin_loss", "pdist"]


# -- convolution ----------------------------------------------------------------------------------
def _lift(values, fill):
    """A 1-d convolution's parameter as the 2-d pair of the column ops: ``fill`` for the added height."""
    return (fill,) + tuple(values) if len(values) == 1 else tuple(values)


def _conv_input(name, input, weight, nd):
    """The batched input of a ``nd``-d convolution, whether it was unbatched; PyTorch's errors on bad ranks."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    input = input.unsqueeze(0) if unbatched else input
    if weight.dim() > nd + 2:
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.dim()}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if weight.dim() < nd + 2:
        raise RuntimeError(f"expected stride to be a single integer value or a list of {weight.dim() - 2} values to "
                           f"match the convolution dimensions, but got stride={[1] * nd}" if weight.dim() > 2
                           else "weight should have at least three dimensions")
    return input, unbatched


def _conv(name, input, weight, bias, stride, padding, dilation, groups, nd):
    """A ``nd``-d convolution (1, 2 or 3) as im2col and one ``convolution`` op; see Note [Convolution as im2col]."""
    input, unbatched = _conv_input(name, input, weight, nd)
    stride, dilation = _ntuple(stride, nd, "stride"), _ntuple(dilation, nd, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    kernel = tuple(weight.shape[2:])
    x = input.unsqueeze(2) if nd == 1 else input  # the column ops see a 1-d input as (N, C, 1, L)
    k2, s2, d2 = _lift(kernel, 1), _lift(stride, 1), _lift(dilation, 1)
    if isinstance(padding, str):
        p2, x = _string_padding(x, padding, k2, s2, d2)
    else:
        p2 = _lift(_ntuple(padding, nd, "padding"), 0)
    c = input.shape[1]
    if c != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {c} channels "
                           f"instead")
    if weight.shape[0] % groups:
        raise RuntimeError("Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight "
                           "of size {} instead".format(groups, groups, list(weight.shape)))
    spatial = tuple(x.shape[2:])
    eff = [dd * (k - 1) + 1 for dd, k in zip(d2, k2, strict=True)]
    padded = [size + 2 * p for size, p in zip(spatial, p2, strict=True)]
    if any(p < e for p, e in zip(padded, eff, strict=True)):
        shown = slice(len(padded) - nd, None)  # a 1-d convolution shows its length only
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded[shown]))}). "
                           f"Kernel size: ({' x '.join(map(str, eff[shown]))}). Kernel size can't be greater than "
                           f"actual input size")
    columns = _nn.im2col(x, k2, d2, p2, s2)
    out_size = tuple(_nn.conv_out_size(*a) for a in zip(spatial, k2, s2, p2, d2, strict=True))
    out = _nn.convolution(columns, weight, bias, out_size[len(out_size) - nd:], groups)
    return out.squeeze(0) if unbatched else out


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 2-d convolution (cross-correlation) over an input of shape (N, C, H, W) or (C, H, W).

    Args:
        input: the input, (N, C_in, H, W) or unbatched (C_in, H, W).
        weight: the filters, (C_out, C_in / groups, kH, kW).
        bias: optional, (C_out,).
        stride, padding, dilation: an int or a pair; ``padding`` may also be ``"valid"`` or ``"same"``.
        groups: splits the input channels into this many groups.

    Returns:
        A tensor of shape (N, C_out, H_out, W_out).

    Raises:
        RuntimeError: on mismatched shapes, with PyTorch's message.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.conv2d(rg.ones(1, 1, 3, 3), rg.ones(1, 1, 2, 2)).shape
        retrograd.Size([1, 1, 2, 2])
    """
    return _conv("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


def _string_padding(input, padding, kernel, stride, dilation):
    if padding == "valid":
        return (0,) * len(kernel), input
    if padding != "same":
        raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
    sym = tuple(t // 2 for t in total)
    if all(t % 2 == 0 for t in total):
        return sym, input
    # odd total padding: the extra element goes on the right/bottom (the far end of each dim), as PyTorch
    extra = [t - 2 * s for t, s in zip(total, sym, strict=True)]
    return sym, pad(input, tuple(v for e in reversed(extra) for v in (0, e)))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1-d convolution over an input of shape (N, C, L) or (C, L); see ``conv2d``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.conv1d(rg.ones(1, 1, 4), rg.ones(1, 1, 2))
        tensor([[[2., 2., 2.]]])
    """
    return _conv("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 3-d convolution over an input of shape (N, C, D, H, W) or (C, D, H, W); see ``conv2d``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.conv3d(rg.ones(1, 2, 3, 3, 3), rg.ones(4, 2, 2, 2, 2), padding=(0, 1, 0)).shape
        retrograd.Size([1, 4, 2, 4, 2])
    """
    return _conv("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)


def _conv_transpose(name, input, weight, bias, stride, padding, output_padding, groups, dilation, nd):
    """A ``nd``-d transposed convolution: the adjoint of the convolution with the same parameters."""
    input, unbatched = _conv_input(name, input, weight, nd)
    stride, padding = _ntuple(stride, nd, "stride"), _ntuple(padding, nd, "padding")
    output_padding, dilation = _ntuple(output_padding, nd, "output_padding"), _ntuple(dilation, nd, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    c = input.shape[1]
    if c != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[0]} channels, but got {c} channels instead")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=True)):
        values = (_lift(output_padding, 0), _lift(stride, 1), _lift(dilation, 1))  # 1-d reads as 2-d, as PyTorch
        axes = ("depth", "height", "width")[-len(values[0]):]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(
            f"{what}_{axis}: {v[i]}" for what, v in zip(("output_padding", "stride", "dilation"), values, strict=True)
            for i, axis in enumerate(axes)))
    kernel = tuple(weight.shape[2:])
    out_size = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                     zip(input.shape[2:], stride, padding, dilation, kernel, output_padding, strict=True))
    if min(out_size) <= 0:
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). Calculated "
                           f"output size per channel: ({' x '.join(map(str, out_size))}). Output size is too small")
    out = _nn.convolution_transpose(input, weight, bias, out_size, _lift(stride, 1), _lift(padding, 0),
                                    _lift(dilation, 1), groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Applies a 1-d transposed convolution over (N, C_in, L) or (C_in, L); see ``conv_transpose2d``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.conv_transpose1d(rg.ones(1, 1, 3), rg.ones(1, 1, 2))
        tensor([[[1., 2., 2., 1.]]])
    """
    return _conv_transpose("conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Applies a 2-d transposed convolution ("deconvolution"): the gradient of ``conv2d`` for its input.

    Args:
        input: (N, C_in, H, W) or unbatched (C_in, H, W).
        weight: (C_in, C_out / groups, kH, kW).
        bias: optional, (C_out,).
        stride, padding, output_padding, dilation: an int or a pair; ``output_padding`` adds rows and
            columns on one side of the output, to pick among the sizes a strided convolution maps alike.
        groups: splits the input channels into this many groups.

    Returns:
        A tensor of shape (N, C_out, H_out, W_out), ``H_out = (H - 1) * stride - 2 * padding +
        dilation * (kH - 1) + output_padding + 1``.

    Raises:
        RuntimeError: on mismatched shapes, with PyTorch's message.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.conv_transpose2d(rg.ones(1, 1, 2, 2), rg.ones(1, 3, 3, 3), stride=2).shape
        retrograd.Size([1, 3, 5, 5])
    """
    return _conv_transpose("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Applies a 3-d transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W); see ``conv_transpose2d``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.conv_transpose3d(rg.ones(1, 1, 2, 2, 2), rg.ones(1, 2, 3, 3, 3), stride=2).shape
        retrograd.Size([1, 2, 5, 5, 5])
    """
    return _conv_transpose("conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks: (N, C, H, W) -> (N, C*kH*kW, L), or unbatched (C, H, W) -> (C*kH*kW, L),
    as ``torch.nn.functional.unfold``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.unfold(rg.ones(1, 2, 3, 3), 2).shape
        retrograd.Size([1, 8, 4])
    """
    d = input.dim()
    if d < 3:  # PyTorch reads the size of dim 2 first
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(d, 1)}, {max(d, 1) - 1}], but "
                         "got 2)")
    if d > 4:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    return _nn.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding local blocks back into an image: the adjoint of ``unfold``; (N, C*kH*kW, L) -> (N, C, H, W)
    or unbatched (C*kH*kW, L) -> (C, H, W).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.fold(rg.ones(1, 4, 4), (3, 3), 2)[0, 0]
        tensor([[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]])
    """
    if input.dim() not in (2, 3):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    return _nn.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
                      _pair(stride))


def pixel_shuffle(input, upscale_factor):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r): channels rearranged into blocks of space.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.pixel_shuffle(rg.arange(4.).reshape(4, 1, 1), 2)
        tensor([[[0., 1.],
                 [2., 3.]]])
    """
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if input.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={input.shape[-3]} is not divisible by {r * r}")
    return _nn.pixel_shuffle(input, r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W): the inverse of ``pixel_shuffle``."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    for name, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={input.shape[d]} is not divisible by {r}")
    return _nn.pixel_unshuffle(input, r)


_INTERPOLATING = "linear | bilinear | bicubic | trilinear"


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resamples (N, C, L) or (N, C, H, W) to ``size`` or by ``scale_factor``, as PyTorch's ``interpolate``.

    Args:
        input: (N, C, L) for ``"nearest"``, ``"nearest-exact"``, ``"linear"``, ``"area"``; (N, C, H, W)
            for those and ``"bilinear"``.
        size: the output's spatial size (an int for every dim, or one per dim).
        scale_factor: a multiplier per dim instead; the output size is floor(in * scale_factor).
        mode: ``"nearest"`` (PyTorch's legacy floor rule), ``"nearest-exact"``, ``"linear"``,
            ``"bilinear"`` or ``"area"`` (adaptive average pooling).
        align_corners: for the linear modes: map the corner pixels' centres onto each other.
        recompute_scale_factor: sample at in / out (from the computed size) instead of the given factor.

    Raises:
        ValueError: for inconsistent arguments, NotImplementedError for a mode and rank that do not
            go together; PyTorch's messages.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.interpolate(rg.tensor([[[0., 1.]]]), scale_factor=2, mode="linear")
        tensor([[[0.0000, 0.2500, 0.7500, 1.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(f"align_corners option can only be set with the interpolating modes: {_INTERPOLATING}")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 f"Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 f"(o1, o2, ...,oK) format.")
            output_size = [int(v) for v in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 f"scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(v) for v in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        output_size = [int(math.floor(input.shape[2 + i] * scales[i])) for i in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" or recompute_scale_factor:
        scales = None
    if antialias:
        raise NotImplementedError("antialias is not supported here")
    scales = None if scales is None else tuple(scales)
    if dim in (1, 2) and mode in ("nearest", "nearest-exact"):
        return _nn.upsample_nearest(input, tuple(output_size), scales, mode == "nearest-exact")
    if mode == "area" and dim in (1, 2):
        return (adaptive_avg_pool1d if dim == 1 else adaptive_avg_pool2d)(input, output_size)
    if (dim, mode) in ((1, "linear"), (2, "bilinear")):
        return _nn.upsample_linear(input, tuple(output_size), bool(align_corners), scales)
    needs = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}.get(mode)
    if needs is not None and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {needs}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                              f"modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                              f"nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """``interpolate`` under its old name."""
    return interpolate(input, size, scale_factor, mode, align_corners)


# -- dropout, linear, embedding, one_hot, pad ------------------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability ``p`` and scales the rest by 1/(1-p), when ``training``.

    The mask comes from retrograd's default generator, so ``manual_seed`` and
    ``get_rng_state``/``set_rng_state`` reproduce it.

    Raises:
        ValueError: if ``p`` is not in [0, 1].

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.dropout(rg.ones(4), p=0.0)
        tensor([1., 1., 1., 1.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    m = _dropout_mask(input, p, None)
    return input.mul_(m) if inplace else input * m


# Dropout's mask is PyTorch's: ``empty_like(input).bernoulli_(1 - p).div_(1 - p)`` (``input.new_empty``
# of the mask's shape for the feature dropouts; a 0-d zero for p == 1). While an op-call interposer is active
# these are op calls, which a selective checkpoint can save (Note [Factories as op calls]); otherwise the
# same draws and the same division are made on the arrays directly, so that the mask does not depend on
# whether anything is watching. Under a vmap the draw follows the level's randomness instead (See Note
# [Randomness under vmap] in func/_randomness.py).
_DROPOUT_BERNOULLI = _REGISTRY["dropout_bernoulli"]


def _keep_mask(input, p, shape):
    """A tensor of ``shape`` (``input``'s if None), 1 with probability 1 - p, else 0, in ``input``'s dtype."""
    if _interposition.stack and _vmap_randomness() is None:
        mask = _creation.empty_like(input) if shape is None else _creation.new_empty(input, shape)
        return _apply_inplace(_DROPOUT_BERNOULLI, (mask, 1.0 - p))
    dtype = input._data.dtype
    return _drawn(input, tuple(input.shape) if shape is None else shape,
                  lambda size: [(_default_generator.np.random(size) < 1.0 - p).astype(dtype)])[0]


def _dropout_mask(input, p, shape):
    """Dropout's scaled mask of ``shape`` (``input``'s if None): 1 / (1 - p) with probability 1 - p, else 0."""
    if p == 1.0:
        return _creation.zeros((), dtype=input.dtype, device=input.device)
    if _interposition.stack and _vmap_randomness() is None:
        return _keep_mask(input, p, shape).div_(1.0 - p)
    dtype = input._data.dtype
    return _drawn(input, tuple(input.shape) if shape is None else shape, lambda size: [
        np.true_divide((_default_generator.np.random(size) < 1.0 - p).astype(dtype), 1.0 - p)])[0]


def _drawn(like, shape, make):
    """``_creation.drawn`` in ``like``'s dtype and on its device."""
    return _drawn_tensors(make, shape, like.dtype, like.device)


def _feature_dropout(input, p, training, inplace, batched_dims):
    """Dropout of whole channels: one draw per (sample, channel) of an input batched as ``batched_dims`` dims."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    lead = 1 if input.dim() == batched_dims - 1 else 2  # (C, ...) unbatched, else (N, C, ...)
    shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    m = _dropout_mask(input, p, shape)
    return input.mul_(m) if inplace else input * m


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, L) or (C, L) with probability ``p``, scaling the rest by 1/(1-p).

    Raises:
        RuntimeError: for another number of dims; ValueError: if ``p`` is not in [0, 1].
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           f"dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           f"channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) with probability ``p``; a 3-d input is read as (N, C, L), as PyTorch."""
    return _feature_dropout(input, p, training, inplace, input.dim())


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p``."""
    return _feature_dropout(input, p, training, inplace, 5 if input.dim() in (4, 5) else input.dim())


_ALPHA = 1.7580993408473766  # SELU's -scale * alpha: the value a dropped unit takes


def _alpha_dropout(input, p, training, inplace, feature):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        zero = _creation.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    # PyTorch's steps, each an op call: the kept units scaled by a, then shifted so that a dropped one is -alpha * a
    # moved by alpha * a * p.
    noise = _keep_mask(input, p, tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature else None)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
    noise.mul_(a)
    return input.mul_(noise).add_(shift) if inplace else (input * noise).add_(shift)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's mean and variance: dropped units take SELU's negative saturation,
    then an affine map restores the statistics.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.alpha_dropout(rg.ones(3), 0.5)
        tensor([1., 1., 1.])
    """
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``alpha_dropout`` of whole channels (one draw per sample and channel)."""
    return _alpha_dropout(input, p, training, inplace, True)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``, as ``torch.nn.functional.linear``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.linear(rg.ones(1, 3), rg.ones(2, 3), rg.tensor([0., 1.]))
        tensor([[3., 4.]])
    """
    if input.dim() == 0 or weight.dim() == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and "
                           f"{weight.dim()}D")
    if _interposition.stack:  # profiled: a range of its own around its ops, as PyTorch's aten::linear
        with _composite_call("linear", (input, weight, bias)):
            return _linear(input, weight, bias)
    return _linear(input, weight, bias)


def _linear(input, weight, bias):
    if bias is not None:  # PyTorch's routing: one addmm over the flattened rows where the layout allows it
        if input.dim() == 2:
            return _addmm(bias, input, weight.t())
        if input.is_contiguous():
            lead = tuple(input.shape[:-1])
            return _addmm(bias, input.view(-1, input.shape[-1]), weight.t()).view(lead + (weight.shape[0],))
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Looks up rows of ``weight`` at the integer indices ``input``.

    ``padding_idx`` rows get no gradient; ``max_norm`` renormalizes the looked-up rows in place.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.embedding(rg.tensor([1, 0]), rg.tensor([[0., 1.], [2., 3.]]))
        tensor([[2., 3.],
                [0., 1.]])
    """
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    return _nn.embedding(weight, input, padding_idx, scale_grad_by_freq)


def _embedding_renorm(weight, input, max_norm, norm_type):
    with _grad_mode.no_grad():
        rows = np.unique(input._host().reshape(-1))
        data = weight._data
        norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        data[rows] *= scale[:, None].astype(data.dtype)
        weight._version_counter.bump()


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of rows of ``weight``, without building the looked-up rows.

    Args:
        input: the indices: (B, L), B bags of L each, or 1-d with ``offsets`` (where each bag starts).
        weight: the table, (num_embeddings, embedding_dim).
        mode: ``"sum"``, ``"mean"`` or ``"max"``.
        per_sample_weights: a weight per index (``mode="sum"`` only).
        include_last_offset: ``offsets`` has one more element, the end of the last bag.
        padding_idx: entries at this index are left out of their bag (and of a mean's count).

    Returns:
        A tensor (number of bags, embedding_dim); an empty bag gives zeros.

    Raises:
        ValueError, NotImplementedError: for inconsistent arguments, with PyTorch's messages.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.embedding_bag(rg.tensor([0, 1, 1]), rg.tensor([[1., 2.], [3., 4.]]), rg.tensor([0, 1]), mode="sum")
        tensor([[1., 2.],
                [6., 8.]])
    """
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = _tensor(np.arange(0, input.numel(), max(input.shape[1], 1)) if input.shape[1] else
                          np.zeros(input.shape[0], dtype=np.int64), device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    first = int(offsets._host().reshape(-1)[0]) if offsets.numel() else 0
    if first != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {first}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-n} through {n - 1}, but got "
                               f"{padding_idx}")
        padding_idx %= n
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    out, _ = _nn.embedding_bag(weight, input, offsets, mode, per_sample_weights, padding_idx,
                               bool(include_last_offset))
    return out


def one_hot(tensor, num_classes=-1):
    """One-hot encodes int64 class indices: shape (*, num_classes), dtype int64.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.one_hot(rg.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    return _nn.one_hot(tensor, num_classes)


def pad(input, pad, mode="constant", value=None):  # noqa: A002 - PyTorch's name
    """Pads the last ``len(pad) // 2`` dims: ``pad = (left, right, top, bottom, ...)``, last dim first.

    Modes: ``"constant"`` (with ``value``, negative amounts crop), ``"reflect"``, ``"replicate"``,
    ``"circular"``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.pad(rg.tensor([[1., 2.]]), (1, 0))
        tensor([[0., 1., 2.]])
    """
    pad = tuple(int(p) for p in pad)
    if mode == "constant":
        return _nn.constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    n = len(pad) // 2
    if n not in (1, 2, 3) or input.dim() not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    for k in range(n):
        d = input.dim() - 1 - k
        lo, hi, size = pad[2 * k], pad[2 * k + 1], input.shape[d]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + lo + hi <= 0 or mode == "replicate" and size == 0:
            raise RuntimeError(f"input (H: {size}) is too small. Calculated output H: {size + lo + hi}")
    if mode == "reflect":
        return _nn.reflection_pad(input, pad)
    if mode == "replicate":
        return _nn.replication_pad(input, pad)
    out = input  # circular: PyTorch copies slices (CopySlices); here a chain of index_select
    for k in range(n):
        d = input.dim() - 1 - k
        pos = _nn.pad_positions(input.shape[d], pad[2 * k], pad[2 * k + 1], "circular")
        out = out.index_select(d, _tensor(pos, device=input.device))
    return out


# -- normalization ------------------------------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalizes over the trailing ``normalized_shape`` dims, then applies the elementwise affine.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.layer_norm(rg.tensor([[1., 3.]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(normalized_shape):]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(normalized_shape)}")
    return _nn.layer_norm(input, normalized_shape, weight, bias, eps)[0]  # native_layer_norm's output


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalization over dim 1 (channels) of (N, C, *).

    In training mode, normalizes with the batch's statistics and updates ``running_mean`` and
    ``running_var`` (unbiased) in place by ``momentum``; otherwise uses the running statistics.

    Raises:
        ValueError: in training mode with a single value per channel.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.batch_norm(rg.tensor([[1.], [3.]]), None, None, training=True)
        tensor([[-1.0000],
                [ 1.0000]])
    """
    c = input.shape[1] if input.dim() > 1 else 0
    shape = (1, c) + (1,) * (input.dim() - 2)
    if training:
        count = input.numel() // max(c, 1)
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{list(input.shape)}")
        out, mean, var = _nn.native_batch_norm(input, weight, bias, eps)
        if running_mean is not None or running_var is not None:
            with _grad_mode.no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(var.to(running_var.dtype) * (momentum * count / (count - 1)))
        return out
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    # Evaluation: an affine map with fixed statistics, exact as a composite.
    scale = (running_var.reshape(shape) + eps).rsqrt()
    out = (input - running_mean.reshape(shape)) * scale
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalizes each group of ``num_groups`` channel groups over its channels and positions, then the affine.

    Raises:
        RuntimeError: if the number of channels is not divisible by ``num_groups``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.group_norm(rg.tensor([[1., 3., 5., 9.]]), 2)
        tensor([[-1.0000,  1.0000, -1.0000,  1.0000]])
    """
    if input.dim() < 2 or input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    return _nn.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalizes each channel of each sample over its positions: batch norm of (1, N * C, *).

    With ``use_input_stats`` the running statistics (if given) are updated by the batch's mean over
    the samples; otherwise they normalize.

    Raises:
        ValueError: with a single position per channel while using the input's statistics.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.instance_norm(rg.tensor([[[1., 3.], [0., 4.]]]))
        tensor([[[-1.0000,  1.0000],
                 [-1.0000,  1.0000]]])
    """
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    n, c = input.shape[0], input.shape[1]
    if input.numel() // (n * c) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    x = input.reshape((1, n * c) + tuple(input.shape[2:]))
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    out = batch_norm(x, None, None, w, b, True, momentum, eps).reshape(input.shape)
    if running_mean is not None or running_var is not None:
        with _grad_mode.no_grad():
            dims = tuple(range(2, input.dim()))
            count = input.numel() // (n * c)
            d = input.detach()
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(d.mean(dims).mean(0).to(running_mean.dtype) * momentum)
            if running_var is not None:
                var = d.var(dims, correction=0).mean(0) * (count / (count - 1))
                running_var.mul_(1 - momentum).add_(var.to(running_var.dtype) * momentum)
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the trailing ``normalized_shape`` dims, times ``weight``.

    ``eps`` None is the machine epsilon of the input's dtype, as PyTorch.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.rms_norm(rg.tensor([[3., 4.]]), (2,), eps=0.)
        tensor([[0.8485, 1.1314]])
    """
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(normalized_shape):]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*{', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input`` divided by its ``p``-norm over ``dim``, the norm held at ``eps`` or more.

    Args:
        p: the exponent of the norm.
        dim: the dimension, or dimensions, the norm runs over.
        eps: the smallest norm divided by, so that a zero vector stays zero.
        out: a tensor to write the result into; as PyTorch, it records no graph.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.normalize(rg.tensor([[3., 4.], [0., 0.]]))
        tensor([[0.6000, 0.8000],
                [0.0000, 0.0000]])
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _div(input, denom, out=out)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divides each channel by (k + alpha * mean of the squares of ``size`` neighbouring channels) ** beta.

    Raises:
        ValueError: for an input of fewer than 3 dims.
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality{' ' * 26}input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = pad(input * input, (0, 0) * (input.dim() - 2) + (size // 2, (size - 1) // 2))
    total = sq.narrow(1, 0, c)
    for j in range(1, size):
        total = total + sq.narrow(1, j, c)
    return input / (total * (alpha / size) + k) ** beta


# -- activations -----------------------------------------------------------------------------------
def relu(input, inplace=False):
    """max(input, 0); ``inplace`` writes into ``input``."""
    return input.relu_() if inplace else _relu(input)


def sigmoid(input):
    """1 / (1 + exp(-input))."""
    return input.sigmoid()


def tanh(input):
    """The hyperbolic tangent."""
    return input.tanh()


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.softplus(rg.tensor([0.]))
        tensor([0.6931])
    """
    return _nn.softplus(input, beta, threshold)


def gelu(input, approximate="none"):
    """x * Phi(x) (Phi the standard normal CDF), or its tanh approximation with ``approximate='tanh'``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.gelu(rg.tensor([1.]))
        tensor([0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _nn.gelu(input, approximate)


def _activation(op, inplace, input, *args):
    """``op(input, *args)`` (every argument given), or written into ``input`` (an in-place op) where ``inplace``."""
    return _apply_inplace(op.op, (input,) + args) if inplace else op(input, *args)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return _activation(_nn.silu, inplace, input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    return _activation(_nn.leaky_relu, inplace, input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return _activation(_nn.elu, inplace, input, alpha, 1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalizing constants (alpha ~ 1.6733, scale ~ 1.0507).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.selu(rg.tensor([1.]))
        tensor([1.0507])
    """
    return _activation(_nn.elu, inplace, input, _SELU_ALPHA, _SELU_SCALE)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    Raises:
        RuntimeError: for ``alpha == 0``.
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _activation(_nn.celu, inplace, input, alpha)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to [min_val, max_val]; the gradient is 0 outside (and on the bounds).

    Raises:
        ValueError: if ``min_val > max_val``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.hardtanh(rg.tensor([-2., 0.5, 3.]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _activation(_nn.hardtanh, inplace, input, min_val, max_val)


def relu6(input, inplace=False):
    """min(max(x, 0), 6): ``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def threshold(input, threshold, value, inplace=False):  # noqa: A002 - PyTorch's names
    """x where x > threshold, else value."""
    return _activation(_nn.threshold, inplace, input, threshold, value)


def threshold_(input, threshold, value):  # noqa: A002 - PyTorch's names
    """``threshold`` written into ``input``: x where x > threshold, else value.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.threshold_(rg.tensor([-1., 2.]), 0., 5.)
        tensor([5., 2.])
    """
    return _activation(_nn.threshold, True, input, threshold, value)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return _activation(_nn.hardsigmoid, inplace, input)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    return _activation(_nn.hardswish, inplace, input)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _activation(_nn.mish, inplace, input)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return _nn.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    return _nn.softshrink(input, lambd)


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def glu(input, dim=-1):
    """The gated linear unit: a * sigmoid(b), for ``input`` split in halves a, b along ``dim``.

    Raises:
        RuntimeError: if that dim's size is odd.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.glu(rg.tensor([2., 0.]))
        tensor([1.])
    """
    return _nn.glu(input, dim)


def prelu(input, weight):
    """x where x > 0, else weight * x, with one learned slope per channel (dim 1) or one for all.

    Raises:
        RuntimeError: if the weight's size is neither 1 nor the number of channels.
    """
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    return _nn.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with a random slope in [lower, upper] per element when ``training``, else their mean.

    The slopes come from retrograd's default generator.
    """
    if training:
        noise = _drawn(input, tuple(input.shape), lambda size: [_default_generator.np.uniform(lower, upper, size)])[0]
        slope = _where(input >= 0, 1.0, noise)  # PyTorch's noise: 1 where the input is non-negative
    else:
        slope = (lower + upper) / 2
    return _activation(_nn.rrelu_with_noise, inplace, input, slope)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``."""
    return _softmax(input, _softmax_dim(input.dim()) if dim is None else dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``."""
    return _softmax(-input, _softmax_dim(input.dim()) if dim is None else dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - logsumexp(x) along ``dim``."""
    return _log_softmax(input, _softmax_dim(input.dim()) if dim is None else dim, dtype)


# -- losses (in _losses.py) -------------------------------------------------------------------------
from ._losses import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,  # noqa: E402
                      cosine_similarity, cross_entropy, ctc_loss, gaussian_nll_loss, hinge_embedding_loss, huber_loss,
                      kl_div, l1_loss, logsigmoid, margin_ranking_loss, mse_loss, multilabel_soft_margin_loss, nll_loss,
                      pairwise_distance, poisson_nll_loss, smooth_l1_loss, soft_margin_loss, triplet_margin_loss)
from ._attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402,F401
__all__ += ["multi_head_attention_forward", "scaled_dot_product_attention"]  # noqa: E402

# -- bilinear, channel_shuffle, gumbel_softmax, the margin losses, the in-place activations (in _functional_more.py)
from ._functional_more import (bilinear, channel_shuffle, gumbel_softmax, inplace_forms,  # noqa: E402
                               multi_margin_loss, multilabel_margin_loss, native_channel_shuffle,
                               triplet_margin_with_distance_loss)
relu_, elu_, celu_, selu_, leaky_relu_, hardtanh_, rrelu_ = inplace_forms(globals())
__all__ += ["bilinear", "channel_shuffle", "native_channel_shuffle", "gumbel_softmax", "multi_margin_loss",  # noqa: E402
            "multilabel_margin_loss", "triplet_margin_with_distance_loss", "relu_", "elu_", "celu_", "selu_",
            "leaky_relu_", "hardtanh_", "rrelu_"]

# -- affine_grid and grid_sample (in _grid.py) ---------------------------------------------------------------------
from ._grid import GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES, affine_grid, grid_sample  # noqa: E402,F401
__all__ += ["affine_grid", "grid_sample"]  # noqa: E402
