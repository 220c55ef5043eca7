"""PyTorch's top-level names of ops that live in ``nn.functional`` and ``linalg`` here: ``torch.conv2d``,
``torch.layer_norm``, ``torch.det``, ``torch.svd``..., and the names PyTorch keeps only to say they were removed.

Note [Top-level names of functional ops]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Where ``torch.<name>`` has the signature of ``torch.nn.functional.<name>`` it is that function. Where it is an
ATen binding of another signature (``torch.dropout(input, p, train)``, ``torch.layer_norm(..., cudnn_enable)``,
``torch.kl_div(input, target, reduction=1)`` with the reduction as an int, ``torch.embedding(weight, indices)``
with its arguments swapped), the name here takes PyTorch's arguments and calls the functional op, so the graph
recorded is the functional op's. The old linear-algebra names are the ``linalg`` ops under their old
conventions (``torch.svd`` returns V, not Vh; ``torch.qr(some=)``; ``torch.triangular_solve(b, A)``).
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
import scipy.special

from . import _creation, _dtype, linalg
from ._size import Size
from ._tensor import Tensor
from .nn import functional as F
from .ops import pointwise

__all__ = []


def exporter(namespace):
    """The decorator that puts a function into module ``namespace`` (its ``globals()``) and its ``__all__``
    under ``name`` (default: its own), and onto Tensor too with ``method=True``."""
    def export(fn, name=None, method=False):
        name = name or fn.__name__
        fn.__name__ = fn.__qualname__ = name
        namespace[name] = fn
        namespace["__all__"].append(name)
        if method:
            setattr(Tensor, name, fn)
        return fn
    return export


_export = exporter(globals())


# -- the functional ops of the same signature --------------------------------------------------------------------
for _name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
              "hardshrink", "pixel_shuffle", "pixel_unshuffle", "cosine_similarity", "pairwise_distance", "avg_pool1d", "adaptive_avg_pool1d"):
    globals()[_name] = getattr(F, _name)
    __all__.append(_name)
Tensor.prelu = F.prelu
Tensor.hardshrink = F.hardshrink

_REDUCTIONS = ("none", "mean", "sum")  # PyTorch's reduction enum: 0, 1, 2


def _reduction(value):
    return _REDUCTIONS[value] if isinstance(value, int) else value


# -- activations ---------------------------------------------------------------------------------------------------
def celu(input, alpha=1.0):
    """``nn.functional.celu``: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return F.celu(input, alpha)


def celu_(input, alpha=1.0):
    """In-place version of ``celu``."""
    return F.celu(input, alpha, inplace=True)


def selu(input):
    """``nn.functional.selu``: the scaled exponential linear unit."""
    return F.selu(input)


def selu_(input):
    """In-place version of ``selu``."""
    return F.selu(input, inplace=True)


