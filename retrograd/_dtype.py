"""dtypes: PyTorch's names over NumPy's dtypes, and the default floating dtype."""
from __future__ import annotations

import builtins

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64",
           "bool", "get_default_dtype", "set_default_dtype", "bfloat16", "finfo", "iinfo", "can_cast", "result_type"]


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
                      "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool", "bfloat16": "BFloat16"}


def scalar_type_name(dt) -> str:
    """PyTorch's ScalarType name of a dtype (retrograd's or NumPy's), as its kernels' errors spell it (``Long``)."""
    name = dt.name if isinstance(dt, dtype) else np.dtype(dt).name
    return _SCALAR_TYPE_NAMES.get(name, name)


_TYPE_META_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
                    "int8": "signed char", "uint8": "unsigned char", "int16": "short int", "int32": "int",
                    "int64": "long int", "bool": "bool"}


def type_meta_name(dt) -> str:
    """The C++ name of a dtype's element type, as PyTorch's messages print a dtype (``long int``).

    ``dt``: a retrograd dtype or a NumPy one. The one table of these names: every message that prints a dtype
    so uses this function.
    """
    name = dt.name if isinstance(dt, dtype) else np.dtype(dt).name
    return _TYPE_META_NAMES.get(name, name)


def tensor_type_name(np_dtype) -> str:
    """The legacy tensor type name of a NumPy dtype, as PyTorch's messages print it (``retrograd.FloatTensor``)."""
    scalar = _SCALAR_TYPE_NAMES.get(np.dtype(np_dtype).name)
    return f"retrograd.{scalar}Tensor" if scalar is not None else "retrograd.Tensor"


