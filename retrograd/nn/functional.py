"""``retrograd.nn.functional``: PyTorch's ``torch.nn.functional`` names and arguments.

Primitives (convolution, pooling, normalization, activations, embedding, padding) are ops
declared in ``retrograd/ops/nn.py``; this module checks arguments the way PyTorch does and
composes the rest (linear, dropout, the losses) from registered ops.
"""
from __future__ import annotations

import numpy as np

from .._creation import tensor as _tensor
from .._random import default_generator as _default_generator
from ..autograd import grad_mode as _grad_mode
from ..ops import nn as _nn
from ..ops import log_softmax as _log_softmax, relu as _relu, softmax as _softmax

__all__ = ["conv1d", "conv2d", "unfold", "fold", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "dropout",
           "embedding", "layer_norm", "batch_norm", "linear", "one_hot", "pad", "softplus", "gelu", "silu",
           "leaky_relu", "elu", "relu", "sigmoid", "tanh", "softmax", "log_softmax", "cross_entropy", "nll_loss",
           "mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "smooth_l1_loss",
           "huber_loss", "kl_div", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "logsigmoid",
           "multilabel_soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss", "pairwise_distance",
           "cosine_similarity", "cosine_embedding_loss", "triplet_margin_loss"]


def _pair(x, name="argument"):
    if isinstance(x, (tuple, list)):
        if len(x) == 1:
            return (int(x[0]), int(x[0]))
        if len(x) != 2:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 values to match the "
                               f"convolution dimensions, but got {name}={list(x)}")
        return (int(x[0]), int(x[1]))
    return (int(x), int(x))


# -- convolution ----------------------------------------------------------------------------------
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
    unbatched = input.dim() == 3
    if unbatched:
        input = input.unsqueeze(0)
    if input.dim() != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
                           f"{list(input.shape)}")
    if weight.dim() != 4:
        raise RuntimeError("weight should have at least three dimensions")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    kh, kw = weight.shape[2], weight.shape[3]
    if isinstance(padding, str):
        padding, input = _string_padding(input, padding, (kh, kw), stride, dilation)
    else:
        padding = _pair(padding, "padding")
    n, c, h, w = input.shape
    if c != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {c} channels "
                           f"instead")
    if weight.shape[0] % groups:
        raise RuntimeError("Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight "
                           "of size {} instead".format(groups, groups, list(weight.shape)))
    eh, ew = dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1
    if h + 2 * padding[0] < eh or w + 2 * padding[1] < ew:
        raise RuntimeError(f"Calculated padded input size per channel: ({h + 2 * padding[0]} x {w + 2 * padding[1]})."
                           f" Kernel size: ({eh} x {ew}). Kernel size can't be greater than actual input size")
    columns = _nn.im2col(input, (kh, kw), dilation, padding, stride)
    out_size = (_nn.conv_out_size(h, kh, stride[0], padding[0], dilation[0]),
                _nn.conv_out_size(w, kw, stride[1], padding[1], dilation[1]))
    out = _nn.convolution(columns, weight, bias, out_size, groups)
    return out.squeeze(0) if unbatched else out


