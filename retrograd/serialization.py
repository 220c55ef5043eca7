"""save / load: tensors and nested containers in a zip of ``.npy`` arrays plus a JSON manifest.

Note [Safe serialization]
~~~~~~~~~~~~~~~~~~~~~~~~~
``torch.save`` writes a pickle, and unpickling a file can run any code its author chose. This
format cannot: the archive holds ``manifest.json`` (a tree of tagged JSON values) and one
``.npy`` file per distinct tensor or NumPy array. ``load`` parses the JSON, accepts only the tags listed in
``_DECODERS`` (anything else raises ``UnpicklingError``, the type ``torch.load(weights_only=True)``
raises for a forbidden global), and reads each array with ``numpy.load(allow_pickle=False)``, so
object arrays are refused too. No name from the file is ever imported or called.

Note [Bounded loading]
~~~~~~~~~~~~~~~~~~~~~~
A file is input from anywhere, so ``load`` never allocates more than the file can hold: members
must be stored (a compressed member could inflate to any size), each declared size must fit the
file, and an array's ``.npy`` header, checked against the manifest, must declare exactly the bytes
its member holds before the array is allocated and read into. Loading takes about the file's size
plus the manifest's parsed form. Whatever is wrong with a file, damaged, truncated or malformed,
raises ``UnpicklingError`` naming it.

Identity is kept within one file: a tensor object reached twice (a parameter shared by two
modules, an optimizer state entry) is stored once and loaded as one tensor. Distinct tensors
that share memory (views) are stored, and loaded, as independent copies.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import struct
import zipfile
from collections import OrderedDict
from pickle import UnpicklingError

import numpy as np

from . import _dtype
from ._creation import _finish as _wrap_array
from ._device import device as _device_cls
from ._size import Size
from ._tensor import Tensor
from .nn.modules.module import Module
from .nn.parameter import Parameter

__all__ = ["save", "load"]

_FORMAT = "retrograd"
_VERSION = 1
_MANIFEST = "manifest.json"
_CHUNK = 1 << 20  # bytes read at a time into an array being loaded
_MAX_DEPTH = 256  # containers within containers: far past any state_dict, well inside Python's recursion limit


# -- encoding -------------------------------------------------------------------------------------
class _Encoder:
    """Turns an object tree into tagged JSON values, collecting tensor arrays by identity."""

    def __init__(self):
        self.arrays: list[np.ndarray] = []
        self.index_of: dict[int, int] = {}
        self.keep_alive: list = []  # ids stay unique while the encoder lives
        self.depth = 0

    def encode(self, obj):
        if isinstance(obj, (np.ndarray, np.generic)):  # first: np.float64 is a float, np.str_ a str
            return self._ndarray(obj)
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)  # JSON keeps Python ints exact, however large
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"type": "float", "value": repr(obj)}
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, _dtype.dtype):
            return {"type": "dtype", "name": obj.name}
        if isinstance(obj, _device_cls):
            return {"type": "device", "name": str(obj)}
        if isinstance(obj, Size):
            return {"type": "size", "items": list(obj)}
        if type(obj) in (list, tuple, dict, OrderedDict):
            return self._container(obj)
        if isinstance(obj, Module):
            raise TypeError(f"retrograd.save cannot store a whole nn.Module ({type(obj).__name__}): save its "
                            "state_dict() instead, and load it with load_state_dict() into a module built by your "
                            "code (a file that rebuilds a module would have to run code, as PyTorch's "
                            "weights_only=True loading refuses to)")
        raise TypeError(f"retrograd.save cannot store an object of type {type(obj).__module__}."
                        f"{type(obj).__qualname__}; it stores tensors, NumPy arrays, None, bool, int, float, str, "
                        "dtypes, devices, and lists, tuples and dicts of those")

    def _container(self, obj):
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise ValueError(f"retrograd.save cannot store containers nested more than {_MAX_DEPTH} deep")
        try:
            if isinstance(obj, dict):
                tag = "ordered_dict" if isinstance(obj, OrderedDict) else "dict"
                return {"type": tag, "items": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
            return {"type": type(obj).__name__, "items": [self.encode(v) for v in obj]}
        finally:
            self.depth -= 1

    def _ndarray(self, a):
        """A NumPy array (or scalar) of a plain dtype, stored as its own ``.npy`` (never with pickle)."""
        array = np.asarray(a)
        if array.dtype.hasobject or array.dtype.kind not in "biufcSUM" or array.dtype.fields is not None:
            raise TypeError(f"retrograd.save cannot store a NumPy array of dtype {array.dtype}: only arrays of "
                            "numbers, bools and strings, which load without pickle")
        self.arrays.append(array if array.flags.c_contiguous else array.copy(order="C"))
        return {"type": "ndarray", "ref": len(self.arrays) - 1, "dtype": array.dtype.str, "shape": list(array.shape),
                "scalar": isinstance(a, np.generic)}

    def _tensor(self, t):
        key = id(t)
        if key not in self.index_of:
            self.index_of[key] = len(self.arrays)
            array = t._host()
            if t.dtype is _dtype.bfloat16:  # stored as its bits, a plain .npy (Note [bfloat16 arrays] in _dtype.py)
                array = array.view(np.uint16)
            self.arrays.append(array)
            self.keep_alive.append(t)
        entry = {"type": "tensor", "ref": self.index_of[key], "dtype": t.dtype.name, "shape": list(t.shape),
                 "device": str(t.device), "requires_grad": t.requires_grad}
        if isinstance(t, Parameter):
            entry["parameter"] = True
        return entry


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True) -> None:
    """Saves tensors and nested containers of them to a file that loads without running code.

    Stores tensors (dtype, shape, device, requires_grad, and whether it is an ``nn.Parameter``),
    NumPy arrays and scalars of plain dtypes, None, bool, int, float, str, dtypes, devices, Sizes,
    and lists, tuples, dicts and OrderedDicts of these (tensors as dict keys too): a module's or an
    optimizer's ``state_dict()``. A whole ``nn.Module`` is refused: save its ``state_dict()``. See
    Note [Safe serialization].

    Args:
        obj: what to save.
        f (str, os.PathLike or binary file): where to write.
        pickle_module, pickle_protocol: accepted for PyTorch compatibility and ignored (no pickle).

    Raises:
        TypeError: ``obj`` contains a value of another type, an ``nn.Module``, or an object array.
        ValueError: containers nest more than 256 deep.

    Example::
        >>> import io, retrograd as rg
        >>> buf = io.BytesIO()
        >>> rg.save({"w": rg.ones(2), "step": 3}, buf); _ = buf.seek(0)
        >>> rg.load(buf)
        {'w': tensor([1., 1.]), 'step': 3}
    """
    encoder = _Encoder()
    manifest = {"format": _FORMAT, "version": _VERSION, "root": encoder.encode(obj)}
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write(fh, manifest, encoder.arrays)
    else:
        _write(f, manifest, encoder.arrays)


def _write(fh, manifest, arrays):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(_MANIFEST, json.dumps(manifest, allow_nan=False))
        for i, array in enumerate(arrays):
            buf = io.BytesIO()
            np.save(buf, array, allow_pickle=False)
            zf.writestr(f"tensors/{i}.npy", buf.getvalue())


# -- decoding -------------------------------------------------------------------------------------
class _Decoder:
    """Rebuilds the object tree from the manifest; only the tags in ``_DECODERS`` are accepted."""

    def __init__(self, zf, members, map_location):
        self.zf = zf
        self.members = members
        self.map_location = map_location
        self.tensors: dict[int, tuple[Tensor, object, object]] = {}
        self.depth = 0

    def decode(self, value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, dict):
            tag = value.get("type")
            decoder = _DECODERS.get(tag) if isinstance(tag, str) else None
            if decoder is None:
                raise UnpicklingError(f"retrograd.load: unsupported type {tag!r} in the file; it loads only "
                                      f"{', '.join(sorted(_DECODERS))} and plain JSON values")
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise UnpicklingError(f"retrograd.load: the manifest nests containers more than {_MAX_DEPTH} deep")
            try:
                return decoder(self, value)
            finally:
                self.depth -= 1
        raise UnpicklingError(f"retrograd.load: malformed manifest entry of type {type(value).__name__}")

    def items(self, value):
        items = value.get("items")
        if not isinstance(items, list):
            raise UnpicklingError("retrograd.load: malformed manifest: a container without a list of items")
        return items

    def tensor(self, value):
        ref = value.get("ref")
        if not isinstance(ref, int) or isinstance(ref, bool):
            raise UnpicklingError("retrograd.load: malformed tensor entry")
        if ref not in self.tensors:
            self.tensors[ref] = self._read_tensor(ref, value), value.get("dtype"), value.get("shape")
        t, dtype, shape = self.tensors[ref]
        if (dtype, shape) != (value.get("dtype"), value.get("shape")):
            raise UnpicklingError(f"retrograd.load: two entries of tensor {ref} disagree on its dtype or shape")
        return t

    def ndarray(self, value):
        """A NumPy array, or scalar, as saved; its .npy must match the manifest's dtype and shape."""
        ref = value.get("ref")
        if not isinstance(ref, int) or isinstance(ref, bool):
            raise UnpicklingError("retrograd.load: malformed array entry")

        def expect(dtype, shape):
            if dtype.str != value.get("dtype") or shape != value.get("shape"):
                raise UnpicklingError(f"retrograd.load: array {ref} ({dtype.str}, {shape}) does not match its "
                                      f"manifest entry ({value.get('dtype')}, {value.get('shape')})")

        array = self._read_array(ref, "array", expect)
        return array[()] if value.get("scalar") is True else array

    def _read_array(self, ref, what, expect=None):
        """The array of member ``tensors/<ref>.npy``, read into memory of the size its header declares.

        ``expect`` is the manifest's ``(dtype, shape)`` check, run on the header before anything is
        allocated. See Note [Bounded loading].
        """
        name = f"tensors/{ref}.npy"
        info = self.members.get(name)
        if info is None:
            raise UnpicklingError(f"retrograd.load: the file lacks the array of {what} {ref}")
        with _member(self.zf, info) as fp:
            try:
                version = np.lib.format.read_magic(fp)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran_order, dtype = read_header(fp)
            except (ValueError, EOFError) as e:
                raise UnpicklingError(f"retrograd.load: {what} {ref} is not a plain array ({e})") from None
            if dtype.hasobject or dtype.fields is not None or dtype.kind not in "biufcSUM":
                raise UnpicklingError(f"retrograd.load: {what} {ref} is not a plain array (its dtype {dtype} "
                                      "loads only with pickle)")
            if expect is not None:
                expect(dtype, list(shape))
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes != info.file_size - fp.tell():
                raise UnpicklingError(f"retrograd.load: {what} {ref} declares {nbytes} bytes of data but its member "
                                      f"holds {info.file_size - fp.tell()}")
            array = np.empty(shape, dtype=dtype, order="F" if fortran_order else "C")
            view = memoryview(array.reshape(-1, order="A")).cast("B") if nbytes else memoryview(b"")
            for start in range(0, nbytes, _CHUNK):  # zipfile reads through a buffer of the size asked for
                if fp.readinto(view[start:start + _CHUNK]) != min(_CHUNK, nbytes - start):
                    raise UnpicklingError(f"retrograd.load: {what} {ref} is truncated")
            fp.read(1)  # reaches the member's end, where zipfile checks its CRC
        return array

    def _read_tensor(self, ref, value):
        name = value.get("dtype")
        if not isinstance(name, str) or name not in _dtype._BY_NAME:
            raise UnpicklingError(f"retrograd.load: unsupported dtype {name!r}")
        dtype = _dtype._BY_NAME[name]

        stored = np.dtype(np.uint16) if dtype is _dtype.bfloat16 else dtype.np  # bfloat16's bits

        def expect(np_dtype, shape):
            if np_dtype != stored or shape != value.get("shape"):
                raise UnpicklingError(f"retrograd.load: tensor {ref}'s array ({np_dtype}, {shape}) does not match "
                                      f"its manifest entry ({name}, {value.get('shape')})")

        array = self._read_array(ref, "tensor", expect)
        if dtype is _dtype.bfloat16:
            array = array.view(dtype.np)
        device = self._device(value.get("device", "cpu"))
        requires_grad = value.get("requires_grad") is True
        if requires_grad and not dtype.is_floating_point:
            raise UnpicklingError(f"retrograd.load: tensor {ref} of dtype {name} is marked requires_grad, which only "
                                  "floating point and complex tensors can be")
        t = _wrap_array(array, dtype, device, requires_grad)  # the array is the tensor's: no copy
        if value.get("parameter") is True:
            t = Parameter(t, requires_grad=requires_grad)
        return t

    def _device(self, recorded):
        if not isinstance(recorded, str):
            raise UnpicklingError(f"retrograd.load: malformed device {recorded!r}")
        loc = self.map_location
        if loc is None:
            return _parse_device(recorded)
        if isinstance(loc, dict):
            return _device_cls(loc[recorded]) if recorded in loc else _parse_device(recorded)
        if isinstance(loc, (str, _device_cls)):
            return _device_cls(loc)
        if callable(loc):
            raise TypeError("retrograd.load: a callable map_location is not supported; pass a device, a "
                            "string or a dict")
        raise TypeError(f"retrograd.load: map_location must be a device, str or dict, not {type(loc).__name__}")


