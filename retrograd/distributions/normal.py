"""Normal, Uniform and Bernoulli: the distributions of one parameter pair, as ``torch.distributions``."""
from __future__ import annotations

import math

import numpy as np

from .. import _creation
from .._size import Size
from ..nn import functional as F
from ..ops import bernoulli, special
from . import constraints
from .distribution import _LOG_SQRT_2PI, Distribution, broadcast_all

__all__ = ["Normal", "Uniform", "Bernoulli"]


class Normal(Distribution):
    """The normal distribution of mean ``loc`` and standard deviation ``scale``, reparametrisable.

    Example::
        >>> import retrograd as rg
        >>> d = rg.distributions.Normal(rg.tensor([0.0]), rg.tensor([1.0]))
        >>> d.log_prob(rg.tensor([0.0]))
        tensor([-0.9189])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self.scale.pow(2)

    @property
    def stddev(self):
        return self.scale

    def rsample(self, sample_shape=Size()):
        eps = _creation.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value):
        return 0.5 * (1 + special.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * special.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``, reparametrisable.

    Example::
        >>> import retrograd as rg
        >>> rg.distributions.Uniform(0.0, 4.0).entropy()
        tensor(1.3863)
    """

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)

    @property
    def arg_constraints(self):  # each bound by the other, as PyTorch's
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @property
    def support(self):
        return constraints.half_open_interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        u = _creation.rand(self._extended_shape(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Bernoulli(Distribution):
    """A coin that shows 1 with probability ``probs`` (or ``sigmoid(logits)``).

    Example::
        >>> import retrograd as rg
        >>> rg.distributions.Bernoulli(probs=rg.tensor([0.25])).log_prob(rg.tensor([1.0]))
        tensor([-1.3863])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = self.probs.shape
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.shape
        super().__init__(shape, validate_args=validate_args)

    def __getattr__(self, name):  # the other parametrisation, made on first use
        if name == "logits":
            p = self.__dict__["probs"].clamp(min=_eps(self.__dict__["probs"]), max=1 - _eps(self.__dict__["probs"]))
            return p.log() - (-p).log1p()
        if name == "probs" and "logits" in self.__dict__:
            return self.__dict__["logits"].sigmoid()
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        return bernoulli(self.probs.detach().expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


def _eps(t):
    return float(np.finfo(t._data.dtype).eps)
