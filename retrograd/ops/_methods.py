"""The Tensor methods and operators that are not an op's own method.

Each op's own method (``x.exp()``, ``x.add_(y)``) is attached by its declaration (``method=`` and
``inplace=`` of defop, ``tensor_method`` for an op written in Python). What is attached here is
the rest of the Tensor protocol: aliases (``clip``, ``multiply``), methods whose arguments differ
from their op's (``x.view(2, 3)``, ``x.permute(1, 0)``), properties (``T``, ``mT``), casts, the
``new_*`` constructors, the operators and their in-place forms, and indexing.
"""
from __future__ import annotations

import numpy as _np

from .. import _creation, _dtype
from .._tensor import Tensor
from . import copy, pointwise
from ._declarations import REGISTRY
from ._inplace import apply_inplace
from ._node import DIM_UNSET
from ._signature import forwarding_function
from ._tensor_types import type_method
from .indexing import convert_index, getitem, last_view
from .joining import split
from .linalg import matmul
from .pointwise import (abs, add, clamp, div, eq, floor_divide, ge, gt, le, lt, mul, ne, neg, pow, reciprocal,
                        remainder, sub, where)
from .shape import broadcast_to, expand, expanded_shape, flip, permute, repeat, reshape, shape_arg, transpose, view
from .copy import sum_to_size, to

__all__ = ["attach", "TOP_LEVEL_INPLACE"]

# PyTorch's top-level in-place functions (``torch.exp_(x)`` is ``x.exp_()``), which ops/__init__.py exports: the
# Tensor methods themselves (``detach_``, which retrograd/__init__.py wraps for __torch_function__, is exported there).
TOP_LEVEL_INPLACE = tuple("""
    abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ as_strided_ asin_ asinh_ atan_ atanh_ ceil_ clamp_
    clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ i0_
    index_put_ lcm_ ldexp_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ resize_as_ round_ rsqrt_
    sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_
""".split())


def _imag(self):
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def _shape_method(fn, param="size"):
    name = fn.__name__

    def method(self, *shape):
        return fn(self, shape_arg(shape, name, param))
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


def _repeat_method(self, *repeats):
    """Copies this tensor ``repeats[d]`` times along each dim ``d``; extra leading repeats add dims.

    Args:
        repeats: one count per dim (ints, or one tuple, list or Size of them), at least
            ``self.dim()`` of them.

    Returns:
        A new tensor (a copy, unlike ``expand``) of shape ``repeats[d] * self.shape[d]``, with
        the shape padded with leading 1s to ``len(repeats)`` dims.

    Example::
        >>> import retrograd as rg
        >>> rg.tensor([1., 2.]).repeat(2, 2)
        tensor([[1., 2., 1., 2.],
                [1., 2., 1., 2.]])
    """
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    return repeat(self, shape_arg(repeats, "repeat", "repeats"))


_repeat_method.__name__ = _repeat_method.__qualname__ = "repeat"


def _inplace_method(op):
    """``Tensor.<name>_(...)`` of an op declared ``inplace=True``: its parameters, the result written into self."""
    fn = forwarding_function(op, f"{op.name}_", "_inplace", {"_inplace": apply_inplace})
    fn.__doc__ = f"In-place version of ``{op.name}``."
    return fn


