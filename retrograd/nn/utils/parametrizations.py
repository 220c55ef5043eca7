"""Ready-made parametrizations, as ``torch.nn.utils.parametrizations``: ``weight_norm``."""
from __future__ import annotations

from ..modules.module import Module
from . import parametrize
from .weight_norm import norm_except_dim, weight_norm_of

__all__ = ["weight_norm"]


class _WeightNorm(Module):
    """``(g, v) -> g * v / ||v||``, its right inverse ``w -> (||w||, w)``, norms over every dim but ``dim``."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_of(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Parametrizes ``module.<name>`` as ``g * v / ||v||``: ``original0`` is ``g``, ``original1`` is ``v``.

    A state dict of the deprecated ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``) loads into it.

    Returns:
        ``module``.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.utils.parametrizations.weight_norm(rg.nn.Linear(3, 2))
        >>> list(m.state_dict())
        ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module
