"""The MKL-DNN layout of PyTorch's CPU build: ``Tensor.to_mkldnn``, ``to_dense``, ``layout == retrograd._mkldnn``.

Note [The MKL-DNN layout]
~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch keeps an MKL-DNN tensor in an opaque oneDNN buffer: it has no storage and no real strides,
a few ops (its MkldnnCPU kernels) run on it and give MKL-DNN results, and every other op refuses it.
retrograd has no oneDNN, and needs none to keep that contract: an MKL-DNN tensor is an
``MkldnnTensor``, an internal Tensor subclass whose array is an ordinary NumPy array (row-major, a
copy made by ``to_mkldnn``). What differs from a strided tensor is what may be done with it:

- Ops. Every call of a public op with an MKL-DNN argument reaches ``MkldnnTensor.__torch_function__``
  (the C op call declines subclasses: Note [Where __torch_function__ is checked]), which looks the
  op up in ``MKLDNN_OPS`` (ops/_mkldnn_ops.py, written by scripts/mkldnn_op_table.py from what
  PyTorch does with MKL-DNN float32 inputs on the op sweep's samples): an op PyTorch refuses raises
  PyTorch's error; one it runs runs on the arrays, its Tensor results made MKL-DNN where PyTorch's
  are, and refuses strided tensors among its arguments where PyTorch's kernel does. An in-place
  method follows its op; a name the table lacks (a Tensor method that is no op) runs as on a strided
  tensor. Plain tensors never come here, so they pay nothing for the layout.
- The methods that read memory are refused as PyTorch refuses them (``view``, indexing, ``numpy``,
  ``tolist``, ``item``, ``data_ptr``), and ``stride()`` is PyTorch's placeholder, ``(1, 0, ...)``.
- retrograd's own code (formulas, gradcheck) reads the array, as PyTorch's C++ reads the buffer:
  its calls are not dispatched.
- Gradients. ``to_dense``'s backward (ToDenseBackward0) makes the gradient MKL-DNN, and
  ``to_mkldnn``'s (ToMkldnnBackward0) makes it dense, as PyTorch's. A leaf's ``.grad`` is read with
  its leaf's layout: where an op's formula gave a strided gradient to an MKL-DNN leaf, ``.grad``
  gives it the leaf's class (sharing the array), as PyTorch's engine would have required it.

Where it differs from PyTorch (tests/test_mkldnn_layout.py pins the ops of the table that differ):
- ``type(x)`` is ``MkldnnTensor`` where PyTorch's is ``torch.Tensor`` (``isinstance(x, retrograd.Tensor)``
  holds, and ``x.layout`` says which it is);
- the table has one verdict per op, not per overload: PyTorch's ``sum()`` and ``sum(dim)`` refuse an
  MKL-DNN tensor with two messages, retrograd's with the one its samples met; a Python number among
  the arguments is taken where some of PyTorch's kernels refuse it (``x + 1``, not ``x * 2``);
- a function composed of other public ops (``nn.functional.conv2d``, ``kron``, ``diff``...) reaches the
  table under the names of those ops, where PyTorch's is an op of its own;
- the ``*_like`` factories and ``copy_`` into a strided tensor take an MKL-DNN argument, which
  PyTorch's refuse; a hook on an MKL-DNN tensor that is not a leaf may see a strided gradient.
"""
from __future__ import annotations

from .. import _dtype
from .._creation import _mkldnn, contiguous_format
from .._overrides import DisableTorchFunctionSubclass
from .._tensor import Tensor
from ._call import call_op
from ._declarations import defop, tensor_method
from ._mkldnn_ops import MKLDNN_OPS

__all__ = ["MkldnnTensor", "to_mkldnn", "to_dense"]

# The dtypes an MKL-DNN tensor may have (PyTorch's dense_to_mkldnn), by name: bfloat16's NumPy dtype is made
# only once a bfloat16 tensor is (Note [bfloat16 arrays] in _dtype.py).
_MKLDNN_DTYPES = frozenset({"float32", "bfloat16", "float16", "uint8", "int8"})
_NO_KERNEL_HINT = (" retrograd's MKL-DNN layout runs the ops that PyTorch runs on MKL-DNN tensors; call to_dense() "
                   "first.")


def _copy_as(xp, input, dtype=None):
    return xp.array(input, dtype=input.dtype if dtype is None else dtype.np, copy=True)


_to_mkldnn = defop("to_mkldnn", _copy_as, public=False, wide=False,
                   input=lambda grad, input: grad.to_dense(input.dtype))
_to_dense = defop("to_dense", _copy_as, public=False, wide=False,
                  input=lambda grad, input: grad.to_mkldnn(input.dtype))


_ERRORS = {"RuntimeError": RuntimeError, "TypeError": TypeError, "ValueError": ValueError, "IndexError": IndexError,
           "NotImplementedError": NotImplementedError}


def _as_mkldnn(t):
    """``t``, made an MKL-DNN tensor in place: a Tensor that an op has just made, whose array it owns. Another
    class of tensor (vmap's batched tensors) stays as it is: its per-sample results are stacked strided."""
    if type(t) is Tensor:
        t.__class__ = MkldnnTensor
    return t


def _no_kernel(name):
    return NotImplementedError(f"Could not run '{name}' with arguments from the 'MkldnnCPU' backend.{_NO_KERNEL_HINT}")


