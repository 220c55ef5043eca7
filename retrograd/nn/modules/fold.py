"""Fold and Unfold: ``functional.fold`` and ``functional.unfold`` as layers."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sums sliding local blocks (N, C*kH*kW, L) back into images (N, C, H, W); see ``functional.fold``.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.Fold(output_size=(3, 3), kernel_size=2)
        >>> m
        Fold(output_size=(3, 3), kernel_size=2, dilation=1, padding=0, stride=1)
        >>> m(rg.ones(1, 4, 4))[0, 0]
        tensor([[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts sliding local blocks of (N, C, H, W) as columns (N, C*kH*kW, L); see ``functional.unfold``.

    Example::
        >>> import retrograd as rg
        >>> rg.nn.Unfold(kernel_size=(2, 3), stride=2)(rg.ones(2, 3, 5, 7)).shape
        retrograd.Size([2, 18, 6])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")