def _string_padding(input, padding, kernel, stride, dilation):
    if padding == "valid":
        return (0, 0), input
    if padding != "same":
        raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    if stride != (1, 1):
        raise ValueError("padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
    sym = tuple(t // 2 for t in total)
    if all(t % 2 == 0 for t in total):
        return sym, input
    # odd total padding: the extra element goes on the right/bottom, as PyTorch
    extra = [t - 2 * s for t, s in zip(total, sym, strict=True)]
    return sym, pad(input, (0, extra[1], 0, extra[0]))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1-d convolution over an input of shape (N, C, L) or (C, L); see ``conv2d``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.conv1d(rg.ones(1, 1, 4), rg.ones(1, 1, 2))
        tensor([[[2., 2., 2.]]])
    """
    def one(v):
        return v[0] if isinstance(v, (tuple, list)) else v
    if isinstance(padding, str):
        pad2 = padding
    else:
        pad2 = (0, one(padding))
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
                           f"{list(input.shape)}")
    out = conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, one(stride)), pad2, (1, one(dilation)),
                 groups)
    return out.squeeze(-2)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks: (N, C, H, W) -> (N, C*kH*kW, L), as ``torch.nn.functional.unfold``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.unfold(rg.ones(1, 2, 3, 3), 2).shape
        retrograd.Size([1, 8, 4])
    """
    if input.dim() != 4:
        raise NotImplementedError("Input Error: Only 4D input Tensors are supported (got {}D)".format(input.dim()))
    return _nn.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding local blocks back into an image: the adjoint of ``unfold``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.fold(rg.ones(1, 4, 4), (3, 3), 2)[0, 0]
        tensor([[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]])
    """
    if input.dim() != 3:
        raise NotImplementedError("Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.dim()}D)")
    return _nn.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
                      _pair(stride))


# -- pooling -------------------------------------------------------------------------------------
def _pool_args(kernel_size, stride, padding, dilation=1):
    k = _pair(kernel_size)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _pair(stride)
    p, d = _pair(padding), _pair(dilation)
    for pi, ki, di in zip(p, k, d, strict=True):
        if pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                               f"kernel_size={ki} and dilation={di}")
    return k, s, p, d


def _batched(input, name):
    if input.dim() == 3:
        return input.unsqueeze(0), True
    if input.dim() != 4:
        raise RuntimeError(f"{name}: Expected 3D or 4D tensor, but got {list(input.shape)}")
    return input, False


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling over (N, C, H, W) or (C, H, W); with ``return_indices`` also the flat argmax indices.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.max_pool2d(rg.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation)
    x, unbatched = _batched(input, "max_pool2d")
    out, idx = _nn.max_pool2d_with_indices(x, k, s, p, d, bool(ceil_mode))
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


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
    (kh, kw), (sh, sw), (ph, pw), _ = _pool_args(kernel_size, stride, padding)
    x, unbatched = _batched(input, "avg_pool2d")
    n, c, h, w = x.shape
    oh = _nn.pool_out_size(h, kh, sh, ph, 1, ceil_mode)
    ow = _nn.pool_out_size(w, kw, sw, pw, 1, ceil_mode)
    xs = x.reshape(n * c, 1, h, w)
    extra_h = max(0, (oh - 1) * sh + kh - (h + 2 * ph))
    extra_w = max(0, (ow - 1) * sw + kw - (w + 2 * pw))
    if extra_h or extra_w:  # ceil_mode windows that run past the padding: zeros that the divisor ignores
        xs = pad(xs, (0, extra_w, 0, extra_h))
    sums = unfold(xs, (kh, kw), padding=(ph, pw), stride=(sh, sw)).sum(1)
    if divisor_override:
        out = sums / divisor_override
    else:
        lo = (0, 0) if count_include_pad else (ph, pw)
        hi = (h + 2 * ph, w + 2 * pw) if count_include_pad else (h + ph, w + pw)
        count_h = _window_counts(oh, sh, kh, lo[0], hi[0])
        count_w = _window_counts(ow, sw, kw, lo[1], hi[1])
        div = np.outer(count_h, count_w).reshape(-1)
        out = sums / _tensor(div, dtype=sums.dtype, device=sums.device)
    out = out.reshape(n, c, oh, ow)
    return out.squeeze(0) if unbatched else out


def _window_counts(out, stride, kernel, lo, hi):
    """How many positions of each window (in padded coordinates) fall within [lo, hi)."""
    start = np.arange(out) * stride
    return np.clip(np.minimum(start + kernel, hi) - np.maximum(start, lo), 0, None).astype(np.float64)


def _adaptive_matrix(in_size, out_size):
    m = np.zeros((out_size, in_size))
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = -((-(i + 1) * in_size) // out_size)
        m[i, start:end] = 1.0 / (end - start)
    return m


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size, with PyTorch's window bounds (floor start, ceil end).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.adaptive_avg_pool2d(rg.ones(1, 2, 5, 7), 1).shape
        retrograd.Size([1, 2, 1, 1])
    """
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    h, w = input.shape[-2], input.shape[-1]
    oh, ow = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    oh, ow = h if oh is None else oh, w if ow is None else ow
    if oh == h and ow == w:
        return input.clone()
    if h % oh == 0 and w % ow == 0:
        return avg_pool2d(input, (h // oh, w // ow))
    # Windows are products of a row range and a column range: pool rows, then columns, by matrices.
    mh = _tensor(_adaptive_matrix(h, oh), dtype=input.dtype, device=input.device)
    mw = _tensor(_adaptive_matrix(w, ow).T.copy(), dtype=input.dtype, device=input.device)
    return mh.matmul(input).matmul(mw)


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
    if p == 1.0:
        mask = np.zeros(input.shape, dtype=input._data.dtype)
    else:
        keep = _default_generator.np.random(input.shape) >= p
        mask = keep.astype(input._data.dtype) * np.asarray(1.0 / (1.0 - p), dtype=input._data.dtype)
    m = _tensor(mask, device=input.device)
    return input.mul_(m) if inplace else input * m


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``, as ``torch.nn.functional.linear``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.linear(rg.ones(1, 3), rg.ones(2, 3), rg.tensor([0., 1.]))
        tensor([[3., 4.]])
    """
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
        raise ValueError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    out = input
    for k in range(len(pad) // 2):
        d = input.dim() - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        size = input.shape[d]
        pos = np.arange(-lo, size + hi)
        if mode == "reflect":
            if lo >= size or hi >= size:
                raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension,"
                                   f" but got: padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}")
            period = 2 * (size - 1) if size > 1 else 1
            pos = np.abs(pos) % period
            pos = np.where(pos >= size, period - pos, pos)
        elif mode == "replicate":
            pos = np.clip(pos, 0, size - 1)
        else:
            if lo > size or hi > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            pos = pos % size
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
    return _nn.layer_norm(input, normalized_shape, weight, bias, eps)


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


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return _nn.silu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    return _nn.leaky_relu(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return _nn.elu(input, alpha)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``."""
    return _softmax(input, _softmax_dim(input.dim()) if dim is None else dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - logsumexp(x) along ``dim``."""
    return _log_softmax(input, _softmax_dim(input.dim()) if dim is None else dim, dtype)


# -- losses (in _losses.py) -------------------------------------------------------------------------
from ._losses import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,  # noqa: E402
                      cosine_similarity, cross_entropy, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div,
                      l1_loss, logsigmoid, margin_ranking_loss, mse_loss, multilabel_soft_margin_loss, nll_loss,
                      pairwise_distance, poisson_nll_loss, smooth_l1_loss, soft_margin_loss, triplet_margin_loss)
from ._attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402,F401
__all__ += ["multi_head_attention_forward", "scaled_dot_product_attention"]  # noqa: E402
