"""The autograd side of a Tensor: where its gradient goes, its hooks, and a view's history.

A tensor carries its autograd metadata in its own fields (``_requires_grad``, ``_node``,
``_output_nr``, ``_grad_accumulator``, the view fields); this module gives them their meaning
(PyTorch's ``torch/csrc/autograd/variable.cpp``). It also attaches to ``Tensor`` the methods that
need the graph (``grad_fn``, ``register_hook``, ``register_post_accumulate_grad_hook``), and to
``autograd.graph`` the functions that need a leaf's AccumulateGrad (``get_gradient_edge``,
``register_multi_grad_hook``: See Note [Graph functions defined above the graph]).

Note [The autograd state of views]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A view (``_base`` set, never itself a view) records the chain of view ops that makes it from its
base (``_view_fn``), the shared version its ``grad_fn`` was computed at (``_view_version``), and
how it was made (``_view_creation``, PyTorch's CreationMeta): ``DEFAULT``; ``NO_GRAD_MODE``, with
grad mode off; ``INFERENCE_MODE``, in inference mode; ``MULTI_OUTPUT_NODE``, one of the views one
op returns together (``unbind``, ``split``, ``chunk``); ``IN_CUSTOM_FUNCTION``, a view a custom
Function returned (Note [Outputs of a custom Function]). A view of a view keeps its source's
non-default creation unless made in a non-default way itself (inference mode always sticks).

As in PyTorch, a view requires grad if it does or its base does: a view made where nothing was
recorded has no ``grad_fn`` (it is a leaf) and no gradient accumulator of its own, so an op on it
records a node whose edge to it is dead (None), and gradients stop there. Once the base changed
in place (its version moved on), a view's ``grad_fn`` is, at its next use, regenerated on the
base's new history: by default as one ``as_strided`` of the base (``AsStridedBackward0``), as
PyTorch does; with view replay on (``autograd._force_original_view_tracking(True)``, per thread)
by replaying the chain (or, where the base changed shape in place and the chain no longer makes
the view, by the ``as_strided`` again); but only for a ``DEFAULT`` view: any other raises
PyTorch's error, as modifying it in place with grad mode on does (ops/_inplace.py). A view with
no ``grad_fn`` whose base does not require grad is left as it is.
"""
from __future__ import annotations

import enum
import re
import threading
import warnings
import weakref

from .. import _dtype
from .._creation import empty
from .._tensor import Tensor
from ..utils.hooks import HookDict, add_hook
from . import engine, grad_mode, graph
from .accumulate_grad import AccumulateGrad, leaf_input_metadata
from .graph import Edge, GradientEdge, _NodeBase as Node, PassHook, _MultiHandle, make_edge, node_name

__all__ = ["grad_accumulator", "gradient_edge", "move_retains_grad", "replay_view", "regenerate_view_grad_fn",
           "get_gradient_edge", "register_multi_grad_hook", "CreationMeta", "new_view_creation", "view_rebase_error",
           "Variable"]

accumulator_lock = threading.Lock()  # held while a leaf's AccumulateGrad is made (the C op call takes it too)


def grad_accumulator(tensor) -> AccumulateGrad:
    """Returns the leaf's ``AccumulateGrad``, creating it once; the leaf holds it only weakly."""
    ref = tensor._grad_accumulator
    acc = None if ref is None else ref()
    if acc is None:
        with accumulator_lock:
            ref = tensor._grad_accumulator
            acc = None if ref is None else ref()
            if acc is None:
                acc = AccumulateGrad(tensor)
                tensor._grad_accumulator = weakref.ref(acc)
    return acc


def gradient_edge(tensor):
    """The edge a gradient for ``tensor`` flows along, or None if it does not require grad (or is a dead view)."""
    fn = tensor._node
    base = tensor._base
    if base is not None and tensor._view_version != tensor._version_counter.version and (
            fn is not None or base._requires_grad):
        fn = regenerate_view_grad_fn(tensor)  # See Note [The autograd state of views]
    if fn is not None:
        return make_edge(Edge, (fn, tensor._output_nr))
    if tensor._requires_grad:
        return make_edge(Edge, (grad_accumulator(tensor), 0))
    return None


