"""The losses of ``retrograd.nn.functional``: composites of registered ops, or dedicated ops where
PyTorch has one and the composite would be unstable (the binary cross entropies)."""
from __future__ import annotations

from .. import _dtype
from ..ops import log_softmax as _log_softmax, where as _where
from ..ops import nn as _nn
from ._reduction import legacy_reduction, reduce_loss as _reduce

__all__ = ["nll_loss", "cross_entropy", "mse_loss", "l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]


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
    if target.dtype not in (_dtype.int64, _dtype.int32, _dtype.uint8, _dtype.int16, _dtype.int8):
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if input.dim() == 1:  # unbatched (C,), target ()
        input, target = input.unsqueeze(0), target.reshape(1)
        squeeze = True
    else:
        squeeze = False
        shape, tshape = input._data.shape, target._data.shape
        if not tshape or shape[0] != tshape[0] or shape[2:] != tshape[1:]:
            raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                             f"({tshape[0] if tshape else 0}).")
    c = input._data.shape[1]
    tdata = target._data if target._device.type == "cpu" else target._host()
    if tdata.size and not (0 <= tdata.min() and tdata.max() < c):  # in range, or out of it, or ignored
        vd = tdata[tdata != ignore_index]
        if vd.size and (vd.min() < 0 or vd.max() >= c):
            raise IndexError(f"Target {int(vd.max() if vd.max() >= c else vd.min())} is out of bounds.")
    if weight is None or not weight.requires_grad:  # PyTorch's own op, NllLossBackward0
        out = _nn.nll_loss(input, target, weight, reduction, ignore_index)
        return out.squeeze(0) if squeeze and reduction == "none" else out
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
    c = input.shape[class_dim]
    wshape = [1] * input.dim()
    wshape[class_dim] = c
    if target.is_floating_point():
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
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
        import warnings
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


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
    return _reduce(diff * diff, legacy_reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean absolute error; a composite (|x - y|, subgradient 0 at 0 as PyTorch).

    Example::
        >>> import retrograd as rg
        >>> import retrograd.nn.functional as F
        >>> F.l1_loss(rg.tensor([1., 2.]), rg.tensor([1., 4.]))
        tensor(1.)
    """
    _check_same_size(input, target, "l1_loss")
    return _reduce((input - target).abs(), legacy_reduction(size_average, reduce, reduction))


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
    losses = _nn.binary_cross_entropy(input, target)
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, legacy_reduction(size_average, reduce, reduction))


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
    losses = _nn.binary_cross_entropy_with_logits(input, target, pos_weight)
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, legacy_reduction(size_average, reduce, reduction))
