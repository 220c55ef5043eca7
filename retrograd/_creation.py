"""Tensor creation functions, with PyTorch's names, defaults and dtype inference."""
from __future__ import annotations

import numbers
import os

import numpy as np

from . import _dtype
from ._device import device as _device_cls, cpu as _cpu
from ._random import default_generator
from ._size import Size, ints
from ._tensor import Tensor
from .backends import get_backend
from .backends.numpy_backend import quietly

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "rand", "randn", "randint", "rand_like",
           "randn_like", "randperm", "scalar_tensor"]


def _resolve_device(device):
    return _cpu if device is None else _device_cls(device)


def _finish(array, dtype, device, requires_grad):
    """Moves a host array to ``device``, casts it, and wraps it as a leaf."""
    dev = _resolve_device(device)
    if dtype is not None and array.dtype != dtype.np:
        array = quietly(array.astype, dtype.np)  # a float beyond float16's range is inf, silently, as PyTorch's
    if dev is not _cpu:
        array = get_backend(dev.type).from_numpy(array)
    t = Tensor._make(array, dev)
    if requires_grad:
        if array.dtype.kind != "f":  # a factory's words, not requires_grad_()'s, as in PyTorch
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


_INT64_MAX = 2 ** 63 - 1


def _shape(size, name, itemsize=8):
    """The shape ``name(*size)`` asks for (``f(2, 3)`` or ``f((2, 3))``), checked as PyTorch checks it.

    Raises:
        TypeError: a size that is not an int, or one beyond int64 (``_size.ints``).
        RuntimeError: a negative size, or a tensor of ``itemsize``-byte elements whose size in bytes
            overflows int64 (PyTorch's errors; nothing is allocated).
    """
    dims = ints(size, name)
    numel = 1
    for n in dims:
        if n < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(dims)}")
        numel *= n
    if numel * itemsize > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(dims)}")
    return dims


def _physical_memory():
    """The machine's memory in bytes, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


_PHYSICAL_MEMORY = _physical_memory()


def _allocated(make, shape, itemsize, *args, **kwargs):
    """``make(*args, **kwargs)``, a new host array of ``shape``; PyTorch's RuntimeError where memory runs out.

    A request beyond the machine's memory is refused before anything is allocated: where the system
    overcommits, NumPy's allocation would succeed and filling it would exhaust the machine."""
    numel = 1
    for n in shape:
        numel *= n
    nbytes = numel * itemsize
    if _PHYSICAL_MEMORY is not None and nbytes > _PHYSICAL_MEMORY:
        raise _out_of_memory(nbytes)
    try:
        return make(*args, **kwargs)
    except MemoryError:
        raise _out_of_memory(nbytes) from None


def _out_of_memory(nbytes):
    return RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. Error "
                        "code 12 (Cannot allocate memory)")


def _infer_dtype(data, array):
    """PyTorch's inference: Python floats give the default dtype, ints int64, bools bool."""
    kind = array.dtype.kind
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return _dtype.from_numpy_dtype(array.dtype)
    if kind == "f":
        return _dtype.get_default_dtype()
    if kind in "iu":
        return _dtype.int64
    if kind == "b":
        return _dtype.bool
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _to_host(data):
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)) and any(isinstance(d, (Tensor, list, tuple)) for d in data):
        return np.array([_to_host(d) for d in data])
    return data


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Constructs a tensor with no history by copying ``data``.

    Args:
        data: a number, (nested) sequence, NumPy array or Tensor.
        dtype (dtype, optional): defaults to the type inferred from ``data`` (Python floats give
            the default dtype, float32).
        device (device or str, optional): defaults to the CPU.
        requires_grad (bool): record operations on the result (floating dtypes only).

    Example::
        >>> import retrograd as rg
        >>> rg.tensor([1., 2.], requires_grad=True)
        tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor):
        source_dtype = data.dtype
        array = data._host().copy()
    elif isinstance(data, np.ndarray):
        array = np.array(data)
        source_dtype = _dtype.from_numpy_dtype(array.dtype)
    else:
        if isinstance(data, np.generic):
            array = np.array(data)
            source_dtype = _dtype.from_numpy_dtype(array.dtype)
        else:
            host = _to_host(data)
            array = np.array(host)
            if (array.dtype.kind == "O" or array.dtype == np.uint64 and array.size and array.max() > _INT64_MAX
                    or array.dtype == np.float64 and not _has_float(data) and _has_int(data)):
                # Python ints beyond int64: NumPy made uint64, objects, or floats of them
                array = _wide_ints(data, host, array, dtype)
            source_dtype = _infer_dtype(data, array)
        if dtype is not None:
            _check_fits(array, dtype)
    return _finish(array, dtype or source_dtype, device, requires_grad)


