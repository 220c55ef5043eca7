"""Pointwise ops: arithmetic, transcendental functions and comparisons, with broadcasting."""
from __future__ import annotations

import math

from .._tensor import Tensor
from ._registry import defop

# -- arithmetic -------------------------------------------------------------------------------------
add = defop("add", lambda xp, input, other, *, alpha=1: xp.add(input, other if alpha == 1 else xp.multiply(other, alpha)),
            method=True, promote="binary",
            input=lambda grad: grad,
            other=lambda grad, alpha: grad if alpha == 1 else grad * alpha)

def _sub(xp, input, other, *, alpha=1):
    if _kind(input) == "b" or _kind(other) == "b":
        which = "two bool tensors" if _kind(input) == _kind(other) else "a bool tensor"
        raise RuntimeError(f"Subtraction, the `-` operator, with {which} is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return xp.subtract(input, other if alpha == 1 else xp.multiply(other, alpha))


def _kind(x):
    """The NumPy kind letter of an array or Python scalar operand."""
    if isinstance(x, bool):
        return "b"
    if isinstance(x, int):
        return "i"
    if isinstance(x, float):
        return "f"
    return x.dtype.kind


def _check_int_divisor(xp, input, other):
    """Integer division by zero raises, as PyTorch (NumPy would warn and return 0)."""
    if _kind(input) in "biu" and _kind(other) in "biu" and not xp.all(other):
        raise RuntimeError("ZeroDivisionError")


sub = defop("sub", _sub,
            method=True, promote="binary",
            input=lambda grad: grad,
            other=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha)

mul = defop("mul", lambda xp, input, other: xp.multiply(input, other),
            method=True, promote="binary",
            input=lambda grad, other: grad * other,
            other=lambda grad, input: grad * input)

_true_div = defop("div", lambda xp, input, other: xp.true_divide(input, other), promote="float",
                  input=lambda grad, other: grad / other,
                  other=lambda grad, input, other: -grad * input / (other * other))


def _rounding_div(xp, input, other, rounding_mode):
    _check_int_divisor(xp, input, other)
    if rounding_mode == "floor":
        return xp.floor_divide(input, other)
    if rounding_mode != "trunc":
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if xp.result_type(input, other).kind == "f":
        return xp.trunc(xp.true_divide(input, other))
    q = xp.floor_divide(input, other)  # exact for integers: floor, then one step toward zero
    return q + ((q < 0) & (q * other != input))


# Piecewise constant in both inputs: zero gradients, as PyTorch.
_div_rounding = defop("div_rounding", _rounding_div, public=False, node_name="Div", promote="binary",
                      input=lambda grad: grad * 0, other=lambda grad: grad * 0)


def div(input, other, *, rounding_mode=None):
    """Divides ``input`` by ``other``: true division, or rounded with ``rounding_mode`` 'trunc' or 'floor'.

    Args:
        input: the dividend (a Tensor or a number).
        other: the divisor (a Tensor or a number); both broadcast.
        rounding_mode: None (true division, integers give the default float dtype), 'trunc'
            (toward zero) or 'floor' (toward minus infinity; integers stay integers).

    Returns:
        The quotient.

    Example::
        >>> import retrograd as rg
        >>> rg.div(rg.tensor([-7, 7]), 2, rounding_mode="trunc")
        tensor([-3,  3])
    """
    if rounding_mode is None:
        return _true_div(input, other)
    return _div_rounding(input, other, rounding_mode)

neg = defop("neg", lambda xp, input: xp.negative(input), method=True,
            input=lambda grad: -grad)


def _pow_forward(xp, input, exponent):
    try:
        return xp.power(input, exponent)
    except ValueError as exc:  # integers to negative integer powers
        raise RuntimeError(str(exc)) from None


def _pow_input_grad(grad, input, exponent):
    if isinstance(exponent, (int, float)):
        if exponent == 0:
            return grad * 0
        return grad * exponent * input ** (exponent - 1)
    return where(exponent == 0, grad * 0, grad * exponent * input ** (exponent - 1))


def _pow_exponent_grad(grad, input, result):
    # d/dy x**y = x**y * log(x); PyTorch defines it as 0 where x == 0.
    if not isinstance(input, Tensor):
        return grad * 0 if input == 0 else grad * result * math.log(input)
    return where(input == 0, grad * 0, grad * result * input.log())


pow = defop("pow", _pow_forward, method=True, promote="binary",  # noqa: A001
            input=_pow_input_grad, exponent=_pow_exponent_grad)

# -- exponentials and logarithms ----------------------------------------------------------------
exp = defop("exp", lambda xp, input: xp.exp(input), method=True, promote="float",
            input=lambda grad, result: grad * result)
log = defop("log", lambda xp, input: xp.log(input), method=True, promote="float",
            input=lambda grad, input: grad / input)
log1p = defop("log1p", lambda xp, input: xp.log1p(input), method=True, promote="float",
              input=lambda grad, input: grad / (input + 1))
expm1 = defop("expm1", lambda xp, input: xp.expm1(input), method=True, promote="float",
              input=lambda grad, result: grad * (result + 1))
sqrt = defop("sqrt", lambda xp, input: xp.sqrt(input), method=True, promote="float",
             input=lambda grad, result: grad / (result * 2))
rsqrt = defop("rsqrt", lambda xp, input: 1 / xp.sqrt(input), method=True, promote="float",
              input=lambda grad, result: grad * result ** 3 * -0.5)
reciprocal = defop("reciprocal", lambda xp, input: xp.reciprocal(input.astype(xp.result_type(input, 1.0))),
                   method=True, promote="float",
                   input=lambda grad, result: -grad * result * result)

# -- trigonometric and activations --------------------------------------------------------------------
sin = defop("sin", lambda xp, input: xp.sin(input), method=True, promote="float",
            input=lambda grad, input: grad * input.cos())
cos = defop("cos", lambda xp, input: xp.cos(input), method=True, promote="float",
            input=lambda grad, input: -grad * input.sin())
tan = defop("tan", lambda xp, input: xp.tan(input), method=True, promote="float",
            input=lambda grad, result: grad * (result * result + 1))
tanh = defop("tanh", lambda xp, input: xp.tanh(input), method=True, promote="float",
             input=lambda grad, result: grad * (1 - result * result))


def _sigmoid(xp, input):
    # exp of a negative argument only, so large |x| neither overflows nor loses the small side
    e = xp.exp(-xp.abs(input))
    return xp.where(input >= 0, 1 / (1 + e), e / (1 + e))


sigmoid = defop("sigmoid", _sigmoid, method=True, promote="float",
                input=lambda grad, result: grad * result * (1 - result))
def _threshold_backward(xp, grad, output):
    out = xp.multiply(grad, output > 0, dtype=grad.dtype)  # a mask product: far cheaper than where()
    if out.dtype.kind == "f" and xp.isnan(out).any():  # NaN * 0 is NaN, but PyTorch gives 0 there
        out = xp.where(output > 0, grad, xp.zeros((), dtype=grad.dtype))
    return out


# PyTorch's ReluBackward0 computes threshold_backward; it has its own node for double backward.
# (The parameter is not called ``result``: formulas reserve that name for an op's own output.)
threshold_backward = defop("threshold_backward", _threshold_backward, public=False,
                           grad=lambda grad, output: threshold_backward(grad, output))
relu = defop("relu", lambda xp, input: xp.maximum(input, 0).astype(input.dtype, copy=False), method=True,
             input=lambda grad, result: threshold_backward(grad, result))  # zero gradient at 0, as PyTorch
abs = defop("abs", lambda xp, input: xp.abs(input), method=True,  # noqa: A001
            input=lambda grad, input: grad * input.sign())
sign = defop("sign", lambda xp, input: xp.sign(input), method=True,
             input=lambda grad: grad * 0)  # piecewise constant: zero gradient, as PyTorch


def _clamp(xp, input, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    out = input
    if min is not None:
        out = xp.maximum(out, min)
    if max is not None:
        out = xp.minimum(out, max)
    return out


def _clamp_mask(input, min, max):  # noqa: A002
    mask = None
    if min is not None:
        mask = input >= min
    if max is not None:
        upper = input <= max
        mask = upper if mask is None else mask & upper
    return mask


clamp = defop("clamp", _clamp, method=True, promote="binary", tensor_args=("input", "min", "max"),
              input=lambda grad, input, min, max: where(_clamp_mask(input, min, max), grad, 0.),
              min=lambda grad, input, min: where(input < min, grad, 0.),
              max=lambda grad, input, max: where(input > max, grad, 0.))

maximum = defop("maximum", lambda xp, input, other: xp.maximum(input, other), method=True, promote="binary",
                input=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(input < other, 0.),
                other=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(other < input, 0.))
minimum = defop("minimum", lambda xp, input, other: xp.minimum(input, other), method=True, promote="binary",
                input=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(input > other, 0.),
                other=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(other > input, 0.))

where = defop("where", lambda xp, condition, input, other: xp.where(condition, input, other), promote="binary",
              tensor_args=("condition", "input", "other"),
              input=lambda grad, condition: where(condition, grad, 0.),
              other=lambda grad, condition: where(condition, 0., grad))
_where_doc = "where(condition, input, other): elements of ``input`` where ``condition`` holds, else of ``other``."

# Piecewise constant: results of a tensor that requires grad also require grad, with zero gradient.
def _rounding(np_name):
    def forward(xp, input):
        return getattr(xp, np_name)(input) if input.dtype.kind == "f" else input.copy()  # integers stay as they are
    return forward


def _round(xp, input, *, decimals=0):
    if input.dtype.kind != "f":
        return input.copy()
    return xp.round(input, decimals)


floor = defop("floor", _rounding("floor"), method=True, input=lambda grad: grad * 0)
ceil = defop("ceil", _rounding("ceil"), method=True, input=lambda grad: grad * 0)
trunc = defop("trunc", _rounding("trunc"), method=True, input=lambda grad: grad * 0)
round = defop("round", _round, method=True, input=lambda grad: grad * 0)  # noqa: A001

# -- comparisons and logic (not differentiable: results never require grad) --------------------------
eq = defop("eq", lambda xp, input, other: xp.equal(input, other), method=True)
ne = defop("ne", lambda xp, input, other: xp.not_equal(input, other), method=True)
lt = defop("lt", lambda xp, input, other: xp.less(input, other), method=True)
le = defop("le", lambda xp, input, other: xp.less_equal(input, other), method=True)
gt = defop("gt", lambda xp, input, other: xp.greater(input, other), method=True)
ge = defop("ge", lambda xp, input, other: xp.greater_equal(input, other), method=True)
logical_not = defop("logical_not", lambda xp, input: xp.logical_not(input), method=True)
logical_and = defop("logical_and", lambda xp, input, other: xp.logical_and(input, other), method=True)
logical_or = defop("logical_or", lambda xp, input, other: xp.logical_or(input, other), method=True)
logical_xor = defop("logical_xor", lambda xp, input, other: xp.logical_xor(input, other), method=True)
bitwise_and = defop("bitwise_and", lambda xp, input, other: xp.bitwise_and(input, other), method=True, promote="binary")
bitwise_or = defop("bitwise_or", lambda xp, input, other: xp.bitwise_or(input, other), method=True, promote="binary")
bitwise_xor = defop("bitwise_xor", lambda xp, input, other: xp.bitwise_xor(input, other), method=True, promote="binary")
bitwise_not = defop("bitwise_not", lambda xp, input: xp.invert(input), method=True)
isnan = defop("isnan", lambda xp, input: xp.isnan(input), method=True)
isinf = defop("isinf", lambda xp, input: xp.isinf(input), method=True)
isfinite = defop("isfinite", lambda xp, input: xp.isfinite(input), method=True)
def _floor_divide(xp, input, other):
    _check_int_divisor(xp, input, other)
    return xp.floor_divide(input, other)


def _remainder(xp, input, other):
    _check_int_divisor(xp, input, other)
    return xp.remainder(input, other)


floor_divide = defop("floor_divide", _floor_divide, method=True,
                     promote="binary")
remainder = defop("remainder", _remainder, method=True, promote="binary",
                  input=lambda grad: grad,
                  other=lambda grad, input, other: -grad * (input / other).floor())
