"""The legacy tensor types: ``FloatTensor``, ``LongTensor`` and the others, and ``Tensor.type``.

Note [Legacy tensor types]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Before dtypes, PyTorch named a tensor's type by a class per element type (``torch.FloatTensor``).
It keeps them, and so does retrograd: each is a class whose instances, for ``isinstance``, are the
CPU tensors of its dtype (every tensor is a ``Tensor``; none is an instance of the class itself),
with that ``dtype`` as a class attribute, and a constructor of the old style: no argument (an empty
tensor), sizes (uninitialised), or data. ``Tensor.type()`` gives the name of a tensor's type
(``'retrograd.FloatTensor'``); ``Tensor.type(t)`` converts to a dtype, a class or a name
(``'torch.FloatTensor'`` is taken too), returning the tensor itself where nothing changes.
"""
from __future__ import annotations

from .. import _creation, _dtype
from .._device import cpu
from .._size import Size
from .._tensor import Tensor
from .copy import to

__all__ = ["tensor_type", "TYPES", "type_method"]


class tensortype(type):
    """The class of the legacy tensor types. See Note [Legacy tensor types]."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and instance._data.dtype == cls.dtype.np and instance._device is cpu

    def __call__(cls, *args, device=None):
        dtype = cls.dtype
        if not args:
            return _creation.empty(0, dtype=dtype, device=device)
        if len(args) == 1 and isinstance(args[0], Tensor):
            source = args[0]
            if source._data.dtype != dtype.np:
                raise TypeError(f"expected {dtype} (got {source.dtype})")
            return source.view_as(source)
        if len(args) == 1 and isinstance(args[0], Size) or all(type(a) is int for a in args):
            return _creation.empty(*args, dtype=dtype, device=device)
        if len(args) == 1:
            return _creation.tensor(args[0], dtype=dtype, device=device)
        raise TypeError(f"new() received an invalid combination of arguments - got {len(args)} arguments, but "
                        "expected sizes (ints), a Size, a Tensor or data")

    def __repr__(cls):
        return f"<class 'retrograd.{cls.__name__}'>"


def tensor_type(np_dtype):
    """The legacy type class of a NumPy dtype (``FloatTensor`` for float32)."""
    return TYPES[_dtype.scalar_type_name(np_dtype) + "Tensor"]


TYPES = {}
for _d in (_dtype.float16, _dtype.float32, _dtype.float64, _dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32,
           _dtype.int64, _dtype.bool):
    _name = _dtype.scalar_type_name(_d.np) + "Tensor"
    TYPES[_name] = tensortype(_name, (), {"dtype": _d, "is_cuda": False, "is_sparse": False,
                                          "__module__": "retrograd",
                                          "__doc__": f"The legacy type of the CPU tensors of dtype {_d}."})


def type_method(self, dtype=None, non_blocking=False, **kwargs):
    """The name of this tensor's legacy type, or, given a dtype, a type class or its name, this tensor converted
    to it (itself where it already is). See Note [Legacy tensor types]."""
    if dtype is None:
        return _dtype.tensor_type_name(self._data.dtype) if self._device is cpu else \
            _dtype.tensor_type_name(self._data.dtype).replace(".", f".{self._device.type}.", 1)
    if isinstance(dtype, str):
        prefix, _, name = dtype.rpartition(".")
        if prefix not in ("torch", "retrograd") or name not in TYPES:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = TYPES[name]
    if isinstance(dtype, tensortype):
        dtype = dtype.dtype
    if self._data.dtype == dtype.np:
        return self
    return to(self, dtype)
