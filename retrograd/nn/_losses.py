"""The losses of ``retrograd.nn.functional``: composites of registered ops, or dedicated ops where
PyTorch has one and the composite would be unstable (the binary cross entropies)."""
from __future__ import annotations

import math
import warnings

from .. import _dtype
from .._creation import tensor as _tensor
from ..amp import autocast_fp32
from ..autograd import grad_mode as _grad_mode
from ..ops import log_softmax as _log_softmax, minimum as _minimum, where as _where
from ..ops import nn as _nn
from ._reduction import legacy_reduction, reduce_loss as _reduce

__all__ = ["nll_loss", "cross_entropy", "mse_loss", "l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss", "logsigmoid", "multilabel_soft_margin_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "pairwise_distance", "cosine_similarity", "cosine_embedding_loss",
           "triplet_margin_loss"]


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input`` (N, C, *).

    One op with its own backward (``NllLossBackward0``, whose own backward is nll_loss again), as
    in PyTorch; with a ``weight`` that requires grad, a composite of gather and sums that is
    differentiable in the weight too.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.nll_loss(rg.tensor([[-1., -2.], [-3., -4.]]), rg.tensor([1, 0]))
        tensor(2.5000)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if target.dtype is not _dtype.int64 and target.dtype is not _dtype.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_dtype.scalar_type_name(target.dtype)}")
    if input.dim() > 1:
        shape, tshape = input._data.shape, target._data.shape
        if not tshape or shape[0] != tshape[0] or shape[2:] != tshape[1:]:
            raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                             f"({tshape[0] if tshape else 0}).")
    c = input._data.shape[1 if input.dim() > 1 else 0]
    tdata = target._data if target._device.type == "cpu" else target._host()
    if tdata.size and not _nn.class_indices_below(tdata, c):  # in range, or out of it, or ignored
        vd = tdata[tdata != ignore_index]
        if vd.size and (vd.min() < 0 or vd.max() >= c):
            raise IndexError(f"Target {int(vd.max() if vd.max() >= c else vd.min())} is out of bounds.")
    if weight is None or not weight.requires_grad:  # PyTorch's own op, NllLossBackward0 (also unbatched)
        return _nn.nll_loss(input, target, weight, reduction, ignore_index)
    squeeze = input.dim() == 1
    if squeeze:  # unbatched (C,), target ()
        input, target = input.unsqueeze(0), target.reshape(1)
    # A weight that requires grad (PyTorch does not differentiate it): the composite, exact in both.
    valid = target != ignore_index
    safe = _where(valid, target, 0).long()
    picked = -input.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = weight.gather(0, safe.reshape(-1)).reshape(safe.shape) * valid
    losses = picked * w
    if reduction == "none":
        return losses.squeeze(0) if squeeze else losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / w.sum()


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits ``input`` (N, C, *) and class indices or class probabilities ``target``.

    Args:
        input: unnormalized logits, (C,), (N, C) or (N, C, d1, ...).
        target: class indices (int, shape without C) or probabilities (float, same shape as input).
        weight: a per-class rescaling (C,).
        ignore_index: an index target that contributes nothing (class-index targets only).
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
        label_smoothing: mixes the target with the uniform distribution by this amount.

    Returns:
        The loss (a scalar unless ``reduction='none'``).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.cross_entropy(rg.zeros(2, 4), rg.tensor([0, 3]))
        tensor(1.3863)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    logp = _log_softmax(input, class_dim)
    probabilities = target._data.shape == input._data.shape  # as PyTorch tells them: by the shape
    if not probabilities and weight is None and label_smoothing <= 0:  # class indices: nll_loss alone
        return nll_loss(logp, target, None, ignore_index=ignore_index, reduction=reduction)
    c = input.shape[class_dim]
    wshape = [1] * input.dim()
    wshape[class_dim] = c
    if probabilities:
        if not target.is_floating_point():
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_dtype.scalar_type_name(target.dtype)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(tuple(wshape))
        losses = -prod.sum(class_dim)
        if reduction == "none":
            return losses
        if reduction == "sum":
            return losses.sum()
        return losses.sum() / (input.numel() // c if input.numel() else 1)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    ignore = target == ignore_index
    smooth = -(logp * weight.reshape(tuple(wshape)) if weight is not None else logp).sum(class_dim)
    smooth = smooth.masked_fill(ignore, 0.)
    if reduction == "none":
        ret = smooth
    elif reduction == "sum":
        ret = smooth.sum()
    elif weight is not None:
        safe = _where(ignore, 0, target).long()
        ret = smooth.sum() / (weight.gather(0, safe.reshape(-1)) * ignore.logical_not().reshape(-1)).sum()
    else:
        ret = smooth.sum() / ignore.logical_not().sum()
    return nll * (1 - label_smoothing) + ret * (label_smoothing / c)


def _check_same_size(input, target, name):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error; a composite ((x - y)^2), exact.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.mse_loss(rg.tensor([1., 2.]), rg.tensor([1., 4.]))
        tensor(2.)
    """
    _check_same_size(input, target, "mse_loss")
    diff = input - target
    return _weighted(diff * diff, weight, input, legacy_reduction(size_average, reduce, reduction), True)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error; a composite (|x - y|, subgradient 0 at 0 as PyTorch).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.l1_loss(rg.tensor([1., 2.]), rg.tensor([1., 4.]))
        tensor(1.)
    """
    _check_same_size(input, target, "l1_loss")
    return _weighted((input - target).abs(), weight, input, legacy_reduction(size_average, reduce, reduction), True)


def _check_no_requires_grad(t, arg, fn):
    """Refuses, with PyTorch's error, a tensor that requires grad where ``fn`` does not differentiate ``arg``."""
    if t is not None and t.requires_grad and _grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{arg}'. This input "
                           "cannot have requires_grad True.")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy between probabilities ``input`` and ``target`` (logs clamped at -100).

    Raises:
        ValueError: if the shapes differ.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.binary_cross_entropy(rg.tensor([0.5]), rg.tensor([1.]))
        tensor(0.6931)
    """
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        weight = weight.expand(tuple(input.shape))  # as PyTorch's, which saves the expanded weight
    _check_no_requires_grad(weight, "weight", "binary_cross_entropy")
    return _nn.binary_cross_entropy(input, target, weight, legacy_reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy on logits, computed stably; ``pos_weight`` weighs the positive term.

    Raises:
        ValueError: if the shapes differ.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.binary_cross_entropy_with_logits(rg.tensor([0.]), rg.tensor([1.]))
        tensor(0.6931)
    """
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _check_no_requires_grad(weight, "weight", "binary_cross_entropy_with_logits")
    _check_no_requires_grad(pos_weight, "pos_weight", "binary_cross_entropy_with_logits")
    return _nn.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                legacy_reduction(size_average, reduce, reduction))


