"""The autograd side of a Tensor: where its gradient goes, its hooks, and a view's history.

A tensor carries its autograd metadata in its own fields (``_requires_grad``, ``_grad_fn``,
``_output_nr``, ``_grad_accumulator``, the view fields); this module gives them their meaning
(PyTorch's ``torch/csrc/autograd/variable.cpp``). It also attaches to ``Tensor`` the methods that
need the graph (``grad_fn``, ``register_hook``, ``register_post_accumulate_grad_hook``), and to
``autograd.graph`` the functions that need a leaf's AccumulateGrad (``get_gradient_edge``,
``register_multi_grad_hook``: See Note [Graph functions defined above the graph]).
"""
from __future__ import annotations

import threading
import weakref

from .._tensor import Tensor
from ..utils.hooks import HookDict, add_hook
from . import grad_mode, graph
from .accumulate_grad import AccumulateGrad
from .graph import Edge, GradientEdge, PassHook, _MultiHandle, make_edge

__all__ = ["grad_accumulator", "gradient_edge", "move_retains_grad", "replay_view", "regenerate_view_grad_fn",
           "get_gradient_edge", "register_multi_grad_hook"]

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
    """The edge a gradient for ``tensor`` flows along, or None if it does not require grad."""
    fn = tensor._grad_fn
    if fn is not None:
        if tensor._base is not None and tensor._view_version != tensor._version_counter.version:
            fn = regenerate_view_grad_fn(tensor)  # See Note [In-place on views] in ops/_inplace.py
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
    if not tensor._retains_grad or old_fn is None or old_fn is tensor._grad_fn:
        return
    hooks = old_fn._retains_grad_hooks
    hook = hooks.pop(old_nr, None) if hooks else None
    new_fn = tensor._grad_fn
    if hook is None or new_fn is None:
        return
    if new_fn._retains_grad_hooks is None:
        new_fn._retains_grad_hooks = {}
    new_fn._retains_grad_hooks[tensor._output_nr] = hook


# -- views ----------------------------------------------------------------------------------------
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
    """Recomputes a stale view's ``grad_fn`` by replaying its view chain on the base's new history."""
    with grad_mode.enable_grad():
        fresh = replay_view(view._view_fn, view._base)
    rebased = (view._grad_fn, view._output_nr)
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    view._requires_grad = fresh._requires_grad
    view._view_version = view._version_counter.version
    move_retains_grad(view, *rebased)
    return view._grad_fn


# -- the Tensor methods of this layer -------------------------------------------------------------
def _grad_fn(self):
    """The ``Node`` that produced this tensor, or None for a leaf."""
    fn = self._grad_fn
    if self._base is not None and self._view_version != self._version_counter.version:
        # The base was modified in place after this view was made: the view's history is the
        # view replayed on the base's new history. See Note [In-place on views] in ops/_inplace.py.
        fn = regenerate_view_grad_fn(self)
    return fn


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
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is None:
        if self._backward_hooks is None:
            self._backward_hooks = HookDict()
        hooks = self._backward_hooks
    else:
        hooks = self._grad_fn._tensor_hooks_for(self._output_nr)
        self._backward_hooks = hooks
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
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = self._post_accumulate_grad_hooks
    if hooks is None:
        hooks = self._post_accumulate_grad_hooks = HookDict()
    return add_hook(hooks, hook)


Tensor.grad_fn = property(_grad_fn)
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
    if tensor.requires_grad and tensor._grad_fn is None:
        acc = grad_accumulator(tensor)
        return lambda: acc
    if tensor._grad_fn is None:
        raise AssertionError("Expected gradient function to be set")
    return weakref.ref(tensor._grad_fn)


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
