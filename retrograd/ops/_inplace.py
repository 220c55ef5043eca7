"""In-place ops: write an op's result into an existing tensor and rewire its history.

Note [In-place on views]
~~~~~~~~~~~~~~~~~~~~~~~~
An in-place op on a tensor that is not a view runs the op out of place, writes the result into
the tensor's memory, bumps the shared version counter, and makes the op's node the tensor's
new ``grad_fn`` (saving the old value by copy where a formula needs it).

On a view, as in PyTorch, the op is recorded the same way on the view (its node ``fn`` has the
view's history as its first edge, and saves the view itself where it saves its result), and the
write changes the base too, so the base's history is rebased: its new ``grad_fn`` is a
``CopySlices`` node wrapping ``fn``. Its edges are the base's old history, then ``fn``'s edges but
the first; its backward runs ``fn`` on the gradient of the written region and puts ``fn``'s
gradient for the view's old value back in that region, for the base's old history. The view's
own ``grad_fn`` is then regenerated from the base's (Note [The autograd state of views] in
autograd/variable.py), as every other view of the base will be at its next use.

Only a view made the default way may be rebased so; modifying any other in place while something
requires grad and grad mode is on raises PyTorch's error (``check_inplace``). Nothing is recorded,
and no error raised, where nothing requires grad, under ``no_grad``, or in inference mode.
"""
from __future__ import annotations

from .._creation import contiguous_format
from .._tensor import INFERENCE_COUNTER, Tensor
from ..autograd import grad_mode
from ..autograd.graph import _NodeBase as Node, input_metadata
from ..autograd.saved_variable import SECOND_TIME
from ..autograd.variable import (CreationMeta, gradient_edge, move_retains_grad, regenerate_view_grad_fn,
                                 replay_view, view_rebase_error)
from ._call import call_op

_grad_state = grad_mode.state
_DEFAULT = CreationMeta.DEFAULT


def check_inplace(self):
    """PyTorch's forward-time errors for an in-place op on ``self`` that will be recorded.

    Raises:
        RuntimeError: for a view not made the default way (Note [The autograd state of views]), a
            view of a leaf that requires grad, or a leaf that requires grad.
    """
    base = self._base
    if base is not None:
        if self._view_creation is not _DEFAULT:
            raise view_rebase_error(self, indirect=False)
        # A view of a leaf has a grad_fn of its own (the view op), so test its base, not the view.
        if self.requires_grad and base._node is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if self.requires_grad and self.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def apply_inplace(op, args):
    """Runs ``op`` on ``args`` writing into ``args[0]``; returns ``args[0]``.

    Raises:
        RuntimeError: PyTorch's errors: an inference tensor outside inference mode (Note
            [Inference tensors] in autograd/grad_mode.py), and those of ``check_inplace``.
    """
    self = args[0]
    if self._vc is INFERENCE_COUNTER and not grad_mode.inference_now():
        if self._requires_grad and _grad_state.grad_enabled:  # PyTorch's leaf check comes first: Note [Inference tensors]
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
            "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")
    if not grad_mode.recording() or not (self.requires_grad or _others_require_grad(op, args)):
        return call_op(op, args, inplace=self)
    check_inplace(self)
    if self._base is not None:
        return _inplace_on_view(op, self, args)
    return call_op(op, args, inplace=self)


def _others_require_grad(op, args):
    for i in op.tensor_pos[1:]:
        a = args[i]
        if isinstance(a, Tensor) and a.requires_grad:
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) and t.requires_grad for t in a):
            return True
    return False


class CopySlices(Node):
    """The history of a base after an in-place op ``fn`` on one of its views. See Note [In-place on views]."""

    __slots__ = ("chain", "fn", "geometry")

    def __init__(self, base, chain, fn):
        super().__init__((gradient_edge(base),) + tuple(fn.next_edges[1:]),
                         (input_metadata(base._data, base._device),))
        self.chain = chain
        self.fn = fn
        # An as_strided step reads the storage, not the shape: its replay needs the base's geometry, as PyTorch's
        self.geometry = (base.stride(), base.storage_offset()) if any(
            getattr(op, "name", None) == "as_strided" for op, _, _ in chain) else None

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, grads):
        if self.fn is None:
            raise RuntimeError(SECOND_TIME)
        grad = grads[0]
        edges = self.next_edges
        if grad is None:
            return [None] * len(edges)
        if self.geometry is None:
            result = grad.clone(memory_format=contiguous_format)  # row-major, where the view chain replays
        else:  # the gradient laid out in a storage as the base is in its own
            strides, offset = self.geometry
            extent = 1 + offset + sum((n - 1) * st for n, st in zip(grad.shape, strides)) if grad.numel() else 0
            result = grad.new_zeros(extent).as_strided(grad.shape, strides, offset)
            result.copy_(grad)
        grad_slice = replay_view(self.chain, result)  # the written region of the base's gradient
        res = self.fn.apply([grad_slice.clone()])
        out = [None] + list(res[1:])
        if edges[0] is not None:
            if res[0] is None:
                grad_slice.zero_()
            else:
                grad_slice.copy_(res[0])
            out[0] = result
        return out

    def release_variables(self):
        # Drops fn rather than releasing its saved values: fn may also be a node of this pass in its
        # own right (a double backward reaches it through the view's saved result), and it frees
        # what it saved when it runs, or when the last reference to it goes (PyTorch does the same).
        self.fn = None


def _inplace_on_view(op, view, args):
    base = view._base
    call_op(op, args, inplace=view)  # records fn on the view, unless nothing it needs requires grad
    fn = view._node
    if fn is None or view._view_version != view._version_counter.version:
        return view  # nothing was recorded (no formula input requires grad): the base's history stands
    rebased = (base._node, base._output_nr)
    base._node = CopySlices(base, view._view_fn, fn)
    base._output_nr = 0
    base._requires_grad = True
    move_retains_grad(base, *rebased)
    regenerate_view_grad_fn(view)
    return view
