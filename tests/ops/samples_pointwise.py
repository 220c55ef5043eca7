"""Samples of the pointwise ops (retrograd/ops/pointwise.py); format in samples.py."""
import numpy as np
import scipy.special as sp

from samples import A, B, Const, I, P, Sample, add, nc


def _unary(name, np_fn, gen=A, **kw):
    """The standard unary cases: a matrix, 0-d, empty and non-contiguous."""
    call = lambda m, x: getattr(m, name)(x)  # noqa: E731
    ref = (lambda x: np_fn(x)) if np_fn is not None else None
    add(name,
        Sample(call, gen(2, 3), ref=ref, **kw),
        Sample(call, gen(), ref=ref, **kw),
        Sample(call, gen(0, 3), ref=ref, **kw),
        Sample(call, nc(gen(3, 2)), ref=ref, note="non-contiguous", **kw),
        Sample(lambda m, x: getattr(x, name)(), gen(4), ref=ref, note="method", **kw))


def _binary(name, np_fn, gen=A, gen2=None, scalar=True, **kw):
    """The standard binary cases: broadcasting, 0-d, Python scalars, empty and non-contiguous."""
    gen2 = gen2 or gen
    call = lambda m, x, y: getattr(m, name)(x, y)  # noqa: E731
    ref = (lambda x, y: np_fn(x, y)) if np_fn is not None else None
    add(name,
        Sample(call, gen(2, 3), gen2(3), ref=ref, **kw),
        Sample(call, gen(2, 1), gen2(1, 3), ref=ref, note="both broadcast", **kw),
        Sample(call, gen(), gen2(2), ref=ref, note="0-d", **kw),
        Sample(call, gen(0, 3), gen2(3), ref=ref, note="empty", **kw),
        Sample(call, nc(gen(2, 3)), nc(gen2(2, 3)), ref=ref, note="non-contiguous", **kw),
        *([Sample(lambda m, x: getattr(m, name)(x, 1.5), gen(3), ref=(lambda x: np_fn(x, 1.5)) if np_fn else None,
                  note="python scalar", **kw)] if scalar else []),
        Sample(lambda m, x, y: getattr(x, name)(y), gen(3), Const(gen2(3)), note="method, constant other", **kw))


# -- arithmetic -------------------------------------------------------------------------------------------
_binary("add", np.add)
add("add",
    Sample(lambda m, x, y: m.add(x, y, alpha=2), A(2, 3), A(3), ref=lambda x, y: x + 2 * y),
    Sample(lambda m, x, y: x + y, A(2, 3), A(2, 3), ref=np.add),
    Sample(lambda m, x: 2 + x, A(3), ref=lambda x: 2 + x),
    Sample(lambda m, x, y: x + y, I(5, 3), I(5, 3), ref=np.add, note="integers"))
_binary("sub", np.subtract)
add("sub",
    Sample(lambda m, x, y: m.sub(x, y, alpha=0.5), A(2, 3), A(3), ref=lambda x, y: x - 0.5 * y),
    Sample(lambda m, x: 1 - x, A(3), ref=lambda x: 1 - x))
add("rsub",
    Sample(lambda m, x, y: m.rsub(x, y, alpha=0.5), A(2, 3), A(3), ref=lambda x, y: y - 0.5 * x),
    Sample(lambda m, x: m.rsub(x, 2), A(3), ref=lambda x: 2 - x, note="a number other: RsubBackward1"),
    Sample(lambda m, x, y: m.rsub(x, y, alpha=2), I(5, 3), I(5, 2, 1), ref=lambda x, y: y - 2 * x, note="integers"))
_binary("mul", np.multiply)
add("mul",
    Sample(lambda m, x: x * 3, A(3), ref=lambda x: x * 3),
    Sample(lambda m, x, y: x * y, A(3), I(4, 3), ref=np.multiply, note="float times int"),
    Sample(lambda m, x, y: x * y, A(2, 2), B(2, 2), ref=np.multiply, note="float times bool"))
add("mul_scalar", Sample(lambda m, x: m.special.ndtr(x), A(2, 3), ref=sp.ndtr, note="the last op of special.ndtr"))
add("add_scalar", Sample(lambda m, x: m.special.ndtr(x), nc(A(3)), ref=sp.ndtr, note="inside special.ndtr"))
_binary("div", np.divide, gen2=P)
add("reciprocal", Sample(lambda m, x: 2 / x, P(3), ref=lambda x: 2 / x, note="number / tensor, as PyTorch's"))
add("div",
    Sample(lambda m, x, y: x / y, I(5, 3), I(5, 3, low=1), ref=np.divide, note="int / int is float"))
