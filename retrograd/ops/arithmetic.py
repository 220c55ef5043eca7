"""More of PyTorch's pointwise arithmetic: base-2 and base-10 logarithms and powers, a float's mantissa and
exponent, the next float, fused multiply-adds (addcmul, addcdiv), and PyTorch's alias names of pointwise ops.

The ops of pointwise.py continue here (that module is full); the derivatives are PyTorch's (derivatives.yaml),
written with retrograd ops so that higher derivatives work.
"""
from __future__ import annotations

import math

from .. import _dtype, return_types
from .._tensor import Tensor, _wrap_dim
from ._declarations import defop, tensor_method, ufunc
from .pointwise import ge, gt, le, lt, ne, trunc, where
from .reduction import _norm_backward, _norm_forward
from .trig import unary_doc as _unary_doc

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


# -- base-2 and base-10 logarithms and powers ------------------------------------------------------------------
log10 = defop("log10", ufunc("log10", "input"), method=True, inplace=True, promote="float",
              input=lambda grad, input: grad / (input * _LN10),
              doc=_unary_doc("The base-10 logarithm of each element of ``input``.",
                             "rg.log10(rg.tensor([1., 10.]))", "tensor([0., 1.])"))
log2 = defop("log2", ufunc("log2", "input"), method=True, inplace=True, promote="float",
             input=lambda grad, input: grad / (input * _LN2),
             doc=_unary_doc("The base-2 logarithm of each element of ``input``.",
                            "rg.log2(rg.tensor([1., 8.]))", "tensor([0., 3.])"))
exp2 = defop("exp2", ufunc("exp2", "input"), method=True, inplace=True, promote="float",
             input=lambda grad, result: grad * result * _LN2,
             doc=_unary_doc("Two to the power of each element of ``input``.",
                            "rg.exp2(rg.tensor([0., 3.]))", "tensor([1., 8.])"))


def _ldexp(xp, input, other):
    return xp.multiply(input, xp.power(2.0, other))


ldexp = defop("ldexp", _ldexp, method=True, inplace=True, promote="float",
              input=lambda grad, other: grad * exp2(other),
              other=lambda grad, result: grad * result * _LN2,
              doc="""Multiplies ``input`` by two to the power of ``other``, elementwise, with broadcasting.

    Args:
        input: the tensor of significands.
        other: the tensor of exponents (integers or floats).

    Returns:
        ``input * 2 ** other``, in the promoted floating dtype.

    Example::
        >>> import retrograd as rg
        >>> rg.ldexp(rg.tensor([1., 3.]), rg.tensor([2, 1]))
        tensor([4., 6.])
    """)


def _frexp(xp, input):
    if input.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = xp.frexp(input)
    return mantissa.astype(input.dtype, copy=False), exponent.astype(xp.int32, copy=False)


_frexp_op = defop("frexp", _frexp, multi_output=True, nondiff_outputs=(1,), public=False,
                  input=lambda grads, result: grads[0] / exp2(result[1]))


@tensor_method
def frexp(input):
    """Splits each element of ``input`` into a mantissa in (-1, 1) and an integer power of two.

    Args:
        input: a floating tensor.

    Returns:
        A named tuple ``(mantissa, exponent)``: ``input == mantissa * 2 ** exponent``, the exponent int32.

    Raises:
        RuntimeError: an input of an integer dtype (PyTorch's error).

    Example::
        >>> import retrograd as rg
        >>> rg.frexp(rg.tensor([8., 0.75]))
        frexp(mantissa=tensor([0.5000, 0.7500]), exponent=tensor([4, 0], dtype=retrograd.int32))
    """
    return return_types.frexp(*_frexp_op(input))


def _nextafter(xp, input, other):
    if input.dtype.kind not in "fV":
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{_dtype.scalar_type_name(input.dtype)}'")
    return xp.nextafter(input, other)


