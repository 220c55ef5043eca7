"""Padding layers: constant (and zero), reflection, replication and circular, in 1, 2 and 3 dims."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


def _amounts(padding, n):
    """``padding`` as the ``2 * n`` amounts of ``F.pad``: an int for every side, or the sequence itself."""
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * n)


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _amounts(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``: ``padding`` an int or (left, right).

    Example::
        >>> import retrograd as rg
        >>> rg.nn.ConstantPad1d((1, 2), 3.5)(rg.zeros(1, 2))
        tensor([[3.5000, 0.0000, 0.0000, 3.5000, 3.5000]])
    """
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``: ``padding`` an int or (left, right, top, bottom)."""
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``: ``padding`` an int or a 6-tuple, last dim first."""
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros."""
    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last 2 dims with zeros.

    Example::
        >>> import retrograd as rg
        >>> rg.nn.ZeroPad2d(1)
        ZeroPad2d((1, 1, 1, 1))
    """
    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last 3 dims with zeros."""
    _n = 3


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its reflection about the edge (the edge itself not repeated).

    Example::
        >>> import retrograd as rg
        >>> rg.nn.ReflectionPad1d(2)(rg.tensor([[0., 1., 2.]]))
        tensor([[2., 1., 0., 1., 2., 1., 0.]])
    """
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pads the last 2 dims by reflection."""
    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pads the last 3 dims by reflection."""
    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge values."""
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pads the last 2 dims by repeating their edge values."""
    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pads the last 3 dims by repeating their edge values."""
    _n, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        if input.dim() not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pads the last dim with the values from its other end (wrapping around)."""
    _n = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims circularly."""
    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims circularly."""
    _n = 3
