"""Pointwise ops: arithmetic, transcendental functions and comparisons, with broadcasting."""
from __future__ import annotations

import inspect
import math

import numpy as np
import scipy.special

from .. import _dtype
from .._tensor import Tensor
from ..autograd import grad_mode
from ._call import call_out
from ._declarations import REGISTRY, defop, op_call, passthrough, shortcut, tensor_method, ufunc
from ._node import DIM_UNSET

# Note [Formulas on arrays]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# A formula runs with grad mode off unless its backward pass is recorded (``create_graph=True``).
# A formula written as many small ops pays each op's dispatch and temporaries at every node; where
# that cost shows, it may, with grad mode off, compute the same expression on the arrays directly
# (``formula_arrays(t)`` gives the array module then, else None) in a few passes into buffers it
# owns, and wrap the result with ``Tensor._make``. With grad mode on it keeps its form in ops, so
# higher derivatives stay exact and connected: gradcheck checks the array form, gradgradcheck the other.
# A formula may also hand on a view of its incoming gradient's array (the pieces of a split, a reshape)
# as a plain tensor, outside any view relation: it never writes into it, and AccumulateGrad copies a
# gradient whose array is a view (``grad._data.base``), so no ``.grad`` shares memory with another.
def formula_arrays(t):
    """The array module of ``t``'s device where a formula may compute on arrays (grad mode off), else None.

    See Note [Formulas on arrays].
    """
    if grad_mode.is_grad_enabled():
        return None
    device = t._device
    return np if device.type == "cpu" else device.backend.xp


def sigmoid_array(x):
    """The logistic sigmoid of a float32 or float64 NumPy array, in a fresh array, in its dtype.

    float32: ``1 / (1 + exp(-x))`` in one buffer, where NumPy's exp is about twice as fast as SciPy's
    ``expit`` (exp overflows to inf for very negative x: the sigmoid is 0, its limit); float64: ``expit``.
    Callers run under retrograd's quiet floating-point state (an op's forward, a backward pass), so the
    overflow warns nobody; an ``np.errstate`` here would cost a third of the op on a (16, 128) array.
    See Note [NumPy's floating-point warnings].
    """
    if x.dtype == np.float64:
        return scipy.special.expit(x)
    out = np.negative(x)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


_EXPIT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# -- arithmetic -------------------------------------------------------------------------------------
add = defop("add", shortcut(lambda xp, input, other, *, alpha=1: xp.add(input, xp.multiply(other, alpha)),
                            when={"alpha": 1}, then=ufunc("add", "input", "other")),
            method=True, inplace=True, promote="binary",
            input=passthrough,
            other=shortcut(lambda grad, alpha: grad * alpha, when={"alpha": 1}, then=passthrough))


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
            method=True, inplace=True, promote="binary",
            node_names={"RsubBackward1": lambda input: not isinstance(input, Tensor)},  # number - tensor
            node_edges={"RsubBackward1": ("other",)},  # the number: no edge
            input=passthrough,
            other=shortcut(lambda grad, alpha: grad * -alpha, when={"alpha": 1}, then=op_call("neg", "grad")))



def _rsub(xp, input, other, *, alpha=1):
    """Subtracts ``input``, multiplied by ``alpha``, from ``other`` elementwise: ``sub`` with its operands swapped.

    Example::
        >>> import retrograd as rg
        >>> rg.rsub(rg.tensor([1., 2.]), 3, alpha=2)
        tensor([ 1., -1.])
    """
    return _sub(xp, other, input, alpha=alpha)


# ``other - alpha * input``: PyTorch's rsub, an op of its own (RsubBackward0; RsubBackward1 for a number other).
rsub = defop("rsub", _rsub, promote="binary",
             node_names={"RsubBackward1": lambda other: not isinstance(other, Tensor)},
             node_edges={"RsubBackward1": ("input",)},  # the number: no edge
             input=shortcut(lambda grad, alpha: grad * -alpha, when={"alpha": 1}, then=op_call("neg", "grad")),
             other=passthrough)

mul = defop("mul", ufunc("multiply", "input", "other"),
            method=True, inplace=True, promote="binary",
            input=op_call("mul", "grad", "other"),
            other=op_call("mul", "grad", "input"))

