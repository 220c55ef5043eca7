"""Special functions: erf and friends, gamma functions, the normal distribution's, Bessel's i0 and i1.

The kernels are SciPy's (``scipy.special``) on NumPy arrays and CuPy's (``cupyx.scipy.special``)
on a CUDA device; each derivative is written with retrograd ops (d erf = 2/sqrt(pi) exp(-x^2),
d lgamma = digamma, d digamma = polygamma(1, .)...), so higher derivatives work.
"""
from __future__ import annotations

import importlib
import math

import numpy as np
import scipy.special

from .. import _dtype
from .._tensor import Tensor
from ._declarations import REGISTRY, defop, tensor_method
from ._inplace import apply_inplace
from .pointwise import add_scalar, mul_scalar, where

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_SQRT_TWO_PI = math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)


def _kernels(xp):
    """The module of special-function kernels for the array module ``xp``: SciPy's, or CuPy's."""
    if xp is np:
        return scipy.special
    try:
        return importlib.import_module("cupyx.scipy.special")
    except ImportError:
        raise RuntimeError(f"special functions on this device need cupyx.scipy.special, which could not be "
                           f"imported with {xp.__name__}") from None


def _kernel(name):
    """The forward ``forward(xp, input)`` that applies the special-function kernel ``name``."""
    def forward(xp, input):
        return getattr(_kernels(xp), name)(input)
    forward.__name__ = f"_{name}"
    return forward


# -- the error function ----------------------------------------------------------------------------
erf = defop("erf", _kernel("erf"), method=True, inplace=True, promote="float",
            input=lambda grad, input: grad * _TWO_OVER_SQRT_PI * (-input * input).exp())
erfc = defop("erfc", _kernel("erfc"), method=True, inplace=True, promote="float",
             input=lambda grad, input: grad * -_TWO_OVER_SQRT_PI * (-input * input).exp())
erfinv = defop("erfinv", _kernel("erfinv"), method=True, inplace=True, promote="float",
               input=lambda grad, result: grad * _SQRT_PI_OVER_TWO * (result * result).exp())

# -- gamma functions -------------------------------------------------------------------------------
lgamma = defop("lgamma", _kernel("gammaln"), method=True, inplace=True, promote="float",
               input=lambda grad, input: grad * digamma(input))
digamma = defop("digamma", _kernel("psi"), method=True, inplace=True, promote="float",
                input=lambda grad, input: grad * polygamma(1, input))


