"""Pointwise ops: arithmetic, transcendental functions and comparisons, with broadcasting."""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ._registry import defop, formula_is_op, forward_is_ufunc, passthrough, ufunc

# -- arithmetic -------------------------------------------------------------------------------------
add = defop("add", forward_is_ufunc(
    lambda xp, input, other, *, alpha=1: xp.add(input, other if alpha == 1 else xp.multiply(other, alpha)),
    "add", 2, when=[(2, 1)]),
            method=True, promote="binary",
            input=passthrough,
            other=formula_is_op(lambda grad, alpha: grad if alpha == 1 else grad * alpha, None, 1, when=[(1, 1)]),
            doc="""Adds ``other``, multiplied by ``alpha``, to ``input`` elementwise, with broadcasting.

    Args:
        input: the first operand (a Tensor or a number).
        other: the second operand (a Tensor or a number).
        alpha: a number that scales ``other`` first (keyword-only, default 1).

    Returns:
        ``input + alpha * other``, in the promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2., 3.])
        >>> rg.add(x, rg.tensor([10., 20., 30.]), alpha=2)
        tensor([21., 42., 63.])
    """)

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
            input=passthrough,
            other=formula_is_op(lambda grad, alpha: -grad if alpha == 1 else grad * -alpha, "neg", 1, when=[(1, 1)]),
            doc="""Subtracts ``other``, multiplied by ``alpha``, from ``input`` elementwise, with broadcasting.

    Args:
        input: the minuend (a Tensor or a number).
        other: the subtrahend (a Tensor or a number).
        alpha: a number that scales ``other`` first (keyword-only, default 1).

    Returns:
        ``input - alpha * other``, in the promoted dtype.

    Raises:
        RuntimeError: if an operand is a bool tensor (use ``~`` or ``logical_not()`` to invert a
            mask).

    Example::
        >>> import retrograd as rg
        >>> rg.sub(rg.tensor([5., 5.]), rg.tensor([1., 2.]))
        tensor([4., 3.])
    """)

mul = defop("mul", ufunc("multiply", "input", "other"),
            method=True, promote="binary",
            input=formula_is_op(lambda grad, other: grad * other, "mul", 2),
            other=formula_is_op(lambda grad, input: grad * input, "mul", 2),
            doc="""Multiplies ``input`` by ``other`` elementwise, with broadcasting.

    Args:
        input: the first factor (a Tensor or a number).
        other: the second factor (a Tensor or a number).

    Returns:
        The product, in the promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.mul(rg.tensor([1., 2., 3.]), 2)
        tensor([2., 4., 6.])
    """)

_true_div = defop("div", ufunc("true_divide", "input", "other"), promote="float",
                  input=formula_is_op(lambda grad, other: grad / other, "div", 2),
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
    """Divides ``input`` by ``other`` elementwise: true division, or rounded with ``rounding_mode``.

    Args:
        input: the dividend (a Tensor or a number).
        other: the divisor (a Tensor or a number); both broadcast.
        rounding_mode: None (true division; integers give the default float dtype), 'trunc' (toward
            zero) or 'floor' (toward minus infinity; integers stay integers).

    Returns:
        The quotient.

    Raises:
        RuntimeError: for another ``rounding_mode``, or integer division by zero with a rounding
            mode.

    Example::
        >>> import retrograd as rg
        >>> rg.div(rg.tensor([1., 3.]), 2)
        tensor([0.5000, 1.5000])
        >>> rg.div(rg.tensor([-7, 7]), 2, rounding_mode="trunc")
        tensor([-3,  3])
    """
    if rounding_mode is None:
        return _true_div(input, other)
    return _div_rounding(input, other, rounding_mode)

neg = defop("neg", ufunc("negative", "input"), method=True,
            input=formula_is_op(lambda grad: -grad, "neg", 1),
            doc="""Negates every element of ``input``.

    Args:
        input: the tensor.

    Returns:
        ``-input``.

    Example::
        >>> import retrograd as rg
        >>> rg.neg(rg.tensor([1., -2.]))
        tensor([-1.,  2.])
    """)


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
            input=_pow_input_grad, exponent=_pow_exponent_grad,
            doc="""Raises ``input`` to the power ``exponent`` elementwise, with broadcasting.

    Args:
        input: the base (a Tensor or a number).
        exponent: the exponent (a Tensor or a number).

    Returns:
        ``input ** exponent``, in the promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.pow(rg.tensor([1., 2., 3.]), 2)
        tensor([1., 4., 9.])
    """)

