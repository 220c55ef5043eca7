"""SavedTensor: a tensor a node keeps for its backward (PyTorch's ``SavedVariable``)."""
from __future__ import annotations

import weakref

from .._dtype import tensor_type_name
from .._tensor import Tensor, VersionCounter
from .accumulate_grad import AccumulateGrad
from .anomaly_mode import _Anomaly
from .graph import _saved_hooks_state, node_name
from .variable import grad_accumulator

__all__ = ["SavedTensor", "SECOND_TIME"]


SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward.")


class SavedTensor:
    """A tensor saved for backward; unpacking checks that it was not modified in place since.

    It keeps the array, the version it had, and how to reconnect it to the graph: the leaf's
    ``AccumulateGrad``, or the producing node for a non-leaf. A node's own output is saved
    without a reference to the node (the node passes itself to ``unpack``), so no reference
    cycle is formed and memory is freed by reference counting alone.

    Note [What saved-tensor hooks see]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    The pack hook receives a tensor that requires grad as an alias outside the graph (same
    array and version counter), so that what the hook keeps cannot hold the graph that holds
    the hook's result, a reference cycle. A tensor that does not require grad has no graph to
    hold, and the hook receives the tensor itself, as in PyTorch. Unpacking returns the unpack
    hook's tensor itself where there is nothing to connect (neither the saved tensor nor the
    hook's result requires grad, and it is not the node's own output); otherwise a tensor on its
    array, linked to the graph. Non-reentrant checkpointing relies on both to give a recomputed
    segment the very tensors that did not require grad in forward.
    """

    __slots__ = ("data", "version_counter", "saved_version", "edge_node", "output_nr", "is_output",
                 "is_leaf", "requires_grad", "device", "shape", "dtype", "packed", "unpack_hook",
                 "released")

    def __init__(self, tensor, is_output: bool = False, copy: bool = False):
        if tensor.is_inference():  # See Note [Inference tensors] in grad_mode.py
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                "in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor "
                "and use it in autograd, or use `retrograd.no_grad()` instead of `retrograd.inference_mode()`.")
        self.is_output = is_output
        self.output_nr = tensor._output_nr
        self.requires_grad = requires_grad = tensor._requires_grad
        self.device = tensor._device
        self.released = False
        grad_fn = tensor._grad_fn
        self.is_leaf = grad_fn is None
        if is_output or not requires_grad:
            self.edge_node = None
        elif grad_fn is not None:
            self.edge_node = grad_fn
        else:
            self.edge_node = grad_accumulator(tensor)
        hooks = _saved_hooks_state.hooks
        if hooks and _saved_hooks_state.disabled_msg is None:  # See Note [What saved-tensor hooks see]
            pack, self.unpack_hook = hooks[-1]
            self.packed = pack(Tensor._alias_of(tensor) if requires_grad else tensor)
            self.data = self.version_counter = None
            self.saved_version = 0
            self.shape, self.dtype = tensor._data.shape, tensor._data.dtype
            return
        self.unpack_hook = self.packed = None
        if copy:  # the tensor is about to be overwritten in place: save its current value
            self.data = tensor._data.copy()
            self.version_counter = VersionCounter()
        else:
            self.data = tensor._data
            self.version_counter = tensor._version_counter
        self.saved_version = self.version_counter.version

    def release(self) -> None:
        self.data = self.packed = None
        self.released = True

    def unpack(self, owner=None):
        """Returns the saved value as a Tensor connected to its graph; ``owner`` is the node saving it."""
        if self.released:
            raise RuntimeError(SECOND_TIME)
        if self.unpack_hook is not None:
            value = self.unpack_hook(self.packed)
            if not isinstance(value, Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                                f"type {type(value).__name__}")
            if not self.requires_grad and not self.is_output and not value._requires_grad:
                return value  # nothing to connect: the hook's tensor itself (Note [What saved-tensor hooks see])
            data = value._data
            version_counter = VersionCounter()
        else:
            version = self.version_counter.version
            if version != self.saved_version:
                self._raise_modified(version, owner)
            data = self.data
            version_counter = self.version_counter
        node = owner if self.is_output else self.edge_node
        return _reconnected(data, self.device, version_counter, node, self.output_nr,
                            self.requires_grad and node is not None)

    def _raise_modified(self, version, owner):
        where = ""
        if self.is_output and owner is not None:
            where = f", which is output {self.output_nr} of {node_name(owner)},"
        elif not self.is_leaf and self.edge_node is not None:
            where = f", which is output {self.output_nr} of {node_name(self.edge_node)},"
        shape = list(self.data.shape)
        hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                "The variable in question was changed in there or anywhere later. Good luck!"
                if _Anomaly.enabled else
                "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                "with torch.autograd.set_detect_anomaly(True).")
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{tensor_type_name(self.data.dtype)} {shape}]{where} is at version {version}; expected version "
            f"{self.saved_version} instead. {hint}")


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
        t._grad_fn = node
        t._output_nr = output_nr
        t._requires_grad = True
    return t