# The Scalar overloads PyTorch's own composites call (Python's ``x * 2`` is the Tensor one): the
# same ops, named as PyTorch names their nodes.
mul_scalar = defop("mul_scalar", ufunc("multiply", "input", "other"), public=False, promote="binary",
                   node_name="MulBackward1", input=op_call("mul", "grad", "other"))
add_scalar = defop("add_scalar", ufunc("add", "input", "other"), public=False, promote="binary",
                   node_name="AddBackward1", input=passthrough)

_true_div = defop("div", ufunc("true_divide", "input", "other"), promote="float",
                  input=op_call("div", "grad", "other"),
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


# Piecewise constant in both inputs: zero gradients, as PyTorch. The formulas name the inputs and the mode so that
# the node keeps them, as PyTorch's DivBackward2 keeps self, other and rounding_mode.
_div_rounding = defop("div_rounding", _rounding_div, public=False, node_name="DivBackward2", promote="binary",
                      input=lambda grad, other, rounding_mode: grad * 0,
                      other=lambda grad, input, other, rounding_mode: grad * 0)


def _div_mode_none(xp, input, other, rounding_mode):
    return xp.true_divide(input, other)


# ``div(a, b, rounding_mode=None)``, the mode given as None: true division, which PyTorch records with the rounding
# overload's node, DivBackward2 (See Note [An explicit dim of None]).
_div_mode_none_op = defop("div_mode_none", _div_mode_none, public=False, node_name="DivBackward2", promote="float",
                          input=lambda grad, other, rounding_mode: div(grad, other),
                          other=lambda grad, input, other, rounding_mode: -grad * input / (other * other))


@tensor_method
def div(input, other, *, rounding_mode=DIM_UNSET, out=None):  # See Note [An explicit dim of None]
    """Divides ``input`` by ``other`` elementwise: true division, or rounded with ``rounding_mode``.

    Args:
        input: the dividend (a Tensor or a number).
        other: the divisor (a Tensor or a number); both broadcast.
        rounding_mode: None (true division; integers give the default float dtype), 'trunc' (toward
            zero) or 'floor' (toward minus infinity; integers stay integers).
        out: the tensor to write the quotient into (See Note [The out= argument]).

    Returns:
        The quotient (``out``, where given).

    Raises:
        RuntimeError: for another ``rounding_mode``, or integer division by zero with a rounding
            mode; PyTorch's errors of ``out=``.

    Example::
        >>> import retrograd as rg
        >>> rg.div(rg.tensor([1., 3.]), 2)
        tensor([0.5000, 1.5000])
        >>> rg.div(rg.tensor([-7, 7]), 2, rounding_mode="trunc")
        tensor([-3,  3])
    """
    if rounding_mode is DIM_UNSET:
        if out is None:
            return _true_div(input, other)
        rounding_mode = None
    if out is not None:  # See Note [The out= argument]
        if rounding_mode is None:
            return call_out(REGISTRY["div"], (input, other), out)
        return call_out(REGISTRY["div_rounding"], (input, other, rounding_mode), out, name="div")
    if rounding_mode is None:
        return _div_mode_none_op(input, other, None)
    return _div_rounding(input, other, rounding_mode)


div.__signature__ = inspect.signature(div).replace(parameters=[  # shown as None (Note [An explicit dim of None])
    p.replace(default=None) if p.default is DIM_UNSET else p for p in inspect.signature(div).parameters.values()])


neg = defop("neg", ufunc("negative", "input"), method=True, inplace=True,
            input=op_call("neg", "grad"))


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


def _pow_exponent_grad(grad, input, exponent, result):
    # d/dy x**y = x**y * log(x); as PyTorch, 0 where x == 0 and y >= 0 (a negative y keeps inf * log(0) = -inf).
    if not isinstance(input, Tensor):
        if input == 0:
            return grad * where(exponent >= 0, 0., result * -math.inf)
        return grad * result * math.log(input)
    return grad * where((input == 0) & (exponent >= 0), 0., result * input.log())


pow = defop("pow", _pow_forward, method=True, inplace=True, promote="binary",  # noqa: A001
            node_names={"PowBackward2": lambda input: not isinstance(input, Tensor),  # See Note [Node names per call]
                        "PowBackward1": lambda exponent: isinstance(exponent, Tensor)},
            node_edges={"PowBackward0": ("input",), "PowBackward2": ("exponent",)},  # the number: no edge
            input=_pow_input_grad, exponent=_pow_exponent_grad)

# -- exponentials and logarithms ----------------------------------------------------------------
exp = defop("exp", ufunc("exp", "input"), method=True, inplace=True, promote="float",
            input=op_call("mul", "grad", "result"))
log = defop("log", ufunc("log", "input"), method=True, inplace=True, promote="float",
            input=op_call("div", "grad", "input"))
log1p = defop("log1p", ufunc("log1p", "input"), method=True, inplace=True, promote="float",
              input=lambda grad, input: grad / (input + 1))
expm1 = defop("expm1", ufunc("expm1", "input"), method=True, inplace=True, promote="float",
              input=lambda grad, result: grad * (result + 1))
sqrt = defop("sqrt", ufunc("sqrt", "input"), method=True, inplace=True, promote="float",
             input=lambda grad, result: grad / (result * 2))
rsqrt = defop("rsqrt", lambda xp, input: 1 / xp.sqrt(input), method=True, inplace=True, promote="float",
              input=lambda grad, result: grad * result ** 3 * -0.5)
reciprocal = defop("reciprocal", lambda xp, input: xp.reciprocal(input.astype(xp.result_type(input, 1.0))),
                   method=True, inplace=True, promote="float",
                   input=lambda grad, result: -grad * result * result)

# -- trigonometric and activations --------------------------------------------------------------------
sin = defop("sin", ufunc("sin", "input"), method=True, inplace=True, promote="float",
            input=lambda grad, input: grad * input.cos())
cos = defop("cos", ufunc("cos", "input"), method=True, inplace=True, promote="float",
            input=lambda grad, input: -grad * input.sin())
tan = defop("tan", ufunc("tan", "input"), method=True, inplace=True, promote="float",
            input=lambda grad, result: grad * (result * result + 1))
# tanh and sigmoid have their own backward ops, as in PyTorch (TanhBackward0 runs tanh_backward):
# under create_graph, one recorded op instead of three for the first derivative.
def _tanh_backward(xp, grad_output, output):
    if not output.ndim or output.dtype != grad_output.dtype:
        return grad_output * (1 - output * output)
    out = output * output  # the same, in one buffer
    xp.subtract(1, out, out=out)
    return xp.multiply(out, grad_output, out=out)


def _sigmoid_backward(xp, grad_output, output):
    if not output.ndim or output.dtype != grad_output.dtype:
        return grad_output * output * (1 - output)
    out = 1 - output  # the same, in one buffer
    out *= output
    return xp.multiply(out, grad_output, out=out)


tanh_backward = defop("tanh_backward", _tanh_backward,
                      public=False,
                      grad_output=op_call("tanh_backward", "grad", "output"),
                      output=lambda grad, grad_output, output: grad * grad_output * output * -2)
sigmoid_backward = defop("sigmoid_backward", _sigmoid_backward,
                         public=False,
                         grad_output=op_call("sigmoid_backward", "grad", "output"),
                         output=lambda grad, grad_output, output: grad * grad_output * (1 - 2 * output))
tanh = defop("tanh", ufunc("tanh", "input"), method=True, inplace=True, promote="float",
             input=op_call("tanh_backward", "grad", "result"))


def _sigmoid(xp, input):
    if xp is np and input.dtype in _EXPIT_DTYPES and input.ndim:
        return sigmoid_array(input)
    # exp of a negative argument only, so large |x| neither overflows nor loses the small side
    e = xp.exp(-xp.abs(input))
    return xp.where(input >= 0, 1 / (1 + e), e / (1 + e))


sigmoid = defop("sigmoid", _sigmoid, method=True, inplace=True, promote="float",
                input=op_call("sigmoid_backward", "grad", "result"))


# The integer type of each float dtype's width, and a NumPy float's bits as that integer: see _threshold_backward.
_FLOAT_BITS = {np.dtype(np.float16): np.dtype(np.int16), np.dtype(np.float32): np.dtype(np.int32),
               np.dtype(np.float64): np.dtype(np.int64)}


def _threshold_backward(xp, grad, output, threshold=0.0):
    # As PyTorch: the gradient passes unless output <= threshold, so at a NaN output too, and is 0 elsewhere,
    # even where it is inf or NaN.
    bits = _FLOAT_BITS.get(grad.dtype) if xp is np and grad.ndim and grad.shape == output.shape else None
    if bits is not None:
        # A float is its bits: ANDed with all ones (-1) where the gradient passes and with 0 elsewhere, it is the
        # gradient exactly or +0. Three passes and no check for NaN; where() would take ten times as long.
        mask = np.less_equal(output, threshold).view(np.int8)
        np.subtract(mask, np.int8(1), out=mask)  # 1 (drop) -> 0, 0 (pass) -> -1
        mask = mask.astype(bits)
        return np.bitwise_and(grad.view(bits), mask, out=mask).view(grad.dtype)
    keep = ~(output <= threshold)
    out = xp.multiply(grad, keep, dtype=grad.dtype)  # a mask product: far cheaper than where()
    if out.dtype.kind == "f" and xp.isnan(out).any():  # NaN * 0 is NaN, but PyTorch gives 0 there
        out = xp.where(keep, grad, xp.zeros((), dtype=grad.dtype))
    return out


# PyTorch's ReluBackward0 and ThresholdBackward0 compute threshold_backward; it has its own node
# for double backward. (The parameter is not called ``result``: formulas reserve that name for an
# op's own output.)
threshold_backward = defop("threshold_backward", _threshold_backward, public=False,
                           grad=op_call("threshold_backward", "grad", "output", "threshold"),
                           output=lambda grad: grad.new_zeros(tuple(grad.shape)))  # PyTorch's edge, with zeros


def _relu(xp, input):
    # NumPy's maximum against a scalar takes about twice as long as against an array of zeros (13
    # against 5.5 us on (128, 256) float32, zeros included). Rows of 64 or more take one row of zeros,
    # broadcast: no array of the input's size to clear (7.0 against 8.6 us there, 461 against 479 on
    # (256, 2048)); shorter rows, up to a million elements, a whole array (1.0 against 1.6 us on (128, 10)).
    if xp is np and input.ndim:
        if input.ndim > 1 and input.shape[-1] >= 64 and input.flags.c_contiguous:
            return np.maximum(input, np.zeros(input.shape[-1], input.dtype))
        if input.size <= 1 << 20:
            return np.maximum(input, np.zeros(input.shape, input.dtype))
    return xp.maximum(input, 0).astype(input.dtype, copy=False)


relu = defop("relu", _relu, method=True, inplace=True,  # zero gradient at 0, as PyTorch
             input=op_call("threshold_backward", "grad", "result"))
abs = defop("abs", ufunc("abs", "input"), method=True, inplace=True,  # noqa: A001
            input=lambda grad, input: grad * input.sign())
sign = defop("sign", ufunc("sign", "input"), method=True, inplace=True,
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


clamp = defop("clamp", _clamp, method=True, inplace=True, promote="binary", tensor_args=("input", "min", "max"),
              node_names={"ClampBackward1": lambda min, max: not isinstance(min, Tensor) and  # number bounds
                          not isinstance(max, Tensor)},
              node_edges={"ClampBackward1": ("input",)},
              input=lambda grad, input, min, max: where(_clamp_mask(input, min, max), grad, 0.),
              min=lambda grad, input, min: where(input < min, grad, 0.),
              max=lambda grad, input, max: where(input > max, grad, 0.))

maximum = defop("maximum", ufunc("maximum", "input", "other"), method=True, promote="binary",
                input=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(input < other, 0.),
                other=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(other < input, 0.))
minimum = defop("minimum", ufunc("minimum", "input", "other"), method=True, promote="binary",
                input=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(input > other, 0.),
                other=lambda grad, input, other: where(input == other, grad / 2, grad).masked_fill(other > input, 0.))

def _where(xp, condition, input, other):
    kind = getattr(condition, "dtype", xp.dtype(bool))
    if kind != xp.bool_ and kind != xp.uint8:  # PyTorch still takes uint8 masks (with a deprecation warning)
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_dtype.scalar_type_name(kind)}")
    return xp.where(condition, input, other)


where = defop("where", _where, promote="binary",
              tensor_args=("condition", "input", "other"),
              input=lambda grad, condition: where(condition, grad, 0.),
              other=lambda grad, condition: where(condition, 0., grad))


# Piecewise constant: results of a tensor that requires grad also require grad, with zero gradient.
def _rounding(np_name):
    def forward(xp, input):
        return getattr(xp, np_name)(input) if input.dtype.kind == "f" else input.copy()  # integers stay as they are
    return forward


def _round(xp, input, *, decimals=0):
    if input.dtype.kind != "f":
        return input.copy()
    return xp.round(input, decimals)


floor = defop("floor", _rounding("floor"), method=True, inplace=True, input=lambda grad: grad * 0)
ceil = defop("ceil", _rounding("ceil"), method=True, inplace=True, input=lambda grad: grad * 0)
trunc = defop("trunc", _rounding("trunc"), method=True, inplace=True, input=lambda grad: grad * 0)
round = defop("round", _round, method=True, inplace=True, input=lambda grad: grad * 0,  # noqa: A001
              node_names={"RoundBackward1": lambda decimals: decimals != 0})

# -- comparisons and logic (not differentiable: results never require grad) --------------------------
# A comparison's in-place form (``x.eq_(y)``) writes 1 or 0 in x's dtype; on a floating tensor it is
# recorded, as PyTorch's, with zero gradients (``EqBackward0`` for a number, ``EqBackward1`` for a tensor).
# The result of the out-of-place form is no differentiable output: that call records nothing.
def _comparison(name, ufunc_name):
    stem = name[0].upper() + name[1:]
    return defop(name, ufunc(ufunc_name, "input", "other"), method=True, inplace=True, nondiff_outputs=(0,),
                 node_names={f"{stem}Backward1": lambda other: isinstance(other, Tensor)},
                 input=lambda grad: grad * 0, other=lambda grad, other: grad.new_zeros(other.shape))


eq = _comparison("eq", "equal")
ne = _comparison("ne", "not_equal")
lt = _comparison("lt", "less")
le = _comparison("le", "less_equal")
gt = _comparison("gt", "greater")
ge = _comparison("ge", "greater_equal")
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


floor_divide = defop("floor_divide", _floor_divide, method=True, inplace=True,
                     promote="binary")
remainder = defop("remainder", _remainder, method=True, inplace=True, promote="binary",
                  node_names={"RemainderBackward1": lambda other: isinstance(other, Tensor)},
                  node_edges={"RemainderBackward0": ("input",)},
                  input=passthrough,
                  other=lambda grad, input, other: -grad * (input / other).floor())


# -- more of PyTorch's pointwise ops: interpolation, two-argument functions, floating-point tests ------
def _lerp_checks(input, end, weight):
    """PyTorch's dtype errors of lerp: it does not promote (a 0-d weight aside) and has no integer kernel."""
    tensor_weight = getattr(weight, "ndim", 0) > 0
    for name, other in (("end", end), ("weight", weight)):
        dt = getattr(other, "dtype", input.dtype)
        if dt != input.dtype and (name == "end" or tensor_weight):
            raise RuntimeError(f"expected dtype {_dtype.type_meta_name(input.dtype)} for `{name}` but got dtype "
                               f"{_dtype.type_meta_name(dt)}")
    if input.dtype.kind != "f" and (tensor_weight or not hasattr(weight, "dtype")):
        kernel = "lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')


def _lerp(xp, input, end, weight):
    _lerp_checks(input, end, weight)
    # PyTorch's two-sided form: exact at both ends (weight 0 gives input, weight 1 gives end).
    diff = end - input
    return xp.where(xp.abs(weight) < 0.5, input + weight * diff, end - diff * (1 - weight))


lerp = defop("lerp", _lerp, method=True, inplace=True, promote="binary", tensor_args=("input", "end", "weight"),
             node_names={"LerpBackward1": lambda weight: isinstance(weight, Tensor)},
             node_edges={"LerpBackward0": ("input", "end")},
             input=lambda grad, weight: grad * (1 - weight),
             end=lambda grad, weight: grad * weight,
             weight=lambda grad, input, end: grad * (end - input))
hypot = defop("hypot", ufunc("hypot", "input", "other"), method=True, inplace=True, promote="float",
              input=lambda grad, input, result: grad * input / result,
              other=lambda grad, other, result: grad * other / result)
def _atan2_scale(input, other):
    """1 / (input² + other²), 0 where both are 0: atan2's gradient at the origin is 0, as PyTorch's."""
    scale = (input * input + other * other).reciprocal()
    return scale.masked_fill(scale.isinf(), 0)


atan2 = defop("atan2", ufunc("arctan2", "input", "other"), method=True, inplace=True, promote="float",
              input=lambda grad, input, other: grad * other * _atan2_scale(input, other),
              other=lambda grad, input, other: -grad * input * _atan2_scale(input, other))
arctan2 = tensor_method(atan2, name="arctan2")
logaddexp = defop("logaddexp", ufunc("logaddexp", "input", "other"), method=True, promote="float",
                  input=lambda grad, input, other: grad / ((other - input).exp() + 1),
                  other=lambda grad, input, other: grad / ((input - other).exp() + 1))
logaddexp2 = defop("logaddexp2", ufunc("logaddexp2", "input", "other"), method=True, promote="float",
                   input=lambda grad, input, other: grad / (pow(2., other - input) + 1),
                   other=lambda grad, input, other: grad / (pow(2., input - other) + 1))
clamp_min = defop("clamp_min", ufunc("maximum", "input", "min"), method=True, inplace=True, promote="binary",
                  node_names={"ClampMinBackward1": lambda min: isinstance(min, Tensor)},  # noqa: A002
                  node_edges={"ClampMinBackward0": ("input",)},
                  input=lambda grad, input, min: where(input >= min, grad, 0.),  # noqa: A002
                  min=lambda grad, input, min: where(input < min, grad, 0.))  # noqa: A002
clamp_max = defop("clamp_max", ufunc("minimum", "input", "max"), method=True, inplace=True, promote="binary",
                  node_names={"ClampMaxBackward1": lambda max: isinstance(max, Tensor)},  # noqa: A002
                  node_edges={"ClampMaxBackward0": ("input",)},
                  input=lambda grad, input, max: where(input <= max, grad, 0.),  # noqa: A002
                  max=lambda grad, input, max: where(input > max, grad, 0.))  # noqa: A002
frac = defop("frac", lambda xp, input: input - xp.trunc(input), method=True, inplace=True, input=passthrough)


def _fmod(xp, input, other):
    _check_int_divisor(xp, input, other)
    return xp.fmod(input, other)


fmod = defop("fmod", _fmod, method=True, inplace=True, promote="binary",
             node_names={"FmodBackward1": lambda other: isinstance(other, Tensor)},
             node_edges={"FmodBackward0": ("input",)},
             input=passthrough,
             other=lambda grad, input, other: -grad * (input / other).trunc())


def _copysign_input_grad(grad, input, result):
    # d/dx copysign(x, y) = sign(x) * sign(result): the ratio result / x, 0 at x == 0 as PyTorch
    return where(input == 0, grad * 0, grad * (result / input))


copysign = defop("copysign", ufunc("copysign", "input", "other"), method=True, inplace=True, promote="float",
                 node_names={"CopysignBackward1": lambda other: not isinstance(other, Tensor)},
                 node_edges={"CopysignBackward1": ("input",)},
                 input=_copysign_input_grad,
                 other=lambda grad, result: grad * 0)  # PyTorch's node keeps the result for either input
sgn = defop("sgn", ufunc("sign", "input"), method=True, inplace=True,  # real tensors: the sign, zero gradient
            input=lambda grad, input, result: grad * 0)  # saves what PyTorch's node saves (its complex formula's)
signbit = defop("signbit", lambda xp, input: xp.signbit(input) if input.dtype.kind != "b" else
                xp.zeros(input.shape, bool), method=True)


def _heaviside(xp, input, values):
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return xp.where(input == 0, values, (input > 0).astype(input.dtype)).astype(input.dtype)


heaviside = defop("heaviside", _heaviside, method=True, inplace=True)  # PyTorch has no derivative for it


@tensor_method
def float_power(input, exponent):
    """``input ** exponent`` in double precision (both cast to float64 first), as ``torch.float_power``.

    Example::
        >>> import retrograd as rg
        >>> rg.float_power(rg.tensor([2, 3]), 2)
        tensor([4., 9.], dtype=retrograd.float64)
    """
    base = input.double() if isinstance(input, Tensor) else float(input)
    if isinstance(exponent, Tensor):
        exponent = exponent.double()
    elif not isinstance(exponent, bool):
        exponent = float(exponent)
    return pow(base, exponent)


@tensor_method
def float_power_(self, exponent):
    """In-place version of ``float_power``: the base must already be float64.

    Raises:
        RuntimeError: a base of another dtype (PyTorch's error).
    """
    if self.dtype is not _dtype.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype.scalar_type_name(self._data.dtype)} but "
                           "the operation's result requires dtype Double")
    if isinstance(exponent, Tensor):
        exponent = exponent.double()
    elif not isinstance(exponent, bool):
        exponent = float(exponent)
    return self.pow_(exponent)