def get_gradient_edge(tensor) -> GradientEdge:
    """Returns the edge along which the gradient of ``tensor`` is computed.

    ``autograd.grad(loss, get_gradient_edge(t))`` is ``autograd.grad(loss, t)``; the edge names
    a node and its input, so it stays valid when ``t`` itself is gone.

    Raises:
        RuntimeError: if the tensor does not require grad.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> y = x * 3
        >>> edge = rg.autograd.graph.get_gradient_edge(y)
        >>> edge.node.name(), edge.output_nr
        ('MulBackward0', 0)
        >>> rg.autograd.grad((y * y).sum(), edge)
        (tensor([ 6., 12.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node, nr = gradient_edge(tensor)
    return GradientEdge(node, nr)


def move_retains_grad(tensor, old_fn, old_nr: int) -> None:
    """Moves ``tensor``'s retain_grad hook from ``old_fn`` to its current grad_fn.

    Called when an in-place op rebases the tensor's history: ``.grad`` then records the gradient
    of the tensor's new value, as in PyTorch, while hooks registered before stay with the old node.
    """
    if not tensor._retains_grad or old_fn is None or old_fn is tensor._node:
        return
    extras = old_fn._extras
    hooks = None if extras is None else extras.retains_grad_hooks
    hook = hooks.pop(old_nr, None) if hooks else None
    new_fn = tensor._node
    if hook is None or new_fn is None:
        return
    new_fn._made_retains_grad_hooks()[tensor._output_nr] = hook


# -- views ----------------------------------------------------------------------------------------
class CreationMeta(enum.IntEnum):
    """How a view was made (PyTorch's CreationMeta). See Note [The autograd state of views]."""

    DEFAULT = 0
    NO_GRAD_MODE = 1
    INFERENCE_MODE = 2
    MULTI_OUTPUT_NODE = 3
    IN_CUSTOM_FUNCTION = 4


_DEFAULT, _NO_GRAD, _INFERENCE, _MULTI, _CUSTOM = (CreationMeta.DEFAULT, CreationMeta.NO_GRAD_MODE,
                                                   CreationMeta.INFERENCE_MODE, CreationMeta.MULTI_OUTPUT_NODE,
                                                   CreationMeta.IN_CUSTOM_FUNCTION)
_grad_state = grad_mode.state


def new_view_creation(src, multi_output: bool) -> CreationMeta:
    """How a view made now of ``src`` (by a multi-output view op or not) is made, inherited through ``src``."""
    if grad_mode.inference_now():
        new = _INFERENCE
    elif not _grad_state.grad_enabled:
        new = _NO_GRAD
    else:
        new = _MULTI if multi_output else _DEFAULT
    if src._base is None:
        return new
    prev = src._view_creation
    return prev if new is _DEFAULT or prev is _INFERENCE else new


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def view_rebase_error(view, indirect: bool) -> RuntimeError:
    """PyTorch's error for a non-default view modified in place (``indirect``: through its base or another view)."""
    creation = view._view_creation
    fn = view._node
    fn_name = None if fn is None else _BACKWARD_SUFFIX.sub("", node_name(fn))
    modified = "its base or another view of its base has been" if indirect else "is being"
    if creation in (_INFERENCE, _NO_GRAD) or fn is None:
        prefix = (f"Output {view._output_nr} of {fn_name} is a view of a view which was created in"
                  if fn is not None else "A view was created in")
        if creation is _INFERENCE:
            msg = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {view._output_nr} of {fn_name} is a view and {modified} modified inplace."
    if creation is _CUSTOM:
        msg += (" This view was created inside a custom Function (or because an input was returned as-is) and the "
                "autograd logic to handle view+inplace would override the custom backward associated with the custom "
                "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
                "output of the custom Function.")
    elif creation is _MULTI:
        msg += (" This view is the output of a function that returns multiple views. Such functions do not allow "
                "the output views to be modified inplace. You should replace the inplace operation by an "
                "out-of-place one.")
    else:
        block = "inference_mode" if creation is _INFERENCE else "no_grad"
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                f"by moving both the view and the inplace either both inside the {block} block (if you don't want "
                "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    return RuntimeError(msg)


def replay_view(chain, tensor):
    """Applies a view's chain of view steps (``_view_fn``) to ``tensor``: its base, or a gradient.

    Each step is ``(op, rest, output)`` (``VIEW_LINK_FIELDS`` in ops/_registry.py): a callable view
    op, its arguments after the first, and which of its outputs (None for a single one).
    """
    for op, rest, output in chain:
        tensor = op(tensor, *rest)
        if output is not None:
            tensor = tensor[output]
    return tensor


def regenerate_view_grad_fn(view):
    """Recomputes a stale view's ``grad_fn`` on the base's new history: as one ``as_strided`` of the base, or,
    with view replay on (``_force_original_view_tracking``), by replaying its view chain.

    Raises:
        RuntimeError: PyTorch's error, for a view not made the default way. See Note [The autograd state of views].
    """
    if view._view_creation is not _DEFAULT:
        raise view_rebase_error(view, indirect=True)
    base = view._base
    with grad_mode.inference_mode(False):  # recorded whatever the modes, as PyTorch regenerates it
        if not grad_mode.state.view_replay:  # PyTorch's default: one as_strided of the base
            fresh = base.as_strided(view._data.shape, view.stride(), view.storage_offset())
        else:
            try:
                fresh = replay_view(view._view_fn, base)
            except (RuntimeError, IndexError, ValueError):
                fresh = None
            if fresh is None or not _same_geometry(fresh._data, view._data):
                # The base changed shape in place (t_(), as_strided_()): its view ops no longer make this view,
                # an as_strided of the base's storage does.
                fresh = base.as_strided(view._data.shape, view.stride(), view.storage_offset())
                view._view_fn = fresh._view_fn
    rebased = (view._node, view._output_nr)
    view._node = fresh._node
    view._output_nr = fresh._output_nr
    view._requires_grad = fresh._requires_grad
    view._view_version = view._version_counter.version
    move_retains_grad(view, *rebased)
    return view._node


def _same_geometry(a, b) -> bool:
    """Whether arrays ``a`` and ``b`` are the same elements of memory, in the same order."""
    return a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype and (
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0] if hasattr(a, "__array_interface__")
        else a.data.ptr == b.data.ptr)


