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

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "dropout",
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
    """A ``nd``-d convolution (1 or 2) as im2col and one ``convolution`` op; see Note [Convolution as im2col]."""
    input, unbatched = _conv_input(name, input, weight, nd)
    stride, dilation = _ntuple(stride, nd, "stride"), _ntuple(dilation, nd, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    kernel = tuple(weight.shape[2:])
    x = input.unsqueeze(2) if nd == 1 else input  # the column ops work on (N, C, H, W)
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
    h, w = x.shape[2], x.shape[3]
    eff = [dd * (k - 1) + 1 for dd, k in zip(d2, k2, strict=True)]
    padded = [h + 2 * p2[0], w + 2 * p2[1]]
    if padded[0] < eff[0] or padded[1] < eff[1]:
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded[2 - nd:]))}). "
                           f"Kernel size: ({' x '.join(map(str, eff[2 - nd:]))}). Kernel size can't be greater than "
                           f"actual input size")
    columns = _nn.im2col(x, k2, d2, p2, s2)
    out_size = (_nn.conv_out_size(h, k2[0], s2[0], p2[0], d2[0]), _nn.conv_out_size(w, k2[1], s2[1], p2[1], d2[1]))
    out = _nn.convolution(columns, weight, bias, out_size[2 - nd:], groups)
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
    return _conv("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


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
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(
            f"{what}_{axis}: {v[i]}" for what, v in zip(("output_padding", "stride", "dilation"), values, strict=True)
            for i, axis in enumerate(("height", "width"))))
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
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    out, idx = _nn.max_pool2d_with_indices(input, k, s, p, d, bool(ceil_mode))  # unbatched too: one node
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
