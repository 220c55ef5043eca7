"""Ready-made parametrizations, as ``torch.nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm``."""
from __future__ import annotations

from ..._creation import randn
from ..._tensor import Tensor
from ...autograd import grad_mode
from ..modules.module import Module
from . import parametrize
from .weight_norm import norm_except_dim, weight_norm_of

__all__ = ["weight_norm", "spectral_norm"]


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


def _normalize(x, eps):
    """``x / max(||x||, eps)`` along its only dim (``F.normalize(x, dim=0)``)."""
    return x / x.norm().clamp(min=eps)


class _SpectralNorm(Module):
    """``W -> W / sigma(W)``, ``sigma`` the largest singular value estimated by power iteration.

    The singular vectors ``_u``, ``_v`` are buffers, refined by ``n_power_iterations`` steps at each
    call in training mode (15 at construction); a 1-d weight is normalised instead.
    """

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            self.register_buffer("_u", _normalize(randn(h, dtype=weight.dtype), eps))
            self.register_buffer("_v", _normalize(randn(w, dtype=weight.dtype), eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with grad_mode.no_grad():
            for _ in range(n_power_iterations):
                self._u = _normalize(weight_mat.mv(self._v), self.eps)
                self._v = _normalize(weight_mat.T.mv(self._u), self.eps)

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Parametrizes ``module.<name>`` as itself divided by its spectral norm (estimated by power iteration).

    Args:
        n_power_iterations: power-iteration steps per call in training mode.
        eps: the smallest norm divided by.
        dim: the dim of the output channels (0; 1 for transposed convolutions).

    Returns:
        ``module``.

    Raises:
        ValueError: if ``module`` has no tensor ``name``.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.utils.parametrizations.spectral_norm(rg.nn.Linear(4, 3))
        >>> sorted(n for n, _ in m.named_buffers())
        ['parametrizations.weight.0._u', 'parametrizations.weight.0._v']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
