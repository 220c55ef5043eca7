"""Linear layers: Identity, Linear and Bilinear."""
from __future__ import annotations

import math

from ... import _creation
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``, with PyTorch's default initialization.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: learn an additive bias (default True).
        device, dtype: of the parameters.

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.Linear(3, 2)
        >>> m
        Linear(in_features=3, out_features=2, bias=True)
        >>> m(rg.ones(4, 3)).shape
        retrograd.Size([4, 2])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a=sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), PyTorch's default
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y = x1^T A x2 + b``: a weight ``(out_features, in1_features, in2_features)``, PyTorch's initialization
    (uniform in ``±1 / sqrt(in1_features)``).

    Example::
        >>> import retrograd as rg
        >>> m = rg.nn.Bilinear(3, 4, 2)
        >>> m
        Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)
        >>> m(rg.ones(5, 3), rg.ones(5, 4)).shape
        retrograd.Size([5, 2])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(_creation.empty((out_features, in1_features, in2_features), device=device,
                                                dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
