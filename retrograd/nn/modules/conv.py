"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d."""
from __future__ import annotations

import math

from ... import _creation
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, *, transposed=False, output_padding=0):
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
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_creation.empty(shape + self.kernel_size, device=device, dtype=dtype))
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
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
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
        amounts = []  # (left, right) of each dim, last dim first, as F.pad reads them
        for i in reversed(range(len(self.kernel_size))):
            amounts += self._same(self.kernel_size[i], self.dilation[i]) if isinstance(self.padding, str) else \
                (self.padding[i], self.padding[i])
        return F.pad(input, tuple(amounts), mode=self.padding_mode), 0

    def _same(self, kernel, dilation):
        """The (left, right) padding of one dim that keeps its size: 'valid' pads nothing; 'same' puts the odd
        element of the total on the right, as PyTorch."""
        if self.padding == "valid":
            return [0, 0]
        total = dilation * (kernel - 1)
        return [total // 2, total - total // 2]


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


class Conv3d(_ConvNd):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W); see Conv2d.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.Conv3d(2, 4, (1, 3, 3), padding=(0, 1, 1), padding_mode="replicate")
        >>> m
        Conv3d(2, 4, kernel_size=(1, 3, 3), stride=(1, 1, 1), padding=(0, 1, 1), padding_mode=replicate)
        >>> m(rg.ones(1, 2, 3, 5, 5)).shape
        retrograd.Size([1, 4, 3, 5, 5])
    """
    _n = 3

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, transposed=True, output_padding=output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding that gives ``output_size`` (PyTorch's rule), or the module's own without one."""
        if output_size is None:
            return self.output_padding
        n = self._n
        output_size = list(output_size)
        if len(output_size) == n + 2 or len(output_size) == n + 1 and input.dim() == n + 1:
            output_size = output_size[-n:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                             f"{n + 2} elements (got {len(output_size)})")
        spatial = input.shape[-n:]
        smallest = [(spatial[d] - 1) * self.stride[d] - 2 * self.padding[d] + self.dilation[d] *
                    (self.kernel_size[d] - 1) + 1 for d in range(n)]
        largest = [smallest[d] + self.stride[d] - 1 for d in range(n)]
        for d in range(n):
            if not smallest[d] <= output_size[d] <= largest[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} "
                                 f"to {largest} (for an input of {spatial})")
        return tuple(output_size[d] - smallest[d] for d in range(n))


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution over (N, C_in, H, W); ``output_size`` in forward picks the output padding.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.ConvTranspose2d(2, 3, 3, stride=2)
        >>> m
        ConvTranspose2d(2, 3, kernel_size=(3, 3), stride=(2, 2))
        >>> m(rg.ones(1, 2, 4, 4), output_size=[10, 10]).shape
        retrograd.Size([1, 3, 10, 10])
    """
    _n = 2

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution over (N, C_in, L); see ConvTranspose2d."""
    _n = 1

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution over (N, C_in, D, H, W); see ConvTranspose2d.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.ConvTranspose3d(2, 3, 2, stride=2)
        >>> m(rg.ones(1, 2, 2, 3, 2), output_size=(5, 7, 4)).shape
        retrograd.Size([1, 3, 5, 7, 4])
    """
    _n = 3

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)