# PyTorch passes the gradient to ``input`` where the step moves it (a one-ulp step: the identity locally) and none
# to ``other``.
nextafter = defop("nextafter", _nextafter, method=True, inplace=True, promote="binary",
                  input=lambda grad, input, other: where(input != other, grad, 0.),
                  other=lambda grad, input, other: grad * 0,
                  doc="""The next floating-point value after ``input`` toward ``other``, elementwise.

    Args:
        input: a floating tensor.
        other: the direction to step in (a tensor of the same kind, broadcast).

    Returns:
        A new tensor; equal to ``other`` where ``input == other``.

    Example::
        >>> import retrograd as rg
        >>> rg.nextafter(rg.tensor([1.], dtype=rg.float64), rg.tensor([2.], dtype=rg.float64)) - 1
        tensor([2.2204e-16], dtype=retrograd.float64)
    """)


# -- fused multiply-adds -------------------------------------------------------------------------------------
def _addcmul(xp, input, tensor1, tensor2, *, value=1):
    return xp.add(input, xp.multiply(xp.multiply(tensor1, tensor2), value))


def _addcdiv(xp, input, tensor1, tensor2, *, value=1):
    if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return xp.add(input, xp.multiply(xp.true_divide(tensor1, tensor2), value))


def _addc_doc(what, example, shown):
    return f"""Adds ``value * tensor1 {what} tensor2`` to ``input``, elementwise, with broadcasting.

    Args:
        input: the tensor to add to.
        tensor1: the {'first factor' if what == '*' else 'numerator'}.
        tensor2: the {'second factor' if what == '*' else 'denominator'}.
        value: a number that scales the {'product' if what == '*' else 'quotient'} (keyword-only, default 1).

    Returns:
        A new tensor of the broadcast shape, in the promoted dtype.

    Example::
        >>> import retrograd as rg
        >>> {example}
        {shown}
    """


addcmul = defop("addcmul", _addcmul, method=True, inplace=True, promote="binary",
                tensor_args=("input", "tensor1", "tensor2"),
                input=lambda grad: grad,
                tensor1=lambda grad, tensor2, value: grad * (tensor2 * value),
                tensor2=lambda grad, tensor1, value: grad * (tensor1 * value),
                doc=_addc_doc("*", "rg.addcmul(rg.tensor([1., 1.]), rg.tensor([2., 3.]), rg.tensor([4., 5.]), "
                                   "value=0.5)", "tensor([5.0000, 8.5000])"))
addcdiv = defop("addcdiv", _addcdiv, method=True, inplace=True, promote="binary",
                tensor_args=("input", "tensor1", "tensor2"),
                input=lambda grad: grad,
                tensor1=lambda grad, tensor2, value: grad * (value / tensor2),
                tensor2=lambda grad, tensor1, tensor2, value: -grad * value * tensor1 / (tensor2 * tensor2),
                doc=_addc_doc("/", "rg.addcdiv(rg.tensor([1., 1.]), rg.tensor([2., 3.]), rg.tensor([4., 6.]), "
                                   "value=2)", "tensor([2., 2.])"))


# -- PyTorch's alias names ---------------------------------------------------------------------------------------
@tensor_method
def positive(input):
    """Returns ``input`` itself (the unary ``+``); refused for bool tensors, as PyTorch's.

    Args:
        input: the tensor.

    Returns:
        ``input``, the same object.

    Raises:
        RuntimeError: a bool tensor.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., -2.])
        >>> rg.positive(x) is x
        True
    """
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# torch.fix is trunc (TruncBackward0), torch.greater is gt...: the same functions under the other names, as Tensor
# methods too. Their in-place forms (``fix_``, ``greater_``...) are attached with the other in-place methods
# (_methods.py).
ALIASES = {"fix": trunc, "greater": gt, "greater_equal": ge, "less": lt, "less_equal": le, "not_equal": ne}
for _alias, _fn in ALIASES.items():
    tensor_method(_fn, name=_alias)
fix, greater, greater_equal, less, less_equal, not_equal = ALIASES.values()

# -- renorm: slices scaled down to a largest norm -----------------------------------------------------------------
def _renorm_checks(input, p, dim, maxnorm):
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _wrap_dim(dim, input.ndim)
    if input.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    return tuple(k for k in range(input.ndim) if k != d)


