"""The autograd side of a Tensor: where its gradient goes, its hooks, and a view's history.

A tensor carries its autograd metadata in its own fields (``_requires_grad``, ``_grad_fn``,
``_output_nr``, ``_grad_accumulator``, the view fields); this module gives them their meaning
(PyTorch's ``torch/csrc/autograd/variable.cpp``). It also attaches to ``Tensor`` the methods that
need the graph: ``grad_fn`` and ``register_hook``.
"""
from __future__ import annotations

import re
import threading
import weakref

from .._tensor import Tensor
from ..utils.hooks import HookDict, add_hook
from . import grad_mode
from .accumulate_grad import AccumulateGrad
from .graph import Edge, Node, input_metadata, make_edge

__all__ = ["grad_accumulator", "gradient_edge", "move_retains_grad", "replay_view", "regenerate_view_grad_fn",
           "CopySlices", "IN_CUSTOM_FUNCTION", "MULTI_OUTPUT_NODE", "view_inplace_error"]

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


# How a view came to be, where that forbids modifying it in place with grad mode on (PyTorch's
# CreationMeta), kept in the view's ``_view_no_grad``: False (allowed), True (made in no_grad mode),
# or one of these (set by custom Functions: see Note [Outputs of a custom Function] in function.py).
IN_CUSTOM_FUNCTION = "in_custom_function"
MULTI_OUTPUT_NODE = "multi_output_node"


def view_inplace_error(view) -> str:
    """The message for an in-place op on a view whose ``_view_no_grad`` forbids it (it is not False)."""
    how = view._view_no_grad
    fn = view._grad_fn
    if fn is None or how is True:
        head = "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    else:
        name = re.sub(r"Backward\d*$", "", type(fn).name(fn))
        head = f"Output {view._output_nr} of {name} is a view and is being modified inplace."
    if how == IN_CUSTOM_FUNCTION:
        return (f"{head} This view was created inside a custom Function (or because an input was returned as-is) "
                "and the autograd logic to handle view+inplace would override the custom backward associated with "
                "the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this "
                "by cloning the output of the custom Function.")
    if how == MULTI_OUTPUT_NODE:
        return (f"{head} This view is the output of a function that returns multiple views. Such functions do not "
                "allow the output views to be modified inplace. You should replace the inplace operation by an "
                "out-of-place one.")
    return (f"{head} Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
            "code by moving both the view and the inplace either both inside the no_grad block (if you don't want "
            "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


class CopySlices(Node):
    """The history of a base after an in-place op on one of its views. See Note [In-place on views].

    ``result`` is a tensor whose history is the view's new value.
    """

    __slots__ = ("chain",)

    def __init__(self, base, chain, result):
        super().__init__((gradient_edge(base), gradient_edge(result)), (input_metadata(base._data, base._device),))
        self.chain = chain

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return [None, None]
        result_grad = replay_view(self.chain, grad)
        base_grad = grad.clone()
        replay_view(self.chain, base_grad).zero_()
        return [base_grad, result_grad]


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


Tensor.grad_fn = property(_grad_fn)
Tensor.register_hook = register_hook
