"""``retrograd.nn.init``: in-place initializers with PyTorch's fan computations and gains.

Every initializer fills its tensor in place, outside the graph, from retrograd's default
generator (so ``manual_seed`` makes it reproducible), and returns the tensor.
"""
from __future__ import annotations

import math
import warnings


from .._random import default_generator as _gen
from ..autograd import grad_mode
from ..ops.random import fill_drawn

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_"]


def _fill(tensor, draw):
    """Writes ``draw(size)`` (a host array of ``size``, the tensor's shape) into ``tensor``'s data; bumps its
    version as an in-place op. Under a vmap, as its randomness says (Note [Randomness under vmap])."""
    with grad_mode.no_grad():
        fill_drawn(tensor, draw)
    return tensor


def _generator(generator):
    return (generator or _gen).np


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity`` (PyTorch's table).

    Example::
        >>> from retrograd.nn import init
        >>> round(init.calculate_gain("relu"), 4)
        1.4142
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills with U(a, b)."""
    return _fill(tensor, lambda size: _generator(generator).uniform(a, b, size))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills with N(mean, std^2)."""
    return _fill(tensor, lambda size: _generator(generator).normal(mean, std, size))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills with N(mean, std^2) truncated to [a, b] (by resampling)."""
    rng = _generator(generator)

    def draw(size):
        values = rng.normal(mean, std, size)
        bad = (values < a) | (values > b)
        while bad.any():
            values[bad] = rng.normal(mean, std, int(bad.sum()))
            bad = (values < a) | (values > b)
        return values

    return _fill(tensor, draw)


def constant_(tensor, val):
    """Fills with ``val``."""
    with grad_mode.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-b, b), b = gain * sqrt(3 / fan), gain from ``nonlinearity`` and slope ``a``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.nn import init
        >>> w = init.kaiming_uniform_(rg.empty(3, 4))
        >>> bool((w.abs() <= 2 ** 0.5 * (3 / 4) ** 0.5).numpy().all())  # gain sqrt(2), fan_in 4
        True
    """
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2), std = gain / sqrt(fan)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)
