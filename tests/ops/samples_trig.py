"""Samples of the inverse trigonometric and hyperbolic functions and the angle conversions (retrograd/ops/trig.py),
and of the arithmetic of retrograd/ops/arithmetic.py; format in samples.py."""
import numpy as np

from samples import A, Const, I, P, Sample, add, nc


def _in(low, high):
    return lambda *shape: A(*shape, low=low, high=high)


def _unary(name, np_fn, gen=A, alias=None, ints=(0, 2)):
    """A matrix, 0-d, empty, non-contiguous, the method (and the alias's), integers (which give float32)."""
    call = lambda m, x: getattr(m, name)(x)  # noqa: E731
    add(name,
        Sample(call, gen(2, 3), ref=np_fn),
        Sample(call, gen(), ref=np_fn),
        Sample(call, gen(0, 3), ref=np_fn),
        Sample(lambda m, x: getattr(x, name)(), nc(gen(3, 2)), ref=np_fn, note="method, non-contiguous"),
        Sample(call, I(ints[1], 4, low=ints[0]), ref=lambda x: np_fn(x).astype(np.float32), note="integers give float32"))
    if alias:
        add(name, Sample(lambda m, x: getattr(m, alias)(x), gen(3), ref=np_fn, note=alias),
            Sample(lambda m, x: getattr(x, alias)(), gen(2), ref=np_fn, note=f"Tensor.{alias}"))


_unary("acos", np.arccos, _in(-0.9, 0.9), alias="arccos")
_unary("asin", np.arcsin, _in(-0.9, 0.9), alias="arcsin")
_unary("atan", np.arctan, alias="arctan")
_unary("sinh", np.sinh)
_unary("cosh", np.cosh)
_unary("asinh", np.arcsinh, alias="arcsinh")
_unary("atanh", np.arctanh, _in(-0.9, 0.9), alias="arctanh", ints=(0, 1))
_unary("deg2rad", np.deg2rad)
_unary("rad2deg", np.rad2deg)
add("acosh",  # defined from 1 up: integers from 1
    Sample(lambda m, x: m.acosh(x), A(2, 3, low=1.2, high=3.), ref=np.arccosh),
    Sample(lambda m, x: x.acosh(), nc(A(3, 2, low=1.2, high=3.)), ref=np.arccosh, note="method, non-contiguous"),
    Sample(lambda m, x: m.arccosh(x), A(low=1.2, high=3.), ref=np.arccosh, note="arccosh, 0-d"),
    Sample(lambda m, x: x.arccosh(), A(2, low=1.2, high=3.), ref=np.arccosh, note="Tensor.arccosh"),
    Sample(lambda m, x: m.acosh(x), I(4, 3, low=1), ref=lambda x: np.arccosh(x).astype(np.float32),
           note="integers give float32"),
    Sample(lambda m, x: m.acosh(x), np.array([0.5, 1.0]), grad=False, note="NaN below 1"))
add("acos", Sample(lambda m, x: m.acos(x), np.array([-1., 1., 2.]), grad=False, note="the ends, and NaN outside"))
add("deg2rad", Sample(lambda m, x: m.deg2rad(x), A(3).astype(np.float32), grad=False, note="float32 stays"))

# -- base-2 and base-10 logarithms and powers, ldexp, frexp, nextafter --------------------------------------------
_unary("log10", np.log10, P, ints=(1, 9))
_unary("log2", np.log2, P, ints=(1, 9))
_unary("exp2", np.exp2)
# Integer exponents from 0 up: PyTorch's gradient of input is ``grad * pow(2, other)`` in integers, 0 for a negative
# integer exponent; retrograd's is 2 ** other there too (finite differences agree).
add("ldexp",
    Sample(lambda m, x, e: m.ldexp(x, e), A(2, 3), I(4, 3), ref=lambda x, e: x * 2.0 ** e),
    Sample(lambda m, x, e: m.ldexp(x, e), A(2, 1), A(1, 3), ref=lambda x, e: x * 2.0 ** e,
           note="float exponents, both broadcast"),
    Sample(lambda m, x, e: x.ldexp(e), nc(A(2, 3)), nc(A(2, 3)), ref=lambda x, e: x * 2.0 ** e,
           note="method, non-contiguous"),
    Sample(lambda m, x, e: m.ldexp(x, e), I(5, 3), I(3, 3), ref=lambda x, e: (x * 2.0 ** e).astype(np.float32),
           note="integers give float32"),
    Sample(lambda m, x, e: m.ldexp(x, e), A(0, 3), A(3), ref=lambda x, e: x * 2.0 ** e, note="empty"))
