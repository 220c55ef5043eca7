"""Tensor: a backend array plus the autograd metadata that links it into the graph.

This module holds what every tensor is: its array, device, version counter, and its place in
the graph (``grad_fn``/``output_nr`` for results, ``AccumulateGrad`` for leaves), with the
methods that need nothing more. It imports only dtype, device and size; each layer above attaches
the methods that belong to it, once: construction from data and pickling (``_creation.py``),
printing (``_format.py``), ``grad_fn`` and ``register_hook`` (``autograd/variable.py``),
``backward`` (``autograd/_api.py``), and every op's method and operator (their declarations in
``ops/``).
"""
from __future__ import annotations

import threading
import warnings
import weakref

from . import _dtype
from ._device import device as _device_cls, cpu as _cpu
from ._size import Size

__all__ = ["Tensor", "VersionCounter", "InferenceVersionCounter", "INFERENCE_COUNTER"]


class VersionCounter:
    """Counts in-place modifications of an array; shared by a tensor, its views and its detached aliases."""

    __slots__ = ("version",)

    def __init__(self, version: int = 0):
        self.version = version

    def bump(self) -> None:
        """Counts one in-place change of the array."""
        self.version += 1


class InferenceVersionCounter(VersionCounter):
    """The counter of an inference tensor detached outside inference mode: it counts (as PyTorch's), and its
    type marks an inference tensor. See Note [Inference tensors]."""

    __slots__ = ()

    def bump(self) -> None:
        """Counts one in-place change, but in inference mode (as PyTorch's, which skips it there)."""
        if not _inference_now():
            self.version += 1


class _NoVersionCounter(InferenceVersionCounter):
    """What an inference tensor has for a version counter: none; reading it raises PyTorch's error."""

    __slots__ = ()

    @property
    def version(self):
        raise RuntimeError("Inference tensors do not track version counter.")

    @version.setter
    def version(self, value):
        raise RuntimeError("Inference tensors do not track version counter.")

    def bump(self) -> None:
        """Nothing to count in inference mode; outside it, PyTorch's error for an in-place change."""
        if not _inference_now():
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
                "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")


INFERENCE_COUNTER = object.__new__(_NoVersionCounter)  # every inference tensor's _vc. See Note [Inference tensors]
_vc_lock = threading.Lock()  # makes a tensor's version counter once, whichever thread asks first


class _NoModes:
    """``Tensor._modes`` until autograd/grad_mode.py attaches its census: no thread is in inference mode."""

    threads = 0


def _grad_enabled() -> bool:
    """Whether grad mode is on in this thread (on until autograd/grad_mode.py attaches its census)."""
    state = getattr(Tensor._modes, "state", None)
    return state is None or state.grad_enabled


def _inference_now() -> bool:
    """Whether this thread is in inference mode (see Note [Inference tensors] in autograd/grad_mode.py)."""
    modes = Tensor._modes
    return modes.threads != 0 and modes.state.inference


class _torch_function:
    """What the methods written here need of the ``__torch_function__`` protocol, which _overrides.py (above the
    tensor) fills in: how many threads have a TorchFunctionMode active, and ``dispatch_self(func, self)`` (NotImplemented
    where ``self`` does not override the call)."""

    modes = [0]
    dispatch_self = None


_VIEW_ONLY = frozenset({"_view_fn", "_view_version", "_view_creation", "_view_no_grad"})  # see Tensor.__dir__


