"""The autograd graph: nodes, the edges between them, their hooks, and saved-tensor hooks.

A ``Node`` is the backward of one forward operation. It maps the gradients of the forward
outputs (its inputs) to the gradients of the forward inputs (its outputs), and sends each
output along ``next_edges[i]`` to ``Edge(node, input_nr)``: input slot ``input_nr`` of the
node that produced that forward input. Leaves that require grad end in an ``AccumulateGrad``
(accumulate_grad.py); what a node saves for its backward is a ``SavedTensor``
(saved_variable.py).

Note [Hooks and their order]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
When a node runs, as in PyTorch: the hooks of the tensors it produced (``Tensor.register_hook``,
per tensor in the order of registration, each on what the one before returned; for an
AccumulateGrad, its leaf's hooks), then their retain_grad hooks (so ``.grad`` records what the
tensor hooks returned), then the node's pre-hooks, the node itself (an AccumulateGrad runs its
leaf's post-accumulate-grad hooks once ``.grad`` is updated), then its post-hooks. Each kind is
read when its turn comes, from a snapshot of its dict: a hook registered during the pass runs if
its turn is still to come (one added to a tensor by that tensor's own hooks does not), and one
removed by an earlier hook of the same snapshot still runs; post-hooks registered while the node
itself runs (from its backward, or an unpack hook of what it saved) run after it with an empty
tuple of grad_outputs, as PyTorch's do. ``register_multi_grad_hook``'s
hooks are tensor hooks that also get the pass they run in (``PassHook``).
"""
from __future__ import annotations

import abc
import itertools
import sys
import threading
from collections import namedtuple

from .. import _dtype
from .._creation import zeros
from .._device import cpu as _cpu
from .._dtype import tensor_type_name
from .._tensor import Tensor
from ..utils.hooks import HookDict, RemovableHandle, add_hook
from .anomaly_mode import _Anomaly, record_forward_trace
from .saved_hooks import (_saved_hooks_state, allow_mutation_on_saved_tensors, before_inplace_write,  # noqa: F401
                          disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks)

__all__ = ["Node", "Edge", "GraphRoot", "GradientEdge", "get_gradient_edge", "register_multi_grad_hook",
           "increment_version", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "allow_mutation_on_saved_tensors", "dump_engine_state", "register_dump_on_signal", "current_passes",
           "BackwardPass"]

Edge = namedtuple("Edge", ["node", "input_nr"])
Edge.__doc__ = "Where a gradient goes: input slot ``input_nr`` of ``node``."
GradientEdge = namedtuple("GradientEdge", ["node", "output_nr", "ownership_token"], defaults=(None,))
GradientEdge.__doc__ = """Where the gradient of a tensor is computed: input ``output_nr`` of ``node``.

``autograd.grad`` and ``autograd.backward`` take it in place of a tensor, as outputs or inputs.
Get one with ``get_gradient_edge(tensor)``. ``ownership_token`` is PyTorch's (a node that keeps a
C++ graph alive); here the node itself keeps its graph alive, and it stays None.
"""
make_edge = tuple.__new__  # make_edge(Edge, (node, nr)): an Edge without the Python-level __new__
INPUT_METADATA_FIELDS = ("shape", "dtype", "device")  # See Note [Input metadata]

# Sequence numbers order backward work: a node made later runs earlier among ready nodes.
# itertools.count's __next__ is atomic under the GIL, so this is thread-safe and monotonic.
_next_sequence_nr = itertools.count().__next__
MAX_SEQUENCE_NR = sys.maxsize  # AccumulateGrad: run as soon as it is ready, to free gradients early


def node_name(node) -> str:
    """The node's name from its class, even if a custom Function's ctx set an attribute ``name``."""
    return type(node).name(node)


def increment_version(tensor) -> None:
    """Counts an in-place change of ``tensor`` (or of each tensor of an iterable) made behind autograd's back.

    A node that saved the tensor then refuses to use it, as after any in-place op. A tensor made in
    inference mode has no version counter: it is left as it is.

    Example::
        >>> import retrograd as rg
        >>> t = rg.zeros(2)
        >>> rg.autograd.graph.increment_version(t)
        >>> t._version
        1
    """
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not t.is_inference():  # an inference tensor has no version to count, as in PyTorch
            t._version_counter.bump()


def input_metadata(array, device) -> tuple:
    """What a gradient for a tensor with this array on this device must match. See Note [Input metadata]."""
    return (array.shape, array.dtype, None if device is _cpu else device)


