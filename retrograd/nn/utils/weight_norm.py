"""The deprecated weight normalisation by forward pre-hook, as ``torch.nn.utils.weight_norm``.

``parametrizations.weight_norm`` is its replacement; both compute ``w = g * v / ||v||`` with the
norm over every dim but ``dim``.
"""
from __future__ import annotations

import warnings

from ...autograd import grad_mode
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim", "weight_norm_of"]


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept as size-1 dims; ``dim=-1``: one norm of all)."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.dim()
    moved = v.transpose(0, dim) if dim else v
    norms = moved.reshape(moved.shape[0], -1).norm(pow, 1)
    shape = [1] * v.dim()
    shape[dim] = v.shape[dim]
    return norms.reshape(shape)


def weight_norm_of(v, g, dim):
    """``v * (g / ||v||)``, the norm over every dim but ``dim`` (PyTorch's ``_weight_norm``)."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return weight_norm_of(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        with grad_mode.no_grad():
            module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
            module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replaces ``module.<name>`` by ``g * v / ||v||``, with parameters ``<name>_g`` and ``<name>_v`` (deprecated).

    Returns:
        ``module``.

    Raises:
        RuntimeError: if ``name`` already has weight normalisation.

    Example::
        >>> import retrograd as rg
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = rg.nn.utils.weight_norm(rg.nn.Linear(3, 2))
        >>> [n for n, _ in m.named_parameters()]
        ['bias', 'weight_g', 'weight_v']
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes ``weight_norm``: ``module.<name>`` becomes a parameter again, of its current value.

    Raises:
        ValueError: if ``name`` has no weight normalisation.
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
