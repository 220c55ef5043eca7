"""Poisson and Binomial: counts, as ``torch.distributions``."""
from __future__ import annotations

import numpy as np

from .. import _creation
from .._random import default_generator, vmap_randomness
from .._size import Size
from ..ops import lgamma, poisson, xlogy
from . import constraints
from .distribution import Distribution, broadcast_all

__all__ = ["Poisson", "Binomial"]


class Poisson(Distribution):
    """The Poisson distribution of mean ``rate``.

    Example::
        >>> import retrograd as rg
        >>> rg.distributions.Poisson(rg.tensor([2.0])).log_prob(rg.tensor([1.0]))
        tensor([-1.3069])
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        return poisson(self.rate.detach().expand(self._extended_shape(sample_shape)).contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)


def _clamp_by_zero(x):
    """``max(x, 0)`` with gradient 1/2 at 0, as PyTorch's Binomial uses."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """The number of successes in ``total_count`` trials of probability ``probs`` (or ``sigmoid(logits)``).

    Example::
        >>> import retrograd as rg
        >>> rg.distributions.Binomial(4, probs=rg.tensor([0.5])).log_prob(rg.tensor([2.0]))
        tensor([-0.9808])
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
            shape = self.probs.shape
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
            shape = self.logits.shape
        super().__init__(shape, validate_args=validate_args)

    def __getattr__(self, name):  # the other parametrisation, made on first use
        d = self.__dict__
        if name == "logits" and "probs" in d:
            eps = float(np.finfo(d["probs"].detach().numpy().dtype).eps)
            p = d["probs"].clamp(min=eps, max=1 - eps)
            return p.log() - (-p).log1p()
        if name == "probs" and "logits" in d:
            return d["logits"].sigmoid()
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        n = np.broadcast_to(self.total_count.detach().numpy(), shape).astype(np.int64)
        p = np.broadcast_to(self.probs.detach().numpy(), shape)
        randomness = vmap_randomness()  # See Note [Randomness under vmap]
        batch = () if randomness is None else randomness.batch()
        draws = default_generator.np.binomial(n, p, size=batch + shape)
        out = _creation.tensor(draws.astype(p.dtype), dtype=self.probs.dtype)
        return out if randomness is None else randomness.wrap(out)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        normalize = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p() - lgamma(n + 1)
        return value * logits - lgamma(value + 1) - lgamma(n - value + 1) - normalize

    def entropy(self):
        total = int(self.total_count.max().item())
        if not self.total_count.min().item() == total:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = int(self.total_count.max().item())
        if not self.total_count.min().item() == total:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = _creation.arange(1 + total, dtype=self.total_count.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

