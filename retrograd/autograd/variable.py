"""The autograd side of a Tensor: where its gradient goes, its hooks, and a view's history.

A tensor carries its autograd metadata in its own fields (``_requires_grad``, ``_grad_fn``,
``_output_nr``, ``_grad_accumulator``, the view fields); this module gives them their meaning
(PyTorch's ``torch/csrc/autograd/variable.cpp``). It also attaches to ``Tensor`` the methods that
need the graph: ``grad_fn`` and ``register_hook``.
"""
from __future__ import annotations

import threading
import warnings
import weakref

from .._creation import empty
from .._tensor import Tensor
from ..utils.hooks import HookDict, add_hook
from . import engine, grad_mode
from .accumulate_grad import AccumulateGrad
from .graph import Edge, Node, make_edge

__all__ = ["grad_accumulator", "gradient_edge", "move_retains_grad", "replay_view", "regenerate_view_grad_fn",
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
        if _grad_fn is not None and not isinstance(_grad_fn, Node):
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
        if requires_grad and var._data.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        var._requires_grad = bool(requires_grad)
        return var