def _fmax_grads(keep_input):
    def formula(grad, input, other):
        chosen = (input >= other).logical_or(other.isnan())
        return grad.masked_fill(chosen.logical_not() if keep_input else chosen, 0.)
    return formula


def _fmin_grads(keep_input):
    def formula(grad, input, other):
        chosen = (input <= other).logical_or(other.isnan())
        return grad.masked_fill(chosen.logical_not() if keep_input else chosen, 0.)
    return formula


fmax = defop("fmax", ufunc("fmax", "input", "other"), method=True, promote="binary",
             input=_fmax_grads(True), other=_fmax_grads(False))
fmin = defop("fmin", ufunc("fmin", "input", "other"), method=True, promote="binary",
             input=_fmin_grads(True), other=_fmin_grads(False))


def _nan_to_num(xp, input, nan=0.0, posinf=None, neginf=None):
    if input.dtype.kind == "V":  # bfloat16 (Note [bfloat16 arrays] in _dtype.py): its own largest finite values
        big = float(xp.finfo(input.dtype).max)
        wide = xp.nan_to_num(input.astype(xp.float32), nan=nan, posinf=big if posinf is None else posinf,
                             neginf=-big if neginf is None else neginf)
        return wide.astype(input.dtype)
    if input.dtype.kind != "f":
        return input.copy()
    return xp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


