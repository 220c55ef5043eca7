"""The autograd graph: nodes, edges, leaf accumulators and saved tensors.

A ``Node`` is the backward of one forward operation. It maps the gradients of the forward
outputs (its inputs) to the gradients of the forward inputs (its outputs), and sends each
output along ``next_edges[i]`` to ``Edge(node, input_nr)``: input slot ``input_nr`` of the
node that produced that forward input. Leaves that require grad end in an ``AccumulateGrad``.
"""
from __future__ import annotations

import itertools
import sys
import threading
import weakref
from collections import namedtuple

from . import grad_mode
from .anomaly_mode import _Anomaly

__all__ = ["Node", "Edge", "AccumulateGrad", "GraphRoot", "SavedTensor", "RemovableHandle",
           "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

Edge = namedtuple("Edge", ["node", "input_nr"])
Edge.__doc__ = "Where a gradient goes: input slot ``input_nr`` of ``node``."
make_edge = tuple.__new__  # make_edge(Edge, (node, nr)): an Edge without the Python-level __new__
INPUT_METADATA_FIELDS = ("shape", "dtype", "device")  # See Note [Input metadata]

# Sequence numbers order backward work: a node made later runs earlier among ready nodes.
# itertools.count's __next__ is atomic under the GIL, so this is thread-safe and monotonic.
_next_sequence_nr = itertools.count().__next__
MAX_SEQUENCE_NR = sys.maxsize  # AccumulateGrad: run as soon as it is ready, to free gradients early


def tune_collector() -> bool:
    """Applies Note [Collector thresholds]; returns whether it changed them.

    Note [Collector thresholds]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~
    Every recorded op leaves a few GC-tracked objects in the graph (the node, its edges), and
    a forward pass allocates many short-lived ones. With CPython's default thresholds
    (700, 10, 10) a full collection runs every 100 young collections, and each one rescans
    every tracked object of the process, the growing graph and whatever the program imported:
    on a 42,000-node chain that was two thirds of the forward time. Full collections every
    1,000 young collections instead free exactly the same garbage, only later. retrograd makes
    that change at import, if the thresholds are still CPython's defaults; set
    ``RETROGRAD_GC_TUNING=0`` to keep them.
    """
    import gc
    import os
    if os.environ.get("RETROGRAD_GC_TUNING", "1") == "0" or gc.get_threshold() != (700, 10, 10):
        return False
    gc.set_threshold(700, 10, 100)
    return True


tune_collector()

_T = None  # the module retrograd._tensor, which imports this one: bound on first use


def _tensor_module():
    global _T
    from .. import _tensor
    _T = _tensor
    return _T


def node_name(node) -> str:
    """The node's name from its class, even if a custom Function's ctx set an attribute ``name``."""
    return type(node).name(node)


class RemovableHandle:
    """Handle returned by the ``register_*hook`` methods; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks_ref", "id")
    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks_ref = weakref.ref(hooks) if hasattr(hooks, "__weakref__") else (lambda: hooks)
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """An ordered ``id -> hook`` dict that handles can refer to weakly."""
    __slots__ = ("__weakref__",)


def add_hook(hooks: _HookDict, fn) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


# Note [Deleting deep graphs]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A chain of a million nodes is freed by reference counting alone: the last tensor drops its
# grad_fn, whose next_edges tuple drops the node before it, and so on. Every link is a tuple or
# an instance of a Python class, and CPython frees both through its "trashcan", which defers
# deallocation past a fixed nesting depth and unwinds it iteratively, so deleting the chain
# neither recurses deeply in C nor hits the recursion limit, and no iterative unlinking is needed.
# Keep it that way: no link in the chain through a C extension type that lacks the trashcan
# (tests/autograd/test_memory.py deletes a 1e6-node chain).


class Node:
    """The backward function of one forward operation.

    Note [Input metadata]
    ~~~~~~~~~~~~~~~~~~~~~
    ``input_metadata[i]`` is ``(shape, numpy dtype, device)`` of forward output ``i``: what a
    gradient arriving at input ``i`` must match (see ``validate_outputs`` in engine.py). The
    device is None for the CPU. Shapes, NumPy dtypes and None are atomic, so these tuples are
    dropped from the garbage collector's tracking after its first pass, and a long graph does
    not make every full collection slower; a device object would keep them tracked.

    The fields are ``INPUT_METADATA_FIELDS``.

    ``apply(grads)`` takes one gradient (a Tensor or None) per forward output and returns one
    per forward input, in ``next_edges`` order. Subclasses set ``__slots__`` and ``apply``.
    """

    __slots__ = ("next_edges", "sequence_nr", "input_metadata", "_pre_hooks", "_post_hooks",
                 "_tensor_pre_hooks", "_retains_grad_hooks", "_metadata", "__weakref__")

    def __init__(self, next_edges=(), input_metadata=(), sequence_nr=None):
        self.next_edges = tuple(next_edges)
        self.input_metadata = tuple(input_metadata)
        self.sequence_nr = _next_sequence_nr() if sequence_nr is None else sequence_nr
        self._pre_hooks = self._post_hooks = self._tensor_pre_hooks = self._retains_grad_hooks = None
        self._metadata = None
        if _Anomaly.enabled:
            from .anomaly_mode import record_forward_trace
            record_forward_trace(self)

    def apply(self, grads):
        raise NotImplementedError(f"{node_name(self)}.apply is not implemented")

    def __call__(self, *grads):
        if len(grads) != len(self.input_metadata):
            raise TypeError(f"expected {len(self.input_metadata)} arguments, got {len(grads)} instead")
        return self.apply(list(grads))

    # -- introspection ----------------------------------------------------------------------
    def name(self) -> str:
        """The node's class name, e.g. ``MulBackward0``."""
        return type(self).__name__

    @property
    def next_functions(self):
        """``((node, input_nr), ...)`` per forward input; ``(None, 0)`` where no gradient is needed."""
        return tuple((None, 0) if e is None else (e[0], e[1]) for e in self.next_edges)

    @property
    def metadata(self) -> dict:
        """A free dict for user annotations (anomaly mode stores the forward traceback here)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def num_inputs(self) -> int:
        return len(self.input_metadata)

    def num_outputs(self) -> int:
        return len(self.next_edges)

    def release_variables(self) -> None:
        """Frees what the node saved for backward; later use raises 'backward a second time'."""

    _will_release = False  # set by subclasses that define will_release_variables

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._will_release = cls.will_release_variables is not Node.will_release_variables

    def will_release_variables(self) -> None:
        """Called before ``apply`` when the graph will not be kept."""

    # -- hooks --------------------------------------------------------------------------------
    def register_hook(self, fn):
        """Registers ``fn(grad_inputs, grad_outputs)``, run after the node; it may return new grad_inputs.

        ``grad_inputs`` are the gradients the node computed (one per forward input), and
        ``grad_outputs`` the gradients it received. Returns a handle with ``remove()``.
        """
        if self._post_hooks is None:
            self._post_hooks = _HookDict()
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """Registers ``fn(grad_outputs)``, run before the node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        return add_hook(self._pre_hooks, fn)

    def _tensor_hooks_for(self, input_nr: int) -> _HookDict:
        """The ordered hooks of the tensor that is forward output ``input_nr`` (created on demand)."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.get(input_nr)
        if hooks is None:
            hooks = self._tensor_pre_hooks[input_nr] = _HookDict()
        return hooks

    def tensor_pre_hooks(self):
        """``[(input_nr, hooks)]``: tensor hooks to run on the gradient arriving at ``input_nr``."""
        return list(self._tensor_pre_hooks.items()) if self._tensor_pre_hooks else []

    def __repr__(self):
        return f"<{node_name(self)} object at {id(self):#x}>"


class GraphRoot(Node):
    """The first task of every backward pass: its outputs are the seed gradients."""

    __slots__ = ("outputs",)

    def __init__(self, roots, seeds):
        super().__init__(roots, (), sequence_nr=MAX_SEQUENCE_NR)
        self.outputs = list(seeds)

    def apply(self, grads):
        return self.outputs


class AccumulateGrad(Node):
    """Sink of a leaf: adds the incoming gradient into ``variable.grad``.

    One per leaf, shared by every use of it. It refers to the leaf weakly, so the graph never
    keeps a leaf (or, with ``create_graph``, the leaf's own gradient graph) alive.
    """

    __slots__ = ("_variable", "lock")

    def __init__(self, variable):
        data, device = variable._data, variable._device
        super().__init__((), ((data.shape, data.dtype, None if device.type == "cpu" else device),),
                         sequence_nr=MAX_SEQUENCE_NR)  # See Note [Input metadata]
        self._variable = weakref.ref(variable)
        self.lock = threading.RLock()  # See Note [Thread safety of nodes] in engine.py

    @property
    def variable(self):
        """The leaf tensor, or None once it has been freed."""
        return self._variable()

    def tensor_pre_hooks(self):
        var = self._variable()
        hooks = None if var is None else var._backward_hooks
        return [(0, hooks)] if hooks else []

    def apply(self, grads):
        grad = grads[0]
        del grads[0]  # drop the engine's reference so an unshared gradient can be taken without a copy
        var = self._variable()
        if grad is None or var is None or not var._requires_grad:
            return ()
        if var._grad_fn is not None:
            raise RuntimeError("leaf variable has been moved into the graph interior")
        with self.lock:
            accumulate_grad(var, grad, 1 + (self._post_hooks is not None))
        return ()


def _refs(obj) -> int:
    return sys.getrefcount(obj)


def _baseline_refs():
    """References to an unshared gradient and its array, as ``accumulate_grad`` counts them.

    They are counted through calls of the same shape as at run time (``_probe_apply`` stands
    for ``AccumulateGrad.apply``, ``_probe_accumulate`` for ``accumulate_grad``), because how
    many references a call adds depends on the Python version (3.10 keeps one more per call
    level than 3.11). Each expected holder beyond ``apply``'s own local (the engine keeps the
    inputs for post-hooks) adds one, hence ``expected_refs - 1``.
    """
    probe = type("_Probe", (), {"__slots__": ("_data",)})

    def make():
        grad = probe()
        grad._data = object()
        return grad
    return _probe_apply([make()])


def _probe_apply(grads):
    grad = grads[0]
    del grads[0]
    return _probe_accumulate(None, grad, 1)


def _probe_accumulate(var, grad, expected_refs):
    return _count_refs(grad)


def _count_refs(grad):
    return _refs(grad), _refs(grad._data)


def accumulate_grad(var, grad, expected_refs: int) -> None:
    """Adds ``grad`` into ``var.grad`` with PyTorch's rules.

    Without grad mode: an undefined ``.grad`` takes ``grad`` itself when nothing else holds it
    (no copy), else a copy; a defined ``.grad`` is added to in place. In grad mode
    (``create_graph``): ``.grad`` becomes a new tensor that carries its own graph.
    """
    old = var._grad
    if not grad_mode.state.grad_enabled:
        if old is None:
            t_refs, a_refs = _count_refs(grad)
            unshared = (t_refs <= _BASE_T_REFS + expected_refs - 1 and a_refs <= _BASE_A_REFS
                        and grad._data.base is None and grad._grad_fn is None and not grad._requires_grad
                        and grad._data.flags.writeable)
            var._grad = grad if unshared else grad.clone()
        else:
            old._data += grad._data
            old._version_counter.version += 1
    elif old is None:
        var._grad = grad.clone()
    else:
        var._grad = old + grad


_BASE_T_REFS, _BASE_A_REFS = _baseline_refs()


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
    """

    __slots__ = ("data", "version_counter", "saved_version", "edge_node", "output_nr", "is_output",
                 "is_leaf", "requires_grad", "device", "shape", "dtype", "packed", "unpack_hook",
                 "released")

    def __init__(self, tensor, is_output: bool = False, copy: bool = False):
        T = _T or _tensor_module()
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
            self.edge_node = T.grad_accumulator(tensor)
        hooks = _saved_hooks_state.hooks
        if hooks and _saved_hooks_state.disabled_msg is None:
            pack, self.unpack_hook = hooks[-1]
            self.packed = pack(T.Tensor._alias_of(tensor))
            self.data = self.version_counter = None
            self.saved_version = 0
            self.shape, self.dtype = tensor._data.shape, tensor._data.dtype
            return
        self.unpack_hook = self.packed = None
        if copy:  # the tensor is about to be overwritten in place: save its current value
            self.data = tensor._data.copy()
            self.version_counter = T.VersionCounter()
        else:
            self.data = tensor._data
            self.version_counter = tensor._version_counter
        self.saved_version = self.version_counter.version

    def release(self) -> None:
        self.data = self.packed = None
        self.released = True

    def unpack(self, owner=None):
        """Returns the saved value as a Tensor connected to its graph; ``owner`` is the node saving it."""
        T = _T or _tensor_module()
        if self.released:
            raise RuntimeError(SECOND_TIME)
        if self.unpack_hook is not None:
            value = self.unpack_hook(self.packed)
            if not isinstance(value, T.Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                                f"type {type(value).__name__}")
            data = value._data
            version_counter = T.VersionCounter()
        else:
            version = self.version_counter.version
            if version != self.saved_version:
                self._raise_modified(version, owner)
            data = self.data
            version_counter = self.version_counter
        node = owner if self.is_output else self.edge_node
        return T.Tensor._from_saved(data, self.device, version_counter, node,
                                  self.output_nr, self.requires_grad and node is not None)

    def _raise_modified(self, version, owner):
        from .._tensor import _type_name
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
            f"[{_type_name(self.data.dtype)} {shape}]{where} is at version {version}; expected version "
            f"{self.saved_version} instead. {hint}")