class Tensor:
    """A multi-dimensional array with autograd metadata, as ``torch.Tensor``.

    Create tensors with ``retrograd.tensor``, ``zeros``, ``randn`` and friends.
    """

    # `_node` and `_hooks` are what PyTorch calls `_grad_fn` and `_backward_hooks`, which are undeletable
    # properties over them (See Note [Undeletable autograd fields] in autograd/variable.py).
    __slots__ = ("_data", "_device", "_requires_grad", "_node", "_output_nr", "_vc",
                 "_base", "_view_fn", "_view_version", "_view_creation", "_grad", "_grad_accumulator",
                 "_hooks", "_retains_grad", "__weakref__", "__dict__")

    __array_priority__ = 1000  # numpy defers `ndarray * Tensor` to Tensor.__rmul__
    # A leaf's post-accumulate-grad hooks (autograd/variable.py), in its __dict__ once it has one:
    # few tensors ever do, so none pays for a slot.
    _post_accumulate_grad_hooks = None
    # A leaf's grad_dtype where it was set (a NumPy dtype, or None for any dtype), in its __dict__: by default
    # (OWN_DTYPE) its gradient has its own dtype. See Note [grad_dtype] in autograd/variable.py.
    _grad_dtype = OWN_DTYPE = "own dtype"
    _modes = _NoModes  # the grad modes' census, attached by autograd/grad_mode.py: see Note [Inference tensors]
    _forget_tangents = None  # drops a tensor's forward-mode tangents, attached by ops/_forward.py

    # -- construction (internal) ------------------------------------------------------------------
    @classmethod
    def _make(cls, data, device=_cpu, requires_grad=False):
        """Wraps a backend array as a new leaf (no copy)."""
        t = object.__new__(cls)
        t._data = data
        t._device = device
        t._requires_grad = requires_grad
        t._node = None
        t._output_nr = 0
        modes = cls._modes  # made in inference mode: an inference tensor (Note [Inference tensors])
        t._vc = INFERENCE_COUNTER if modes.threads and modes.state.inference else None  # else made on first use
        t._base = None
        t._grad = None
        t._grad_accumulator = None
        t._hooks = None
        t._retains_grad = False
        return t

    @classmethod
    def _alias_of(cls, tensor):
        """A tensor sharing ``tensor``'s array and version counter, outside the graph; an inference tensor's is
        one too, with no counter in inference mode and a fresh one outside it (Note [Inference tensors])."""
        t = cls._make(tensor._data, tensor._device)
        if not isinstance(tensor._vc, InferenceVersionCounter):
            t._version_counter = tensor._version_counter
        elif t._vc is None:  # made outside inference mode
            t._vc = InferenceVersionCounter()
        return t

    def __init__(self, *args, **kwargs):
        pass  # Tensor(data) is made by __new__, which _creation.py attaches

    def _retyped(self, cls):
        """A tensor of class ``cls`` sharing this tensor's array, version counter and autograd fields (no alias op:
        what a subclass's constructor makes; ``as_subclass`` is PyTorch's, in ops/shape.py)."""
        t = object.__new__(cls)
        self._version_counter  # noqa: B018 - materialize it, so both objects share one counter
        for name in Tensor.__slots__[:-2]:
            object.__setattr__(t, name, getattr(self, name, None))
        return t

    # -- basic properties -------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        """Returns the shape, or the size of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype._BY_NP[self._data.dtype]

    @property
    def device(self) -> _device_cls:
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind in "fV"  # bfloat16's kind is "V": Note [bfloat16 arrays] in _dtype.py

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __hash__(self):
        return id(self)

    def __dir__(self):
        # As PyTorch's: every name listed can be read. The view fields are set on views only.
        names = super().__dir__()
        return names if self._base is not None else [n for n in names if n not in _VIEW_ONLY]

    # -- autograd metadata ------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor: its own flag, or a view's base's (as in PyTorch).

        A view made where nothing was recorded (under ``no_grad``, or before its base required grad)
        requires grad through its base, with no ``grad_fn``: an op on it records a node whose edge
        to it is dead. See Note [The autograd state of views] in autograd/variable.py.
        """
        if self._requires_grad:
            return True
        base = self._base
        return base is not None and base._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if value and self._data.dtype.kind not in "fV" and self.is_leaf:  # PyTorch's setter has its own words
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self.requires_grad_(value)

    @requires_grad.deleter
    def requires_grad(self):
        raise RuntimeError("requires_grad must be a bool")  # PyTorch's words: deleting sets no bool

    def requires_grad_(self, requires_grad: bool = True):
        """Sets whether autograd records operations on this leaf; returns ``self``.

        Raises:
            RuntimeError: on a non-leaf with ``False``, a non-floating tensor with ``True``, or an
                inference tensor with ``True`` outside inference mode.
        """
        if not self.is_leaf:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        if requires_grad and self._data.dtype.kind not in "fV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and not _inference_now() and self.is_inference():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded operation (their gradients go to ``.grad``)."""
        if self._base is not None:
            return self.grad_fn is None  # a view's history may be regenerated first (autograd/variable.py)
        return self._node is None

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made in inference mode (Note [Inference tensors]).

        Example::
            >>> import retrograd as rg
            >>> with rg.inference_mode():
            ...     x = rg.ones(2)
            >>> x.is_inference(), rg.ones(2).is_inference()
            (True, False)
        """
        return isinstance(self._vc, InferenceVersionCounter)

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (``_base``); an inference tensor's views are not tracked."""
        return self._base is not None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version_counter(self) -> VersionCounter:
        """The counter of in-place modifications, shared with views and detached aliases.

        Created on first use: most intermediate results are never saved, viewed or modified,
        and one object less per op is one object less for the garbage collector to scan.
        """
        vc = self._vc
        if vc is None:
            with _vc_lock:
                vc = self._vc
                if vc is None:
                    vc = self._vc = VersionCounter()
        return vc

    @_version_counter.setter
    def _version_counter(self, counter: VersionCounter) -> None:
        self._vc = counter

    @property
    def _version(self) -> int:
        return self._version_counter.version

    @property
    def grad(self):
        """The accumulated gradient of a leaf (or of a tensor that called ``retain_grad``)."""
        if self._node is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the gradient for a non-leaf "
                "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, "
                "make sure you access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            wanted = self._grad_dtype
            if wanted is Tensor.OWN_DTYPE:
                wanted = self._data.dtype
            if wanted is not None and value._data.dtype != wanted:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dtype.type_meta_name(value._data.dtype)}' to a "
                    f"tensor with grad_dtype '{_dtype.scalar_type_name(wanted)}'. The gradient must have the "
                    "tensor's grad_dtype, its own dtype unless grad_dtype was set (to another dtype, or None for any)")
            if value._device is not self._device:
                theirs, ours = value._device, self._device
                if theirs.type != ours.type:
                    raise RuntimeError(f"attempting to assign a gradient with device type '{theirs.type}' to a tensor "
                                       f"with device type '{ours.type}'. Please ensure that the gradient and the "
                                       "tensor are on the same device")
                raise RuntimeError(f"attempting to assign a gradient located on device with index '{theirs.index}' to "
                                   f"a tensor located on device with index '{ours.index}'. Please ensure that the "
                                   "gradient and the tensor are on the same device")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor "
                                   f"of size '{list(self._data.shape)}'. Please ensure that the gradient and the "
                                   "tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Makes ``.grad`` of this non-leaf tensor be populated by backward (a no-op on leaves).

        The gradient is recorded after every tensor hook has run, whatever the registration order.

        Raises:
            RuntimeError: if the tensor does not require grad.
        """
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.is_leaf or self._retains_grad:
            return
        ref = weakref.ref(self)

        def retain_grad_hook(grad):
            t = ref()
            if t is not None and grad is not None:
                t._grad = grad.clone() if t._grad is None else t._grad + grad
            return grad

        self._node._made_retains_grad_hooks()[self._output_nr] = retain_grad_hook
        self._retains_grad = True

    def detach(self):
        """Returns a tensor sharing this one's data and version counter, outside the graph."""
        if type(self) is not Tensor:  # See Note [Where __torch_function__ is checked]
            result = _torch_function.dispatch_self(Tensor.detach, self)
            if result is not NotImplemented:
                return result
        return Tensor._alias_of(self)

    def detach_(self):
        """Detaches this tensor from the graph in place, making it a leaf; returns ``self``."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead")
        self._node = None
        self._output_nr = 0
        self._requires_grad = False
        if Tensor._forget_tangents is not None:  # forward-mode AD's history goes too, as in PyTorch
            Tensor._forget_tangents(self)
        return self

    @property
    def data(self):
        """This tensor's data as a new tensor outside the graph, with its own version counter (an inference
        tensor's is one too: see ``_alias_of``)."""
        t = Tensor._make(self._data, self._device)
        if isinstance(self._vc, InferenceVersionCounter):
            if t._vc is None:
                t._vc = InferenceVersionCounter()
        else:
            t._vc = None
        return t

    @data.setter
    def data(self, value):
        """Makes this tensor use ``value``'s data (shared), keeping its own autograd fields and version counter.

        A leaf's gradient accumulator is dropped where the dtype or device changes, as in PyTorch.
        """
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and value._data.dtype.kind not in "fV":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        if value._data.dtype != self._data.dtype or value._device is not self._device:
            self._grad_accumulator = None
        self._data = value._data
        self._device = value._device

    @data.deleter
    def data(self):
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    # -- conversion -------------------------------------------------------------------------
    def numpy(self, *, force: bool = False):
        """Returns the data as a NumPy array (shared with the tensor on the CPU).

        Raises:
            RuntimeError: if the tensor requires grad while grad mode is on (use ``detach().numpy()``),
                unless ``force``.
            TypeError: a bfloat16 tensor (NumPy has no bfloat16), as PyTorch's.
        """
        if not force and self.requires_grad and _grad_enabled():
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._data.dtype.kind == "V":  # bfloat16: NumPy has none (Note [bfloat16 arrays] in _dtype.py)
            raise TypeError("Got unsupported ScalarType BFloat16")
        if self._device is not _cpu:
            if not force:
                raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to "
                                "copy the tensor to host memory first.")
            return self._device.backend.to_numpy(self._data)
        return self._data

    def data_ptr(self) -> int:
        """The address of this tensor's first element: a view's is its base's plus its offset, as PyTorch's.

        An empty tensor's is 0. On a GPU it is the device address.

        Example::
            >>> import retrograd as rg
            >>> x = rg.zeros(4)
            >>> x[1:].data_ptr() - x.data_ptr() == x.element_size()
            True
        """
        data = self._data
        if data.size == 0:
            return 0
        interface = getattr(data, "__cuda_array_interface__", None) or data.__array_interface__
        return interface["data"][0]

    def stride(self, dim=None):
        """The step in elements from one index to the next along each dim (of ``dim`` alone, if given).

        They are the array's own strides: an expanded dim's is 0. A new empty tensor's are those of a
        contiguous one (NumPy gives it none). See Note [Strides and storage].

        Example::
            >>> import retrograd as rg
            >>> x = rg.zeros(2, 3)
            >>> x.stride(), x.t().stride(), x.t().stride(0), rg.zeros(3).expand(2, 3).stride()
            ((3, 1), (1, 3), 1, (0, 1))
        """
        data = self._data
        if data.size == 0 and not any(data.strides):  # a new empty array: NumPy gives it no strides
            strides, step = [], 1
            for n in reversed(data.shape):
                strides.append(step)
                step *= max(n, 1)
            strides = tuple(reversed(strides))
        else:
            itemsize = data.itemsize
            strides = tuple(s // itemsize for s in data.strides)
        if dim is None:
            return strides
        if data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return strides[_wrap_dim(dim, data.ndim)]

    def storage_offset(self) -> int:
        """Where this tensor's first element lies in its storage, in elements (a view's from its base's buffer).

        See Note [Strides and storage].

        Example::
            >>> import retrograd as rg
            >>> x = rg.zeros(3, 4)
            >>> x.storage_offset(), x[1:, 2:].storage_offset(), x.t()[1].storage_offset()
            (0, 6, 1)
        """
        data = self._data
        root = storage_array(data)
        return (_address(data) - _address(root)) // data.itemsize

    def _host(self):
        return self._device.backend.to_numpy(self._data)

    def item(self):
        """Returns the value of a one-element tensor as a Python number."""
        if type(self) is not Tensor:  # See Note [Where __torch_function__ is checked]
            result = _torch_function.dispatch_self(Tensor.item, self)
            if result is not NotImplemented:
                return result
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._host().reshape(()).item()

    def tolist(self):
        """Returns the data as a (nested) Python list, or a number for a 0-d tensor."""
        return self._host().tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __array__(self, dtype=None, copy=None):
        if self._data.dtype.kind == "V":  # bfloat16, as numpy()
            raise TypeError("Got unsupported ScalarType BFloat16")
        if self.requires_grad:
            return self.detach().numpy().astype(dtype) if dtype else self.detach().numpy()
        arr = self._host()
        return arr.astype(dtype) if dtype is not None else arr

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as PyTorch: the rows are views that one function returns together

    def __deepcopy__(self, memo):
        t = Tensor._make(self._data.copy(), self._device, self._requires_grad and self._node is None)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    # -- printing (__repr__ and __str__ are _format.py's) ---------------------------------------
    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)