def materialize_grads(grads, metadata) -> list:
    """The gradients with each undefined one replaced by zeros of its input's shape, dtype and device."""
    return [g if g is not None else zeros(m[0], dtype=_dtype._BY_NP[m[1]], device=m[2])
            for g, m in zip(grads, metadata, strict=True)]


# Note [Deleting deep graphs]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A chain of a million nodes is freed by reference counting alone: the last tensor drops its
# grad_fn, whose next_edges tuple drops the node before it, and so on. Every link is a tuple or
# an instance of a Python class, and CPython frees both through its "trashcan", which defers
# deallocation past a fixed nesting depth and unwinds it iteratively, so deleting the chain
# neither recurses deeply in C nor hits the recursion limit, and no iterative unlinking is needed.
# Keep it that way: no link in the chain through a C extension type that lacks the trashcan
# (tests/autograd/test_memory.py deletes a 1e6-node chain).


class InputMetadata:
    """What a gradient arriving at one input of a node must match, as PyTorch's ``Node._input_metadata`` shows it."""

    __slots__ = ("shape", "dtype", "device")
    is_nested_tensor = is_cpp_nested_tensor = False  # retrograd's tensors are strided

    def __init__(self, metadata):
        shape, np_dtype, device = metadata
        self.shape = list(shape)
        # no dtype (a custom Function's non-tensor output, a leaf whose grad_dtype is None): the default one
        self.dtype = _dtype.get_default_dtype() if np_dtype is None else _dtype._BY_NP[np_dtype]
        self.device = _cpu if device is None else device


class NodeExtras:
    """A node's hooks and annotations, made when the first of them is: See Note [A node's hooks and metadata].

    ``pre_hooks`` and ``post_hooks`` are HookDicts of the node's own hooks, ``tensor_pre_hooks``
    ``{input_nr: HookDict}`` of the hooks of the tensors it produced, ``retains_grad_hooks``
    ``{input_nr: hook}`` of their ``retain_grad``, and ``metadata`` the dict of ``Node.metadata``;
    each None until it is needed.
    """

    __slots__ = ("pre_hooks", "post_hooks", "tensor_pre_hooks", "retains_grad_hooks", "metadata")

    def __init__(self):
        self.pre_hooks = self.post_hooks = self.tensor_pre_hooks = self.retains_grad_hooks = self.metadata = None


_EXTRAS_LOCK = threading.Lock()  # makes a node's NodeExtras: See _NodeBase._made_extras


def _extras_field(name: str, doc: str) -> property:
    """A node's ``_<name>`` read through its NodeExtras: None while it has none, made on the first value set."""

    def get(node):
        extras = node._extras
        return None if extras is None else getattr(extras, name)

    def set_(node, value):
        if value is not None or node._extras is not None:
            setattr(node._made_extras(), name, value)

    return property(get, set_, doc=doc)