# -- the Tensor methods of this layer -------------------------------------------------------------
def _grad_fn(self):
    """The ``Node`` that produced this tensor, or None for a leaf."""
    fn = self._node
    base = self._base
    if base is not None and self._view_version != self._version_counter.version and (
            fn is not None or base._requires_grad):
        # The base was modified in place after this view's history was computed: the view's history
        # is the view replayed on the base's new history. See Note [The autograd state of views].
        fn = regenerate_view_grad_fn(self)
    return fn


def _view_no_grad(self) -> bool:
    """Whether this view was made with grad mode off (``_view_creation`` says how it was made)."""
    return self._view_creation in (_NO_GRAD, _INFERENCE)


def register_hook(self, hook):
    """Registers ``hook(grad)``, called with this tensor's gradient; it may return a replacement.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Raises:
        RuntimeError: if the tensor does not require grad.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> (x * 3).sum().backward(); x.grad
        tensor([6., 6.])
    """
    if not self.requires_grad:  # a view's through its base (Note [The autograd state of views])
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._node is None:
        if self._hooks is None:
            self._hooks = HookDict()
        hooks = self._hooks
    else:
        hooks = self._node._tensor_hooks_for(self._output_nr)
        self._hooks = hooks
    return add_hook(hooks, hook)


def register_post_accumulate_grad_hook(self, hook):
    """Registers ``hook(tensor)``, called with this leaf once backward has accumulated its ``.grad``.

    Hooks run in the order of registration, each after the ``.grad`` update of every backward
    pass that accumulates into this leaf (``backward()``, ``backward(inputs=...)`` naming it; not
    ``autograd.grad``, which accumulates nothing). A hook must return None.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Raises:
        RuntimeError: if the tensor does not require grad, or is not a leaf.

    Example::
        >>> import retrograd as rg
        >>> w = rg.tensor([1., 2.], requires_grad=True)
        >>> def step(p):
        ...     with rg.no_grad():
        ...         p -= 0.5 * p.grad
        ...     p.grad = None
        >>> h = w.register_post_accumulate_grad_hook(step)
        >>> (w * w).sum().backward(); w, w.grad
        (tensor([0., 0.], requires_grad=True), None)
    """
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._node is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = self._post_accumulate_grad_hooks
    if hooks is None:
        hooks = self._post_accumulate_grad_hooks = HookDict()
    return add_hook(hooks, hook)


def _set_grad_fn(self, value):
    """``t._grad_fn = None`` detaches ``t`` in place, as PyTorch's setter; no other value is accepted."""
    if value is not None:
        raise RuntimeError("_grad_fn can be only set to None")
    self.detach_()


def _del_grad_fn(self):
    raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")


def _get_backward_hooks(self):
    """The dict of this tensor's hooks (``register_hook``), or None before the first."""
    return self._hooks


def _set_backward_hooks(self, hooks):
    self._hooks = hooks


def _del_backward_hooks(self):
    raise RuntimeError("Deletion of _backwards_hooks not allowed!")  # sic: PyTorch's words


