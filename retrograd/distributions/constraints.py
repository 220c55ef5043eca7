"""The constraints parameters and values must satisfy, named and printed as ``torch.distributions.constraints``."""
from __future__ import annotations

import numpy as np

__all__ = ["real", "positive", "nonnegative", "unit_interval", "simplex", "boolean", "one_hot", "nonnegative_integer",
           "positive_definite", "lower_cholesky", "greater_than", "greater_than_eq", "less_than", "interval",
           "half_open_interval", "integer_interval", "independent", "dependent", "is_dependent", "Constraint"]


class Constraint:
    """Whether a tensor's values are allowed (``check`` gives True when every value is)."""

    def check(self, value) -> bool:  # pragma: no cover - each constraint defines it
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__[1:]}()"


class _Real(Constraint):
    def check(self, value):
        return bool((value == value).all())  # not nan


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return bool((value > self.lower_bound).all())

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return bool((value >= self.lower_bound).all())

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return bool((value < self.upper_bound).all())

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return bool(((value >= self.lower_bound) & (value <= self.upper_bound)).all())

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return bool(((value >= self.lower_bound) & (value < self.upper_bound)).all())

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    def check(self, value):
        return bool((value % 1 == 0).all()) and super().check(value)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    def check(self, value):
        return bool((value >= 0).all()) and bool(((value.sum(-1) - 1).abs() < 1e-6).all())


class _Boolean(Constraint):
    def check(self, value):
        return bool(((value == 0) | (value == 1)).all())


class _NonnegativeInteger(Constraint):
    def check(self, value):
        return bool((value % 1 == 0).all()) and bool((value >= 0).all())

    def __repr__(self):
        return "IntegerGreaterThan(lower_bound=0)"


class _OneHot(Constraint):
    def check(self, value):
        return bool(((value == 0) | (value == 1)).all()) and bool((value.sum(-1) == 1).all())


class _PositiveDefinite(Constraint):
    def check(self, value):
        arr = value.detach().numpy()
        sym = np.allclose(arr, np.swapaxes(arr, -1, -2), atol=1e-6)
        return bool(sym and (np.linalg.eigvalsh(arr) > 0).all())


class _LowerCholesky(Constraint):
    def check(self, value):
        lower = bool((value.tril() == value).all())
        return lower and bool((value.diagonal(dim1=-2, dim2=-1) > 0).all())


class _IndependentConstraint(Constraint):
    """``base_constraint`` over whole events of ``reinterpreted_batch_ndims`` dims (checked for every value)."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def check(self, value):
        return self.base_constraint.check(value)

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Dependent(Constraint):
    """A constraint that depends on other parameters: it cannot be checked on its own."""

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is ``dependent`` (not checkable on its own)."""
    return isinstance(constraint, _Dependent)


real = _Real()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
one_hot = _OneHot()
positive_definite = _PositiveDefinite()
lower_cholesky = _LowerCholesky()
dependent = _Dependent()
greater_than_eq = _GreaterThanEq
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
boolean = _Boolean()
nonnegative_integer = _NonnegativeInteger()
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval


independent = _IndependentConstraint
