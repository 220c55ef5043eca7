"""Convolution layers: Conv1d and Conv2d."""
from __future__ import annotations

import math

from ... import _creation
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d"]


def _ntuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = False
        self.output_padding = (0,) * n
        self.weight = Parameter(_creation.empty((out_channels, in_channels // groups) + self.kernel_size,
                                                device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def _padded(self, input):
        """Input pre-padded for the non-zero padding modes (the convolution then pads nothing)."""
        if self.padding_mode == "zeros":
            return input, self.padding
        if isinstance(self.padding, str):
            raise NotImplementedError("string padding with a non-zeros padding_mode is not supported")
        amounts = []
        for p in reversed(self.padding):
            amounts += [p, p]
        return F.pad(input, tuple(amounts), mode=self.padding_mode), 0


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W); PyTorch's arguments and default initialization.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.Conv2d(1, 4, 3, padding=1)
        >>> m
        Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
        >>> m(rg.ones(2, 1, 5, 5)).shape
        retrograd.Size([2, 4, 5, 5])
    """
    _n = 2

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L); see Conv2d."""
    _n = 1

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)