class _NodeBase:
    """The backward function of one forward operation: the real base class of every node (see ``Node``).

    Note [A node's hooks and metadata]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    Almost no node has hooks or annotations, so a node keeps all five kinds (its pre-hooks and
    post-hooks, its tensors' hooks and retain_grad hooks, its ``metadata`` dict) in one slot,
    ``_extras``: None until the first of them is registered, then a ``NodeExtras``. One slot in
    place of five saves 32 bytes per node (a tenth of a graph's memory), and a node is made with one
    store in place of five. The engine reads ``_extras`` afresh at each kind's turn, so a hook that
    registers another finds it made (Note [Hooks and their order]). The compiled loop reads the
    slot and NodeExtras's slots by offset and runs only a node whose ``_extras`` is None or holds
    no hooks (``handled`` in _engine_loop.c). ``_pre_hooks``, ``_post_hooks``, ``_tensor_pre_hooks``,
    ``_retains_grad_hooks`` and ``_metadata`` read and set the fields through the slot.

    Note [Input metadata]
    ~~~~~~~~~~~~~~~~~~~~~
    ``input_metadata[i]`` is ``(shape, numpy dtype, device)`` of forward output ``i``
    (``INPUT_METADATA_FIELDS``, made by ``input_metadata``): what a gradient arriving at input
    ``i`` must match (see ``validate_outputs`` in engine.py). The device is None for the CPU; the
    dtype is None where any dtype is taken as it is (a leaf whose grad_dtype is None).
    Shapes, NumPy dtypes and None are atomic, so these tuples are dropped from the garbage
    collector's tracking after its first pass, and a long graph does not make every full
    collection slower; a device object would keep them tracked.

    ``apply(grads)`` takes one gradient (a Tensor or None) per forward output and returns one
    per forward input, in ``next_edges`` order. Subclasses set ``__slots__`` and ``apply``.
    """

    __slots__ = ("next_edges", "sequence_nr", "input_metadata", "_extras", "__weakref__")
    _leaf_hooks = False  # True where tensor hooks live on a leaf, not on the node (AccumulateGrad)

    def __init__(self, next_edges=(), input_metadata=(), sequence_nr=None):
        self.next_edges = tuple(next_edges)
        self.input_metadata = tuple(input_metadata)
        self.sequence_nr = _next_sequence_nr() if sequence_nr is None else sequence_nr
        self._extras = None  # See Note [A node's hooks and metadata]
        if _Anomaly.enabled:
            record_forward_trace(self)

    _pre_hooks = _extras_field("pre_hooks", "The node's pre-hooks (a HookDict), or None.")
    _post_hooks = _extras_field("post_hooks", "The node's post-hooks (a HookDict), or None.")
    _tensor_pre_hooks = _extras_field("tensor_pre_hooks", "``{input_nr: HookDict}`` of its tensors' hooks, or None.")
    _retains_grad_hooks = _extras_field("retains_grad_hooks", "``{input_nr: hook}`` of its tensors' retain_grad, or None.")
    _metadata = _extras_field("metadata", "The dict of ``metadata``, or None before it is first read.")

    def _made_extras(self) -> NodeExtras:
        """The node's NodeExtras, made on demand: See Note [A node's hooks and metadata].

        Made under a lock, so that two threads registering different kinds of hooks on a fresh node
        at once do not each make one and lose the other's (once made, it is only read here).
        """
        extras = self._extras
        if extras is None:
            with _EXTRAS_LOCK:
                extras = self._extras
                if extras is None:
                    extras = self._extras = NodeExtras()
        return extras

    def apply(self, grads):
        raise NotImplementedError(f"{node_name(self)}.apply is not implemented")

    def __call__(self, *grads):
        if len(grads) != len(self.input_metadata):
            raise TypeError(f"expected {len(self.input_metadata)} arguments, got {len(grads)} instead")
        outputs = list(self.apply(list(grads)))[:len(self.next_edges)]  # none for arguments that are not edges
        return outputs[0] if len(outputs) == 1 else tuple(outputs)  # as PyTorch's: one output is not a tuple

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
        extras = self._made_extras()
        if extras.metadata is None:
            extras.metadata = {}
        return extras.metadata

    def _sequence_nr(self) -> int:
        """The node's sequence number: among the nodes ready to run, the engine runs the highest first."""
        return self.sequence_nr

    def _set_sequence_nr(self, sequence_nr: int) -> None:
        """Gives the node another sequence number, and so another place among the nodes ready with it."""
        self.sequence_nr = sequence_nr

    @property
    def _input_metadata(self) -> tuple:
        """PyTorch's view of ``input_metadata``: per forward output, an object with its ``shape`` (a list),
        ``dtype`` and ``device`` (and ``is_nested_tensor``, ``is_cpp_nested_tensor``, always False here)."""
        return tuple(InputMetadata(m) for m in self.input_metadata)

    def num_inputs(self) -> int:
        return len(self.input_metadata)

    def num_outputs(self) -> int:
        return len(self.next_edges)

    def release_variables(self) -> None:
        """Frees what the node saved for backward; later use raises 'backward a second time'."""

    _will_release = False  # set by subclasses that define will_release_variables

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._will_release = cls.will_release_variables is not _NodeBase.will_release_variables

    def will_release_variables(self) -> None:
        """Called before ``apply`` when the graph will not be kept."""

    # -- hooks --------------------------------------------------------------------------------
    def register_hook(self, fn):
        """Registers ``fn(grad_inputs, grad_outputs)``, run after the node; it may return new grad_inputs.

        ``grad_inputs`` are the gradients the node computed (one per forward input), and
        ``grad_outputs`` the gradients it received. Returns a handle with ``remove()``.
        """
        extras = self._made_extras()
        if extras.post_hooks is None:
            extras.post_hooks = HookDict()
        return add_hook(extras.post_hooks, fn)

    def register_prehook(self, fn):
        """Registers ``fn(grad_outputs)``, run before the node; it may return new grad_outputs."""
        extras = self._made_extras()
        if extras.pre_hooks is None:
            extras.pre_hooks = HookDict()
        return add_hook(extras.pre_hooks, fn)

    def _tensor_hooks_for(self, input_nr: int) -> HookDict:
        """The ordered hooks of the tensor that is forward output ``input_nr`` (created on demand)."""
        extras = self._made_extras()
        if extras.tensor_pre_hooks is None:
            extras.tensor_pre_hooks = {}
        hooks = extras.tensor_pre_hooks.get(input_nr)
        if hooks is None:
            hooks = extras.tensor_pre_hooks[input_nr] = HookDict()
        return hooks

    def tensor_pre_hooks(self):
        """``[(input_nr, hooks)]``: tensor hooks to run on the gradient arriving at ``input_nr``."""
        extras = self._extras
        hooks = None if extras is None else extras.tensor_pre_hooks
        return list(hooks.items()) if hooks else []

    def _made_retains_grad_hooks(self) -> dict:
        """``{input_nr: hook}`` of the retain_grad hooks of the tensors this node produced (made on demand)."""
        extras = self._made_extras()
        if extras.retains_grad_hooks is None:
            extras.retains_grad_hooks = {}
        return extras.retains_grad_hooks

    def __repr__(self):
        return f"<{node_name(self).rpartition('::')[2]} object at {id(self):#x}>"  # unqualified, as PyTorch's