def rrelu(input, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """``nn.functional.rrelu``: a leaky ReLU whose slope is drawn from [lower, upper] in training."""
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    """In-place version of ``rrelu``."""
    return F.rrelu(input, lower, upper, training, inplace=True)


for _fn in (celu, celu_, selu, selu_, rrelu, rrelu_):
    _export(_fn)


# -- dropout: (input, p, train), all required ----------------------------------------------------------------------
def _check_p(p):
    """ATen's check of a dropout probability (nn.functional's raises a ValueError, ATen's a RuntimeError)."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def _feature_dropout(input, p, train, alpha, inplace):
    """Drops whole features (dims after the first two are one feature) as PyTorch's feature dropouts: a noise
    tensor of shape ``(N, C, 1, ...)`` times the input (``MulBackward0``)."""
    _check_p(p)
    if not train or p == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    noise_shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    if not alpha:
        noise = _creation.empty(noise_shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
        if p < 1:
            noise.div_(1 - p)
        return input.mul_(noise) if inplace else input * noise
    return F.feature_alpha_dropout(input, p, train, inplace)


def _dropout_names():
    def dropout(input, p, train):
        """``nn.functional.dropout(input, p, train)``: each element zeroed with probability ``p``, the rest scaled."""
        _check_p(p)
        return F.dropout(input, p, train)

    def dropout_(input, p, train):
        """In-place version of ``dropout``."""
        _check_p(p)
        return F.dropout(input, p, train, inplace=True)

    def alpha_dropout(input, p, train):
        """``nn.functional.alpha_dropout(input, p, train)``: dropout that keeps SELU's mean and variance."""
        _check_p(p)
        return F.alpha_dropout(input, p, train)

    def alpha_dropout_(input, p, train):
        """In-place version of ``alpha_dropout``."""
        _check_p(p)
        return F.alpha_dropout(input, p, train, inplace=True)

    def feature_dropout(input, p, train):
        """Dropout of whole channels (dim 1 of an ``(N, C, ...)`` input), the kept ones scaled by ``1 / (1 - p)``."""
        return _feature_dropout(input, p, train, False, False)

    def feature_dropout_(input, p, train):
        """In-place version of ``feature_dropout``."""
        return _feature_dropout(input, p, train, False, True)

    def feature_alpha_dropout(input, p, train):
        """``nn.functional.feature_alpha_dropout(input, p, train)``."""
        return _feature_dropout(input, p, train, True, False)

    def feature_alpha_dropout_(input, p, train):
        """In-place version of ``feature_alpha_dropout``."""
        return _feature_dropout(input, p, train, True, True)
    return (dropout, dropout_, alpha_dropout, alpha_dropout_, feature_dropout, feature_dropout_,
            feature_alpha_dropout, feature_alpha_dropout_)


for _fn in _dropout_names():
    _export(_fn)


# -- normalizations: ATen's argument order, with the cuDNN switch PyTorch takes and ignores on a CPU ---------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``nn.functional.layer_norm``; ``cudnn_enable`` is ignored."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``nn.functional.group_norm``; ``cudnn_enabled`` is ignored."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``nn.functional.batch_norm`` with ATen's argument order (weight and bias first); ``cudnn_enabled`` is
    ignored."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """``nn.functional.instance_norm`` with ATen's argument order; ``cudnn_enabled`` is ignored."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``nn.functional.embedding(indices, weight)``: the weight first, and -1 for no padding index."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


for _fn in (layer_norm, group_norm, batch_norm, instance_norm, embedding):
    _export(_fn)


# -- losses: the reduction as PyTorch's enum (0 none, 1 mean, 2 sum); PyTorch's Python bindings default to 0 ---------
def kl_div(input, target, reduction=0, *, log_target=False):
    """The Kullback-Leibler divergence, elementwise by default; reduction 1 is the mean over every element."""
    if _reduction(reduction) == "mean":  # the elementwise mean, without nn.functional's warning about it
        return F.kl_div(input, target, reduction="none", log_target=log_target).mean()
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """``nn.functional.binary_cross_entropy_with_logits``, ``pos_weight`` before the reduction (an int)."""
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``nn.functional.margin_ranking_loss``, the reduction an int."""
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``nn.functional.hinge_embedding_loss``, the reduction an int."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=0):
    """``nn.functional.triplet_margin_loss``, the reduction an int."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``nn.functional.cosine_embedding_loss``, the reduction an int."""
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``nn.functional.poisson_nll_loss`` with every argument given, the reduction an int."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


for _fn in (kl_div, binary_cross_entropy_with_logits, margin_ranking_loss, hinge_embedding_loss, triplet_margin_loss,
            cosine_embedding_loss, poisson_nll_loss):
    _export(_fn)


# -- pooling: ATen's stride default ``[]`` is the kernel size ---------------------------------------------------------
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``nn.functional.max_pool1d`` without indices; an empty ``stride`` is the kernel size."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``nn.functional.max_pool2d`` without indices; an empty ``stride`` is the kernel size."""
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``nn.functional.max_pool3d`` without indices; an empty ``stride`` is the kernel size."""
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    """``nn.functional.adaptive_max_pool1d`` with its indices: ``(values, indices)``."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


for _fn in (max_pool1d, max_pool2d, max_pool3d, adaptive_max_pool1d):
    _export(_fn)


# -- linear algebra under the old names -----------------------------------------------------------------------------
def det(input):
    """``linalg.det``: the determinant of each square matrix of ``input``."""
    return linalg.det(input)


def inverse(input):
    """``linalg.inv``: the inverse of each square matrix of ``input``."""
    return linalg.inv(input)


def pinverse(input, rcond=1e-15):
    """``linalg.pinv`` with singular values below ``rcond`` times the largest taken as zero."""
    return linalg.pinv(input, rtol=rcond)


def matrix_exp(input):
    """``linalg.matrix_exp``: the matrix exponential of each square matrix of ``input``."""
    return linalg.matrix_exp(input)


def qr(input, some=True):
    """``linalg.qr`` with ``some`` for ``mode``: the reduced factorization, or the complete one."""
    return linalg.qr(input, "reduced" if some else "complete")


def svd(input, some=True, compute_uv=True):
    """The singular value decomposition ``input = U diag(S) V^H`` as ``(U, S, V)``: V itself, not ``linalg.svd``'s Vh.

    ``some=False`` gives square U and V; ``compute_uv=False`` gives the singular values and square zero-filled U
    and V, as PyTorch's.
    """
    if not compute_uv:
        s = linalg.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        return _svd_result(_creation.zeros(batch + (m, m), dtype=input.dtype, device=input.device), s,
                           _creation.zeros(batch + (n, n), dtype=input.dtype, device=input.device))
    u, s, vh = linalg.svd(input, full_matrices=not some)
    return _svd_result(u, s, vh.mH)


_svd_result = namedtuple("svd", ["U", "S", "V"])

for _fn in (det, inverse, pinverse, matrix_exp, qr, svd):
    _export(_fn, method=True)


# -- names PyTorch keeps only to raise -------------------------------------------------------------------------------
def _removed(name, instead, method):
    def removed(*args, **kwargs):
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. Use {instead} "
                           f"instead.")
    removed.__doc__ = f"Removed from PyTorch in 1.9: raises, naming ``{instead}``."
    return _export(removed, name, method)