# -- exponentials and logarithms ----------------------------------------------------------------
exp = defop("exp", ufunc("exp", "input"), method=True, promote="float",
            input=formula_is_op(lambda grad, result: grad * result, "mul", 2),
            doc="""The exponential ``e ** x`` of every element.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.exp(rg.tensor([0., 1.]))
        tensor([1.0000, 2.7183])
    """)
log = defop("log", ufunc("log", "input"), method=True, promote="float",
            input=formula_is_op(lambda grad, input: grad / input, "div", 2),
            doc="""The natural logarithm of every element (``nan`` below zero, ``-inf`` at zero).

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.log(rg.tensor([1., 2.7182817]))
        tensor([0., 1.])
    """)
log1p = defop("log1p", ufunc("log1p", "input"), method=True, promote="float",
              input=lambda grad, input: grad / (input + 1),
              doc="""The natural logarithm of ``1 + x`` for every element, accurate for small ``x``.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.log1p(rg.tensor([0., 1e-8]))
        tensor([0.0000e+00, 1.0000e-08])
    """)
expm1 = defop("expm1", ufunc("expm1", "input"), method=True, promote="float",
              input=lambda grad, result: grad * (result + 1),
              doc="""``e ** x - 1`` for every element, accurate for small ``x``.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.expm1(rg.tensor([0., 1e-8]))
        tensor([0.0000e+00, 1.0000e-08])
    """)
sqrt = defop("sqrt", ufunc("sqrt", "input"), method=True, promote="float",
             input=lambda grad, result: grad / (result * 2),
             doc="""The square root of every element (``nan`` below zero).

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.sqrt(rg.tensor([4., 9.]))
        tensor([2., 3.])
    """)
rsqrt = defop("rsqrt", lambda xp, input: 1 / xp.sqrt(input), method=True, promote="float",
              input=lambda grad, result: grad * result ** 3 * -0.5,
              doc="""The reciprocal of the square root of every element.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.rsqrt(rg.tensor([4., 16.]))
        tensor([0.5000, 0.2500])
    """)
reciprocal = defop("reciprocal", lambda xp, input: xp.reciprocal(input.astype(xp.result_type(input, 1.0))),
                   method=True, promote="float",
                   input=lambda grad, result: -grad * result * result)

# -- trigonometric and activations --------------------------------------------------------------------
sin = defop("sin", ufunc("sin", "input"), method=True, promote="float",
            input=lambda grad, input: grad * input.cos(),
            doc="""The sine of every element, in radians.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.sin(rg.tensor([0., 1.5707964]))
        tensor([0., 1.])
    """)
cos = defop("cos", ufunc("cos", "input"), method=True, promote="float",
            input=lambda grad, input: -grad * input.sin(),
            doc="""The cosine of every element, in radians.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.cos(rg.tensor([0., 3.1415927]))
        tensor([ 1., -1.])
    """)
tan = defop("tan", ufunc("tan", "input"), method=True, promote="float",
            input=lambda grad, result: grad * (result * result + 1),
            doc="""The tangent of every element, in radians.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.tan(rg.tensor([0., 0.7853982]))
        tensor([0., 1.])
    """)
# tanh and sigmoid have their own backward ops, as in PyTorch (TanhBackward0 runs tanh_backward):
# under create_graph, one recorded op instead of three for the first derivative.
tanh_backward = defop("tanh_backward", lambda xp, grad_output, output: grad_output * (1 - output * output),
                      public=False,
                      grad_output=formula_is_op(lambda grad, output: tanh_backward(grad, output), "tanh_backward", 2),
                      output=lambda grad, grad_output, output: grad * grad_output * output * -2)
sigmoid_backward = defop("sigmoid_backward", lambda xp, grad_output, output: grad_output * output * (1 - output),
                         public=False,
                         grad_output=formula_is_op(lambda grad, output: sigmoid_backward(grad, output),
                                                   "sigmoid_backward", 2),
                         output=lambda grad, grad_output, output: grad * grad_output * (1 - 2 * output))