_unary("neg", np.negative)
add("neg", Sample(lambda m, x: -x, A(3), ref=np.negative))

# pow: tensor ** scalar (integer exponents allow negative bases), tensor ** tensor, scalar ** tensor.
add("pow",
    Sample(lambda m, x: m.pow(x, 2), A(2, 3), ref=lambda x: x ** 2),
    Sample(lambda m, x: x ** 3, A(3), ref=lambda x: x ** 3),
    Sample(lambda m, x: x ** 0, A(3), ref=lambda x: x ** 0),
    Sample(lambda m, x: x ** -1.5, P(3), ref=lambda x: x ** -1.5),
    Sample(lambda m, x: x ** 0.5, P(), ref=lambda x: x ** 0.5),
    Sample(lambda m, x, y: m.pow(x, y), P(2, 3), A(3), ref=np.power),
    Sample(lambda m, x, y: x ** y, P(0, 3), A(3), ref=np.power, note="empty"),
    Sample(lambda m, x, y: x.pow(y), nc(P(2, 3)), nc(A(2, 3)), ref=np.power, note="non-contiguous"),
    Sample(lambda m, x: m.pow(2.5, x), A(3), ref=lambda x: 2.5 ** x),
    Sample(lambda m, x: 2 ** x, A(2, 2), ref=lambda x: 2.0 ** x),
    Sample(lambda m, x: x ** 2, I(5, 3), ref=lambda x: x ** 2, note="integers"))

# -- exponentials, logarithms, trigonometry --------------------------------------------------------------
_unary("exp", np.exp)
_unary("log", np.log, P)
_unary("log1p", np.log1p, P)
_unary("expm1", np.expm1)
_unary("sqrt", np.sqrt, P)
_unary("rsqrt", lambda x: 1 / np.sqrt(x), P)
_unary("reciprocal", np.reciprocal, P)
_unary("sin", np.sin)
_unary("cos", np.cos)
_unary("tan", np.tan, lambda *s: A(*s, low=-1.2, high=1.2))
_unary("tanh", np.tanh)
_unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)))
add("sigmoid", Sample(lambda m, x: m.sigmoid(x), np.array([-800., -30., 0., 30., 800.]), grad=False,
                      ref=lambda x: 1 / (1 + np.exp(-x)), note="saturates without overflow"))
add("exp", Sample(lambda m, x: m.exp(x), I(3, 4), ref=np.exp, note="integers become float"))
add("sqrt", Sample(lambda m, x: m.sqrt(x), I(9, 4), ref=lambda x: np.sqrt(x).astype(np.float32),
                   note="integers become float32"))


def _away_from_zero(*shape):
    x = A(*shape)
    return np.where(np.abs(x) < 0.1, 0.5, x)


_unary("relu", lambda x: np.maximum(x, 0), _away_from_zero)
_unary("abs", np.abs, _away_from_zero)
add("relu", Sample(lambda m, x: m.relu(x), np.array([-1., 0., 2.]), grad=False, note="zero gradient at 0"),
    Sample(lambda m, x: m.relu(x), np.array([np.nan, -np.inf, np.inf, -0.5]), grad=False, ref=lambda x: np.maximum(x, 0),
           note="NaN stays, -inf gives 0"),
    Sample(lambda m, x: m.relu(x), I(5, 3, low=-5), ref=lambda x: np.maximum(x, 0), note="integers keep their dtype"),
    Sample(lambda m, x: m.relu(x), A((1 << 20) + 1), grad=False, ref=lambda x: np.maximum(x, 0),
           note="past a million elements: against the scalar 0"),
    Sample(lambda m, x: m.relu(x), np.where(np.arange(192).reshape(3, 64) % 7 == 0, np.nan, A(3, 64)), grad=False,
           ref=lambda x: np.maximum(x, 0), note="rows of 64 or more: against a row of zeros; NaN stays"))
add("abs", Sample(lambda m, x: m.abs(x), np.array([-1., 0., 2.]), grad=False, note="zero gradient at 0"),
    Sample(lambda m, x: abs(x), I(5, 3, low=-5), ref=np.abs, note="integers"))
