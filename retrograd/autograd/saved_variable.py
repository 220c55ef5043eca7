"""SavedTensor: a tensor a node keeps for its backward (PyTorch's ``SavedVariable``).

Note [Saved tensors and their hooks]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A SavedTensor keeps the array, the version it had, and how to reconnect it to the graph: the
leaf's ``AccumulateGrad``, or the producing node for a non-leaf. A node's own output is saved
without a reference to the node (the node passes itself to ``unpack``), so no reference cycle
is formed and memory is freed by reference counting alone.

Saved-tensor hooks (``autograd.graph.saved_tensors_hooks`` when it saves, or
``register_hooks`` later) replace the array by what ``pack_hook`` returns; ``unpack_hook`` gives
the tensor back. ``pack_hook`` runs in no-grad mode and must not modify its input in place;
with hooks, nothing checks for in-place modification afterwards (the hooks own the value).

A saved input also keeps a weak reference to the tensor itself (``original``). While it lives
and still holds the saved array, unpacking gives it back, as PyTorch gives back the input it
saved (``y.grad_fn._saved_self is x``). A non-leaf detached in place (``detach_()``) after it
was saved has lost its history, and the backward of a built-in node, which unpacks its inputs
without naming itself, raises then as PyTorch does; ``grad_fn._saved_<name>`` and
``ctx.saved_tensors`` name the node and give the tensor without history. ``SavedTensor(None)``
is an undefined one (an optional tensor that was None, or one not saved): it unpacks to None.
"""
from __future__ import annotations

import weakref

from .._dtype import tensor_type_name
from .._overrides import wants_dispatch
from .._tensor import Tensor
from . import grad_mode
from .accumulate_grad import AccumulateGrad
from .anomaly_mode import _Anomaly
from .graph import _saved_hooks_state, node_name
from .variable import _BACKWARD_SUFFIX, grad_accumulator

__all__ = ["SavedTensor", "SECOND_TIME", "DETACHED_IN_PLACE", "PACK_MODIFIED_INPUT"]


SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward.")
DETACHED_IN_PLACE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not supported, "
    "please use out-of-place `.detach()` instead")
PACK_MODIFIED_INPUT = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
    "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you "
    "need to perform in-place operations on the input to a pack hook.")
_REGISTER_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph "
    "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved variables after calling backward.")
_grad_state = grad_mode.state


_MADE_BY_AUTOGRAD = object()


