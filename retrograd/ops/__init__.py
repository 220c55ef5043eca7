"""Every differentiable op, and the Tensor methods and operators that call them."""
from __future__ import annotations

from .. import _creation
from .._tensor import Tensor
from . import composite, copy, indexing, joining, linalg, pointwise, reduction, shape
from . import nn  # noqa: F401 - registers the neural-network primitives (private ops)
from . import _docs  # noqa: F401 - the public ops' docstrings, before _attach() makes them Tensor methods
from . import _compiled
from ._inplace import apply_inplace
from ._registry import REGISTRY, call_op, defop, forwarding_function
from .composite import narrow, select, square, std, std_mean, var, var_mean
from .indexing import (convert_index, gather, getitem, index_add, index_put, index_select, masked_fill,
                       masked_select, scatter, scatter_add)
from .linalg import bmm, dot, einsum, ger, matmul, mm, mv, outer, trace
from .pointwise import *  # noqa: F401,F403 - the op table
from .pointwise import (abs, add, clamp, div, eq, exp, ge, gt, le, lt, maximum, minimum, mul, ne, neg, pow,
                        remainder, floor_divide, sub, where)
from .reduction import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logsumexp, max, mean, min,
                        norm, prod, softmax, sum)
from .copy import clone, contiguous, sum_to_size, to
from .joining import cat, chunk, concat, concatenate, split, stack, unbind
from .shape import (broadcast_to, diagonal, expand, expand_as, flatten, flip, movedim, moveaxis, permute, reshape,
                    roll, shape_arg, squeeze, swapaxes, t, transpose, tril, triu, unflatten, unsqueeze, view)


