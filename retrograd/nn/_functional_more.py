"""More of ``retrograd.nn.functional``: ``bilinear``, ``channel_shuffle``, ``gumbel_softmax``, the in-place
activations (``relu_``, ``elu_``...), and the margin losses ``multi_margin_loss``, ``multilabel_margin_loss`` and
``triplet_margin_with_distance_loss``. Each is a composite of registered ops, so every derivative is exact; where
PyTorch has a dedicated node of its own (``MultiMarginLossBackward0``), the graph here is the composite's.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _creation, _dtype
from ..autograd import grad_mode as _grad_mode
from ..ops import shuffle as _shuffle
from ..ops.pointwise import minimum as _minimum
from ._losses import pairwise_distance as _pairwise_distance
from ._reduction import legacy_reduction, reduce_loss as _reduce

__all__ = ["bilinear", "channel_shuffle", "native_channel_shuffle", "gumbel_softmax", "inplace_forms",
           "multi_margin_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss"]


def bilinear(input1, input2, weight, bias=None):
    """``y = x1^T A x2 + b``: for inputs ``(*, in1)`` and ``(*, in2)`` and a weight ``(out, in1, in2)``, ``(*, out)``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.bilinear(rg.tensor([[1., 2.]]), rg.tensor([[3.]]), rg.ones(1, 2, 1))
        tensor([[9.]])
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got "
                               f"{input1.shape[d]} and {input2.shape[d]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but expected "
                           f"{weight.shape[0]}")
    named = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] if bias is not None
                                                                             else [])
    if len({t.dtype for _, t in named}) > 1:
        raise RuntimeError("All tensors must have the same dtype, got " + ", ".join(
            f"{n}: {_dtype.scalar_type_name(t.dtype).lower()}" for n, t in named))
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, in2)
    mixed = (x1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = (mixed * x2.unsqueeze(1)).sum(-1).view(lead + (out_f,))
    return out if bias is None else out + bias


def channel_shuffle(input, groups):
    """Splits the ``C`` channels of ``(N, C, *)`` into ``groups`` groups and interleaves them: ``(N, g, C/g, *)``
    read as ``(N, C/g, g, *)``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.channel_shuffle(rg.arange(4.).reshape(1, 4, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")
    return _shuffle.channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    """``channel_shuffle`` (PyTorch's native kernel of it)."""
    return channel_shuffle(input, groups)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution of ``logits`` at temperature ``tau``; ``hard``: one-hot in the
    forward, the soft sample's gradient in the backward (straight through).

    The noise is drawn from the default generator (``manual_seed`` fixes it).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.gumbel_softmax(rg.zeros(2, 3), hard=True).sum(-1)
        tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_creation.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# -- the in-place activations ---------------------------------------------------------------------------------
def inplace_forms(F):
    """PyTorch's in-place activations of ``nn.functional`` (``relu_``...) over the namespace ``F`` (a dict) that holds
    the out-of-place ones: functional.py's, which imports this module."""
    def relu_(input):
        """In-place version of ``relu``."""
        return F["relu"](input, inplace=True)

    def elu_(input, alpha=1.0):
        """In-place version of ``elu``."""
        return F["elu"](input, alpha, inplace=True)

    def celu_(input, alpha=1.0):
        """In-place version of ``celu``."""
        return F["celu"](input, alpha, inplace=True)

    def selu_(input):
        """In-place version of ``selu``."""
        return F["selu"](input, inplace=True)

    def leaky_relu_(input, negative_slope=0.01):
        """In-place version of ``leaky_relu``."""
        return F["leaky_relu"](input, negative_slope, inplace=True)

    def hardtanh_(input, min_val=-1.0, max_val=1.0):
        """In-place version of ``hardtanh``."""
        return F["hardtanh"](input, min_val, max_val, inplace=True)

    def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
        """In-place version of ``rrelu``."""
        return F["rrelu"](input, lower, upper, training, inplace=True)
    return relu_, elu_, celu_, selu_, leaky_relu_, hardtanh_, rrelu_


# -- margin losses -----------------------------------------------------------------------------------------
def _check_kernel(input, target, kernel):
    """PyTorch's refusals of its margin-loss kernels: bfloat16, and targets not of class indices."""
    if input.dtype is _dtype.bfloat16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'BFloat16'")
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype.scalar_type_name(target.dtype)}")


def _class_targets(input):
    """``(input as (N, C), whether it was 1-d)``, with PyTorch's check of its shape."""
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0) or (input.dim() < 2 and input.numel() == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    single = input.dim() <= 1
    x = input.reshape(1, -1) if single else input
    return x, single


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """The multi-class hinge loss: per sample, ``sum_{i != y} w[y] * max(0, margin - x[y] + x[i])^p / C``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.multi_margin_loss(rg.tensor([[0.1, 0.2, 0.4, 0.8]]), rg.tensor([3]))
        tensor(0.3250)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.requires_grad and _grad_mode.is_grad_enabled():
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    _check_kernel(input, target, "multi_margin_loss_cpu_kernel")
    x, single = _class_targets(input)
    n, c = x.shape
    if target.numel() != n or target.dim() > 1:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(input.dtype)} but found "
                           f"{_dtype.scalar_type_name(weight.dtype)}")
    t = target.reshape(n, 1)
    idx = np.asarray(t.numpy())
    if ((idx < 0) | (idx >= c)).any():
        raise RuntimeError("target out of range")
    picked = x.gather(1, t)
    hinge = (margin - picked + x).clamp_min(0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[t.reshape(n)].reshape(n, 1)
    others = _creation.tensor(np.arange(c)[None, :] != idx, device=input.device)
    loss = (hinge * others).sum(1) / c
    if single:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: per sample, ``sum_{j in y} sum_{i not in y} max(0, 1 - (x[j] - x[i])) / C``, the
    classes ``y`` read from ``target`` up to its first ``-1``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.multilabel_margin_loss(rg.tensor([[0.1, 0.2, 0.4, 0.8]]), rg.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_kernel(input, target, "multilabel_margin_loss_forward_out_frame")
    x, single = _class_targets(input)
    n, c = x.shape
    expected = [c] if single else [n, c]
    if list(target.shape) != expected and not (single and target.dim() <= 1 and target.numel() == c):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    rows = np.asarray(target.numpy()).reshape(n, c)
    counts = np.zeros((n, c))
    for r in range(n):
        for k in rows[r]:
            if k < 0:
                break
            if k >= c:
                raise RuntimeError("argument #2 'target' is out of range")
            counts[r, k] += 1
    pairs = counts[:, :, None] * (counts == 0)[:, None, :]  # (j a target, i not one)
    hinge = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0)
    weights = _creation.tensor(pairs, dtype=x.dtype, device=input.device)
    loss = (hinge * weights).sum((1, 2)) / c
    if single:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """The triplet loss under any distance: ``max(d(a, p) - d(a, n) + margin, 0)`` (``pairwise_distance`` by
    default; ``swap``: the smaller of ``d(a, n)`` and ``d(p, n)``).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.triplet_margin_with_distance_loss(rg.zeros(1, 2), rg.ones(1, 2), rg.zeros(1, 2),
        ...                                     distance_function=lambda x, y: (x - y).abs().sum(-1))
        tensor(3.)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not a_dim == p_dim == n_dim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = _pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _minimum(dist_neg, distance_function(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    return loss.mean() if reduction == "mean" else loss