def _polygamma(xp, n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    kernels = _kernels(xp)
    return kernels.psi(input) if n == 0 else kernels.polygamma(n, input)


polygamma = defop("polygamma", _polygamma, promote="float", tensor_args=("input",),
                  input=lambda grad, n, input: grad * polygamma(n + 1, input))


@tensor_method(name="polygamma")
def _polygamma_method(self, n):
    """``polygamma(n, self)``: the ``n``-th derivative of the digamma function."""
    return polygamma(n, self)


# ``x.polygamma_(n)``: the input first, as PyTorch's in-place form, recorded as its PolygammaBackward1.
_polygamma_inplace = defop("polygamma_", lambda xp, input, n: _polygamma(xp, n, input), public=False,
                           promote="float", node_name="PolygammaBackward1",
                           input=lambda grad, input, n: grad * polygamma(n + 1, input))


@tensor_method
def polygamma_(self, n):
    """In-place version of ``polygamma``: ``self`` becomes ``polygamma(n, self)``."""
    return apply_inplace(REGISTRY["polygamma_"], (self, n))


# -- the multivariate log-gamma function -----------------------------------------------------------------------
def _mvlgamma(xp, input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    kernels = _kernels(xp)
    x = input.astype(xp.result_type(input, xp.float32), copy=False)
    out = kernels.gammaln(x)
    for i in range(1, p):
        out = out + kernels.gammaln(x - i / 2)
    return out + p * (p - 1) / 4 * math.log(math.pi)


def _mvlgamma_backward(grad, input, p):
    total = digamma(input)
    for i in range(1, p):
        total = total + digamma(input - i / 2)
    return grad * total


mvlgamma = defop("mvlgamma", _mvlgamma, method=True, inplace=True, promote="float", input=_mvlgamma_backward,
                 doc="""The multivariate log-gamma function of dimension ``p`` of each element of ``input``.

    ``sum(lgamma(input - i / 2) for i in range(p)) + p * (p - 1) / 4 * log(pi)``.

    Args:
        input: the tensor (defined for elements above ``(p - 1) / 2``; below, as PyTorch's, the sum of
            ``log|gamma|``, and ``inf`` at the poles).
        p: the dimension (at least 1).

    Returns:
        A new tensor of ``input``'s shape (integers give the default float dtype).

    Raises:
        RuntimeError: ``p < 1`` (PyTorch's error).

    Example::
        >>> import retrograd as rg
        >>> rg.mvlgamma(rg.tensor([2.5, 3.]), 2)
        tensor([0.8570, 1.5502])
    """)


# -- regularized incomplete gamma functions ------------------------------------------------------
def _incomplete_gamma(kernel):
    def forward(xp, input, other):
        if not (xp.issubdtype(input.dtype, xp.floating) and xp.issubdtype(other.dtype, xp.floating)):
            dtype = input.dtype if not xp.issubdtype(input.dtype, xp.floating) else other.dtype
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{_dtype.scalar_type_name(dtype)}'")
        return getattr(_kernels(xp), {"igamma": "gammainc", "igammac": "gammaincc"}[kernel])(input, other)
    forward.__name__ = f"_{kernel}"
    return forward


def _no_input_derivative(name):
    """The formula of ``input``, which PyTorch leaves unimplemented: its backward raises."""
    def formula(grad, input, other):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return formula


def _igamma_other_grad(grad, input, other):
    # d/dx P(a, x) = x^(a - 1) e^(-x) / Gamma(a)
    return grad * ((input - 1) * other.log() - other - lgamma(input)).exp()


# Neither has a forward derivative in PyTorch: forward AD raises its "not implemented yet" error.
igamma = defop("igamma", _incomplete_gamma("igamma"), method=True, inplace=True, promote="binary",
               tensor_args=("input", "other"), input=_no_input_derivative("igamma"), other=_igamma_other_grad)
igammac = defop("igammac", _incomplete_gamma("igammac"), method=True, inplace=True, promote="binary",
                tensor_args=("input", "other"), input=_no_input_derivative("igammac"),
                other=lambda grad, input, other: -_igamma_other_grad(grad, input, other))

# -- x log y ---------------------------------------------------------------------------------------
def _xlogy_input_grad(grad, input, other):
    # log(other), except where input is 0 and other <= 0 (PyTorch's choice: 0 there, not nan or inf)
    zero = (input == 0) & (other <= 0)
    return where(zero, 0., xlogy(grad, other))


xlogy = defop("xlogy", lambda xp, input, other: _kernels(xp).xlogy(input, other), method=True, inplace=True,
              promote="float", tensor_args=("input", "other"),
              node_names={"XlogyBackward1": lambda input: not isinstance(input, Tensor),  # a number self, other
                          "XlogyBackward2": lambda other: not isinstance(other, Tensor)},
              node_edges={"XlogyBackward1": ("other",), "XlogyBackward2": ("input",)},  # the number: no edge
              input=_xlogy_input_grad,
              other=lambda grad, input, other: grad * input / other)

# -- logistic and the normal distribution ---------------------------------------------------------


def _logit(xp, input, eps=None):
    x = input if eps is None else xp.clip(input, eps, 1 - eps)
    return _kernels(xp).logit(x)


def _logit_backward(grad, input, eps):
    slope = grad / (input * (1 - input))
    if eps is None:  # undefined outside [0, 1]
        return where((input < 0) | (input > 1), float("nan"), slope)
    return where((input < eps) | (input > 1 - eps), 0., slope)  # clamped: flat outside [eps, 1 - eps]


logit = defop("logit", _logit, method=True, inplace=True, promote="float", input=_logit_backward)



def ndtr(input):  # its docstring: _docs.py
    # as PyTorch's special_ndtr: a composite of the Scalar overloads, ending in a mul (MulBackward1)
    return mul_scalar(add_scalar(erf(mul_scalar(input, _SQRT_HALF)), 1), 0.5)


ndtri = defop("special_ndtri", _kernel("ndtri"), public=False, promote="float",
              input=lambda grad, result: grad * _SQRT_TWO_PI * (result * result * 0.5).exp())
log_ndtr = defop("special_log_ndtr", _kernel("log_ndtr"), public=False, promote="float",
                 input=lambda grad, input, result: grad * (input * input * -0.5 - result).exp() / _SQRT_TWO_PI)

# -- Bessel functions, entropy, sinc --------------------------------------------------------------
i0 = defop("i0", _kernel("i0"), method=True, inplace=True, promote="float",
           input=lambda grad, input: grad * i1(input))


def _no_bfloat16_backward(grad, kernel):
    """PyTorch's error for the backward of a bfloat16 call where its CPU has no bfloat16 kernel for it."""
    if grad.dtype is _dtype.bfloat16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'BFloat16'")


def _i1_backward(grad, input, result):
    # d i1 = i0 - i1 / x, which tends to 1/2 at 0 (x moved off 0 there so that no branch divides by it)
    _no_bfloat16_backward(grad, "i1_backward")
    safe = where(input == 0, 1., input)
    return grad * where(input == 0, 0.5, i0(input) - result / safe)


i1 = defop("special_i1", _kernel("i1"), public=False, promote="float", input=_i1_backward)

entr = defop("special_entr", _kernel("entr"), public=False, promote="float",
             input=lambda grad, input: grad * -(input.log() + 1))


def _sinc_backward(grad, input):
    # (pi x cos(pi x) - sin(pi x)) / (pi x^2), which is 0 at 0 (x moved off 0 there, as in _i1_backward)
    safe = where(input == 0, 1., input)
    px = safe * math.pi
    return grad * where(input == 0, 0., (px * px.cos() - px.sin()) / (px * safe))


sinc = defop("sinc", lambda xp, input: xp.sinc(input), method=True, inplace=True, promote="float",
             input=_sinc_backward)


# -- exponentially scaled forms, x log1p(y) --------------------------------------------------------
i0e = defop("special_i0e", _kernel("i0e"), public=False, node_name="SpecialI0E", promote="float",
            input=lambda grad, input, result: grad * (i1e(input) - input.sign() * result))


def _i1e_backward(grad, input, result):
    # d i1e = i0e - i1e (sign(x) + 1/x), which tends to 1/2 at 0 (x moved off 0, as in _i1_backward)
    _no_bfloat16_backward(grad, "i1e_backward")
    safe = where(input == 0, 1., input)
    return grad * where(input == 0, 0.5, i0e(input) - result * (input.sign() + 1 / safe))


i1e = defop("special_i1e", _kernel("i1e"), public=False, node_name="SpecialI1E", promote="float",
            input=_i1e_backward)
erfcx = defop("special_erfcx", _kernel("erfcx"), public=False, promote="float",
              input=lambda grad, input, result: grad * (2 * input * result - _TWO_OVER_SQRT_PI))


def _xlog1py_input_grad(grad, input, other):
    # log1p(other), except where input is 0 and other <= -1 (0 there, as PyTorch)
    return where((input == 0) & (other <= -1), 0., grad * _log1p(other))


def _log1p(x):
    return x.log1p() if hasattr(x, "log1p") else math.log1p(x)


xlog1py = defop("special_xlog1py", lambda xp, input, other: _kernels(xp).xlog1py(input, other), public=False,
                promote="float", tensor_args=("input", "other"),
                node_names={"SpecialXlog1PyBackward1": lambda input: not isinstance(input, Tensor),
                            "SpecialXlog1PyBackward2": lambda other: not isinstance(other, Tensor)},
                node_edges={"SpecialXlog1PyBackward1": ("other",), "SpecialXlog1PyBackward2": ("input",)},
                input=_xlog1py_input_grad,
                other=lambda grad, input, other: grad * input / (other + 1))

# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import FROM_BACKWARD, defjvp  # noqa: E402

defjvp(FROM_BACKWARD, "polygamma_", "mvlgamma", "erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "xlogy", "logit", "special_ndtri",
       "special_log_ndtr", "i0", "special_i1", "special_entr", "sinc", "special_i0e", "special_i1e", "special_erfcx",
       "special_xlog1py")
