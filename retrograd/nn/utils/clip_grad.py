"""Gradient clipping: by the total norm of all gradients, or elementwise by value.

Every function here works on ``.grad`` in place under ``no_grad``, as PyTorch's; ``foreach`` is
accepted for compatibility (there is one implementation, so it changes nothing).
"""
from __future__ import annotations

import types
import warnings

from ... import _creation
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...ops import stack

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@grad_mode.no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of ``tensors`` taken together, as if they were one concatenated vector.

    Args:
        tensors: a Tensor or an iterable of them.
        norm_type: the order of the p-norm; ``float('inf')`` for the largest absolute value.
        error_if_nonfinite: raise if the total norm is nan or infinite.
        foreach: accepted for PyTorch compatibility.

    Returns:
        A 0-dim tensor (``tensor(0.)`` for no tensors).

    Raises:
        RuntimeError: the norm is not finite and ``error_if_nonfinite`` is set.

    Example::
        >>> import retrograd as rg
        >>> rg.nn.utils.get_total_norm([rg.tensor([3.0]), rg.tensor([4.0])])
        tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _creation.tensor(0.0)
    device = tensors[0].device
    norms = [t.norm(p=norm_type).to(device) for t in tensors]
    total = stack(norms).norm(p=norm_type) if len(norms) > 1 else norms[0]
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total


@grad_mode.no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale every ``.grad`` of ``parameters`` by ``min(max_norm / (total_norm + 1e-6), 1)``, in place.

    Args:
        parameters: a Tensor or an iterable of them; those without ``.grad`` are skipped.
        max_norm: the largest norm the gradients may have afterwards.
        total_norm: their norm, as :func:`get_total_norm` computes it.
        foreach: accepted for PyTorch compatibility.
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.to(g.device))


@grad_mode.no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that their total norm is at most ``max_norm``.

    The norm is taken over all gradients together, as if concatenated into one vector; gradients
    are only ever scaled down.

    Args:
        parameters: a Tensor or an iterable of them (e.g. ``model.parameters()``).
        max_norm: the largest total norm allowed.
        norm_type: the order of the p-norm; ``float('inf')`` for the largest absolute value.
        error_if_nonfinite: raise if the total norm is nan or infinite, instead of scaling by it.
        foreach: accepted for PyTorch compatibility.

    Returns:
        The total norm of the gradients before clipping (a 0-dim tensor).

    Raises:
        RuntimeError: the norm is not finite and ``error_if_nonfinite`` is set.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([3.0, 4.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> rg.nn.utils.clip_grad_norm_([w], max_norm=1.0)
        tensor(10.)
        >>> w.grad
        tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated: use :func:`clip_grad_norm_`, which this calls."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@grad_mode.no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every ``.grad`` of ``parameters`` to ``[-clip_value, clip_value]``, in place.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1.0, -5.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> rg.nn.utils.clip_grad_value_([w], 3.0)
        >>> w.grad
        tensor([ 2., -3.])
    """
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