class Node(abc.ABC):
    """What ``isinstance(grad_fn, Node)`` asks, as PyTorch's ``torch.autograd.graph.Node``: a virtual base class.

    Every node of retrograd derives from ``_NodeBase``; ``Node`` is not in its MRO, and only
    ``isinstance``/``issubclass`` know it (a class that subclasses ``Node`` is one too).
    """

    __slots__ = ()

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and issubclass(subclass, _NodeBase):
            return True
        return NotImplemented


class GraphRoot(_NodeBase):
    """The first task of every backward pass: its outputs are the seed gradients."""

    __slots__ = ("outputs",)

    def __init__(self, roots, seeds):
        super().__init__(roots, (), sequence_nr=MAX_SEQUENCE_NR)
        self.outputs = list(seeds)

    def name(self) -> str:
        return "torch::autograd::GraphRoot"

    def apply(self, grads):
        return self.outputs


# -- what a gradient must match (Note [Input metadata]) -----------------------------------------
def validate_outputs(edges, grads, node=None):
    """Checks the gradients a node returns (or the seeds) against the inputs they flow into.

    A gradient whose shape the input broadcasts to is summed down to the input's shape, and
    one of another dtype is cast; anything else raises RuntimeError naming the node, the index
    and both shapes. Returns the (possibly new) list of gradients.
    """
    if len(grads) != len(edges):
        raise RuntimeError(f"{_prefix(node)}invalid number of gradients - expected {len(edges)}, but got "
                           f"{len(grads)}")
    for i, edge in enumerate(edges):
        grad = grads[i]
        if edge is None or grad is None:
            continue
        shape, np_dtype, device = edge[0].input_metadata[edge[1]]
        if device is None:  # See Note [Input metadata]
            device = _cpu
        arr = grad._data
        if arr.shape == shape and arr.dtype is np_dtype and grad._device is device:
            continue  # the common case: nothing to reduce, cast or check
        if arr.shape != shape:
            if not _expandable_to(shape, arr.shape):
                raise RuntimeError(f"{_prefix(node)}invalid gradient at index {i} - got {list(arr.shape)} but expected "
                                   f"shape compatible with {list(shape)}")
            grad = sum_broadcast_gradient(grad, shape)
        if grad._device is not device:
            raise RuntimeError(f"{_prefix(node)}invalid gradient at index {i} - expected device {device} but got "
                               f"{grad._device}")
        if np_dtype is not None and grad._data.dtype != np_dtype:  # None: a leaf's grad_dtype allows any
            grad = grad.to(_dtype._BY_NP[np_dtype])  # any dtype, as in PyTorch (an integer gradient too)
        grads[i] = grad
    return grads


def _sum_to_size(grad, shape):
    return grad.sum_to_size(shape)


# Note [Summing a broadcast gradient]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A gradient of the shape its input was broadcast to (a bias added to a batch of rows) is summed
# down to the input's shape by ``validate_outputs``, as PyTorch's engine does, with the op calls of
# ``sum_to_size``. Where nothing can see those calls (no op call interposer active: no profiler,
# no forward-mode AD, no vmap) and nothing is recorded (grad mode off), the ops layer sums the array
# directly instead, with the same reductions, so the dtype and shape are those of the op calls, and
# the values too but for the order of the additions where a bias vector's gradient is summed over
# many rows as one product (as addmm's formula sums it); ``sum_broadcast_gradient`` is what it
# attaches (ops/copy.py), and the method call is the default.
sum_broadcast_gradient = _sum_to_size