nan_to_num = defop("nan_to_num", _nan_to_num, method=True, inplace=True, wide=False,
                   input=lambda grad, input: grad * input.isfinite())
gcd = defop("gcd", ufunc("gcd", "input", "other"), method=True, inplace=True, promote="binary")
lcm = defop("lcm", ufunc("lcm", "input", "other"), method=True, inplace=True, promote="binary")
bitwise_left_shift = defop("bitwise_left_shift", ufunc("left_shift", "input", "other"), method=True, inplace=True,
                           promote="binary")
bitwise_right_shift = defop("bitwise_right_shift", ufunc("right_shift", "input", "other"), method=True,
                            inplace=True, promote="binary")
isneginf = defop("isneginf", lambda xp, input: xp.isneginf(input) if input.dtype.kind == "f" else
                 xp.zeros(input.shape, bool), method=True)
isposinf = defop("isposinf", lambda xp, input: xp.isposinf(input) if input.dtype.kind == "f" else
                 xp.zeros(input.shape, bool), method=True)
isreal = defop("isreal", lambda xp, input: xp.ones(input.shape, bool), method=True)  # no complex dtypes here


def _isclose(xp, input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_scalar_name(input.dtype)} did not match {_scalar_name(other.dtype)}")
    if input.dtype.kind == "b":
        return input == other
    return xp.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _scalar_name(np_dtype):
    return _dtype.scalar_type_name(np_dtype)


