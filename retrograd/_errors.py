"""Errors of retrograd's own making: the check of an internal invariant.

User mistakes raise PyTorch's exception types with PyTorch's first sentences, where they are
detected. A broken invariant of retrograd's own code is a different thing: ``_internal_assert``
says so, so that nobody mistakes it for a mistake of theirs.
"""
from __future__ import annotations

__all__ = ["_internal_assert"]


def _internal_assert(condition, message: str) -> None:
    """Raises RuntimeError naming ``message`` as a bug in retrograd if ``condition`` is false; never for user input."""
    if not condition:
        raise RuntimeError(f"{message}: an internal invariant failed, which is a bug in retrograd; please report it")
