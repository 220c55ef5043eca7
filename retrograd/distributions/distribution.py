"""The base of the distributions: shapes, sampling shapes and argument validation, as ``torch.distributions``."""
from __future__ import annotations

import math

import numpy as np

from .. import _creation
from .._size import Size
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["Distribution", "broadcast_all"]

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

    def _validate_sample(self, value) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
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


def broadcast_all(*values):
    """The values as tensors of one broadcast shape (numbers become tensors of the default dtype)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else None
    values = [v if isinstance(v, Tensor) else _creation.tensor(float(v), dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(tuple(v.shape) for v in values))
    return tuple(v if tuple(v.shape) == shape else v.expand(shape) for v in values)


_EULER = 0.57721566490153286060
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