# -- saved tensor hooks ------------------------------------------------------------------------
class _SavedHooks(threading.local):
    hooks = None
    disabled_msg = None

    @classmethod
    def stack(cls):
        return _saved_hooks_state.hooks

    @classmethod
    def disabled(cls):
        return _saved_hooks_state.disabled_msg is not None


_saved_hooks_state = _SavedHooks()


class saved_tensors_hooks:
    """Context manager that sets a pack/unpack pair of hooks for saved tensors.

    Every tensor saved for backward inside the scope is passed to ``pack_hook`` and only what it
    returns is kept; ``unpack_hook`` turns that back into a tensor when backward needs it.

    Args:
        pack_hook (callable): ``pack_hook(tensor) -> Any``.
        unpack_hook (callable): ``unpack_hook(packed) -> Tensor``.

    Example::
        >>> import retrograd as rg
        >>> x = rg.ones(3, requires_grad=True)
        >>> with rg.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda p: p):
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad
        tensor([2., 2., 2.])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pair = (pack_hook, unpack_hook)

    def __enter__(self):
        if _saved_hooks_state.disabled_msg is not None:
            raise RuntimeError(_saved_hooks_state.disabled_msg)
        stack = _saved_hooks_state.hooks
        _saved_hooks_state.hooks = (stack or ()) + (self.pair,)
        return self

    def __exit__(self, *exc):
        stack = _saved_hooks_state.hooks
        _saved_hooks_state.hooks = stack[:-1] or None


class save_on_cpu(saved_tensors_hooks):
    """Saved-tensor hooks that move saved tensors to the CPU and back to their device on unpack."""

    def __init__(self, pin_memory: bool = False):
        def pack(t):
            return (t.device, t.detach().cpu())

        def unpack(packed):
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager under which registering saved-tensor hooks raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str):
        self.msg = error_message

    def __enter__(self):
        self.prev = _saved_hooks_state.disabled_msg, _saved_hooks_state.hooks
        _saved_hooks_state.disabled_msg = self.msg
        _saved_hooks_state.hooks = None

    def __exit__(self, *exc):
        _saved_hooks_state.disabled_msg, _saved_hooks_state.hooks = self.prev