# Piecewise constant: the result requires grad and its gradient is zero.
_unary("sign", np.sign, _away_from_zero)
add("sign", Sample(lambda m, x: m.sign(x), np.array([-1., 0., 2.]), ref=np.sign, grad=False, note="jump at 0"))


def _not_half(*shape):
    x = A(*shape) * 3
    return np.where(np.abs(x - np.round(x)) < 0.1, 0.25, x)


for _name in ("floor", "ceil", "round", "trunc"):
    _unary(_name, getattr(np, _name), _not_half)
add("round", Sample(lambda m, x: m.round(x, decimals=1), np.array([1.234, -2.345, 0.05]), grad=False,
                    note="decimals"),
    Sample(lambda m, x: m.round(x), np.array([0.5, 1.5, 2.5, -0.5]), ref=np.round, grad=False,
           note="half to even"))

# -- clamp, maximum, minimum, where ---------------------------------------------------------------------
add("clamp",
    Sample(lambda m, x: m.clamp(x, -0.5, 0.5), A(2, 3), ref=lambda x: np.clip(x, -0.5, 0.5)),
    Sample(lambda m, x: m.clamp(x, min=0.1), A(3), ref=lambda x: np.maximum(x, 0.1)),
    Sample(lambda m, x: x.clamp(max=0.1), A(), ref=lambda x: np.minimum(x, 0.1)),
    Sample(lambda m, x: m.clamp(x, -1., 1.), A(0, 2), ref=lambda x: np.clip(x, -1, 1)),
    Sample(lambda m, x: x.clip(-0.3, 0.3), nc(A(2, 3)), ref=lambda x: np.clip(x, -0.3, 0.3)),
    Sample(lambda m, x, lo, hi: m.clamp(x, lo, hi), A(2, 3), A(3, low=-2, high=-0.5), A(3, low=0.5, high=2),
           ref=np.clip, note="tensor bounds"),
    Sample(lambda m, x, lo: m.clamp(x, min=lo), A(2, 3), A(2, 1), ref=np.maximum),
    Sample(lambda m, x: m.clamp(x, 1, 3), I(5, 4), ref=lambda x: np.clip(x, 1, 3), note="integers"))
_binary("maximum", np.maximum, scalar=False)  # PyTorch takes only tensors here
_binary("minimum", np.minimum, scalar=False)
_ties = np.array([1., 2., 3.])
add("maximum", Sample(lambda m, x, y: m.maximum(x, y), _ties, np.array([1., 0., 3.]), grad=False,
                      note="ties share the gradient"))
add("minimum", Sample(lambda m, x, y: m.minimum(x, y), _ties, np.array([1., 5., 3.]), grad=False,
                      note="ties share the gradient"))
add("where",
    Sample(lambda m, c, x, y: m.where(c, x, y), B(2, 3), A(2, 3), A(2, 3), ref=np.where),
    Sample(lambda m, c, x, y: m.where(c, x, y), B(2, 1), A(3), A(2, 3), ref=np.where, note="broadcast"),
    Sample(lambda m, c, x: m.where(c, x, 0.), B(3), A(3), ref=lambda c, x: np.where(c, x, 0.)),
    Sample(lambda m, c, y: m.where(c, 1.5, y), B(3), A(2, 3), ref=lambda c, y: np.where(c, 1.5, y)),
    Sample(lambda m, c, x, y: x.where(c, y), B(2, 3), nc(A(2, 3)), A(), ref=lambda c, x, y: np.where(c, x, y)),
    Sample(lambda m, c, x, y: m.where(c, x, y), B(0, 3), A(0, 3), A(3), ref=np.where, note="empty"),
    Sample(lambda m, c, x, y: m.where(c, x, y), B(3), I(3, 3), A(3), ref=np.where, note="int and float"))
