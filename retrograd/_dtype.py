"""dtypes: PyTorch's names over NumPy's dtypes, and the default floating dtype."""
from __future__ import annotations

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64",
           "bool", "get_default_dtype", "set_default_dtype"]


class dtype:
    """A tensor element type; compares by identity, like ``torch.dtype``."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_category")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = category == 2
        self.is_signed = self.np.kind in "if"
        self.itemsize = self.np.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating: PyTorch's promotion categories

    def __repr__(self):
        return f"retrograd.{self.name}"

    def __reduce__(self):
        return (_from_name, (self.name,))


float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
int8 = dtype("int8", np.int8, 1)
uint8 = dtype("uint8", np.uint8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
bool = dtype("bool", np.bool_, 0)  # noqa: A001 - PyTorch's public name

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001

_ALL = (float16, float32, float64, int8, uint8, int16, int32, int64, bool)
_BY_NP = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}


def _from_name(name):
    return _BY_NAME[name]


_SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char", "uint8": "Byte",
                      "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}


def scalar_type_name(np_dtype) -> str:
    """PyTorch's ScalarType name of a NumPy dtype, as its kernels' errors spell it (``Long``)."""
    name = np.dtype(np_dtype).name
    return _SCALAR_TYPE_NAMES.get(name, name)


def tensor_type_name(np_dtype) -> str:
    """The legacy tensor type name of a NumPy dtype, as PyTorch's messages print it (``retrograd.FloatTensor``)."""
    scalar = _SCALAR_TYPE_NAMES.get(np.dtype(np_dtype).name)
    return f"retrograd.{scalar}Tensor" if scalar is not None else "retrograd.Tensor"


def from_numpy_dtype(np_dtype) -> dtype:
    """Returns the retrograd dtype of a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
                        "float64, float32, float16, int64, int32, int16, int8, uint8, and bool.") from None


class _DefaultDtype:
    value = float32


def get_default_dtype() -> dtype:
    """Returns the current default floating point dtype (float32 unless changed)."""
    return _DefaultDtype.value


def set_default_dtype(d: dtype) -> None:
    """Sets the default floating point dtype; only float32 and float64 are allowed, as in PyTorch.

    Example::
        >>> import retrograd as rg
        >>> rg.set_default_dtype(rg.float64); rg.get_default_dtype()
        retrograd.float64
        >>> rg.set_default_dtype(rg.float32)
    """
    if d not in (float32, float64, float16):
        raise TypeError("only floating-point types are supported as the default type")
    _DefaultDtype.value = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype to which both ``a`` and ``b`` can be cast, as ``torch.promote_types``."""
    if a is b:
        return a
    if a._category != b._category:  # bool < integers < floating; the higher category's type wins
        return a if a._category > b._category else b
    return _BY_NP[np.promote_types(a.np, b.np)]