isclose = defop("isclose", _isclose, method=True)


@tensor_method
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True if every element of ``input`` is close to ``other`` (``|input - other| <= atol + rtol * |other|``).

    Example::
        >>> import retrograd as rg
        >>> rg.allclose(rg.tensor([1., 2.]), rg.tensor([1., 2.000001]))
        True
    """
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


@tensor_method
def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements.

    Example::
        >>> import retrograd as rg
        >>> rg.equal(rg.tensor([1, 2]), rg.tensor([1, 2]))
        True
    """
    return tuple(input.shape) == tuple(other.shape) and bool(eq(input, other).all().item())


# PyTorch's in-place forms of the logical and bitwise ops declared above (the result cast to self's dtype).
for _name in ("logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
              "bitwise_not"):
    REGISTRY[_name].inplace = True

# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import FROM_BACKWARD, LINEAR, defjvp  # noqa: E402

defjvp(LINEAR, "add", "sub", "rsub", "neg", "mul_scalar", "where")
defjvp(FROM_BACKWARD, "add_scalar", "mul", "div", "div_rounding", "div_mode_none", "pow", "exp", "log", "log1p", "expm1", "sqrt",
       "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh_backward", "sigmoid_backward", "tanh", "sigmoid",
       "threshold_backward", "relu", "abs", "sign", "clamp", "maximum", "minimum", "floor", "ceil", "trunc", "round",
       "remainder", "lerp", "hypot", "atan2", "logaddexp", "logaddexp2", "clamp_min", "clamp_max", "frac", "fmod",
       "copysign", "sgn", "fmax", "fmin", "nan_to_num", "eq", "ne", "lt", "le", "gt", "ge")