tanh = defop("tanh", ufunc("tanh", "input"), method=True, promote="float",
             input=formula_is_op(lambda grad, result: tanh_backward(grad, result), "tanh_backward", 2),
             doc="""The hyperbolic tangent of every element.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape, with values in (-1, 1).

    Example::
        >>> import retrograd as rg
        >>> rg.tanh(rg.tensor([0., 1.]))
        tensor([0.0000, 0.7616])
    """)


def _sigmoid(xp, input):
    # exp of a negative argument only, so large |x| neither overflows nor loses the small side
    e = xp.exp(-xp.abs(input))
    return xp.where(input >= 0, 1 / (1 + e), e / (1 + e))


sigmoid = defop("sigmoid", _sigmoid, method=True, promote="float",
                input=formula_is_op(lambda grad, result: sigmoid_backward(grad, result), "sigmoid_backward", 2),
                doc="""The logistic function ``1 / (1 + e ** -x)`` of every element.

    Args:
        input: the tensor; integers are promoted to the default float dtype.

    Returns:
        A tensor of the same shape, with values in (0, 1).

    Example::
        >>> import retrograd as rg
        >>> rg.sigmoid(rg.tensor([0., 2.]))
        tensor([0.5000, 0.8808])
    """)
def _threshold_backward(xp, grad, output):
    keep = ~(output <= 0)  # as PyTorch: the gradient passes unless output <= 0, so at NaN too
    out = xp.multiply(grad, keep, dtype=grad.dtype)  # a mask product: far cheaper than where()
    if out.dtype.kind == "f" and xp.isnan(out).any():  # NaN * 0 is NaN, but PyTorch gives 0 there
        out = xp.where(keep, grad, xp.zeros((), dtype=grad.dtype))
    return out


# PyTorch's ReluBackward0 computes threshold_backward; it has its own node for double backward.
# (The parameter is not called ``result``: formulas reserve that name for an op's own output.)
threshold_backward = defop("threshold_backward", _threshold_backward, public=False,
                           grad=formula_is_op(lambda grad, output: threshold_backward(grad, output),
                                              "threshold_backward", 2))
def _relu(xp, input):
    if xp is np and input.size <= 1 << 20:
        # NumPy's maximum against a scalar takes about twice as long as against an array of
        # zeros (13 against 5.5 us on (128, 256) float32, zeros included); past a million
        # elements the extra array's memory outweighs the gain.
        return np.maximum(input, np.zeros(input.shape, input.dtype))
    return xp.maximum(input, 0).astype(input.dtype, copy=False)


relu = defop("relu", _relu, method=True,
             input=formula_is_op(lambda grad, result: threshold_backward(grad, result), "threshold_backward", 2),
             doc="""Replaces the negative elements of ``input`` by zero.

    Args:
        input: the tensor.

    Returns:
        ``max(input, 0)``, in the dtype of ``input``.

    Example::
        >>> import retrograd as rg
        >>> rg.relu(rg.tensor([-1., 0.5]))
        tensor([0.0000, 0.5000])
    """)  # zero gradient at 0, as PyTorch
abs = defop("abs", ufunc("abs", "input"), method=True,  # noqa: A001
            input=lambda grad, input: grad * input.sign(),
            doc="""The absolute value of every element.

    Args:
        input: the tensor.

    Returns:
        A tensor of the same shape and dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.abs(rg.tensor([-1.5, 2.]))
        tensor([1.5000, 2.0000])
    """)
sign = defop("sign", ufunc("sign", "input"), method=True,
             input=lambda grad: grad * 0,
             doc="""The sign of every element: -1, 0 or 1.

    Args:
        input: the tensor.

    Returns:
        A tensor of the same shape and dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.sign(rg.tensor([-3., 0., 2.]))
        tensor([-1.,  0.,  1.])
    """)  # piecewise constant: zero gradient, as PyTorch


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
              max=lambda grad, input, max: where(input > max, grad, 0.),
              doc="""Limits every element of ``input`` to the range [``min``, ``max``].

    Args:
        input: the tensor.
        min: the lower bound (a number or a Tensor; None for none).
        max: the upper bound (a number or a Tensor; None for none).

    Returns:
        A tensor of the broadcast shape.

    Raises:
        RuntimeError: if both ``min`` and ``max`` are None.

    Example::
        >>> import retrograd as rg
        >>> rg.clamp(rg.tensor([-2., 0.5, 3.]), min=-1, max=1)
        tensor([-1.0000,  0.5000,  1.0000])
    """)

