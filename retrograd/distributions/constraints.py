"""The constraints parameters and values must satisfy, named and printed as ``torch.distributions.constraints``."""
from __future__ import annotations

__all__ = ["real", "positive", "unit_interval", "simplex", "boolean", "nonnegative_integer", "greater_than",
           "less_than", "interval", "half_open_interval", "integer_interval", "independent"]


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


real = _Real()
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
boolean = _Boolean()
nonnegative_integer = _NonnegativeInteger()
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval


def independent(constraint, reinterpreted_batch_ndims):
    """``constraint`` over whole events (checked elementwise here, which is what it reduces to)."""
    return constraint