class SavedTensor:
    """A tensor saved for backward (``torch._C._autograd.SavedTensor``). See Note [Saved tensors and their hooks].

    Unpacking checks that the tensor was not modified in place since it was saved.

    Note [What saved-tensor hooks see]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    The pack hook receives the saved tensor itself, as in PyTorch (a hook that keeps it makes a
    saved output hold its own graph: a cycle of the user's making, which the collector frees).
    Unpacking returns the unpack hook's tensor itself where there is nothing to connect (neither
    the saved tensor nor the hook's result requires grad, and it is not the node's own output);
    otherwise a tensor on its array, linked to the graph. Non-reentrant checkpointing relies on
    this to give a recomputed segment the very tensors that did not require grad in forward.
    """

    __slots__ = ("array", "version_counter", "saved_version", "edge_node", "output_nr", "is_output",
                 "is_leaf", "requires_grad", "device", "shape", "dtype", "packed", "unpack_hook",
                 "released", "original")

    def __init__(self, tensor=_MADE_BY_AUTOGRAD, is_output: bool = False, copy: bool = False):
        if tensor is _MADE_BY_AUTOGRAD:  # PyTorch's are made by autograd only (retrograd's give the tensor)
            raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")
        if tensor is not None and tensor.is_inference():  # See Note [Inference tensors] in grad_mode.py
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                "in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor "
                "and use it in autograd, or use `retrograd.no_grad()` instead of `retrograd.inference_mode()`.")
        self.is_output = is_output
        self.released = False
        self.unpack_hook = self.packed = self.original = None
        if tensor is None:  # undefined: unpacks to None
            self.array = self.version_counter = self.edge_node = self.device = self.shape = self.dtype = None
            self.output_nr = self.saved_version = 0
            self.is_leaf, self.requires_grad = True, False
            return
        self.output_nr = tensor._output_nr
        self.requires_grad = requires_grad = tensor._requires_grad
        self.device = tensor._device
        grad_fn = tensor._node
        self.is_leaf = grad_fn is None
        if is_output or not requires_grad:
            self.edge_node = None
        elif grad_fn is not None:
            self.edge_node = grad_fn
        else:
            self.edge_node = grad_accumulator(tensor)
        if not is_output and not copy:
            self.original = weakref.ref(tensor)
        if copy:  # the tensor is about to be overwritten in place: save its current value
            tensor = Tensor._make(tensor._data.copy(), tensor._device)
        hooks = _saved_hooks_state.hooks
        if hooks and _saved_hooks_state.disabled_msg is None:  # See Note [What saved-tensor hooks see]
            self.shape, self.dtype = tensor._data.shape, tensor._data.dtype
            self.array = self.version_counter = None
            self.saved_version = 0
            self._pack(tensor, *hooks[-1])
            return
        self.array = tensor._data
        self.version_counter = tensor._version_counter
        self.saved_version = self.version_counter.version

    def _pack(self, tensor, pack_hook, unpack_hook):
        """Keeps ``pack_hook(tensor)``, run without grad, in place of the array; raises if it modified ``tensor``."""
        counter = tensor._version_counter
        version = counter.version
        enabled = _grad_state.grad_enabled
        _grad_state.grad_enabled = False
        try:
            packed = pack_hook(tensor)
        finally:
            _grad_state.grad_enabled = enabled
        if counter.version != version:
            raise RuntimeError(PACK_MODIFIED_INPUT)
        self.packed, self.unpack_hook = packed, unpack_hook
        self.original = None  # with hooks, the history is edge_node, kept now (a later detach_() is harmless)

    def register_hooks(self, *hooks):
        """Packs the saved value with ``pack_hook`` now; ``unpack_hook`` gives it back when it is used.

        Args:
            pack_hook (callable): ``pack_hook(tensor) -> Any``, given the saved value outside the graph.
            unpack_hook (callable): ``unpack_hook(packed) -> Tensor``.

        Raises:
            TypeError: if the arguments are not two callables.
            RuntimeError: if the tensor was freed, already has hooks, is None, or if ``pack_hook``
                modifies its input in place.

        Example::
            >>> import retrograd as rg
            >>> x = rg.ones(2, requires_grad=True)
            >>> y = x.exp()
            >>> y.grad_fn._raw_saved_result.register_hooks(lambda t: t * 2, lambda p: p / 2)
            >>> y.grad_fn._saved_result
            tensor([2.7183, 2.7183], grad_fn=<ExpBackward0>)
        """
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: SavedTensor, arg0: Callable, arg1: Callable) -> None")
        if self.released:
            raise RuntimeError(_REGISTER_FREED)
        if self.unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        if self.device is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        value = Tensor._make(self.array, self.device)
        value._version_counter = self.version_counter
        self._pack(value, *hooks)
        self.shape, self.dtype = self.array.shape, self.array.dtype
        self.array = self.version_counter = None

    @property
    def data(self):
        """What is saved, as PyTorch's ``SavedTensor.data``: the pack hook's result as it is, else the
        saved input itself, else (a saved output) a tensor without history on the saved values."""
        if self.unpack_hook is not None:
            return self.packed
        original = self.original() if self.original is not None else None
        if original is not None and original._data is self.array:
            return original
        return None if self.array is None else Tensor._make(self.array, self.device)

    def release(self) -> None:
        self.array = self.packed = None
        self.released = True

    def unpack(self, saved_for=None, keep_subclass=False):
        """Returns the saved value as a Tensor connected to its graph (None if undefined).

        ``saved_for`` is the node that saved it: where a saved output is reconnected (it is not
        kept, see Note [Saved tensors and their hooks]); without it, as in PyTorch, unpacking an
        output raises, and so does unpacking an input that was detached in place since. A saved input
        whose class overrides ``__torch_function__`` comes back as a plain Tensor of it unless
        ``keep_subclass`` (a custom Function's ``saved_tensors``): a built-in formula runs as PyTorch's
        C++ one, which no subclass sees (Note [Where __torch_function__ is checked]).
        """
        if self.released:
            raise RuntimeError(SECOND_TIME)
        if self.device is None:
            return None
        node = self._graph_node(saved_for)
        if self.unpack_hook is not None:
            hooks = _saved_hooks_state.hooks
            try:
                value = self.unpack_hook(self.packed)
            finally:  # what the hook does to the hooks in force ends with it, as with PyTorch's per-node state
                _saved_hooks_state.hooks = hooks
            if not isinstance(value, Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                                f"type {type(value).__name__}")
            if node is None and not self.requires_grad and not value._requires_grad:
                return value
            return _reconnected(value._data, value._device, value._version_counter, node, self.output_nr,
                                self.requires_grad and node is not None)
        version = self.version_counter.version
        if version != self.saved_version:
            self._raise_modified(version, saved_for)
        original = self.original() if self.original is not None else None
        if original is not None and original._data is self.array and (
                type(original) is Tensor or keep_subclass or not wants_dispatch(original)):
            return original  # the input itself, as PyTorch gives it back
        return _reconnected(self.array, self.device, self.version_counter, node, self.output_nr,
                            self.requires_grad and node is not None)

    def _graph_node(self, saved_for):
        """Where the unpacked tensor joins the graph: a node, an AccumulateGrad, or None."""
        if self.is_output:
            if saved_for is None and not self.is_leaf:
                raise RuntimeError(DETACHED_IN_PLACE)
            return saved_for
        original = self.original
        if original is not None and not self.is_leaf:
            tensor = original()
            if tensor is not None and tensor._node is None:  # detached in place since it was saved
                if saved_for is None:
                    raise RuntimeError(DETACHED_IN_PLACE)
                return None
        return self.edge_node

    def _raise_modified(self, version, owner):
        """PyTorch's error for a saved tensor modified in place: it names the tensor's history as it is now.

        That is the node that saved an output, else the saved input's grad_fn as it is now (the
        in-place op's node), named as ``_short_name`` does, and the tensor's shape as it is now.
        """
        node = None
        original = self.original() if self.original is not None else None
        if self.is_output:
            node = owner
        elif original is not None:  # a leaf when saved may have a history now
            node = original._node
        elif not self.is_leaf:
            node = self.edge_node
        where = "" if node is None else f", which is output {self.output_nr} of {_short_name(node)},"
        shape = list((self.array if original is None else original._data).shape)  # as the tensor is now
        hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                "The variable in question was changed in there or anywhere later. Good luck!"
                if _Anomaly.enabled else
                "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                "with torch.autograd.set_detect_anomaly(True).")
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{tensor_type_name(self.array.dtype)} {shape}]{where} is at version {version}; expected version "
            f"{self.saved_version} instead. {hint}")


def _short_name(node) -> str:
    """A node's name as PyTorch's saved-tensor error prints it: ``MulBackward0`` as ``Mul``, ``TBackward1`` as ``T1``."""
    name = node_name(node)
    m = _BACKWARD_SUFFIX.search(name)
    if m is None:
        return name
    number = m.group()[len("Backward"):]
    return name[:m.start()] + ("" if number == "0" else number)


def _reconnected(data, device, version_counter, node, output_nr, requires_grad):
    """A tensor on ``data`` reconnected to the graph at ``node`` (an AccumulateGrad or a producing node)."""
    t = Tensor._make(data, device)
    t._version_counter = version_counter
    if node is None:
        return t
    if isinstance(node, AccumulateGrad):
        t._requires_grad = requires_grad
        t._grad_accumulator = weakref.ref(node)
    else:
        t._node = node
        t._output_nr = output_nr
        t._requires_grad = True
    return t