def from_numpy_dtype(np_dtype) -> dtype:
    """Returns the retrograd dtype of a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        scalar = getattr(np_dtype, "type", np_dtype)
        if not WIDE.loaded and getattr(scalar, "__module__", None) == "ml_dtypes" and \
                getattr(scalar, "__name__", None) == "bfloat16":  # an array ml_dtypes made, before retrograd loaded it
            load_bfloat16()
            return from_numpy_dtype(np_dtype)
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
    if a is bfloat16 or b is bfloat16:  # with float16, float32: the first type that holds both ranges
        other = b if a is bfloat16 else a
        return float32 if other is float16 else other
    return _BY_NP[np.promote_types(a.np, b.np)]


# -- bfloat16, finfo and iinfo, result_type and can_cast --------------------------------------------------
# Note [bfloat16 arrays]
# ~~~~~~~~~~~~~~~~~~~~~~
# NumPy has no bfloat16. retrograd's bfloat16 arrays are NumPy arrays of ``ml_dtypes.bfloat16`` (the jax-ml
# project's NumPy dtype: 2 bytes an element, casts that round to nearest even, ufunc loops; it depends on NumPy
# alone), so that a bfloat16 tensor is an ordinary tensor everywhere else: views, strides, indexing, the engine,
# AccumulateGrad's sums (ml_dtypes adds in float32 and rounds, as PyTorch's CPU kernels do). ml_dtypes's
# initialisation takes about a second, so ``import retrograd`` never imports it: ``bfloat16.np``, read when a
# bfloat16 tensor is first asked for, does (``load_bfloat16``), and registers the dtype; without ml_dtypes
# installed that read raises PyTorch users' clue, the package to install, and nothing else changes.
#
# NumPy gives ml_dtypes's dtype the kind "V" (not "f"): retrograd holds no other arrays of that kind, so the
# checks of floating arrays read ``kind in "fV"`` (``is_float_array``) wherever a bfloat16 array can reach them.
#
# PyTorch's CPU kernels compute a bfloat16 op in float32 and round the result once. ml_dtypes's ufuncs round
# after each ufunc, its matmul returns float32, and NumPy's reductions of it accumulate in bfloat16; so the op
# call computes every op with a bfloat16 argument in float32 and rounds its floating results to bfloat16 once
# (``wide_call`` in ops/_call.py), which gives PyTorch's numbers wherever PyTorch computes in float32 and rounds
# once. The generated op calls and the C op call hand every such call to it (``WIDE``).
class _Wide:
    """What the op calls read to send bfloat16 calls to ``wide_call`` (Note [bfloat16 arrays]): ``dtype`` is the
    NumPy bfloat16 dtype once loaded (a sentinel before, which no array's dtype is), ``loaded`` whether it is."""

    __slots__ = ("dtype", "loaded", "listeners")

    def __init__(self):
        self.dtype = object()
        self.loaded = False
        self.listeners = []  # called with the NumPy dtype once it is loaded (the C op call's set_wide_dtype)


WIDE = _Wide()


class _LazyDtype(dtype):
    """bfloat16, whose NumPy dtype comes from ml_dtypes, imported when first read (Note [bfloat16 arrays])."""

    __slots__ = ()

    def __init__(self, name, category, itemsize):
        object.__setattr__(self, "name", name)
        self.is_floating_point = category == 2
        self.is_signed = True
        self.itemsize = itemsize
        self._category = category

    @property
    def np(self):
        found = WIDE.dtype
        return found if WIDE.loaded else load_bfloat16()


bfloat16 = _LazyDtype("bfloat16", 2, 2)
_BY_NAME["bfloat16"] = bfloat16


def load_bfloat16():
    """Imports ml_dtypes and registers its bfloat16 as retrograd.bfloat16's NumPy dtype; returns that dtype.

    Raises:
        ModuleNotFoundError: ml_dtypes is not installed (naming the package to install).
    """
    if WIDE.loaded:
        return WIDE.dtype
    try:
        import ml_dtypes
    except ImportError:
        raise ModuleNotFoundError("retrograd.bfloat16 needs the ml_dtypes package (NumPy has no bfloat16), which is "
                                  "not installed: pip install ml_dtypes", name="ml_dtypes") from None
    np_dtype = np.dtype(ml_dtypes.bfloat16)
    _BY_NP[np_dtype] = bfloat16
    WIDE.dtype = np_dtype
    WIDE.loaded = True
    for listener in WIDE.listeners:
        listener(np_dtype)
    return np_dtype


def is_float_array(np_dtype) -> builtins.bool:
    """Whether an array of retrograd's of this NumPy dtype is floating (bfloat16's kind is "V": Note [bfloat16
    arrays])."""
    return np_dtype.kind in "fV"


class finfo:
    """The properties of a floating-point dtype, as ``torch.finfo``: ``bits``, ``eps``, ``max``, ``min``,
    ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name).

    Example::
        >>> import retrograd as rg
        >>> rg.finfo(rg.float32).eps
        1.1920928955078125e-07
        >>> rg.finfo(rg.bfloat16).max
        3.3895313892515355e+38
    """

    def __init__(self, type=None):  # noqa: A002 - PyTorch's name
        type = get_default_dtype() if type is None else type
        if not isinstance(type, dtype) or not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        if type is bfloat16:  # 8 exponent bits and 7 mantissa bits (float32's range, 2 decimal digits)
            self.bits, self.eps, self.max, self.tiny, self.resolution = 16, 2.0 ** -7, 3.3895313892515355e38, \
                2.0 ** -126, 0.01
        else:
            info = np.finfo(type.np)
            self.bits, self.eps, self.max = info.bits, builtins.float(info.eps), builtins.float(info.max)
            self.tiny, self.resolution = builtins.float(info.smallest_normal), 10.0 ** -info.precision
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The properties of an integer dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min`` and ``dtype``.

    Example::
        >>> import retrograd as rg
        >>> rg.iinfo(rg.int8).min
        -128
    """

    def __init__(self, type):  # noqa: A002 - PyTorch's name
        if not isinstance(type, dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        if type is bool:  # this module's bool dtype
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(type.np)
        self.bits, self.min, self.max = info.bits, builtins.int(info.min), builtins.int(info.max)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to``: never to a lower category
    (floating > integer > bool), as ``torch.can_cast``.

    Example::
        >>> import retrograd as rg
        >>> rg.can_cast(rg.float32, rg.int32), rg.can_cast(rg.int64, rg.float16)
        (False, True)
    """
    return from_._category <= to._category


def result_type(tensor1, tensor2):
    """The dtype PyTorch's type promotion gives an op of ``tensor1`` and ``tensor2`` (Tensors or numbers):
    tensors with dims first, then 0-d tensors, then Python numbers, each only where it is of a higher
    category (floating > integer > bool), as ``torch.result_type``.

    Example::
        >>> import retrograd as rg
        >>> rg.result_type(rg.tensor([1, 2]), 1.0)
        retrograd.float32
        >>> rg.result_type(rg.tensor([1], dtype=rg.int8), 1000)
        retrograd.int8
    """
    dims = zero = None
    scalar = -1
    for x in (tensor1, tensor2):
        if isinstance(x, (builtins.bool, np.bool_)):
            scalar = max(scalar, 0)
        elif isinstance(x, (builtins.int, np.integer)):
            scalar = max(scalar, 1)
        elif isinstance(x, (builtins.float, np.floating)):
            scalar = max(scalar, 2)
        elif hasattr(x, "_data"):
            d = from_numpy_dtype(x._data.dtype)
            if x._data.ndim:
                dims = d if dims is None else promote_types(dims, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        else:
            raise TypeError(f"result_type() received an invalid combination of arguments - got "
                            f"({type(tensor1).__name__}, {type(tensor2).__name__}), but expected one of: (Tensor "
                            f"tensor, Tensor other), (Tensor tensor, Number other), (Number scalar, Tensor tensor), "
                            f"(Number scalar1, Number scalar2)")
    out = dims
    if zero is not None and (out is None or zero._category > out._category):
        out = zero
    if scalar >= 0 and (out is None or scalar > out._category):
        out = (bool, int64, get_default_dtype())[scalar]
    return out