def _check_fits(array, dtype):
    """PyTorch's refusal of Python numbers an integer dtype cannot hold (``tensor(300, dtype=uint8)``).

    As PyTorch's, an unsigned dtype also takes negative numbers down to minus its maximum (wrapping
    them), and floats are truncated; NaN fits no integer dtype. Arrays are cast without a check.
    """
    if dtype.np.kind not in "iu" or not array.size:
        return
    kind = array.dtype.kind
    if kind not in "iuf":
        return
    info = np.iinfo(dtype.np)
    low, high = array.min(), array.max()
    lowest = -info.max if info.min == 0 else info.min
    if kind == "f" and np.isnan(low) or high > info.max or low < lowest:
        raise RuntimeError(f"value cannot be converted to type {dtype.np.name} without overflow")


def _has_float(data) -> bool:
    """Whether the (nested) sequence ``data`` holds a float, which makes PyTorch infer a floating dtype."""
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(d)
        elif isinstance(d, float):
            return True
    return False


def _wide_ints(data, host, array, dtype):
    """The array of ``data`` that holds a Python int beyond int64: floats where the tensor is to be floating, as in
    PyTorch; else PyTorch's ValueError. ``array`` is NumPy's own attempt (uint64 or objects)."""
    floating = dtype.is_floating_point if dtype is not None else _has_float(data)
    if floating:
        try:
            return np.array(host, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    elif array.dtype.kind == "u" or _has_int(data):
        raise ValueError("Overflow when unpacking long long")
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _has_int(data) -> bool:
    """Whether the (nested) sequence ``data`` holds a Python int (not a bool)."""
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(d)
        elif isinstance(d, int) and not isinstance(d, bool):
            return True
    return False


def as_tensor(data, dtype=None, device=None):
    """Converts ``data`` to a tensor, sharing memory with a NumPy array or tensor where it can."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype) and \
            (device is None or _device_cls(device) is data.device):
        return data
    if (isinstance(data, np.ndarray) and dtype in (None, _dtype.from_numpy_dtype(data.dtype))
            and device in (None, "cpu")):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """Returns a CPU tensor sharing memory with ``ndarray`` (changes to one show in the other)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    return Tensor._make(ndarray, _cpu)


def _filled(fill, name, size, dtype, device, requires_grad):
    dtype = dtype or _dtype.get_default_dtype()
    itemsize = dtype.np.itemsize
    shape = _shape(size, name, itemsize)
    return _finish(_allocated(fill, shape, itemsize, shape, dtype.np), None, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """Returns a tensor of zeros of the given size."""
    return _filled(np.zeros, "zeros", size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """Returns a tensor of ones of the given size."""
    return _filled(np.ones, "ones", size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """Returns an uninitialized tensor of the given size (zeros, in this implementation)."""
    return _filled(np.zeros, "empty", size, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """Returns a tensor of the given size filled with ``fill_value``."""
    if dtype is None:
        dtype = _dtype.bool if isinstance(fill_value, bool) else _dtype.int64 if isinstance(
            fill_value, numbers.Integral) else _dtype.get_default_dtype()
    shape = _shape((size,), "full", dtype.np.itemsize)
    return _finish(_allocated(np.full, shape, dtype.np.itemsize, shape, fill_value, dtype=dtype.np), None, device,
                   requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return full((), s, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


def _like(t, dtype, device):
    return t._data.shape, dtype or t.dtype, device if device is not None else t._device


def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    shape, dtype, device = _like(input, dtype, device)
    return zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    shape, dtype, device = _like(input, dtype, device)
    return ones(shape, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    shape, dtype, device = _like(input, dtype, device)
    return full(shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Returns ``[start, end)`` with spacing ``step``; integer arguments give int64."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = _dtype.int64 if is_int else _dtype.get_default_dtype()
    return _finish(np.arange(start, end, step, dtype=np.float64 if dtype.is_floating_point else None),
                   dtype, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """Returns ``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    return _finish(np.linspace(start, end, steps), dtype or _dtype.get_default_dtype(), device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """Returns the ``n`` x ``m`` identity matrix."""
    return _finish(np.eye(n, m), dtype or _dtype.get_default_dtype(), device, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Returns uniform samples from [0, 1) drawn from the default generator."""
    gen = (generator or default_generator).np
    dtype = dtype or _dtype.get_default_dtype()
    shape = _shape(size, "rand", dtype.np.itemsize)
    return _finish(_allocated(gen.random, shape, dtype.np.itemsize, shape), dtype, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Returns standard normal samples drawn from the default generator."""
    gen = (generator or default_generator).np
    dtype = dtype or _dtype.get_default_dtype()
    shape = _shape(size, "randn", dtype.np.itemsize)
    return _finish(_allocated(gen.standard_normal, shape, dtype.np.itemsize, shape), dtype, device, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Returns integers drawn uniformly from ``[low, high)``; ``randint(high, size)`` also works."""
    if size is None:
        low, high, size = 0, low, high
    gen = (generator or default_generator).np
    dtype = dtype or _dtype.int64
    shape = _shape((size,), "randint", dtype.np.itemsize)
    return _finish(_allocated(gen.integers, shape, dtype.np.itemsize, low, high, size=shape), dtype, device,
                   requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Returns a random permutation of ``0..n-1``."""
    gen = (generator or default_generator).np
    return _finish(gen.permutation(n), dtype or _dtype.int64, device, requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    shape, dtype, device = _like(input, dtype, device)
    return rand(shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    shape, dtype, device = _like(input, dtype, device)
    return randn(shape, dtype=dtype, device=device, requires_grad=requires_grad)


# -- the Tensor methods of this layer -------------------------------------------------------------
def _tensor_new(cls, *args, device=None):
    """``Tensor(...)``, PyTorch's legacy constructor: sizes make an uninitialised tensor, data a copy.

    ``Tensor(2, 3)`` (or ``Tensor(Size([2, 3]))``) is an uninitialised tensor of that shape and the
    default dtype, as ``nn.Parameter(torch.Tensor(out, in))`` expects; ``Tensor(sequence)`` (or a
    NumPy array) the data in the default dtype; ``Tensor(tensor)`` an alias of the tensor, its
    dtype kept; ``Tensor()`` an empty tensor of the default dtype.

    Raises:
        TypeError: a lone number, or sizes that are not all integers (PyTorch's message).
        RuntimeError: a negative size.
    """
    default = _dtype.get_default_dtype()
    if not args:
        t = empty(0, dtype=default, device=device)
    elif len(args) == 1 and isinstance(args[0], Tensor):
        t = Tensor._alias_of(args[0])
    elif len(args) == 1 and not isinstance(args[0], (Size, numbers.Number)):
        t = tensor(args[0], dtype=default, device=device)
    elif len(args) == 1 and not isinstance(args[0], (Size, numbers.Integral)):
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    else:
        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
        for pos, n in enumerate(sizes):
            if not isinstance(n, numbers.Integral):  # a bool is an int here, as in PyTorch
                raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos + 1} with error "
                                f"\"type must be tuple of ints,but got {type(n).__name__}\"")
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(sizes)}")
        t = empty(sizes, dtype=default, device=device)
    return t if cls is Tensor else t.as_subclass(cls)


def _rebuild(array, device, requires_grad):
    """Unpickles a tensor: its host array, device name and requires_grad."""
    return tensor(array, device=device, requires_grad=requires_grad)


def _reduce_ex(self, protocol):
    return (_rebuild, (self._host(), str(self._device), self._requires_grad))


Tensor.__new__ = staticmethod(_tensor_new)
Tensor.__reduce_ex__ = _reduce_ex