def _parse_device(name):
    """A device recorded in the file; a malformed one is the file's error, not the caller's."""
    if isinstance(name, str):
        try:
            return _device_cls(name)
        except (RuntimeError, ValueError, TypeError):
            pass
    raise UnpicklingError(f"retrograd.load: malformed device {name!r}")


def _size_items(items):
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        raise UnpicklingError(f"retrograd.load: malformed Size {items!r}")
    return items


def _decode_float(dec, value):
    text = value.get("value")
    if text not in ("nan", "inf", "-inf"):
        raise UnpicklingError(f"retrograd.load: malformed float {text!r}")
    return float(text)


def _decode_dict(cls):
    def decode(dec, value):
        out = cls()
        for pair in dec.items(value):
            if not isinstance(pair, list) or len(pair) != 2:
                raise UnpicklingError("retrograd.load: malformed dict entry")
            key = dec.decode(pair[0])
            try:
                hash(key)  # a Tensor key is hashable, as it was when saved
            except TypeError:
                raise UnpicklingError(f"retrograd.load: unhashable dict key of type {type(key).__name__}") from None
            out[key] = dec.decode(pair[1])
        return out
    return decode


def _decode_dtype(dec, value):
    if not isinstance(value.get("name"), str) or value["name"] not in _dtype._BY_NAME:
        raise UnpicklingError(f"retrograd.load: unsupported dtype {value.get('name')!r}")
    return _dtype._BY_NAME[value["name"]]