def _prefix(node):
    return "" if node is None else f"Function {node_name(node)} returned an "


def _expandable_to(shape, desired):
    """True if ``shape`` broadcasts to ``desired``."""
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


# -- running a node's hooks (the engine's call_function): See Note [Hooks and their order] ----------
class PassHook:
    """A tensor hook that keeps state per backward pass: the engine calls ``run(graph_task, grad)``.

    ``graph_task`` is the pass the hook runs in (its ``will_execute(node)`` says which nodes the
    pass runs); ``run`` returns what a tensor hook returns.
    """

    __slots__ = ()

    def run(self, graph_task, grad):
        raise NotImplementedError


def call_tensor_pre_hooks(node, grads, graph_task):
    """Runs the tensor hooks of the tensors this node produced, then their retain_grad hooks."""
    for input_nr, hooks in node.tensor_pre_hooks():
        for hook in list(hooks.values()):
            grad = grads[input_nr]
            result = hook.run(graph_task, grad) if isinstance(hook, PassHook) else hook(grad)
            grads[input_nr] = _checked_hook_result(hook, grad, result)
    extras = node._extras  # read after the tensor hooks, which may have added one
    retains = None if extras is None else extras.retains_grad_hooks
    if retains:
        for input_nr, hook in list(retains.items()):
            hook(grads[input_nr])
    return grads


def call_pre_hooks(node, grads):
    """Runs the node's pre-hooks on the gradients it received; each may replace them all."""
    for hook in list(node._extras.pre_hooks.values()):
        result = hook(tuple(grads))
        if result is not None:
            grads = _checked_hook_results(hook, grads, result)
    return grads


def call_post_hooks(node, outputs, inputs):
    """Runs the node's post-hooks on what it computed (and received); each may replace its outputs."""
    for hook in list(node._extras.post_hooks.values()):
        result = hook(tuple(outputs), inputs)
        if result is not None:
            outputs = _checked_hook_results(hook, outputs, result)
    return outputs


def call_post_accumulate_grad_hooks(var, hooks) -> None:
    """Runs a leaf's post-accumulate-grad hooks on the leaf, once its ``.grad`` is updated.

    A hook must return None. As in PyTorch, one that returns another tensor passes it to the hooks
    after it (checked as a tensor hook's result), and the call fails once they have all run.
    """
    value = var
    for hook in list(hooks.values()):
        result = hook(value)
        if result is not None and result is not value:
            value = _checked_hook_result(hook, value, result)
    if value is not var:
        raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _hook_name(hook):
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _checked_hook_results(hook, values, result) -> list:
    """What a node hook returned in place of ``values``: a tuple of as many, each None or a valid gradient."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(values):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(values)})")
    return [None if new is None else _checked_hook_result(hook, old, new) for old, new in zip(values, result)]


def _checked_hook_result(hook, value, result):
    """``result`` of a hook that received ``value``: ``value`` for None, else a tensor of its kind."""
    if result is None or result is value:
        return value
    if value is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not hasattr(result, "_data") or not hasattr(result, "_node"):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result._data.dtype != value._data.dtype or result._device is not value._device:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was {_type_name(value)} "
                           f"got {_type_name(result)})")
    if result._data.shape != value._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def _type_name(t) -> str:
    """PyTorch's legacy name of a tensor's type, as hook errors print it: ``retrograd.cuda.FloatTensor``."""
    name = tensor_type_name(t._data.dtype)
    return name if t._device is _cpu else name.replace(".", f".{t._device.type}.", 1)


class _MultiHandle(RemovableHandle):
    """The handle of ``register_multi_grad_hook``: removes the hook from every tensor at once."""

    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


# Note [Graph functions defined above the graph]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``get_gradient_edge`` and ``register_multi_grad_hook`` are this module's, as in
# ``torch.autograd.graph``, but they need a leaf's AccumulateGrad, which is made above this module:
# autograd/variable.py defines them and attaches them here, as it attaches ``Tensor.grad_fn``.
# Likewise ``dump_engine_state``, ``register_dump_on_signal``, ``current_passes`` and ``BackwardPass``
# (retrograd's own) read the engine's passes and queues: autograd/watchdog.py attaches them.
