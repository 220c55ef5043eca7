"""Errors of retrograd's own making: the check of an internal invariant; and the warnings PyTorch gives once.

User mistakes raise PyTorch's exception types with PyTorch's first sentences, where they are
detected. A broken invariant of retrograd's own code is a different thing: ``_internal_assert``
says so, so that nobody mistakes it for a mistake of theirs.

Some warnings PyTorch gives once per process (its ``TORCH_WARN_ONCE``), or every time after
``set_warn_always(True)``: ``warn_once`` does the same.
"""
from __future__ import annotations

import threading
import warnings

__all__ = ["_internal_assert", "set_warn_always", "is_warn_always_enabled", "warn_once"]

_warn_always = [False]
_warned = set()
_warned_lock = threading.Lock()


def set_warn_always(b: bool) -> None:
    """When True, the warnings given once per process (as PyTorch's ``TORCH_WARN_ONCE``) are given every time."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in force."""
    return _warn_always[0]


def warn_once(message: str, category=UserWarning, stacklevel: int = 2) -> None:
    """Warns ``message`` the first time it comes in this process, or every time under ``set_warn_always(True)``."""
    with _warned_lock:
        first = message not in _warned
        _warned.add(message)
    if first or _warn_always[0]:
        warnings.warn(message, category, stacklevel=stacklevel + 1)


def _internal_assert(condition, message: str) -> None:
    """Raises RuntimeError naming ``message`` as a bug in retrograd if ``condition`` is false; never for user input."""
    if not condition:
        raise RuntimeError(f"{message}: an internal invariant failed, which is a bug in retrograd; please report it")