def _shape_method(fn):
    def method(self, *shape):
        return fn(self, shape_arg(shape))
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _dims_method(fn):
    def method(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return fn(self, dims)
    method.__name__ = fn.__name__
    return method


def _make_inplace(op, name):
    """Generates ``Tensor.<name>_(...)`` for op ``op``: same parameters, result written into self."""
    fn = forwarding_function(op, name, "_inplace", {"_inplace": apply_inplace})
    fn.__doc__ = f"In-place version of ``{op.name}``."
    return fn


def _attach():
    T = Tensor
    # Methods whose public function shares the name and signature.
    for name in ("add", "sub", "mul", "div", "neg", "pow", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt",
                 "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "abs", "sign", "clamp",
                 "maximum", "minimum", "floor", "ceil", "round", "trunc", "eq", "ne", "lt", "le", "gt", "ge",
                 "logical_not", "logical_and", "logical_or", "logical_xor", "isnan", "isinf", "isfinite",
                 "remainder", "floor_divide", "sum", "mean", "amax", "amin", "argmax", "argmin", "max", "min",
                 "logsumexp", "softmax", "log_softmax", "cumsum", "cumprod", "prod", "norm", "matmul", "mm", "bmm",
                 "mv", "dot", "outer", "trace", "transpose", "unsqueeze", "squeeze", "diagonal", "flatten",
                 "unflatten", "chunk", "unbind", "roll", "tril", "triu", "movedim", "moveaxis", "clone",
                 "var", "std", "var_mean", "std_mean", "square", "narrow", "select", "gather", "scatter_add",
                 "scatter", "index_select", "index_add", "index_put", "masked_fill", "masked_select", "expand_as",
                 "t", "swapaxes", "to", "contiguous", "bitwise_not"):
        fn = globals().get(name) or getattr(pointwise, name)
        setattr(T, name, fn)
    T.clip = clamp
    T.split = lambda self, split_size, dim=0: split(self, split_size, dim)
    T.where = lambda self, condition, other: where(condition, self, other)
    T.absolute = abs
    T.multiply = mul
    T.subtract = sub
    T.divide = T.true_divide = div
    T.negative = neg
    T.greater = gt
    T.less = lt
    T.view = _shape_method(view)
    T.reshape = _shape_method(reshape)
    T.expand = _shape_method(expand)
    T.broadcast_to = lambda self, size: broadcast_to(self, size)
    T.permute = _dims_method(permute)
    T.flip = _dims_method(flip)
    T.sum_to_size = sum_to_size
    T.view_as = lambda self, other: view(self, other._data.shape)
    T.reshape_as = lambda self, other: reshape(self, other._data.shape)
    T.T = property(lambda self: permute(self, tuple(range(self.dim() - 1, -1, -1))))
    T.mT = property(lambda self: transpose(self, -2, -1))
    T.H = T.T
    T.mH = T.mT
    # Casts.
    from .. import _dtype
    T.float = lambda self: to(self, _dtype.float32)
    T.double = lambda self: to(self, _dtype.float64)
    T.half = lambda self: to(self, _dtype.float16)
    T.long = lambda self: to(self, _dtype.int64)
    T.int = lambda self: to(self, _dtype.int32)
    T.bool = lambda self: to(self, _dtype.bool)
    T.type = lambda self, dtype=None: self.dtype if dtype is None else to(self, dtype)
    T.cpu = lambda self: to(self, "cpu")
    T.cuda = lambda self, device=None: to(self, "cuda" if device is None else
                                          device if isinstance(device, str) else f"cuda:{device}")
    T.new_zeros = lambda self, *size, dtype=None, device=None, requires_grad=False: _creation.zeros(
        *size, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)
    T.new_ones = lambda self, *size, dtype=None, device=None, requires_grad=False: _creation.ones(
        *size, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)
    T.new_empty = T.new_zeros
    T.new_full = lambda self, size, fill_value, dtype=None, device=None, requires_grad=False: _creation.full(
        size, fill_value, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)
    T.new_tensor = lambda self, data, dtype=None, device=None, requires_grad=False: _creation.tensor(
        data, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)
    # Operators.
    # The op functions themselves where the operands keep their order (one call less per op).
    T.__add__ = T.__radd__ = add
    T.__sub__ = sub
    T.__rsub__ = lambda self, other: sub(other, self)
    T.__mul__ = T.__rmul__ = mul
    T.__truediv__ = div
    T.__rtruediv__ = lambda self, other: div(other, self)
    T.__floordiv__ = lambda self, other: floor_divide(self, other)
    T.__rfloordiv__ = lambda self, other: floor_divide(other, self)
    T.__mod__ = lambda self, other: remainder(self, other)
    T.__pow__ = pow
    T.__rpow__ = lambda self, other: pow(other, self)
    T.__matmul__ = matmul
    T.__rmatmul__ = lambda self, other: matmul(other, self)
    T.__neg__ = neg
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: abs(self)
    T.__eq__ = lambda self, other: eq(self, other)
    T.__ne__ = lambda self, other: ne(self, other)
    T.__lt__ = lambda self, other: lt(self, other)
    T.__le__ = lambda self, other: le(self, other)
    T.__gt__ = lambda self, other: gt(self, other)
    T.__ge__ = lambda self, other: ge(self, other)
    T.__and__ = T.__rand__ = lambda self, other: pointwise.bitwise_and(self, other)
    T.__or__ = T.__ror__ = lambda self, other: pointwise.bitwise_or(self, other)
    T.__xor__ = T.__rxor__ = lambda self, other: pointwise.bitwise_xor(self, other)
    T.__invert__ = lambda self: pointwise.bitwise_not(self) if self._data.dtype.kind != "b" else \
        pointwise.logical_not(self)
    T.__getitem__ = getitem
    # In-place forms.
    T.div_ = lambda self, other, *, rounding_mode=None: apply_inplace(
        REGISTRY["div"] if rounding_mode is None else REGISTRY["div_rounding"],
        (self, other) if rounding_mode is None else (self, other, rounding_mode))
    for name in ("add", "sub", "mul", "pow", "clamp", "relu", "neg", "exp", "log", "sqrt", "sin", "cos",
                 "tanh", "sigmoid", "abs", "masked_fill", "index_put", "scatter_add", "scatter", "index_add",
                 "floor", "ceil", "round", "trunc", "reciprocal", "remainder"):
        setattr(T, name + "_", _make_inplace(REGISTRY[name], name + "_"))
    T.clip_ = T.clamp_
    T.fill_ = _make_inplace(copy.fill.op, "fill_")
    T.copy_ = lambda self, src, non_blocking=False: apply_inplace(copy._copy.op, (self, src))
    T.zero_ = lambda self: T.fill_(self, 0)
    T.__iadd__ = lambda self, other: T.add_(self, other)
    T.__isub__ = lambda self, other: T.sub_(self, other)
    T.__imul__ = lambda self, other: T.mul_(self, other)
    T.__itruediv__ = lambda self, other: T.div_(self, other)
    T.__ipow__ = lambda self, other: T.pow_(self, other)

    def __setitem__(self, index, value):
        indices, _ = convert_index(index)
        apply_inplace(REGISTRY["index_put"], (self, indices, value, False))
    T.__setitem__ = __setitem__


_attach()
_compiled.link_direct_formulas(REGISTRY)

__all__ = sorted({op.name for op in REGISTRY.values() if op.public} | {
    "max", "min", "var", "std", "var_mean", "std_mean", "square", "narrow", "select", "einsum", "flatten",
    "unflatten", "t", "chunk", "broadcast_to", "expand_as", "movedim", "moveaxis", "swapaxes", "concat",
    "concatenate", "sum_to_size", "ger"})
