"""``retrograd.cuda.amp``: PyTorch's older names of ``retrograd.amp`` for CUDA (deprecated there too)."""
from __future__ import annotations

import warnings

from .. import amp

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(amp.autocast):
    """``amp.autocast("cuda", ...)``, under its deprecated name."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(amp.GradScaler):
    """``amp.GradScaler("cuda", ...)``, under its deprecated name."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


custom_fwd = amp.custom_fwd
custom_bwd = amp.custom_bwd
