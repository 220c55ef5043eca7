"""Inverse trigonometric and hyperbolic functions, angle conversions, and PyTorch's ``arc*`` spellings of them.

Each is one NumPy ufunc forward (integers give the default float dtype, as PyTorch's) with PyTorch's
derivative (derivatives.yaml), written with retrograd ops so that higher derivatives work.
"""
from __future__ import annotations

import math

from .._tensor import Tensor
from ._declarations import REGISTRY, defop, tensor_method, ufunc
from ._inplace import apply_inplace
from ._signature import forwarding_function

_DEG2RAD = math.pi / 180.0
_RAD2DEG = 180.0 / math.pi


def unary_doc(summary, call, shown):
    """The docstring of a one-tensor elementwise op: ``summary``, then an example ``call`` that shows ``shown``."""
    return f"""{summary}

    Args:
        input: the tensor (integers give the default float dtype).

    Returns:
        A new tensor of ``input``'s shape.

    Example::
        >>> import retrograd as rg
        >>> {call}
        {shown}
    """


# -- inverse trigonometric functions ---------------------------------------------------------------------------
acos = defop("acos", ufunc("arccos", "input"), method=True, inplace=True, promote="float",
             input=lambda grad, input: -grad * (1 - input * input).rsqrt(),
             doc=unary_doc("The arccosine of each element of ``input``, in radians.",
                      "rg.acos(rg.tensor([1., 0.]))", "tensor([0.0000, 1.5708])"))
asin = defop("asin", ufunc("arcsin", "input"), method=True, inplace=True, promote="float",
             input=lambda grad, input: grad * (1 - input * input).rsqrt(),
             doc=unary_doc("The arcsine of each element of ``input``, in radians.",
                      "rg.asin(rg.tensor([0., 1.]))", "tensor([0.0000, 1.5708])"))
atan = defop("atan", ufunc("arctan", "input"), method=True, inplace=True, promote="float",
             input=lambda grad, input: grad / (input * input + 1),
             doc=unary_doc("The arctangent of each element of ``input``, in radians.",
                      "rg.atan(rg.tensor([0., 1.]))", "tensor([0.0000, 0.7854])"))

# -- hyperbolic functions and their inverses -------------------------------------------------------------------
sinh = defop("sinh", ufunc("sinh", "input"), method=True, inplace=True, promote="float",
             input=lambda grad, input: grad * input.cosh(),
             doc=unary_doc("The hyperbolic sine of each element of ``input``.",
                      "rg.sinh(rg.tensor([0., 1.]))", "tensor([0.0000, 1.1752])"))
cosh = defop("cosh", ufunc("cosh", "input"), method=True, inplace=True, promote="float",
             input=lambda grad, input: grad * input.sinh(),
             doc=unary_doc("The hyperbolic cosine of each element of ``input``.",
                      "rg.cosh(rg.tensor([0., 1.]))", "tensor([1.0000, 1.5431])"))
acosh = defop("acosh", ufunc("arccosh", "input"), method=True, promote="float",
              input=lambda grad, input: grad * (input * input - 1).rsqrt(),
              doc=unary_doc("The inverse hyperbolic cosine of each element of ``input`` (NaN below 1).",
                       "rg.acosh(rg.tensor([1., 2.]))", "tensor([0.0000, 1.3170])"))
asinh = defop("asinh", ufunc("arcsinh", "input"), method=True, promote="float",
              input=lambda grad, input: grad * (input * input + 1).rsqrt(),
              doc=unary_doc("The inverse hyperbolic sine of each element of ``input``.",
                       "rg.asinh(rg.tensor([0., 1.]))", "tensor([0.0000, 0.8814])"))
atanh = defop("atanh", ufunc("arctanh", "input"), method=True, promote="float",
              input=lambda grad, input: grad / (1 - input * input),
              doc=unary_doc("The inverse hyperbolic tangent of each element of ``input`` (NaN outside [-1, 1]).",
                       "rg.atanh(rg.tensor([0., 0.5]))", "tensor([0.0000, 0.5493])"))



def _no_inplace_derivative(name):
    def formula(grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented.")
    return formula


# PyTorch has no derivative for the in-place forms of these three: the call records a node (``AcoshBackward1``,
# saving nothing) whose backward raises, and forward-mode AD refuses it.
for _name, _ufunc in (("acosh", "arccosh"), ("asinh", "arcsinh"), ("atanh", "arctanh")):
    _op = defop(f"{_name}_", ufunc(_ufunc, "input"), public=False, promote="float",
                node_name=f"{_name.capitalize()}Backward1", input=_no_inplace_derivative(_name))
    tensor_method(forwarding_function(REGISTRY[f"{_name}_"], f"{_name}_", "_inplace", {"_inplace": apply_inplace}),
                  name=f"{_name}_")
    getattr(Tensor, f"{_name}_").__doc__ = f"In-place version of ``{_name}``."

# -- angle conversions -----------------------------------------------------------------------------------------
deg2rad = defop("deg2rad", ufunc("deg2rad", "input"),
                method=True, inplace=True, promote="float",
                input=lambda grad: grad * _DEG2RAD,
                doc=unary_doc("Each element of ``input`` converted from degrees to radians.",
                         "rg.deg2rad(rg.tensor([180., 90.]))", "tensor([3.1416, 1.5708])"))
rad2deg = defop("rad2deg", ufunc("rad2deg", "input"),
                method=True, inplace=True, promote="float",
                input=lambda grad: grad * _RAD2DEG,
                doc=unary_doc("Each element of ``input`` converted from radians to degrees.",
                         "rg.rad2deg(rg.tensor([3.141592653589793]))", "tensor([180.])"))

# -- PyTorch's NumPy-style spellings: the same functions, as torch.arccos is torch.acos's alias ----------------
ALIASES = {"arccos": acos, "arcsin": asin, "arctan": atan, "arccosh": acosh, "arcsinh": asinh, "arctanh": atanh}
for _alias, _fn in ALIASES.items():
    tensor_method(_fn, name=_alias)
arccos, arcsin, arctan, arccosh, arcsinh, arctanh = ALIASES.values()

# -- forward derivatives (Note [Forward derivatives]) ----------------------------------------------------------
from ._declarations import FROM_BACKWARD, defjvp  # noqa: E402

defjvp(FROM_BACKWARD, "acos", "asin", "atan", "sinh", "cosh", "acosh", "asinh", "atanh", "deg2rad", "rad2deg")