@tensor_method
def to_mkldnn(self, dtype=None):
    """A copy of this (strided, CPU) tensor in the MKL-DNN layout, of ``dtype`` (default: its own).

    Raises:
        RuntimeError: a dtype other than float32, bfloat16, float16, uint8 and int8 (PyTorch's words).
        NotImplementedError: an MKL-DNN tensor (PyTorch has no MKL-DNN kernel for it).
    """
    if self.is_mkldnn:
        raise _no_kernel("aten::to_mkldnn")
    if self.dtype.name not in _MKLDNN_DTYPES:
        raise RuntimeError("dense_to_mkldnn expects float, bfloat16, half, uint8, int8 tensor input")
    if dtype is not None and dtype.name not in _MKLDNN_DTYPES:
        raise RuntimeError("cpu tensor only can be converted to be a float, bfloat16, half, uint8, int8 mkldnn tensor")
    if self._data.ndim == 0:  # oneDNN has no 0-d memory
        raise RuntimeError("could not create a primitive descriptor for the reorder primitive.")
    return _as_mkldnn(call_op(_to_mkldnn.op, (self, dtype)))


@tensor_method
def to_dense(self, dtype=None, *, masked_grad=None):
    """This tensor in the strided layout: itself where it is strided (cast to ``dtype`` if given), a copy of an
    MKL-DNN tensor. ``masked_grad`` is for sparse tensors in PyTorch; it changes nothing here."""
    if not self.is_mkldnn:
        return self if dtype is None or dtype is self.dtype else self.to(dtype)
    if dtype is not None and dtype.name not in _MKLDNN_DTYPES:  # PyTorch's assertion, with its words
        raise RuntimeError(f"Unsupported dtype for ideep public tensor: {_dtype.scalar_type_name(dtype)}")
    return call_op(_to_dense.op, (self, dtype))


class MkldnnTensor(Tensor):
    """A tensor in the MKL-DNN layout (``layout == retrograd._mkldnn``). See Note [The MKL-DNN layout]."""

    __slots__ = ()
    is_mkldnn = True

    @property
    def layout(self):
        return _mkldnn

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        verdict = MKLDNN_OPS.get(name)
        if verdict is None and name.endswith("_"):  # an in-place method: as its op
            verdict = MKLDNN_OPS.get(name[:-1])
        if verdict is not None and verdict[0] != "ok":
            kind, message = verdict
            if message.startswith("Could not run"):
                message += _NO_KERNEL_HINT
            raise _ERRORS.get(kind, RuntimeError)(message)
        if verdict is not None and len(verdict) == 3 and _any_strided(args, kwargs):
            kind, message = verdict[2]  # PyTorch's MKL-DNN kernels take MKL-DNN tensors only
            raise _ERRORS.get(kind, RuntimeError)(message)
        with DisableTorchFunctionSubclass():
            ret = func(*args, **(kwargs or {}))
        if verdict is not None and verdict[1] == "mkldnn":
            ret = _results_as_mkldnn(ret, args, kwargs)
        return ret

    # -- what reads memory, refused as PyTorch refuses it --------------------------------------------
    def stride(self, dim=None):
        """PyTorch's placeholder strides of an MKL-DNN tensor: ``(1, 0, ...)``."""
        strides = (1,) + (0,) * (self._data.ndim - 1) if self._data.ndim else ()
        return strides if dim is None else strides[dim]

    def storage_offset(self) -> int:
        return 0

    def is_contiguous(self, memory_format=None) -> bool:
        return memory_format is None or memory_format is contiguous_format

    def view(self, *shape):
        raise RuntimeError("Currently Mkldnn tensor does not support view. Change to use reshape instead")

    def view_as(self, other):
        raise RuntimeError("Currently Mkldnn tensor does not support view. Change to use reshape instead")

    def as_subclass(self, cls):
        raise NotImplementedError("Cannot access storage of OpaqueTensorImpl")

    def __getitem__(self, index):
        raise _no_kernel("aten::as_strided")

    def __setitem__(self, index, value):
        raise _no_kernel("aten::as_strided")

    def __iter__(self):
        raise _no_kernel("aten::as_strided")

    def item(self):
        raise _no_kernel("aten::_local_scalar_dense")

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert Mkldnn layout tensor to numpy. Use Tensor.to_dense() first.")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("can't convert Mkldnn layout tensor to numpy. Use Tensor.to_dense() first.")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise NotImplementedError("Cannot access storage of OpaqueTensorImpl")

    def copy_(self, src, non_blocking=False):
        if not src.is_mkldnn:  # PyTorch's words, which name the types as it does
            raise RuntimeError(MKLDNN_OPS["copy"][2][1])
        return Tensor.copy_(self, src, non_blocking)

    # -- what keeps the layout ------------------------------------------------------------------------------
    @property
    def data(self):
        return _as_mkldnn(Tensor.data.fget(self))

    @property
    def grad(self):
        """The leaf's gradient, in its layout (See Note [The MKL-DNN layout])."""
        grad = Tensor.grad.fget(self)
        if grad is not None and type(grad) is Tensor:
            grad = self._grad = grad._retyped(MkldnnTensor)
        return grad

    @grad.setter
    def grad(self, value):
        Tensor.grad.fset(self, value)

    @grad.deleter
    def grad(self):
        Tensor.grad.fdel(self)


def _any_strided(args, kwargs) -> bool:
    """Whether a strided Tensor is among the arguments (in a list of them too)."""
    for a in (*args, *(kwargs or {}).values()):
        if type(a) in (list, tuple):
            if _any_strided(a, None):
                return True
        elif isinstance(a, Tensor) and not a.is_mkldnn:
            return True
    return False


def _results_as_mkldnn(ret, args, kwargs):
    """``ret`` with each Tensor that the op made (not one of its arguments) made MKL-DNN."""
    given = {id(a) for a in args} | {id(v) for v in (kwargs or {}).values()}
    if type(ret) is Tensor and id(ret) not in given:
        return _as_mkldnn(ret)
    if isinstance(ret, (tuple, list)):
        items = [_as_mkldnn(r) if type(r) is Tensor and id(r) not in given else r for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret
