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
removed by an earlier hook of the same snapshot still runs. ``register_multi_grad_hook``'s
hooks are tensor hooks that also get the pass they run in (``PassHook``).
"""
from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import weakref
from collections import defaultdict, namedtuple

from .. import _dtype
from .._creation import zeros
from .._device import cpu as _cpu
from .._dtype import tensor_type_name
from .._tensor import Tensor
from ..utils.hooks import HookDict, RemovableHandle, add_hook
from .anomaly_mode import _Anomaly, record_forward_trace

__all__ = ["Node", "Edge", "GraphRoot", "GradientEdge", "get_gradient_edge", "register_multi_grad_hook",
           "RemovableHandle", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "allow_mutation_on_saved_tensors"]

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


class Node:
    """The backward function of one forward operation.

    Note [Input metadata]
    ~~~~~~~~~~~~~~~~~~~~~
    ``input_metadata[i]`` is ``(shape, numpy dtype, device)`` of forward output ``i``
    (``INPUT_METADATA_FIELDS``, made by ``input_metadata``): what a gradient arriving at input
    ``i`` must match (see ``validate_outputs`` in engine.py). The device is None for the CPU.
    Shapes, NumPy dtypes and None are atomic, so these tuples are dropped from the garbage
    collector's tracking after its first pass, and a long graph does not make every full
    collection slower; a device object would keep them tracked.

    ``apply(grads)`` takes one gradient (a Tensor or None) per forward output and returns one
    per forward input, in ``next_edges`` order. Subclasses set ``__slots__`` and ``apply``.
    """

    __slots__ = ("next_edges", "sequence_nr", "input_metadata", "_pre_hooks", "_post_hooks",
                 "_tensor_pre_hooks", "_retains_grad_hooks", "_metadata", "__weakref__")
    _leaf_hooks = False  # True where tensor hooks live on a leaf, not on the node (AccumulateGrad)

    def __init__(self, next_edges=(), input_metadata=(), sequence_nr=None):
        self.next_edges = tuple(next_edges)
        self.input_metadata = tuple(input_metadata)
        self.sequence_nr = _next_sequence_nr() if sequence_nr is None else sequence_nr
        self._pre_hooks = self._post_hooks = self._tensor_pre_hooks = self._retains_grad_hooks = None
        self._metadata = None
        if _Anomaly.enabled:
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
            self._post_hooks = HookDict()
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """Registers ``fn(grad_outputs)``, run before the node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = HookDict()
        return add_hook(self._pre_hooks, fn)

    def _tensor_hooks_for(self, input_nr: int) -> HookDict:
        """The ordered hooks of the tensor that is forward output ``input_nr`` (created on demand)."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.get(input_nr)
        if hooks is None:
            hooks = self._tensor_pre_hooks[input_nr] = HookDict()
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
            grad = grad.sum_to_size(shape)
        if grad._device is not device:
            raise RuntimeError(f"{_prefix(node)}invalid gradient at index {i} - expected device {device} but got "
                               f"{grad._device}")
        if grad._data.dtype != np_dtype:
            if grad._data.dtype.kind != "f":
                raise RuntimeError(f"{_prefix(node)}invalid gradient at index {i} - expected type {np_dtype} but got "
                                   f"{grad._data.dtype}")
            grad = grad.to(_dtype._BY_NP[np_dtype])
        grads[i] = grad
    return grads


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
    retains = node._retains_grad_hooks
    if retains:
        for input_nr, hook in list(retains.items()):
            hook(grads[input_nr])
    return grads


def call_pre_hooks(node, grads):
    """Runs the node's pre-hooks on the gradients it received; each may replace them all."""
    for hook in list(node._pre_hooks.values()):
        result = hook(tuple(grads))
        if result is not None:
            grads = _checked_hook_results(hook, grads, result)
    return grads


def call_post_hooks(node, outputs, inputs):
    """Runs the node's post-hooks on what it computed (and received); each may replace its outputs."""
    for hook in list(node._post_hooks.values()):
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
    if not hasattr(result, "_data") or not hasattr(result, "_grad_fn"):
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


# -- saved tensor hooks ------------------------------------------------------------------------
class _SavedHooks(threading.local):
    """The saved-tensor hooks in force on this thread (SavedTensor reads them when it saves)."""
    hooks = None  # a tuple of (pack_hook, unpack_hook), innermost last; None when empty
    disabled_msg = None
    mutation_ctx = None  # the allow_mutation_on_saved_tensors context of this thread

    @classmethod
    def stack(cls):
        return _saved_hooks_state.hooks

    @classmethod
    def disabled(cls):
        return _saved_hooks_state.disabled_msg is not None


_saved_hooks_state = _SavedHooks()


class saved_tensors_hooks:
    """Context manager that sets a pack/unpack pair of hooks for saved tensors.

    Every tensor saved for backward inside the scope is passed to ``pack_hook`` (in no-grad mode)
    and only what it returns is kept; ``unpack_hook`` turns that back into a tensor when backward
    needs it. Only the innermost pair applies. ``pack_hook`` must not modify its input in place,
    and should not return it as is (``lambda x: x.detach()`` rather than ``lambda x: x``): a saved
    output would then hold its own graph, a cycle that only the garbage collector frees.

    Args:
        pack_hook (callable): ``pack_hook(tensor) -> Any``.
        unpack_hook (callable): ``unpack_hook(packed) -> Tensor``.

    Raises:
        RuntimeError: on entering, inside ``disable_saved_tensors_hooks`` (its message).

    Example::
        >>> import retrograd as rg
        >>> x = rg.ones(3, requires_grad=True)
        >>> with rg.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda p: p):
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad
        tensor([2., 2., 2.])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _saved_hooks_state.disabled_msg is not None:
            raise RuntimeError(_saved_hooks_state.disabled_msg)
        stack = _saved_hooks_state.hooks
        _saved_hooks_state.hooks = (stack or ()) + ((self.pack_hook, self.unpack_hook),)

    def __exit__(self, *exc) -> None:
        stack = _saved_hooks_state.hooks
        if stack:  # an extra exit (from inside a hook, say) finds nothing to remove
            _saved_hooks_state.hooks = stack[:-1] or None


class save_on_cpu(saved_tensors_hooks):
    """Saved-tensor hooks that keep saved tensors on the CPU, and move them back to their device on unpack.

    A tensor already on the CPU is kept without a copy (outside the graph, so that no cycle forms).

    Args:
        pin_memory (bool): as in PyTorch, copy through pinned memory; the NumPy and CuPy backends
            copy alike. Default: False.
        device_type (str): the accelerator's device type. Default: ``"cuda"``.

    Example::
        >>> import retrograd as rg
        >>> x = rg.ones(2, requires_grad=True)
        >>> with rg.autograd.graph.save_on_cpu():
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad
        tensor([2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.detach().cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)
        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Context manager under which saved-tensor hooks are disabled: setting some raises ``RuntimeError(error_message)``.

    Args:
        error_message (str): the message of the error.

    Raises:
        RuntimeError: with ``error_message``, on entering while saved-tensor hooks are set.

    Example::
        >>> import retrograd as rg
        >>> with rg.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        ...     try:
        ...         rg.autograd.graph.save_on_cpu().__enter__()
        ...     except RuntimeError as e:
        ...         print(e)
        no hooks here
    """
    previous = _saved_hooks_state.disabled_msg
    try:
        _saved_hooks_state.disabled_msg = error_message
        if _saved_hooks_state.hooks:
            raise RuntimeError(error_message)
        yield
    finally:
        _saved_hooks_state.disabled_msg = previous


# Note [Mutation of saved tensors]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Under allow_mutation_on_saved_tensors, every saved tensor is packed as a handle to the tensor
# itself, and every in-place write first calls ``before_inplace_write(target)`` (ops/_call.py):
# each saved tensor that shares the target's version counter (the target, its views and bases,
# its detached aliases) is then cloned, and backward unpacks the clone, the value it saved.
_mutation_allowed = False  # an allow_mutation_on_saved_tensors context is open (in any thread)


class _Handle:
    """What a saved tensor is packed into under allow_mutation_on_saved_tensors."""

    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """The state of one allow_mutation_on_saved_tensors context; cleared when it closes."""

    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()  # handle -> the clone made before a write
        self.original = weakref.WeakKeyDictionary()  # handle -> the saved tensor, not yet written to
        self.tid_to_weakhandle = weakref.WeakValueDictionary()  # (tensor, array, version) -> handle
        self.sid_to_tid = defaultdict(set)  # version counter -> the (tensor, array, version) saved with it

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def pack(self, tensor):
        tid = (id(tensor), id(tensor._data), tensor._version_counter.version)
        self.sid_to_tid[tensor._version_counter].add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:  # the same tensor at the same version may be saved many times
            handle = self.tid_to_weakhandle[tid] = _Handle()
            self.original[handle] = tensor
        return handle

    def unpack(self, handle):
        message = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph "
                   "was originally recorded.")
        if not _mutation_allowed:
            raise AssertionError(message)
        cloned = self.cloned.get(handle)
        if cloned is not None:
            return cloned
        original = self.original.get(handle)
        if original is None:
            raise AssertionError(message)
        return original

    def before_write(self, tensor):
        for tid in self.sid_to_tid.get(tensor._vc, ()):
            handle = self.tid_to_weakhandle.get(tid)
            if handle is None or handle in self.cloned:  # freed by a backward since, or cloned already
                continue
            original = self.original.pop(handle)
            self.cloned[handle] = Tensor._make(original._data.copy(), original._device)


def before_inplace_write(tensor) -> None:
    """Called before ``tensor``'s memory is written in place. See Note [Mutation of saved tensors]."""
    ctx = _saved_hooks_state.mutation_ctx
    if ctx is not None:
        ctx.before_write(tensor)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which tensors saved for backward may be modified in place.

    A saved tensor about to be modified in place is cloned first, and backward uses the clone,
    where it would otherwise raise. Run both the forward and the backward inside the context.

    Returns:
        The context's state (for debugging); cleared when the context exits.

    Raises:
        RuntimeError: if nested. AssertionError: on a backward outside the context that recorded the graph.

    Example::
        >>> import retrograd as rg
        >>> with rg.autograd.graph.allow_mutation_on_saved_tensors():
        ...     a = rg.ones(3, requires_grad=True)
        ...     b = a.clone()
        ...     out = (b ** 2).sum()
        ...     _ = b.sin_()
        ...     out.backward()
        >>> a.grad
        tensor([2., 2., 2.])
    """
    global _mutation_allowed
    ctx = _AllowMutationOnSavedContext()
    opened = False
    previous = _saved_hooks_state.mutation_ctx
    with saved_tensors_hooks(ctx.pack, ctx.unpack):
        try:
            if _mutation_allowed:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _mutation_allowed = opened = True
            _saved_hooks_state.mutation_ctx = ctx
            yield ctx
        finally:
            if opened:
                ctx.clear()
                _mutation_allowed = False
                _saved_hooks_state.mutation_ctx = previous
