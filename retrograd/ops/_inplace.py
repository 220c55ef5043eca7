"""In-place ops: write an op's result into an existing tensor and rewire its history.

Note [In-place on views]
~~~~~~~~~~~~~~~~~~~~~~~~
An in-place op on a tensor that is not a view runs the op out of place, writes the result into
the tensor's memory, bumps the shared version counter, and makes the op's node the tensor's
new ``grad_fn`` (saving the old value by copy where a formula needs it).

On a view, the write changes the base too, so the base's history is rebased: its new
``grad_fn`` is a ``CopySlices`` node whose backward sends the gradient of the written region
to the op (through the view's function) and the rest to the base's old history. Views record
a replayable chain of view ops from their base; a view whose base changed version since its
``grad_fn`` was computed regenerates it by replaying that chain on the base's new history.
"""
from __future__ import annotations

from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.variable import CopySlices, move_retains_grad, regenerate_view_grad_fn, view_inplace_error
from ._call import call_op
from ._declarations import REGISTRY

_grad_state = grad_mode.state


def check_inplace(self, requires_grad_elsewhere=False):
    """PyTorch's forward-time errors for in-place ops on leaves that require grad."""
    if not self._requires_grad:
        return
    base = self._base
    if base is not None:
        # A view of a leaf has a grad_fn of its own (the view op), so test its base, not the view.
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    elif self._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def apply_inplace(op, args):
    """Runs ``op`` on ``args`` writing into ``args[0]``; returns ``args[0]``."""
    self = args[0]
    if not _grad_state.grad_enabled:
        return call_op(op, args, inplace=self)
    base = self._base
    if base is not None and self._requires_grad and self._view_no_grad not in (False, True):
        raise RuntimeError(view_inplace_error(self))  # a custom Function's view: checked first, as in PyTorch
    check_inplace(self)
    if base is not None and (self._requires_grad or base._requires_grad or _others_require_grad(op, args)):
        if self._view_no_grad:
            raise RuntimeError(view_inplace_error(self))
        return _inplace_on_view(op, self, args)
    return call_op(op, args, inplace=self)


def _others_require_grad(op, args):
    for i in op.tensor_pos[1:]:
        a = args[i]
        if isinstance(a, Tensor) and a._requires_grad:
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) and t._requires_grad for t in a):
            return True
    return False


def _inplace_on_view(op, view, args):
    base = view._base
    old = view.clone()  # the view's current value, as a function of its history
    result = call_op(op, (old,) + tuple(args[1:]))
    with grad_mode.no_grad():
        call_op(REGISTRY["copy"], (view, result), inplace=view)
    node = CopySlices(base, view._view_fn, result)
    rebased = (base._grad_fn, base._output_nr)
    base._grad_fn = node
    base._output_nr = 0
    base._requires_grad = True
    move_retains_grad(base, *rebased)
    regenerate_view_grad_fn(view)
    return view

