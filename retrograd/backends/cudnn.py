"""``retrograd.backends.cudnn``: PyTorch's cuDNN switches, kept so that training scripts run unchanged.

retrograd calls no cuDNN (its GPU arrays are CuPy's), so ``is_available()`` is False and the
flags change nothing; they hold what a script sets, with PyTorch's defaults.
"""
from __future__ import annotations

__all__ = ["is_available", "version", "benchmark", "deterministic", "enabled", "allow_tf32"]

benchmark = False
deterministic = False
enabled = True
allow_tf32 = True


def is_available() -> bool:
    """False: retrograd does not use cuDNN."""
    return False


def version():
    """None: no cuDNN is loaded."""
    return None
