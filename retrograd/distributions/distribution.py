"""The base of the distributions: shapes, sampling shapes and argument validation, as ``torch.distributions``."""
from __future__ import annotations

import math

import numpy as np

from .. import _creation
from .._size import Size
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["Distribution", "broadcast_all", "sum_rightmost"]

_validate_default = True


class Distribution:
    """A family of distributions over tensors, parametrised by tensors that broadcast into ``batch_shape``.

    Subclasses set ``arg_constraints`` (parameter name -> constraint), ``support``, ``has_rsample``,
    and implement ``sample``/``rsample``, ``log_prob``, ``entropy``, ``mean`` and ``variance``.
    """

    arg_constraints: dict = {}
    support = None
    has_rsample = False

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Sets whether distributions check their arguments by default (True, as PyTorch)."""
        global _validate_default
        if value not in (True, False):
            raise ValueError
        _validate_default = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        self._validate_args = _validate_default if validate_args is None else validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if name not in self.__dict__:
                    continue  # a parameter given in its other form (probs for logits)
                value = self.__dict__[name]
                if not constraint.check(value):
                    raise ValueError(
                        f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) of distribution "
                        f"{self!r} to satisfy the constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=Size()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with grad_mode.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def sample_n(self, n):
        return self.sample(Size((n,)))

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def event_dim(self) -> int:
        return len(self._event_shape)

    def entropy(self):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def expand(self, batch_shape, _instance=None):
        """A distribution of the same parameters broadcast to ``batch_shape`` (views, no copies).

        Tensors among the instance's attributes whose shape begins with the batch shape are
        expanded; the rest (event sizes, flags) are shared.
        """
        batch_shape = Size(batch_shape)
        new = type(self).__new__(type(self)) if _instance is None else _instance
        old = tuple(self._batch_shape)
        for key, value in self.__dict__.items():
            if isinstance(value, Tensor) and tuple(value.shape[:len(old)]) == old:
                value = value.expand(tuple(batch_shape) + tuple(value.shape[len(old):]))
            new.__dict__[key] = value
        new._batch_shape = batch_shape
        return new

    def _validate_sample(self, value) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        expected = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(tuple(value.shape)), reversed(tuple(expected))):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {value.size()} vs "
                                 f"{expected}.")
        if self.support is not None and not self.support.check(value):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def perplexity(self):
        return self.entropy().exp()

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{k}: {self.__dict__[k].shape if self.__dict__[k].numel() != 1 else self.__dict__[k]}"
                         for k in names)
        return f"{type(self).__name__}({args})"


def sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims (as ``torch.distributions.utils._sum_rightmost``)."""
    return value if dim == 0 else value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def broadcast_all(*values):
    """The values as tensors of one broadcast shape (numbers become tensors of the default dtype)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else None
    values = [v if isinstance(v, Tensor) else _creation.tensor(float(v), dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(tuple(v.shape) for v in values))
    return tuple(v if tuple(v.shape) == shape else v.expand(shape) for v in values)


_EULER = 0.57721566490153286060
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
