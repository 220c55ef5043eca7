"""Devices: where a tensor's array lives, and which engine queue runs its backward work."""
from __future__ import annotations

from .backends import get_backend

__all__ = ["device", "cpu"]

_CACHE = {}


class device:
    """A device such as ``device('cpu')`` or ``device('cuda', 0)``; equal devices are the same object.

    Example::
        >>> device('cpu') is device('cpu')
        True
    """

    __slots__ = ("type", "index", "__weakref__")

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            return type_or_str
        key = (type_or_str, index)
        found = _CACHE.get(key)
        if found is not None:
            return found
        if not isinstance(type_or_str, str):
            raise TypeError(f"device() received an invalid combination of arguments: {type_or_str!r}")
        dtype_str, _, idx = type_or_str.partition(":")
        if idx:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type_or_str}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            index = int(idx)
        if dtype_str not in ("cpu", "cuda", "fake"):
            raise RuntimeError("Expected one of cpu, cuda, fake device type at start of device string: "
                               f"{type_or_str}")
        if dtype_str == "cpu":
            index = None
        elif index is None:
            index = 0
        canonical = _CACHE.get((dtype_str, index))
        if canonical is None:
            canonical = object.__new__(cls)
            object.__setattr__(canonical, "type", dtype_str)
            object.__setattr__(canonical, "index", index)
            _CACHE[(dtype_str, index)] = canonical
        _CACHE[key] = canonical
        return canonical

    def __setattr__(self, name, value):
        raise AttributeError("device objects are immutable")

    @property
    def backend(self):
        """The backend that holds this device's arrays (``retrograd.backends``)."""
        return get_backend(self.type)

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (str(self),))


cpu = device("cpu")