_DECODERS = {
    "tensor": _Decoder.tensor,
    "ndarray": _Decoder.ndarray,
    "list": lambda dec, v: [dec.decode(x) for x in dec.items(v)],
    "tuple": lambda dec, v: tuple(dec.decode(x) for x in dec.items(v)),
    "size": lambda dec, v: Size(_size_items(dec.items(v))),
    "dict": _decode_dict(dict),
    "ordered_dict": _decode_dict(OrderedDict),
    "float": _decode_float,
    "dtype": _decode_dtype,
    "device": lambda dec, v: _parse_device(v.get("name")),
}


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Loads an object saved by ``retrograd.save``; never runs code from the file.

    Args:
        f (str, os.PathLike or binary file): where to read.
        map_location (str, device or dict, optional): the device to put every tensor on, or a
            ``{saved_device: new_device}`` mapping; by default each tensor's saved device.
        pickle_module, weights_only, mmap: accepted for PyTorch compatibility; loading is always
            as safe as ``weights_only=True``.

    Returns:
        The saved object, with tensors as new leaves (``nn.Parameter`` where one was saved).

    Raises:
        UnpicklingError: the file is not a retrograd archive, is damaged or truncated, declares
            sizes it cannot hold, or holds a type outside the supported set; the message names
            what is wrong (see Note [Safe serialization] and Note [Bounded loading]).

    Example::
        >>> import io, retrograd as rg
        >>> buf = io.BytesIO(); rg.save([rg.zeros(1), "x"], buf); _ = buf.seek(0)
        >>> rg.load(buf)
        [tensor([0.]), 'x']
    """
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _read(fh, map_location)
    return _read(f, map_location)


_CORRUPT = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError, struct.error)


def _read(fh, map_location):
    try:
        zf = zipfile.ZipFile(fh, "r")
        size = fh.seek(0, io.SEEK_END)
    except _CORRUPT as e:
        raise UnpicklingError("retrograd.load: the file is not a retrograd archive (a zip with a JSON manifest), or "
                              f"it is damaged ({e}); pickled files, such as torch.save's, are refused because "
                              "loading them can run code") from None
    with zf:
        members = {info.filename: _checked_member(info, size) for info in zf.infolist()}
        if _MANIFEST not in members:
            raise UnpicklingError("retrograd.load: the archive has no manifest.json")
        with _member(zf, members[_MANIFEST]) as fp:
            raw = fp.read()
        try:
            manifest = json.loads(raw)
        except (ValueError, RecursionError) as e:
            raise UnpicklingError(f"retrograd.load: the archive's manifest.json is not readable JSON ({e})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
            raise UnpicklingError("retrograd.load: the archive is not in retrograd's format")
        if manifest.get("version") != _VERSION:
            raise UnpicklingError(f"retrograd.load: unsupported format version {manifest.get('version')!r}")
        return _Decoder(zf, members, map_location).decode(manifest.get("root"))


def _checked_member(info, archive_size):
    """``info``, once its declared sizes are seen to be ones the archive can hold uncompressed."""
    if info.compress_type != zipfile.ZIP_STORED:
        raise UnpicklingError(f"retrograd.load: the archive's member {info.filename!r} is compressed; retrograd "
                              "writes members stored and refuses compressed ones, whose size the file does not bound")
    if info.file_size != info.compress_size or info.file_size > archive_size:
        raise UnpicklingError(f"retrograd.load: the archive's member {info.filename!r} declares {info.file_size} "
                              f"bytes, which the {archive_size}-byte file cannot hold")
    return info


@contextlib.contextmanager
def _member(zf, info):
    """An open member of the archive; a damaged member (bad CRC, truncation) is an UnpicklingError."""
    try:
        with zf.open(info) as fp:
            yield fp
    except _CORRUPT as e:
        raise UnpicklingError(f"retrograd.load: the archive's member {info.filename!r} is damaged ({e})") from None