maximum = defop("maximum", ufunc("maximum", "input", "other"), method=True, promote="binary",
                input=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(input < other, 0.),
                other=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(other < input, 0.),
                doc="""The larger of ``input`` and ``other``, elementwise, with broadcasting.

    Args:
        input: the first tensor.
        other: the second tensor.

    Returns:
        A tensor of the broadcast shape.

    Example::
        >>> import retrograd as rg
        >>> rg.maximum(rg.tensor([1., 4.]), rg.tensor([3., 2.]))
        tensor([3., 4.])
    """)
minimum = defop("minimum", ufunc("minimum", "input", "other"), method=True, promote="binary",
                input=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(input > other, 0.),
                other=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(other > input, 0.),
                doc="""The smaller of ``input`` and ``other``, elementwise, with broadcasting.

    Args:
        input: the first tensor.
        other: the second tensor.

    Returns:
        A tensor of the broadcast shape.

    Example::
        >>> import retrograd as rg
        >>> rg.minimum(rg.tensor([1., 4.]), rg.tensor([3., 2.]))
        tensor([1., 2.])
    """)

where = defop("where", lambda xp, condition, input, other: xp.where(condition, input, other), promote="binary",
              tensor_args=("condition", "input", "other"),
              input=lambda grad, condition: where(condition, grad, 0.),
              other=lambda grad, condition: where(condition, 0., grad),
              doc="""Picks ``input`` where ``condition`` is true and ``other`` elsewhere, with broadcasting.

    Args:
        condition: a bool tensor.
        input: the values where ``condition`` holds (a Tensor or a number).
        other: the values elsewhere (a Tensor or a number).

    Returns:
        A tensor of the broadcast shape.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([-1., 2., -3.])
        >>> rg.where(x > 0, x, rg.zeros(3))
        tensor([0., 2., 0.])
    """)
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
eq = defop("eq", ufunc("equal", "input", "other"), method=True)
ne = defop("ne", ufunc("not_equal", "input", "other"), method=True)
lt = defop("lt", ufunc("less", "input", "other"), method=True)
le = defop("le", ufunc("less_equal", "input", "other"), method=True)
gt = defop("gt", ufunc("greater", "input", "other"), method=True)
ge = defop("ge", ufunc("greater_equal", "input", "other"), method=True)
logical_not = defop("logical_not", ufunc("logical_not", "input"), method=True)
logical_and = defop("logical_and", ufunc("logical_and", "input", "other"), method=True)
logical_or = defop("logical_or", ufunc("logical_or", "input", "other"), method=True)
logical_xor = defop("logical_xor", ufunc("logical_xor", "input", "other"), method=True)
bitwise_and = defop("bitwise_and", ufunc("bitwise_and", "input", "other"), method=True, promote="binary")
bitwise_or = defop("bitwise_or", ufunc("bitwise_or", "input", "other"), method=True, promote="binary")
bitwise_xor = defop("bitwise_xor", ufunc("bitwise_xor", "input", "other"), method=True, promote="binary")
bitwise_not = defop("bitwise_not", ufunc("invert", "input"), method=True)
isnan = defop("isnan", ufunc("isnan", "input"), method=True)
isinf = defop("isinf", ufunc("isinf", "input"), method=True)
isfinite = defop("isfinite", ufunc("isfinite", "input"), method=True)
def _floor_divide(xp, input, other):
    _check_int_divisor(xp, input, other)
    return xp.floor_divide(input, other)


def _remainder(xp, input, other):
    _check_int_divisor(xp, input, other)
    return xp.remainder(input, other)


floor_divide = defop("floor_divide", _floor_divide, method=True,
                     promote="binary")
remainder = defop("remainder", _remainder, method=True, promote="binary",
                  input=passthrough,
                  other=lambda grad, input, other: -grad * (input / other).floor())