add("div_rounding",
    Sample(lambda m, x, y: m.div(x, y, rounding_mode="floor"), A(2, 3) * 3, P(3), ref=lambda x, y: np.floor(x / y)),
    Sample(lambda m, x, y: m.div(x, y, rounding_mode="trunc"), A(2, 3) * 3, P(3), ref=lambda x, y: np.trunc(x / y)),
    Sample(lambda m, x, y: x.div(y, rounding_mode="trunc"), I(9, 4, low=-9), I(4, 4, low=-4) * 2 + 1,
           ref=lambda x, y: np.trunc(x / y).astype(np.int64), note="integers, toward zero"),
    Sample(lambda m, x: m.div(x, 2, rounding_mode="floor"), I(9, 4, low=-9), ref=lambda x: x // 2),
    Sample(lambda m, x: m.div(x, 0.5, rounding_mode="trunc"), A(), ref=lambda x: np.trunc(x / 0.5)))
add("div_mode_none",
    Sample(lambda m, x, y: m.div(x, y, rounding_mode=None), A(2, 3), P(3), ref=lambda x, y: x / y),
    Sample(lambda m, x: x.div(2, rounding_mode=None), A(3), ref=lambda x: x / 2, note="a number"),
    Sample(lambda m, x, y: m.div(x, y, rounding_mode=None), I(4, low=-9), I(4, low=1), ref=lambda x, y: x / y,
           note="integers: the default float dtype"))
add("remainder",
    Sample(lambda m, x, y: m.remainder(x, y), A(2, 3) * 3, P(3), ref=np.remainder),
    Sample(lambda m, x: x % 1.5, A(4) * 3, ref=lambda x: np.remainder(x, 1.5)),
    Sample(lambda m, x, y: m.remainder(x, y), I(9, 4, low=-9), I(4, 4, low=1), ref=np.remainder, note="integers"),
    Sample(lambda m, x: x % -2, np.array([-3., -1., 1., 3.5]), ref=lambda x: np.remainder(x, -2),
           note="negative divisor"))

# -- comparisons and logic: not differentiable ---------------------------------------------------------
_cmp = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}
_ops = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}
for _name, _fn in _cmp.items():
    _x = np.array([[1., 2., 3.], [3., 2., 1.]])
    add(_name,
        Sample(lambda m, x, y, _n=_name: getattr(m, _n)(x, y), _x, np.array([2., 2., 2.]), ref=_fn),
        Sample(lambda m, x, _n=_name: getattr(x, _ops[_n])(2.), _x, ref=lambda x, _f=_fn: _f(x, 2.)),
        Sample(lambda m, x, y, _n=_name: getattr(m, _n)(x, y), I(3, 2, 3), np.array([1, 2, 0]), ref=_fn),
        Sample(lambda m, x, y, _n=_name: getattr(m, _n)(x, y), I(3, 0, 3), I(3, 3), ref=_fn, note="empty"),
        Sample(lambda m, x, y, _n=_name: getattr(x, _n)(y), A(), nc(A(2, 2)), ref=_fn))
for _name in ("logical_and", "logical_or", "logical_xor"):
    add(_name,
        Sample(lambda m, x, y, _n=_name: getattr(m, _n)(x, y), B(2, 3), B(3), ref=getattr(np, _name)),
        Sample(lambda m, x, y, _n=_name: getattr(x, _n)(y), I(2, 4), A(4), ref=getattr(np, _name)))
add("logical_not",
    Sample(lambda m, x: m.logical_not(x), B(2, 3), ref=np.logical_not),
    Sample(lambda m, x: ~x, B(3), ref=np.logical_not),
    Sample(lambda m, x: x.logical_not(), A(3), ref=np.logical_not))
for _name, _op in (("bitwise_and", "__and__"), ("bitwise_or", "__or__"), ("bitwise_xor", "__xor__")):
    add(_name,
        Sample(lambda m, x, y, _n=_name: getattr(m, _n)(x, y), I(8, 2, 3), I(8, 3), ref=getattr(np, _name)),
        Sample(lambda m, x, y, _o=_op: getattr(x, _o)(y), B(2, 3), B(2, 3), ref=getattr(np, _name)),
        Sample(lambda m, x, _o=_op: getattr(x, _o)(5), I(8, 4), ref=lambda x, _n=_name: getattr(np, _n)(x, 5)))
add("bitwise_not",
    Sample(lambda m, x: m.bitwise_not(x), I(8, 2, 3, low=-8), ref=np.invert),
    Sample(lambda m, x: ~x, I(8, 3), ref=np.invert),
    Sample(lambda m, x: m.bitwise_not(x), B(3), ref=np.invert))
