"""Saved-tensor hooks: what happens to a tensor a node saves, as ``torch.autograd.graph``'s.

``saved_tensors_hooks`` (and ``save_on_cpu``) pack every tensor saved while they are in force;
``disable_saved_tensors_hooks`` forbids them; ``allow_mutation_on_saved_tensors`` clones a saved
tensor before an in-place write would change it. ``autograd.graph`` re-exports the public names;
SavedTensor (saved_variable.py) and the op call's in-place write (ops/_call.py) read the state.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from collections import defaultdict

from .._tensor import Tensor

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "allow_mutation_on_saved_tensors",
           "before_inplace_write"]

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