# Note [Undeletable autograd fields]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch refuses `del t._grad_fn` and `del t._backward_hooks` with a RuntimeError. A tensor keeps
# them in slots of other names (`_node`, `_hooks`), which retrograd (and the C, by offset) reads
# and writes directly; the public names are properties whose deleters raise. So refusing the
# deletion costs nothing on any path of retrograd: only user code reading the public names goes
# through a property, as it goes through a getter in PyTorch.
Tensor.grad_fn = property(_grad_fn)
Tensor._grad_fn = property(_grad_fn, _set_grad_fn, _del_grad_fn)
Tensor._backward_hooks = property(_get_backward_hooks, _set_backward_hooks, _del_backward_hooks)
Tensor._view_no_grad = property(_view_no_grad)
Tensor.register_hook = register_hook
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook


# -- hooks over several tensors -------------------------------------------------------------------
def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Registers ``fn`` to run once per backward pass on the gradients of several tensors.

    With ``mode="all"``, ``fn(grads)`` runs once the gradient of every tensor that the pass
    computes has been computed; ``grads`` holds one entry per tensor, None for those the pass does
    not reach (not in its graph, or not needed for its ``inputs``). With ``mode="any"``,
    ``fn(grad)`` runs on the first gradient computed among tensors that require grad. Each pass
    (and each thread's pass) keeps its own state; ``fn`` must not modify its arguments.

    Args:
        tensors (sequence of Tensor): the tensors whose gradients ``fn`` waits for.
        fn (callable): ``fn(grads)`` for "all", ``fn(grad)`` for "any"; its result is ignored.
        mode (str): "all" or "any".

    Returns:
        A handle whose ``remove()`` unregisters the hook from every tensor.

    Raises:
        ValueError: for another mode.
        AssertionError: in "all" mode, for a tensor that does not require grad (as PyTorch).

    Example::
        >>> import retrograd as rg
        >>> a = rg.ones(2, requires_grad=True)
        >>> b = rg.ones(2, requires_grad=True)
        >>> c, d = a * b, a * b
        >>> h = rg.autograd.graph.register_multi_grad_hook(
        ...     (a, b, c, d), lambda grads: print([g is not None for g in grads]))
        >>> c.sum().backward(retain_graph=True)
        [True, True, True, False]
        >>> c.sum().backward(inputs=(a,))
        [True, False, True, False]
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        waiter = _AllGrads(fn, [_hooked_node(t) for t in tensors])
        handles = [t.register_hook(_AllGradsHook(waiter, i)) for i, t in enumerate(tensors)]
    else:
        hook = _AnyGrad(fn)
        handles = [t.register_hook(hook) for t in tensors if t.requires_grad]
    return _MultiHandle(handles)


graph.get_gradient_edge = get_gradient_edge  # See Note [Graph functions defined above the graph]
graph.register_multi_grad_hook = register_multi_grad_hook


def _hooked_node(tensor):
    """A reference to the node that runs the hooks ``tensor.register_hook`` adds: its leaf's
    AccumulateGrad (held, as the leaf holds its hooks), or its grad_fn (held weakly: the hook lives
    on that node, and a node that is gone runs in no pass)."""
    if tensor.requires_grad and tensor._node is None:
        acc = grad_accumulator(tensor)
        return lambda: acc
    if tensor._node is None:
        raise AssertionError("Expected gradient function to be set")
    return weakref.ref(tensor._node)


class _AllGrads:
    """``register_multi_grad_hook(mode="all")``: per pass, the gradients received so far, until the
    last one the pass computes; then ``fn``, on the thread that received it."""

    __slots__ = ("fn", "nodes", "lock", "passes")

    def __init__(self, fn, nodes):
        self.fn = fn
        self.nodes = nodes
        self.lock = threading.Lock()
        self.passes = weakref.WeakKeyDictionary()  # graph_task -> [received, expected, grads]

    def arrived(self, graph_task, index, grad) -> None:
        with self.lock:
            state = self.passes.get(graph_task)
            if state is None:
                expected = 0
                for ref in self.nodes:
                    node = ref()
                    expected += node is not None and graph_task.will_execute(node)
                state = self.passes[graph_task] = [0, expected, [None] * len(self.nodes)]
            state[0] += 1
            state[2][index] = grad
            done = state[0] == state[1]
            if done:
                del self.passes[graph_task]
        if done:
            self.fn(state[2])


class _AllGradsHook(PassHook):
    """The hook ``_AllGrads`` registers on its tensor number ``index``."""

    __slots__ = ("waiter", "index")

    def __init__(self, waiter, index):
        self.waiter = waiter
        self.index = index

    def run(self, graph_task, grad):
        self.waiter.arrived(graph_task, self.index, grad)


class _AnyGrad(PassHook):
    """``register_multi_grad_hook(mode="any")``: ``fn`` on the first gradient of each pass."""

    __slots__ = ("fn", "lock", "passes")

    def __init__(self, fn):
        self.fn = fn
        self.lock = threading.Lock()
        self.passes = weakref.WeakSet()  # the passes that have called fn

    def run(self, graph_task, grad):
        with self.lock:
            first = graph_task not in self.passes
            self.passes.add(graph_task)
        if first:
            self.fn(grad)


# -- the old name ---------------------------------------------------------------------------------
class VariableMeta(type):
    """Makes every Tensor an instance of ``Variable``."""

    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """The old name of a tensor that takes part in autograd, kept as PyTorch keeps it.

    ``Variable(data)`` returns ``data`` detached (a Tensor sharing its data and version counter)
    with ``requires_grad`` as given; ``Variable()`` an empty tensor. ``isinstance(t, Variable)``
    holds for every Tensor, and ``Variable._execution_engine`` is the engine, for
    ``Variable._execution_engine.queue_callback(fn)``.

    Raises:
        TypeError: ``data`` is not a Tensor.
        RuntimeError: ``requires_grad=True`` for a tensor that is not floating point.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.autograd import Variable
        >>> v = Variable(rg.ones(2), requires_grad=True)
        >>> type(v).__name__, v.requires_grad, isinstance(v, Variable)
        ('Tensor', True, True)
    """

    _execution_engine = engine.get_default_engine()

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if _grad_fn is not None and not (isinstance(_grad_fn, Node) and hasattr(_grad_fn, "_forward_cls")):
            # only a custom Function's node counts, as PyTorch's Python Function objects
            raise TypeError(f"_grad_fn has to be a Function object or None, but got {type(_grad_fn).__name__}")
        if data is None:
            var = empty(0)
        elif isinstance(data, Tensor):
            var = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if _grad_fn is not None:
            raise RuntimeError("_grad_fn argument to legacy Variable constructor is no longer supported.  Instead, "
                               "please invoke your _grad_fn to produce a variable with it as the _grad_fn.")
        if requires_grad and var._data.dtype.kind not in "fV":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        var._requires_grad = bool(requires_grad)
        return var


# Note [grad_dtype]
# ~~~~~~~~~~~~~~~~~
# As PyTorch's, a leaf's gradient has the leaf's dtype unless ``grad_dtype`` says otherwise: another dtype, which
# every gradient reaching the leaf is cast to (as the leaf's dtype is by default), or None, which takes each as it
# comes. ``.grad`` may be assigned only a tensor of that dtype (any, for None), and grad_dtype may not be changed
# to a dtype other than that of a ``.grad`` already there. Gradients added into an existing ``.grad`` keep its
# dtype (they are added in place). Only leaves have it: a non-leaf's raises. The leaf's AccumulateGrad reads it as
# the dtype of its input metadata (Note [Input metadata]), kept up to date where the leaf's grad_dtype changes.
def _grad_dtype(self):
    """The dtype of this leaf's gradient: its own dtype by default, another one set, or None for any."""
    if not self.is_leaf:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    wanted = self._grad_dtype
    if wanted is Tensor.OWN_DTYPE:
        return self.dtype
    return None if wanted is None else _dtype._BY_NP[wanted]


def _set_grad_dtype(self, value):
    if not self.is_leaf:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if value is not None and not isinstance(value, _dtype.dtype):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
    wanted = None if value is None else value.np
    grad = self._grad
    if grad is not None and wanted is not None and grad._data.dtype != wanted:
        raise RuntimeError(f"Cannot set grad_dtype to '{_dtype.scalar_type_name(wanted)}' because there is already "
                           f"a gradient with dtype '{_dtype.type_meta_name(grad._data.dtype)}'. Set .grad to None "
                           "first, or choose the dtype of the gradient already there.")
    self._grad_dtype = wanted
    ref = self._grad_accumulator
    acc = None if ref is None else ref()
    if acc is not None:
        acc.input_metadata = (leaf_input_metadata(self),)


Tensor.grad_dtype = property(_grad_dtype, _set_grad_dtype)


def _volatile(self):
    """Always False: ``volatile`` was removed from PyTorch (``no_grad`` replaced it); reading it warns."""
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
    return False


def _set_volatile(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", stacklevel=2)


Tensor.volatile = property(_volatile, _set_volatile)