add("frexp",
    Sample(lambda m, x: m.frexp(x), A(2, 3), ref=lambda x: np.frexp(x)),
    Sample(lambda m, x: x.frexp(), nc(A(3, 2)), ref=lambda x: np.frexp(x), note="method, non-contiguous"),
    Sample(lambda m, x: m.frexp(x), A(), ref=lambda x: np.frexp(x), note="0-d"),
    Sample(lambda m, x: m.frexp(x), np.array([0., 1., -8., 0.375]), ref=lambda x: np.frexp(x), grad=False,
           note="exact powers: the mantissa jumps there"))
add("nextafter",  # PyTorch's gradients: input's where the step moves it, none to other
    Sample(lambda m, x, y: m.nextafter(x, y), A(2, 3), A(3), ref=np.nextafter),
    Sample(lambda m, x, y: x.nextafter(y), nc(A(2, 3)), Const(nc(A(2, 3))), ref=np.nextafter,
           note="method, non-contiguous", grad=False),
    Sample(lambda m, x, y: m.nextafter(x, y), np.array([1., 2.]), np.array([1., 3.]), ref=np.nextafter,
           grad=False, note="equal elements: the gradient is 0 there"),
    Sample(lambda m, x, y: m.nextafter(x, y), A(3).astype(np.float32), Const(A()), note="float32 and a 0-d float64",
           grad=False))

# -- addcmul, addcdiv ------------------------------------------------------------------------------------------------
for _name, _op, _den in (("addcmul", np.multiply, A), ("addcdiv", np.divide, P)):
    add(_name,
        Sample(lambda m, x, a, b, n=_name: getattr(m, n)(x, a, b), A(2, 3), A(2, 3), _den(2, 3),
               ref=lambda x, a, b, f=_op: x + f(a, b)),
        Sample(lambda m, x, a, b, n=_name: getattr(m, n)(x, a, b, value=-0.5), A(3), A(2, 1), _den(1, 3),
               ref=lambda x, a, b, f=_op: x - 0.5 * f(a, b), note="value, broadcast"),
        Sample(lambda m, x, a, b, n=_name: getattr(x, n)(a, b, value=2), nc(A(2, 3)), nc(A(2, 3)), Const(_den(3)),
               ref=lambda x, a, b, f=_op: x + 2 * f(a, b), note="method, non-contiguous, constant tensor2"),
        Sample(lambda m, x, a, b, n=_name: getattr(m, n)(x, a, b), A(), A(), _den(), ref=lambda x, a, b, f=_op: x + f(a, b),
               note="0-d"),
        Sample(lambda m, x, a, b, n=_name: getattr(m, n)(x, a, b), I(5, 3), A(3), _den(3),
               ref=lambda x, a, b, f=_op: x + f(a, b), note="integer input, float tensors"))
add("addcmul", Sample(lambda m, x, a, b: m.addcmul(x, a, b, value=2), I(5, 3), I(5, 3), I(5, 3),
                      ref=lambda x, a, b: x + 2 * a * b, note="integers stay integers"))

# The in-place forms of acosh, asinh and atanh: PyTorch records them with a node whose backward raises (tests/ops/
# test_pointwise_names.py), so their samples do not require grad.
for _name, _np, _gen in (("acosh", np.arccosh, _in(1.2, 3.)), ("asinh", np.arcsinh, A), ("atanh", np.arctanh,
                                                                                          _in(-0.9, 0.9))):
    add(f"{_name}_", Sample(lambda m, x, n=_name: getattr(x.clone(), f"{n}_")(), Const(_gen(2, 3)), ref=_np),
        Sample(lambda m, x, n=_name: getattr(m, f"{n}_")(x.clone()), Const(nc(_gen(3))), ref=_np,
               note="top-level, non-contiguous"))

# -- renorm ------------------------------------------------------------------------------------------------------
# Slices on both sides of maxnorm (the norms of A's rows of 3 are about 2): some are scaled, some kept.
add("renorm",
    Sample(lambda m, x: m.renorm(x, 2, 0, 1.5), A(4, 3)),
    Sample(lambda m, x: x.renorm(1, 1, 2.5), nc(A(3, 4)), note="p = 1, dim 1, method, non-contiguous"),
    Sample(lambda m, x: m.renorm(x, 3, -1, 1.), A(2, 2, 3), note="p = 3, a negative dim, 3-D"),
    Sample(lambda m, x: m.renorm(x, float("inf"), 0, 1.), A(3, 2), note="p = inf"),
    Sample(lambda m, x: (x * 1).renorm_(2, 0, 1.5), A(3, 3), note="in place"),
    Sample(lambda m, x: m.renorm(x, 2, 0, 1.), A(0, 3), note="empty"))