_special = np.array([0., -1.5, np.nan, np.inf, -np.inf])
for _name in ("isnan", "isinf", "isfinite"):
    add(_name,
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), _special, ref=getattr(np, _name)),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(), I(3, 2, 2), ref=getattr(np, _name)))
add("floor_divide",
    Sample(lambda m, x, y: m.floor_divide(x, y), I(20, 2, 3, low=-20), I(5, 3, low=1), ref=np.floor_divide),
    Sample(lambda m, x: x // 3, I(20, 4, low=-20), ref=lambda x: x // 3),
    Sample(lambda m, x, y: x // y, Const(A(2, 3) * 4), Const(P(3)), ref=np.floor_divide, note="floats"))
add("maximum", Sample(lambda m, x, y: m.max(x, y), A(2, 3), A(3), note="max(input, other)"),
    Sample(lambda m, x, y: x.max(other=y), A(3), A(3), note="max(other=)"))
add("minimum", Sample(lambda m, x, y: m.min(x, y), A(2, 3), A(3), note="min(input, other)"))
for _name in ("floor", "ceil", "round", "trunc"):
    add(_name, Sample(lambda m, x, _n=_name: getattr(m, _n)(x), I(5, 4, low=-5), ref=lambda x: x, note="integers"))

from retrograd.ops.pointwise import threshold_backward as _threshold_backward  # noqa: E402 - private op

add("threshold_backward",
    Sample(lambda m, g, r: _threshold_backward(g, r), A(2, 3), Const(_away_from_zero(2, 3)),
           torch_call=lambda m, g, r: m.ops.aten.threshold_backward(g, r, 0.0),
           ref=lambda g, r: np.where(r > 0, g, 0.0)),
    Sample(lambda m, g, r: _threshold_backward(g, r), np.array([np.nan, 1.0, np.nan]),
           Const(np.array([0.0, 2.0, 3.0])), torch_call=lambda m, g, r: m.ops.aten.threshold_backward(g, r, 0.0),
           ref=lambda g, r: np.array([0.0, 1.0, np.nan]), grad=False,
           note="a NaN gradient where the output is not positive gives 0, as PyTorch"),
    Sample(lambda m, g, r: _threshold_backward(g, r),
           np.array([np.inf, -np.inf, np.nan, 2.0, -3.0, np.nan]),
           Const(np.array([-0.0, 0.0, -np.nan, np.nan, 1.0, -2.0])),
           torch_call=lambda m, g, r: m.ops.aten.threshold_backward(g, r, 0.0),
           ref=lambda g, r: np.array([0.0, 0.0, np.nan, 2.0, -3.0, 0.0]), grad=False,
           note="an infinite or NaN gradient where the output is not positive gives 0; a NaN output, "
                "whatever its sign, passes the gradient"))

from retrograd.ops.pointwise import sigmoid_backward as _sigmoid_backward  # noqa: E402 - private op
from retrograd.ops.pointwise import tanh_backward as _tanh_backward  # noqa: E402 - private op

add("tanh_backward",
    Sample(lambda m, g, y: _tanh_backward(g, y), A(2, 3), np.tanh(A(2, 3)),
           torch_call=lambda m, g, y: m.ops.aten.tanh_backward(g, y), ref=lambda g, y: g * (1 - y * y)),
    Sample(lambda m, g, y: _tanh_backward(g, y), A(3), np.tanh(A(2, 1, 3)), note="broadcasting",
           torch_call=lambda m, g, y: m.ops.aten.tanh_backward(g, y), ref=lambda g, y: g * (1 - y * y)))
add("sigmoid_backward",
    Sample(lambda m, g, y: _sigmoid_backward(g, y), A(2, 3), 1 / (1 + np.exp(-A(2, 3))),
           torch_call=lambda m, g, y: m.ops.aten.sigmoid_backward(g, y), ref=lambda g, y: g * y * (1 - y)),
    Sample(lambda m, g, y: _sigmoid_backward(g, y), A(), 1 / (1 + np.exp(-A())), note="0-d",
           torch_call=lambda m, g, y: m.ops.aten.sigmoid_backward(g, y), ref=lambda g, y: g * y * (1 - y)))

# -- interpolation, two-argument functions and floating-point tests ----------------------------------------
add("lerp",
    Sample(lambda m, x, y: m.lerp(x, y, 0.3), A(2, 3), A(3), ref=lambda x, y: x + 0.3 * (y - x), note="scalar weight"),
    Sample(lambda m, x, y: x.lerp(y, 0.8), nc(A(2, 3)), A(2, 3), ref=lambda x, y: y - (y - x) * 0.2),
    Sample(lambda m, x, y, w: m.lerp(x, y, w), A(2, 3), A(2, 3), P(3) / 2, note="tensor weight",
           ref=lambda x, y, w: np.where(w < 0.5, x + w * (y - x), y - (y - x) * (1 - w))),
    Sample(lambda m, x, y, w: m.lerp(x, y, w), A(2, 1), A(3), Const(P(2, 3) / 2), note="broadcast"),
    Sample(lambda m, x, y: x.clone().lerp_(y, 0.5), A(3), A(3), ref=lambda x, y: (x + y) / 2, note="in place"))
_binary("hypot", np.hypot, scalar=False)
_binary("atan2", np.arctan2, scalar=False)
add("atan2", Sample(lambda m, x, y: m.arctan2(x, y), A(3), P(3), ref=np.arctan2, note="arctan2"),
    Sample(lambda m, x, y: x.clone().atan2_(y), A(3), P(3), ref=np.arctan2, note="in place"),
    Sample(lambda m, x, y: m.atan2(x, y), I(4, 3, low=-4), I(4, 3, low=1), ref=np.arctan2, note="integers"))
_binary("logaddexp", np.logaddexp, scalar=False)
_binary("logaddexp2", np.logaddexp2, scalar=False)
add("clamp_min",
    Sample(lambda m, x: m.clamp_min(x, 0.25), A(2, 3), ref=lambda x: np.maximum(x, 0.25)),
    Sample(lambda m, x, y: m.clamp_min(x, y), A(2, 3), A(3), ref=np.maximum, note="tensor min"),
    Sample(lambda m, x: x.clamp_min(1.5), I(4, 3), ref=lambda x: np.maximum(x, 1.5), note="integers, float min"),
    Sample(lambda m, x: x.clone().clamp_min_(0.0), nc(A(2, 3)), ref=lambda x: np.maximum(x, 0.), note="in place"))
add("clamp_max",
    Sample(lambda m, x: m.clamp_max(x, 0.25), A(2, 3), ref=lambda x: np.minimum(x, 0.25)),
    Sample(lambda m, x, y: x.clamp_max(y), A(2, 3), A(2, 1), ref=np.minimum, note="tensor max"),
    Sample(lambda m, x: x.clone().clamp_max_(0.0), A(3), ref=lambda x: np.minimum(x, 0.), note="in place"))
_unary("frac", lambda x: x - np.trunc(x))
add("frac", Sample(lambda m, x: x.clone().frac_(), A(3), ref=lambda x: x - np.trunc(x), note="in place"))
add("fmod",
    Sample(lambda m, x: m.fmod(x, 0.7), A(2, 3), ref=lambda x: np.fmod(x, 0.7)),
    Sample(lambda m, x, y: m.fmod(x, y), A(2, 3), P(3), ref=np.fmod, note="tensor other"),
    Sample(lambda m, x, y: x.fmod(y), I(9, 2, 3, low=-9), I(4, 3, low=1), ref=np.fmod, note="integers"),
    Sample(lambda m, x: x.clone().fmod_(-1.5), nc(A(2, 3)), ref=lambda x: np.fmod(x, -1.5), note="in place"))
add("copysign",
    Sample(lambda m, x, y: m.copysign(x, y), A(2, 3), A(3), ref=np.copysign),
    Sample(lambda m, x: m.copysign(x, -1.), A(3), ref=lambda x: np.copysign(x, -1.), note="scalar other"),
    Sample(lambda m, x, y: x.copysign(y), I(5, 3, low=-5), A(3), ref=np.copysign, note="integer input"),
    Sample(lambda m, x, y: x.clone().copysign_(y), A(3), Const(A(3)), ref=np.copysign, note="in place"))
_unary("sgn", np.sign)
add("sgn", Sample(lambda m, x: x.clone().sgn_(), A(3), ref=np.sign, note="in place"))
add("signbit",
    Sample(lambda m, x: m.signbit(x), np.array([-0., 0., -1., 2., -np.inf]), ref=np.signbit),
    Sample(lambda m, x: x.signbit(), I(4, 3, low=-4), ref=np.signbit),
    Sample(lambda m, x: x.signbit(), B(3), ref=lambda x: np.zeros(3, bool), note="bools"))
add("heaviside",
    Sample(lambda m, x, y: m.heaviside(x, y), Const(np.array([-1., 0., 2.])), Const(np.array([.5, .5, .5])),
           ref=lambda x, y: np.heaviside(x, y)),
    Sample(lambda m, x, y: x.heaviside(y), I(3, 2, 3, low=-2), np.array(7), ref=lambda x, y: np.heaviside(x, y)))
add("float_power",
    Sample(lambda m, x: m.float_power(x, 2), A(2, 3), ref=lambda x: x ** 2.),
    Sample(lambda m, x, y: m.float_power(x, y), P(3), A(3), ref=np.power, note="tensor exponent"),
    Sample(lambda m, x: x.float_power(0.5), I(5, 3), ref=lambda x: x.astype(float) ** 0.5, note="integers"),
    Sample(lambda m, x: m.float_power(2, x), A(3), ref=lambda x: 2. ** x, note="number base"))
_fm_special = np.array([1., np.nan, 3., np.nan])
for _name, _fn in (("fmax", np.fmax), ("fmin", np.fmin)):
    _binary(_name, _fn, scalar=False)
    add(_name, Sample(lambda m, x, y, _n=_name: getattr(m, _n)(x, y), Const(_fm_special),
                      Const(np.array([np.nan, 2., 4., np.nan])), ref=_fn, note="NaNs"))
add("nan_to_num",
    Sample(lambda m, x: m.nan_to_num(x), np.array([1., np.nan, np.inf, -np.inf]), ref=np.nan_to_num),
    Sample(lambda m, x: x.nan_to_num(nan=2., posinf=5., neginf=-5.), A(2, 3),
           ref=lambda x: np.nan_to_num(x, nan=2., posinf=5., neginf=-5.)),
    Sample(lambda m, x: x.nan_to_num(), I(4, 3), ref=lambda x: x, note="integers"),
    Sample(lambda m, x: x.clone().nan_to_num_(1.), A(3), ref=lambda x: x, note="in place"))
for _name, _fn in (("gcd", np.gcd), ("lcm", np.lcm)):
    add(_name,
        Sample(lambda m, x, y, _n=_name: getattr(m, _n)(x, y), I(20, 2, 3, low=-20), I(20, 3), ref=_fn),
        Sample(lambda m, x, y, _n=_name: getattr(x, _n)(y), I(9, 3), I(9, 2, 1), ref=_fn, note="broadcast"))
for _name, _fn in (("bitwise_left_shift", np.left_shift), ("bitwise_right_shift", np.right_shift)):
    add(_name,
        Sample(lambda m, x, y, _n=_name: getattr(m, _n)(x, y), I(64, 2, 3, low=-64), I(5, 3), ref=_fn),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(2), I(64, 4), ref=lambda x, _f=_fn: _f(x, 2)))
for _name, _fn in (("isneginf", np.isneginf), ("isposinf", np.isposinf), ("isreal", np.isreal)):
    add(_name,
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), _special, ref=_fn),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(), I(3, 2, 2), ref=_fn))
add("isclose",
    Sample(lambda m, x, y: m.isclose(x, y), np.array([1., 2., np.nan, np.inf]),
           np.array([1. + 1e-9, 2.1, np.nan, np.inf]), ref=np.isclose),
    Sample(lambda m, x, y: x.isclose(y, rtol=0.1, atol=0., equal_nan=True), Const(A(2, 3)), Const(A(3)),
           ref=lambda x, y: np.isclose(x, y, rtol=0.1, atol=0., equal_nan=True)),
    Sample(lambda m, x, y: m.isclose(x, y), I(3, 3), I(3, 3), ref=np.isclose, note="integers"))
for _name in ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"):
    add(_name, Sample(lambda m, x, y, _n=_name: getattr(x.clone(), _n + "_")(y), I(4, 2, 3), I(4, 3),
                      ref=lambda x, y, _n=_name: getattr(np, _n)(x, y).astype(x.dtype), note="in place"))
for _name in ("logical_not", "bitwise_not"):
    add(_name, Sample(lambda m, x, _n=_name: getattr(x.clone(), _n + "_")(), I(4, 3),
                      ref=lambda x, _n=_name: (np.logical_not(x) if _n == "logical_not" else np.invert(x)).astype(
                          x.dtype), note="in place"))
add("atan2", Sample(lambda m, x, y: x.clone().arctan2_(y), A(3), P(3), ref=np.arctan2, note="arctan2_"))