def _weighted(losses, weight, input, reduction, mean_over_weight):
    """Applies an elementwise ``weight`` (PyTorch's newer option of l1/mse/huber) and the reduction."""
    if weight is None:
        return _reduce(losses, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    losses = losses * weight
    if reduction == "mean" and mean_over_weight:
        return losses.sum() / weight.sum()
    return _reduce(losses, reduction)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Smooth L1: ``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (L1 for ``beta=0``).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.smooth_l1_loss(rg.tensor([0.5, 3.0]), rg.tensor([0.0, 0.0]), reduction="none")
        tensor([0.1250, 2.5000])
    """
    _check_same_size(input, target, "smooth_l1_loss")
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = (input - target).abs()
    if beta == 0.0:
        return _reduce(diff, reduction)
    return _reduce(_where(diff < beta, diff * diff * (0.5 / beta), diff - 0.5 * beta), reduction)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Huber loss: ``0.5 d^2`` where ``|d| <= delta``, else ``delta (|d| - 0.5 delta)``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.huber_loss(rg.tensor([0.5, 3.0]), rg.tensor([0.0, 0.0]), delta=2.0, reduction="none")
        tensor([0.1250, 4.0000])
    """
    _check_same_size(input, target, "huber_loss")
    legacy_reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = (input - target).abs()
    losses = _where(diff < delta, diff * diff * 0.5, (diff - 0.5 * delta) * delta)
    return _weighted(losses, weight, input, reduction, mean_over_weight=False)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence ``target * (log(target) - input)`` of log-probabilities ``input``.

    ``reduction='batchmean'`` divides the sum by the batch size (the mathematical KL divergence);
    ``'mean'`` divides by the number of elements, and warns, as PyTorch does.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> p = rg.tensor([[0.25, 0.75]])
        >>> F.kl_div(p.log(), p, reduction="batchmean")
        tensor(0.)
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, "mean")
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    elif reduction != "batchmean":
        legacy_reduction(None, None, reduction)
    if log_target:
        losses = target.exp() * (target - input)
    else:  # xlogy(target, target) - target * input, with 0 log 0 = 0
        positive = target > 0
        losses = target * _where(positive, target, 1.0).log() - target * input
    if reduction == "batchmean":
        total = losses.sum()
        return total / input.shape[0] if input.dim() else total
    return _reduce(losses, reduction)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``: ranks ``input1`` above ``input2`` where target is 1.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.margin_ranking_loss(rg.tensor([1., 2.]), rg.tensor([2., 1.]), rg.tensor([1., 1.]))
        tensor(0.5000)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)  # ClampMinBackward0, as PyTorch's


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where target is 1, ``max(0, margin - input)`` where it is -1 (distances of pairs).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.hinge_embedding_loss(rg.tensor([0.3, 0.2]), rg.tensor([1., -1.]), reduction="none")
        tensor([0.3000, 0.8000])
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    zero = input * 0
    losses = _where(target != 1, (margin - input).clamp(min=0), zero) + _where(target != -1, input, zero)
    return _reduce(losses, reduction)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))`` for targets of 1 and -1.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.soft_margin_loss(rg.tensor([0.0]), rg.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _reduce((-target * input).exp().log1p(), reduction)


def logsigmoid(input):
    """``log(sigmoid(x))``, computed stably as ``-softplus(-x)``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.logsigmoid(rg.tensor([0.0]))
        tensor([-0.6931])
    """
    z = -input
    return -(z.clamp(min=0) + (-z.abs()).exp().log1p())


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """One-versus-all logistic loss over the last (class) dimension, averaged over the classes.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.multilabel_soft_margin_loss(rg.zeros(1, 3), rg.tensor([[1., 0., 1.]]))
        tensor(0.6931)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        losses = losses * weight
    class_dim = input.dim() - 1
    return _reduce(losses.sum(class_dim) / input.shape[class_dim], reduction)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log-likelihood of ``target`` under a Poisson of rate ``exp(input)`` (or ``input``).

    ``full`` adds Stirling's approximation of ``log(target!)`` where target > 1.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.poisson_nll_loss(rg.tensor([0.0]), rg.tensor([1.0]))
        tensor(1.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = _where(big, target, 1.0)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        losses = losses + _where(big, stirling, 0.0)
    return _reduce(losses, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of ``target`` under Gaussians of mean ``input`` and variance ``var``.

    ``var`` may have the input's shape, one dimension fewer, or one dimension of size 1 (shared
    variances); it is clamped at ``eps`` without differentiating the clamp, as PyTorch.

    Raises:
        ValueError: a negative variance, a ``var`` of a shape that does not fit, or a bad reduction.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.gaussian_nll_loss(rg.tensor([0.0]), rg.tensor([0.0]), rg.tensor([1.0]))
        tensor(0.)
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.detach() * 0 + float(var)
    elif var.numel() and float(var.detach().min()) < 0:
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim()
                  and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _grad_mode.no_grad():
        var.clamp_(min=eps)
    losses = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm distance of ``x1`` and ``x2`` along the last dimension (``eps`` added to the difference).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.pairwise_distance(rg.tensor([[0., 0.]]), rg.tensor([[3., 4.]]), eps=0.0)
        tensor([5.])
    """
    ndim = max(x1.dim(), x2.dim())
    return (x1 - x2 + eps).norm(p, ndim - 1 if ndim else None, keepdim=keepdim) if ndim else (x1 - x2 + eps).abs()


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``, each norm clamped below at ``eps``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.cosine_similarity(rg.tensor([[1., 0.]]), rg.tensor([[1., 1.]]))
        tensor([0.7071])
    """
    n1 = x1.norm(2, dim, keepdim=True).clamp(min=eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.cosine_embedding_loss(rg.tensor([[1., 0.]]), rg.tensor([[0., 1.]]), rg.tensor([1.]))
        tensor(1.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim():
        raise RuntimeError(f"cosine_embedding_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    dim = 1 if input1.dim() == 2 else 0
    tiny = 1e-12
    prod = (input1 * input2).sum(dim)
    denom = (((input1 * input1).sum(dim) + tiny) * ((input2 * input2).sum(dim) + tiny)).sqrt()
    cos = prod / denom
    zero = cos * 0
    losses = _where(target == 1, 1 - cos, zero) + _where(target == -1, (cos - margin).clamp(min=0), zero)
    return _reduce(losses, reduction)


@autocast_fp32  # PyTorch's CPU autocast runs it in float32 (Note [CPU autocast] in amp.py)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with the pairwise ``p``-distance.

    ``swap`` uses the smaller of ``d(anchor, negative)`` and ``d(positive, negative)``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> a, pos, neg = rg.tensor([[0., 0.]]), rg.tensor([[0., 1.]]), rg.tensor([[0., 3.]])
        >>> F.triplet_margin_loss(a, pos, neg, eps=0.0)
        tensor(0.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


def _lengths(lengths):
    """Sequence lengths given as a tensor or a sequence of ints, as a tuple of ints."""
    if hasattr(lengths, "_host"):
        return tuple(int(v) for v in lengths._host().reshape(-1))
    if isinstance(lengths, int):
        return (lengths,)
    return tuple(int(v) for v in lengths)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss: -log p(target | input) summed over all alignments.

    Args:
        log_probs: (T, N, C) or unbatched (T, C) log-probabilities (e.g. ``log_softmax`` over C).
        targets: (N, S) padded target sequences, or their 1-d concatenation (no blanks).
        input_lengths, target_lengths: each sample's lengths (tensors or sequences of ints).
        blank: the blank label.
        reduction: ``"mean"`` (each loss divided by its target length, then the batch mean),
            ``"sum"`` or ``"none"``.
        zero_infinity: an impossible target gives loss 0 and gradient 0 instead of inf.

    Returns:
        The loss: 0-d, or (N,) for ``reduction="none"``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> lp = rg.full((2, 1, 2), 0.5).log()
        >>> F.ctc_loss(lp, rg.tensor([[1]]), [2], [1], reduction="sum")
        tensor(0.2877)
    """
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss(): Expected 2D or 3D log_probs, but got {log_probs.dim()}D")
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    n = log_probs.shape[1]
    if len(il) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    for b in range(n):
        if il[b] > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got value "
                               f"{il[b]} (while checking arguments for ctc_loss_allocate_outputs)")
    losses = _nn.ctc_loss(log_probs, targets, il, tl, blank, bool(zero_infinity))
    if zero_infinity:
        losses = _where(losses == math.inf, 0.0, losses)
    if reduction == "none":
        return losses.squeeze(0) if unbatched else losses
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        divisor = _tensor([max(t, 1) for t in tl], dtype=losses.dtype, device=losses.device)
        return (losses / divisor).mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")
