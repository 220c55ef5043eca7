"""The ``reduction`` argument of the losses, and PyTorch's deprecated ``size_average``/``reduce``."""
from __future__ import annotations

import warnings


def legacy_reduction(size_average, reduce, reduction):
    """The reduction named by the deprecated flags when either is given, else ``reduction``."""
    if size_average is None and reduce is None:
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' instead.",
                  stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def reduce_loss(losses, reduction):
    """Applies ``reduction`` ('none', 'mean' or 'sum') to elementwise losses."""
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.mean()
