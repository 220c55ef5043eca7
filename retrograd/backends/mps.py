"""``retrograd.backends.mps``: Apple's Metal backend, which retrograd does not have."""
from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: retrograd has no MPS device."""
    return False


def is_built() -> bool:
    """False: retrograd has no MPS device."""
    return False