def _renorm_factor(xp, norm, maxnorm):
    """PyTorch's scale of each slice: ``maxnorm / (norm + 1e-7)`` where its norm is over ``maxnorm``, else 1."""
    return xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(norm.dtype, copy=False)


def _renorm(xp, input, p, dim, maxnorm):
    others = _renorm_checks(input, p, dim, maxnorm)
    x = xp.abs(input)
    if p == 2:
        norm = xp.sqrt(xp.sum(x * x, axis=others, keepdims=True))
    elif p == math.inf:
        norm = xp.amax(x, axis=others, keepdims=True)
    else:
        norm = xp.power(xp.sum(x ** p, axis=others, keepdims=True), 1.0 / p)
    return input * _renorm_factor(xp, norm, maxnorm)


def _renorm_backward(grad, input, p, dim, maxnorm):
    # out = input * factor(norm): grad * factor, plus what factor's slope gives the norm, through the norm's own
    # backward (reduction.py): d factor / d norm = -maxnorm / (norm + 1e-7)^2 where the slice is scaled.
    others = tuple(d for d in range(input.dim()) if d != _wrap_dim(dim, input.dim()))
    norm = input.norm(p, others, keepdim=True)
    over = norm > maxnorm
    factor = where(over, maxnorm / (norm + 1e-7), 1.)
    slope = where(over, -maxnorm / ((norm + 1e-7) * (norm + 1e-7)), 0.)
    through_norm = (grad * input).sum(others, keepdim=True) * slope
    return grad * factor + _norm_backward(through_norm, input, norm, p, others, True)


renorm = defop("renorm", _renorm, method=True, inplace=True, input=_renorm_backward,
               doc="""Scales each slice of ``input`` along ``dim`` whose ``p``-norm exceeds ``maxnorm`` down to that norm.

    Args:
        input: a floating tensor.
        p: the norm's order (positive).
        dim: the dim whose slices (``input.select(dim, i)``) are renormalized.
        maxnorm: the largest norm a slice keeps (not negative).

    Returns:
        A new tensor: slices within ``maxnorm`` as they are, the others times ``maxnorm / (norm + 1e-7)``.

    Raises:
        RuntimeError: ``p <= 0``, ``maxnorm < 0``, fewer than 2 dims or an integer ``input`` (PyTorch's errors).

    Example::
        >>> import retrograd as rg
        >>> rg.renorm(rg.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """)


# -- dist: the norm of a difference -------------------------------------------------------------------------------
def _dist(xp, input, other, p=2):
    if input.dtype.kind not in "fV" or other.dtype.kind not in "fV":
        kind = input if input.dtype.kind not in "fV" else other
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{_dtype.scalar_type_name(kind.dtype)} instead.")
    return _norm_forward(xp, xp.subtract(input, other), p)


def _dist_backward(sign):
    def formula(grad, input, other, p, result):
        return _norm_backward(grad, input - other, result, p, None, False) * sign
    return formula


dist = defop("dist", _dist, method=True, promote="binary", input=_dist_backward(1), other=_dist_backward(-1),
             doc="""The ``p``-norm of ``input - other`` (broadcast), as one number.

    Args:
        input: a floating tensor.
        other: a floating tensor, broadcast with ``input``.
        p: the norm's order (default 2; 0 counts the differing elements, ``inf`` takes the largest difference).

    Returns:
        A 0-d tensor in the promoted dtype.

    Raises:
        RuntimeError: an integer tensor (PyTorch's error).

    Example::
        >>> import retrograd as rg
        >>> rg.dist(rg.tensor([1., 2.]), rg.tensor([4., 6.]))
        tensor(5.)
    """)


# -- forward derivatives (Note [Forward derivatives]) ----------------------------------------------------------
from ._declarations import FROM_BACKWARD, defjvp  # noqa: E402

defjvp(FROM_BACKWARD, "log10", "log2", "exp2", "ldexp", "nextafter", "addcmul", "addcdiv")
defjvp(lambda input_t, result: (input_t / exp2(result[1]), None), "frexp")