def attach() -> None:
    """Attaches the methods and operators of this module to Tensor (once, after every op is declared)."""
    T = Tensor
    for op in REGISTRY.values():
        if op.inplace:
            setattr(T, f"{op.name}_", _inplace_method(op))
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
    T.reshape = _shape_method(reshape, "shape")
    T.expand = _shape_method(expand)
    T.repeat = _repeat_method
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
    # retrograd has no complex dtypes: a tensor is its own real part and has no imaginary part, as PyTorch's real ones.
    T.real = property(lambda self: self, lambda self, value: self.copy_(value))
    T.imag = property(_imag)
    T.is_complex = lambda self: False
    # Casts.
    T.float = lambda self: to(self, _dtype.float32)
    T.double = lambda self: to(self, _dtype.float64)
    T.half = lambda self: to(self, _dtype.float16)
    T.bfloat16 = lambda self: to(self, _dtype.bfloat16)
    T.long = lambda self: to(self, _dtype.int64)
    T.int = lambda self: to(self, _dtype.int32)
    T.bool = lambda self: to(self, _dtype.bool)
    T.type = type_method  # See Note [Legacy tensor types]
    T.cpu = lambda self: to(self, "cpu")
    T.cuda = lambda self, device=None: to(self, "cuda" if device is None else
                                          device if isinstance(device, str) else f"cuda:{device}")
    T.new_zeros, T.new_ones, T.new_empty, T.new_full = (_creation.new_zeros, _creation.new_ones,
                                                         _creation.new_empty, _creation.new_full)
    T.new_empty_strided = lambda self, size, stride, *, dtype=None, device=None, requires_grad=False: \
        _creation.empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self._device,
                                requires_grad=requires_grad)
    T.new_tensor = lambda self, data, dtype=None, device=None, requires_grad=False: _creation.tensor(
        data, dtype=dtype or self.dtype, device=device or self._device, requires_grad=requires_grad)
    # Operators.
    # The op functions themselves where the operands keep their order (one call less per op).
    T.__add__ = T.__radd__ = add
    T.__sub__ = sub
    T.__rsub__ = lambda self, other: sub(other, self)
    T.__mul__ = T.__rmul__ = mul
    T.__truediv__ = div
    T.__rtruediv__ = lambda self, other: mul(reciprocal(self), other)  # as PyTorch: a MulBackward0 node
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
    getitem.__name__ = "__getitem__"  # the func its __torch_function__ receives is named as PyTorch's
    # In-place forms.
    T.div_ = lambda self, other, *, rounding_mode=DIM_UNSET: apply_inplace(  # See Note [An explicit dim of None]
        REGISTRY["div"] if rounding_mode is DIM_UNSET else REGISTRY["div_mode_none"] if rounding_mode is None
        else REGISTRY["div_rounding"], (self, other) if rounding_mode is DIM_UNSET else (self, other, rounding_mode))
    T.clip_ = T.clamp_
    # PyTorch's alias names of in-place methods: the same methods.
    T.absolute_, T.negative_, T.fix_ = T.abs_, T.neg_, T.trunc_
    T.greater_, T.greater_equal_, T.less_, T.less_equal_, T.not_equal_ = T.gt_, T.ge_, T.lt_, T.le_, T.ne_
    for alias, name in (("arccos", "acos"), ("arcsin", "asin"), ("arctan", "atan"), ("arccosh", "acosh"),
                        ("arcsinh", "asinh"), ("arctanh", "atanh")):
        setattr(T, f"{alias}_", getattr(T, f"{name}_"))
    T.square_ = lambda self: T.pow_(self, 2)  # as PyTorch's: a PowBackward0 node
    T.cumsum_ = lambda self, dim, *, dtype=None: apply_inplace(REGISTRY["cumsum"], (self, dim, dtype))
    T.arctan2_ = T.atan2_
    T.cumprod_ = lambda self, dim, *, dtype=None: apply_inplace(REGISTRY["cumprod"], (self, dim, dtype))
    T.copy_ = lambda self, src, non_blocking=False: apply_inplace(copy._copy.op, (self, src))
    T.multiply_ = T.mul_
    T.subtract_ = T.sub_
    T.divide_ = T.div_
    T.true_divide_ = lambda self, other: T.div_(self, other)
    T.__iadd__ = lambda self, other: T.add_(self, other)
    T.__isub__ = lambda self, other: T.sub_(self, other)
    T.__imul__ = lambda self, other: T.mul_(self, other)
    T.__itruediv__ = lambda self, other: T.div_(self, other)
    T.__ipow__ = lambda self, other: T.pow_(self, other)
    T.__imod__ = lambda self, other: T.remainder_(self, other)

    def __setitem__(self, index, value):
        """``self[index] = value``: advanced indices put with ``index_put_``; basic ones (ints, slices, None,
        Ellipsis) write into the view ``self[index]``, as PyTorch (the base's node is then a CopySlices)."""
        indices, basic = convert_index(index)
        if not basic:
            apply_inplace(REGISTRY["index_put"], (self, indices, value, False))
            return
        # Indices that apply no view (x[...], x[:, :]) write into self itself, as PyTorch's.
        target = self if last_view(self._data, indices) == "Alias" else getitem(self, index)
        if not isinstance(value, Tensor):
            number = isinstance(value, (bool, int, float, complex, _np.generic))
            value = _creation.tensor(value, dtype=self.dtype, device=self._device)
            if number:  # PyTorch fills with the number as a 0-d tensor (FillBackward3)
                T.fill_(target, value)
                return
        extra = value.dim() - target.dim()
        if extra > 0 and all(s == 1 for s in value.shape[:extra]):  # leading 1s go, as PyTorch's setitem
            value = value.reshape(tuple(value.shape[extra:]))
        if value.shape != target.shape:
            expanded_shape(value.shape, target.shape)  # PyTorch expands the value: its errors
        T.copy_(target, value)
    T.__setitem__ = __setitem__