# Note [Strides and storage]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# A tensor's storage is the buffer its array is a view of: the array at the end of its ``.base``
# chain (NumPy points a view of a view at the array that owns the memory), or the array itself
# where it owns its memory. ``stride()`` is the array's strides in elements, and
# ``storage_offset()`` its first element's distance from the storage's first, so that a view's
# are PyTorch's: a slice, select or transpose of a tensor keeps its storage, an expanded dim has
# stride 0, and ``as_strided`` (ops/shape.py) reads any geometry of that storage. A dim of size 1
# has whatever stride the op that made it left (nothing reads it); the view ops give PyTorch's where
# NumPy's would differ, except that indexing with None gives the new dim stride 0.
def storage_array(data):
    """The array that owns the memory ``data`` views (``data`` itself where it owns its memory)."""
    root = data
    base = data.base
    while base is not None and hasattr(base, "strides"):  # an array, not a raw buffer (bytes, mmap)
        root = base
        base = root.base
    return root


def _address(data) -> int:
    """The address of the first element of ``data`` (a NumPy or CuPy array)."""
    interface = getattr(data, "__cuda_array_interface__", None) or data.__array_interface__
    return interface["data"][0]


def _wrap_dim(dim, ndim):
    """Returns ``dim`` as a non-negative index into ``ndim`` dimensions, with PyTorch's IndexError."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n
