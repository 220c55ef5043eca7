"""Categorical: one of ``K`` classes, with probabilities ``probs`` or unnormalised ``logits``."""
from __future__ import annotations

import numpy as np

from .. import _creation
from .._size import Size
from ..nn import functional as F
from ..ops import multinomial
from . import constraints
from .distribution import Distribution

__all__ = ["Categorical", "OneHotCategorical"]


class Categorical(Distribution):
    """The distribution over class indices ``0 .. K-1`` given by the last dim of ``probs`` or ``logits``.

    ``probs`` are normalised to sum to 1; ``logits`` are log-probabilities up to a constant.

    Example::
        >>> import retrograd as rg
        >>> d = rg.distributions.Categorical(probs=rg.tensor([0.25, 0.75]))
        >>> d.log_prob(rg.tensor(1)), d.entropy()
        (tensor(-0.2877), tensor(0.5623))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            param = self.logits
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)

    def __getattr__(self, name):  # the other parametrisation, made on first use
        if name == "logits" and "probs" in self.__dict__:
            p = self.__dict__["probs"]
            eps = float(np.finfo(p._data.dtype).eps)
            return p.clamp(min=eps, max=1 - eps).log()
        if name == "probs" and "logits" in self.__dict__:
            return self.__dict__["logits"].softmax(-1)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return (self.__dict__.get("probs") if "probs" in self.__dict__ else self.logits).shape

    @property
    def mean(self):
        return _creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return _creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()):
        n = int(np.prod(tuple(sample_shape), dtype=np.int64))
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        samples = multinomial(probs_2d, n, True).t()  # (n, batch)
        return samples.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(self._batch_shape))
        index = value.long().expand(shape).unsqueeze(-1)
        return self.logits.expand(shape + (self._num_events,)).gather(-1, index).squeeze(-1)

    def entropy(self):
        eps = float(np.finfo(self.logits._data.dtype).min)
        logits = self.logits.clamp(min=eps)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = _creation.arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class OneHotCategorical(Distribution):
    """A Categorical whose values are one-hot vectors of the last dim of ``probs`` or ``logits``.

    Example::
        >>> import retrograd as rg
        >>> d = rg.distributions.OneHotCategorical(probs=rg.tensor([0.25, 0.75]))
        >>> d.log_prob(rg.tensor([0.0, 1.0]))
        tensor(-0.2877)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def __getattr__(self, name):
        if name in ("probs", "logits") and "_categorical" in self.__dict__:
            return getattr(self.__dict__["_categorical"], name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape=Size()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _creation.eye(n, dtype=self._categorical.probs.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values
