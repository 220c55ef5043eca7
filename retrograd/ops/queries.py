"""What a tensor is, as PyTorch's queries ask it: its size in bytes, its layout and kind (``is_sparse``,
``is_signed``...), the conjugate and negative bits, and the casts named after C types (``byte``, ``char``,
``short``).

retrograd's tensors are dense, strided, unquantized and real: the layout queries say so, and the conjugate and
negative views of PyTorch's complex tensors are the tensor itself (``x.conj() is x``, as PyTorch's for a real x).
"""
from __future__ import annotations

from .. import _dtype
from .._tensor import Tensor
from ._declarations import tensor_method
from .copy import to

__all__ = ["is_signed", "is_conj", "is_neg", "resolve_conj", "resolve_neg", "conj", "get_device", "is_same_size",
           "is_nonzero"]

# -- properties --------------------------------------------------------------------------------------------------
Tensor.itemsize = property(lambda self: self._data.itemsize, doc="The size of one element in bytes.")
Tensor.nbytes = property(lambda self: self._data.size * self._data.itemsize,
                         doc="The size of the elements in bytes: ``numel() * itemsize`` (not of the storage).")
Tensor.is_cpu = property(lambda self: self._device.type == "cpu", doc="True for a tensor on the CPU.")
for _name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested"):
    setattr(Tensor, _name, property(lambda self: False, doc="False: retrograd's tensors are dense, strided and "
                                                              "unquantized, on real devices."))


# -- queries ------------------------------------------------------------------------------------------------------
@tensor_method
def is_signed(input) -> bool:
    """True if ``input``'s dtype is a signed type: floating or a signed integer (not bool or uint8).

    Example::
        >>> import retrograd as rg
        >>> rg.tensor([1, 2]).is_signed(), rg.tensor([1], dtype=rg.uint8).is_signed()
        (True, False)
    """
    return input.dtype.is_signed


@tensor_method
def is_conj(input) -> bool:
    """False: a real tensor has no conjugate bit."""
    return False


@tensor_method
def is_neg(input) -> bool:
    """False: a real tensor has no negative bit."""
    return False


@tensor_method
def conj(input):
    """The complex conjugate of ``input``: for a real tensor, ``input`` itself, as PyTorch's.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., -2.])
        >>> x.conj() is x
        True
    """
    return input


@tensor_method
def resolve_conj(input):
    """``input`` with its conjugate bit applied: a real tensor has none, so ``input`` itself."""
    return input


@tensor_method
def resolve_neg(input):
    """``input`` with its negative bit applied: a real tensor has none, so ``input`` itself."""
    return input


@tensor_method
def get_device(input) -> int:
    """The index of ``input``'s CUDA device, or -1 for a tensor on the CPU.

    Example::
        >>> import retrograd as rg
        >>> rg.ones(2).get_device()
        -1
    """
    if input._device.type == "cpu":
        return -1
    index = input._device.index
    return 0 if index is None else index


@tensor_method
def is_same_size(input, other) -> bool:
    """True if ``input`` and ``other`` have the same shape.

    Example::
        >>> import retrograd as rg
        >>> rg.ones(2, 3).is_same_size(rg.zeros(2, 3))
        True
    """
    return tuple(input.shape) == tuple(other.shape)


@tensor_method
def is_nonzero(input) -> bool:
    """True if the one element of ``input`` is not zero (``bool(input)``).

    Raises:
        RuntimeError: ``input`` has no element or more than one (PyTorch's errors).

    Example::
        >>> import retrograd as rg
        >>> rg.tensor([0.5]).is_nonzero()
        True
    """
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


# -- the casts named after C types ----------------------------------------------------------------------------------
def _cast(name, dtype):
    def cast(self, memory_format=None):
        return to(self, dtype) if memory_format is None else to(self, dtype, memory_format=memory_format)
    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"``self.to({dtype!r})``."
    return cast


Tensor.byte = _cast("byte", _dtype.uint8)
Tensor.char = _cast("char", _dtype.int8)
Tensor.short = _cast("short", _dtype.int16)
