"""Copies and casts: clone, to (dtype, device and memory format), contiguous, sum_to_size, and the copy and fill
behind copy_, fill_ and zero_."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._creation import (check_memory_format, contiguous_format, format_strides, is_format_contiguous,
                         preserve_format, preserved_strides, relaid, suggest_memory_format)
from .._device import device as _device_cls
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd import graph as _graph
from ..backends import get_backend
from ._call import interposition
from ._declarations import defop, passthrough, tensor_method
from ._rows import fast_rows, lead_sum
from .shape import shape_arg


def _layout_strides(input, memory_format):
    """The strides of a copy of the array ``input`` in ``memory_format`` (None: row-major). See Note [Memory formats]
    in _creation.py."""
    if memory_format is None or memory_format is preserve_format:
        if input.flags.c_contiguous:
            return None
        itemsize = input.itemsize
        return preserved_strides(input.shape, tuple(s // itemsize for s in input.strides))
    if memory_format is contiguous_format:
        return None
    return format_strides(input.shape, check_memory_format(memory_format, "clone"))


def _clone(xp, input, *, memory_format=preserve_format):
    strides = _layout_strides(input, memory_format)
    if strides is None:
        return input.copy()
    return relaid(input, xp, strides) if input.size else input.copy()


clone = defop("clone", _clone, method=True, input=passthrough)


def _to_copy(xp, input, dtype=None, device=None, memory_format=None):
    if memory_format is not None:  # a format other than the input's own (to() checked that)
        strides = _layout_strides(input, memory_format)
        input = input.copy() if strides is None else relaid(input, xp, strides)
    out = input
    if device is not None:
        src = get_backend("cpu" if xp is np else "cuda")
        host = src.to_numpy(out) if xp is not np else out
        out = get_backend(device.type).from_numpy(host)
        if out is input:
            out = out.copy()
    if dtype is not None:
        out = out.astype(dtype.np)
    return out


_to_copy_op = defop("_to_copy", _to_copy, public=False, node_name="ToCopy", device_param="device",
                    input=lambda grad, input_dtype, input_device: grad.to(input_device, input_dtype))


@tensor_method
def to(self, *args, **kwargs):
    """Returns this tensor with another dtype and/or device (itself when nothing changes).

    ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)`` (other's dtype and device), each with
    ``memory_format=`` (default ``preserve_format``; a copy only where the tensor's own suggested format differs:
    Note [Memory formats] in _creation.py).

    Example::
        >>> import retrograd as rg
        >>> rg.zeros(2, 3, 4, 5).to(memory_format=rg.channels_last).stride()
        (60, 1, 15, 3)
    """
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    memory_format = kwargs.pop("memory_format", None)
    if memory_format is None:
        memory_format = preserve_format
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device_cls)):
            device = a
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    device = None if device is None else _device_cls(device)
    if device is not None and device.type == "cuda":
        get_backend("cuda")
    if device is self._device:
        device = None
    if dtype is self.dtype:
        dtype = None
    if memory_format is not preserve_format:
        check_memory_format(memory_format, "to")
        format_strides(self._data.shape, memory_format)  # a format of another rank: PyTorch's error
        if suggest_memory_format(self._data.shape, self.stride()) is memory_format:
            memory_format = preserve_format
    if dtype is None and device is None and memory_format is preserve_format:
        return clone(self) if copy else self
    if memory_format is preserve_format:
        return _to_copy_op(self, dtype, device)
    return _to_copy_op(self, dtype, device, memory_format)


@tensor_method
def contiguous(self, *, memory_format=contiguous_format):
    """Returns this tensor if it is contiguous in ``memory_format``, else a copy that is (CloneBackward0).

    Raises:
        RuntimeError: ``preserve_format`` for a tensor that is not contiguous, or a channels_last format for a
            tensor of another rank (PyTorch's errors).

    Example::
        >>> import retrograd as rg
        >>> x = rg.zeros(2, 3, 4, 5)
        >>> x.contiguous() is x, x.contiguous(memory_format=rg.channels_last).stride()
        (True, (60, 1, 15, 3))
    """
    if memory_format is contiguous_format:
        return self if self._data.flags.c_contiguous else clone(self, memory_format=contiguous_format)
    check_memory_format(memory_format, "contiguous")
    if _is_contiguous(self, memory_format=memory_format):
        return self
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(self, memory_format=memory_format)


def sum_to_size(input, *size):
    """Sums ``input`` down to ``size``, which must broadcast to its shape (the reverse of expand)."""
    shape = shape_arg(size, "sum_to_size")
    in_shape = input._data.shape
    if in_shape == shape:
        return input
    lead = len(in_shape) - len(shape)
    ok = lead >= 0 and all(s == 1 or s == in_shape[lead + i] for i, s in enumerate(shape))
    if not ok:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(in_shape)}}}.")
    if lead == len(in_shape):  # down to 0-d: a full sum (SumBackward0), as PyTorch's
        return input.sum()
    inner = tuple(lead + i for i, s in enumerate(shape) if s == 1 and in_shape[lead + i] != 1)
    if lead and not (input.requires_grad and grad_mode.recording()):
        # Nothing is recorded (the engine reducing a broadcast gradient): sum each group in its own
        # way, with no view, which AccumulateGrad would have to copy; the values are the same.
        out = input.sum(inner, keepdim=True) if inner else input
        return out.sum(tuple(range(lead)))
    # Recorded, as PyTorch's sum_to: one sum, keeping its dims, over the leading and the broadcast
    # dims, then a view dropping the leading ones.
    dims = tuple(range(lead)) + inner
    out = input.sum(dims, keepdim=True) if dims else input
    return out.view(shape) if lead else out


_FLOATING = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_add_reduce = np.add.reduce


def _sum_broadcast_gradient(grad, shape):
    """``grad.sum_to_size(shape)`` as the engine's validate_outputs calls it, on the array where no one sees
    op calls. See Note [Summing a broadcast gradient] in autograd/graph.py."""
    arr = grad._data
    in_shape = arr.shape
    lead = len(in_shape) - len(shape)
    if (interposition.stack or grad_mode.is_grad_enabled() or type(arr) is not np.ndarray or lead < 0
            or lead == len(in_shape) or arr.dtype not in _FLOATING or grad._requires_grad):
        return grad.sum_to_size(shape)
    # sum_to_size's unrecorded branch: the broadcast dims kept, then the leading ones, each as _sum computes it
    inner = tuple(lead + i for i, s in enumerate(shape) if s == 1 and in_shape[lead + i] != 1)
    if not inner and lead == len(in_shape) - 1 and fast_rows(arr):
        # A bias vector's gradient: every row summed, as one vector-matrix product (Note [Row reductions as
        # products]), as addmm's and layer_norm's formulas sum theirs, so that ``x @ w + b`` gives ``b`` the
        # gradient of ``addmm(b, x, w)``. The terms are _sum's; only the order of the additions differs.
        return Tensor._make(lead_sum(arr), grad._device)
    out = _add_reduce(arr, inner, None, None, True) if inner else arr
    if lead:
        out = _add_reduce(out, tuple(range(lead)), None, None, False)
    return Tensor._make(out, grad._device)


_graph.sum_broadcast_gradient = _sum_broadcast_gradient


def _copy_forward(xp, input, src):
    return xp.broadcast_to(xp.asarray(src, dtype=input.dtype), input.shape).copy()


_copy = defop("copy", _copy_forward, public=False, tensor_args=("input", "src"),
              node_name="torch::autograd::CopyBackwards",  # PyTorch's hand-written node
              input=lambda grad: grad * 0,
              src=lambda grad: grad)


def _fill_forward(xp, input, value):
    return xp.full_like(input, value)


fill = defop("fill", _fill_forward, public=False, inplace=True, tensor_args=("input", "value"),
             node_name="FillBackward2", node_names={"FillBackward3": lambda value: isinstance(value, Tensor)},
             node_edges={"FillBackward2": ("input",)},
             input=lambda grad: grad * 0,
             value=lambda grad: grad.sum())

zero = defop("zero", lambda xp, input: xp.zeros_like(input), public=False, inplace=True,  # Tensor.zero_
             input=lambda grad: grad * 0)

@tensor_method
def type_as(input, other):
    """``input`` cast to the dtype of ``other`` (itself when it has that dtype already).

    Example::
        >>> import retrograd as rg
        >>> rg.tensor([1, 2]).type_as(rg.tensor([0.5]))
        tensor([1., 2.])
    """
    return to(input, other.dtype)


def _is_contiguous(self, *, memory_format=contiguous_format):
    """Whether the elements of this tensor lie in memory in the order of ``memory_format`` without gaps.

    Row-major by default (also for ``preserve_format``, as PyTorch's); a channels_last format asks for that
    order (False for a tensor of another rank). Dims of size 1 are not looked at. See Note [Memory formats] in
    _creation.py.

    Example::
        >>> import retrograd as rg
        >>> x = rg.zeros(2, 3, 4, 5).contiguous(memory_format=rg.channels_last)
        >>> x.is_contiguous(), x.is_contiguous(memory_format=rg.channels_last)
        (False, True)
    """
    if memory_format is contiguous_format or memory_format is preserve_format:
        return bool(self._data.flags.c_contiguous)
    check_memory_format(memory_format, "is_contiguous")
    return is_format_contiguous(self._data.shape, self.stride(), memory_format)


Tensor.is_contiguous = _is_contiguous

# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import LINEAR, defjvp  # noqa: E402

defjvp(LINEAR, "clone", "_to_copy", "copy", "fill", "zero")