_removed("eig", "retrograd.linalg.eigh (retrograd has no complex dtypes for a general eig)", True)
_removed("symeig", "retrograd.linalg.eigh", True)
_removed("lstsq", "retrograd.linalg.lstsq, whose arguments are reversed", True)
_removed("solve", "retrograd.linalg.solve, whose arguments are reversed", True)
_removed("matrix_rank", "retrograd.linalg.matrix_rank", False)


# -- shapes and indices ------------------------------------------------------------------------------------------------
def broadcast_shapes(*shapes):
    """The shape tensors of ``shapes`` broadcast to, without making them.

    Raises:
        RuntimeError: shapes that do not broadcast (PyTorch's error).

    Example::
        >>> import retrograd as rg
        >>> rg.broadcast_shapes((2, 1), (3,))
        retrograd.Size([2, 3])
    """
    shapes = [(shape,) if isinstance(shape, int) else tuple(shape) for shape in shapes]
    out = [1] * max((len(shape) for shape in shapes), default=0)  # as PyTorch's: padded to the longest first
    for i, shape in enumerate(shapes):
        for k in range(1, len(shape) + 1):
            if shape[-k] == 1 or shape[-k] == out[-k]:
                continue
            if out[-k] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[-k]} at {-k}! Mismatching "
                                   f"argument at index {i} had {shape}; but expected shape should be broadcastable "
                                   f"to {out}")
            out[-k] = shape[-k]
    return Size(out)


def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of flat ``indices``: a tuple of int64 tensors, one per dim.

    Raises:
        TypeError: ``indices`` not of an integer dtype (PyTorch's error).

    Example::
        >>> import retrograd as rg
        >>> rg.unravel_index(rg.tensor([5, 7]), (2, 4))
        (tensor([1, 1]), tensor([1, 3]))
    """
    if not isinstance(indices, Tensor):
        indices = _creation.tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    coords = []
    rest = indices.long()
    for size in reversed(shape):
        coords.append(pointwise.remainder(rest, size))
        rest = pointwise.floor_divide(rest, size)
    return tuple(reversed(coords))


_export(broadcast_shapes)
_export(unravel_index)


# -- windows and logspace: factories ------------------------------------------------------------------------------------
def _window(name, shape):
    """PyTorch's window factory ``name``: ``shape(n, N)`` on the positions ``n`` of a symmetric window of length
    ``N``; a periodic window is the symmetric one of length + 1 without its last point."""
    def window(window_length, periodic=True, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        dtype = _dtype.get_default_dtype() if dtype is None else dtype
        if not dtype.is_floating_point:
            raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
        if window_length <= 1:
            values = np.ones(window_length)
        else:
            length = window_length + 1 if periodic else window_length
            values = shape(np.arange(length, dtype=np.float64), length, *args, **kwargs)[:window_length]
        return _creation.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)
    window.__name__ = window.__qualname__ = name
    return window


def _cosine_sum(*coefficients):
    def shape(n, length):
        phase = 2 * math.pi * n / (length - 1)
        return sum(c * np.cos(k * phase) * (-1) ** k for k, c in enumerate(coefficients))
    return shape


hann_window = _window("hann_window", _cosine_sum(0.5, 0.5))
blackman_window = _window("blackman_window", _cosine_sum(0.42, 0.5, 0.08))
bartlett_window = _window("bartlett_window", lambda n, length: 1 - np.abs(2 * n / (length - 1) - 1))
hamming_window = _window("hamming_window", lambda n, length, alpha=0.54, beta=0.46:
                         alpha - beta * np.cos(2 * math.pi * n / (length - 1)))
kaiser_window = _window("kaiser_window", lambda n, length, beta=12.0:
                        scipy.special.i0(beta * np.sqrt(np.clip(1 - (2 * n / (length - 1) - 1) ** 2, 0, None)))
                        / scipy.special.i0(beta))
hann_window.__doc__ = """The Hann window: ``0.5 - 0.5 cos(2 pi n / (N - 1))``, periodic (of ``N = window_length + 1``,
    its last point dropped) by default.

    Example::
        >>> import retrograd as rg
        >>> rg.hann_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
hamming_window.__doc__ = "The Hamming window ``alpha - beta cos(2 pi n / (N - 1))`` (``periodic, alpha, beta``)."
blackman_window.__doc__ = "The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."
bartlett_window.__doc__ = "The Bartlett (triangular) window ``1 - |2 n / (N - 1) - 1|``."
kaiser_window.__doc__ = "The Kaiser window ``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)`` (``periodic, beta``)."


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``steps`` numbers from ``base ** start`` to ``base ** end``, their exponents evenly spaced.

    Example::
        >>> import retrograd as rg
        >>> rg.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    start, end = (float(v.item()) if isinstance(v, Tensor) else v for v in (start, end))
    values = np.power(float(base), np.linspace(start, end, steps))
    if dtype is not None and not dtype.is_floating_point:
        values = np.trunc(values)
    return _creation.tensor(values, dtype=dtype or _dtype.get_default_dtype(), device=device,
                            requires_grad=requires_grad)


for _fn in (hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window, logspace):
    _export(_fn)
