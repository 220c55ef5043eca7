"""Activation checkpointing: trade compute for memory by recomputing a segment in backward.

Two implementations, as in PyTorch (``torch.utils.checkpoint``):

* ``use_reentrant=True`` (``CheckpointFunction``) runs the segment without recording in forward
  and, in backward, recomputes it under grad mode and calls ``autograd.backward`` on the
  recomputed outputs from inside the engine: a reentrant backward (see Note [Reentrant
  backwards] in autograd/engine.py). It cannot serve ``autograd.grad`` or ``backward(inputs=)``,
  where the engine runs only the nodes that lead to the requested inputs.
* ``use_reentrant=False`` records the segment as usual but keeps none of the tensors its nodes
  save: saved-tensor hooks store an empty holder instead, and the first unpack in a backward
  pass recomputes the segment to fill the holders. It works with ``autograd.grad``, keyword
  arguments, nesting, and backward passes inside the segment. See Note [Non-reentrant
  checkpointing].

Both restore the random number generator to its state at the start of the forward before
recomputing (``preserve_rng_state``), so dropout-like randomness draws the same numbers and the
gradients equal the un-checkpointed ones; and both recompute under the CPU autocast state of the
forward (``_autocast_as_in``), as PyTorch's, so that the recomputed ops run in the forward's dtypes. retrograd draws every device's numbers from one
generator (retrograd._random), so that one state is all there is to restore.

Selective activation checkpointing (``context_fn=`` from ``create_selective_checkpoint_contexts``)
keeps the outputs of the ops a policy chooses and recomputes only the others, seeing each op call
through the op call's interposition (Note [Selective activation checkpointing]). Debug mode
(``debug=True``) logs the tensors the segment saved, with the user's stack for each; PyTorch's log
of every operator needs its dispatch modes.
"""
from __future__ import annotations

import contextlib
import copy
import enum
import itertools
import os
import threading
import traceback
import warnings
import weakref
from collections import defaultdict

from .._errors import _internal_assert
from .._ops import OpOverload, OpOverloadPacket, overload_of
from .._random import default_generator, get_rng_state, set_rng_state
from .._tensor import Tensor
from ..amp import autocast, get_autocast_dtype, is_autocast_enabled
from ..autograd import backward as _backward
from ..autograd.engine import is_checkpoint_valid
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..autograd.graph_task import local as _engine_local
from ..autograd.saved_variable import SavedTensor
from ..nn.modules.container import Sequential
from ..ops._call import pop_interposer, push_interposer

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "get_device_states", "set_device_states", "noop_context_fn",
           "set_checkpoint_early_stop", "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS",
           "GraphExecGroup"]

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled = None  # set_checkpoint_debug_enabled: None defers to each call's `debug`
_enable_checkpoint_early_stop = None  # set_checkpoint_early_stop: None defers to each call's `early_stop`


class CheckpointError(RuntimeError):
    """The recomputation of a checkpointed segment did not reproduce what its forward saved."""


# -- what both implementations share -------------------------------------------------------------
def noop_context_fn():
    """The default ``context_fn``: a pair of context managers that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """The tuple ``inputs`` with each tensor detached, keeping its ``requires_grad``.

    Raises:
        RuntimeError: if ``inputs`` is not a tuple.
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            detached = inp.detach()
            detached.requires_grad = inp.requires_grad
            inp = detached
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """Warns when no tensor among ``inputs`` requires grad (the reentrant checkpoint would give no gradients)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class DefaultDeviceType:
    """The device type whose random state checkpointing would save when no tensor argument names one."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        return DefaultDeviceType._default_device_type or "cpu"


def get_device_states(*args):
    """``(device ids, states)`` of the random generators of the tensors' devices other than the CPU.

    retrograd draws every device's random numbers from the one default generator, whose state
    checkpointing saves already, so there is no per-device state: both lists are empty.
    """
    return [], []


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restores what ``get_device_states`` returned: nothing, in retrograd (see there)."""


@contextlib.contextmanager
def _fork_rng(state, enabled):
    """Runs the body with the generator at ``state``, then puts back the state it had before."""
    if not enabled:
        yield
        return
    current = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(current)


def _autocast_state():
    """The CPU autocast state of this thread: (enabled, dtype), what the recomputation restores."""
    return is_autocast_enabled("cpu"), get_autocast_dtype("cpu")


def _autocast_as_in(state):
    """A context that recomputes under the CPU autocast ``state`` of the forward (PyTorch restores it
    the same way); none where neither the forward nor the backward has a CPU region open, so that the
    recomputation of a plain segment calls its ops without the autocast interposer."""
    enabled, dtype = state
    if not enabled and not is_autocast_enabled("cpu"):
        return contextlib.nullcontext()
    return autocast("cpu", dtype=dtype, enabled=enabled)


# -- the reentrant implementation ----------------------------------------------------------------
class CheckpointFunction(Function):
    """The reentrant form: one node whose backward recomputes the segment and runs a nested backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.autocast_state = _autocast_state()
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]  # tensors come back from saved_tensors
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if not is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
                "parameter to .backward(). Pass use_reentrant=False to checkpoint, or call .backward() without "
                "`inputs`.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        with _fork_rng(getattr(ctx, "fwd_cpu_state", None), ctx.preserve_rng_state), \
                _autocast_as_in(ctx.autocast_state):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grad_outputs, strict=False)
                     if isinstance(o, Tensor) and o.requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in with_grad], [g for _, g in with_grad])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in detached)


# -- the non-reentrant implementation ------------------------------------------------------------
# Note [Non-reentrant checkpointing]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# In forward, the segment runs under saved-tensor hooks (_checkpoint_hook) whose pack keeps an
# empty _Holder per saved tensor, and the frame keeps a weak reference to each holder in order,
# with the tensor's shape, dtype and device. The first unpack of a backward pass (keyed by its
# GraphTask, or a GraphExecGroup) reruns the segment on the inputs under _recomputation_hook,
# whose pack gives the n-th saved tensor to the n-th holder still alive, for that pass only;
# with early stop it stops the rerun once every holder has its tensor. Each unpack hands out its
# tensor once and drops it, so recomputed values live no longer than the pass needs them, even
# with retain_graph=True (a second pass recomputes). A holder dies with the SavedTensor that
# keeps it, so a freed node's tensor is not kept when a later pass recomputes.
#
# Nesting follows from the hooks' stack: a saved tensor goes to the innermost checkpoint, and a
# checkpoint saves its own inputs as saved tensors, which its enclosing checkpoint therefore
# packs; unpacking an inner checkpoint's inputs recomputes the outer segment first. The
# recomputation hook shadows every checkpoint active where the unpack happens, and checkpoints
# met during recomputation pack their own tensors as in forward. Nothing of this is reachable
# from the graph but through the SavedTensors' hooks, so no reference cycle is formed.
#
# The rerun counts on each node unpacking a saved tensor once per backward call: See Note [One
# unpack per saved tensor and apply].

class _Handle:
    """The key of one recomputed tensor in its frame's weak dictionary of one backward pass."""

    __slots__ = ("__weakref__",)


class _Holder:
    """What a saved tensor of a checkpointed segment keeps: per backward pass, the handle of its value."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles = {}  # pass id -> _Handle, or None once unpacked


class _StopRecomputation(Exception):  # noqa: N818 - control flow, never seen by users
    """Raised by the recomputation's pack hook once every tensor the pass needs is recomputed (early stop)."""


_DEBUG_TIP = ("\nTip: pass `debug=True` to `torch.utils.checkpoint.checkpoint(...)`, or run the forward under "
              "`torch.utils.checkpoint.set_checkpoint_debug_enabled(True)`, for a log of the tensors saved in the "
              "forward and in the recomputation.\n")


class _CheckpointFrame:
    """The state of one non-reentrant checkpoint call. See Note [Non-reentrant checkpointing]."""

    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.unpack_error_cb = unpack_error_cb
        self.metadata_fn = metadata_fn
        self.saved_args = []
        self.weak_holders = []
        self.x_metadatas = []  # one per holder: what the determinism check compares
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)  # pass id -> {_Handle: tensor}
        self.recomp_counter = defaultdict(int)  # pass id -> tensors saved so far by its recomputation
        self.is_recomputed = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        """Keeps the inputs: tensors as SavedTensors (so an enclosing checkpoint packs them), the rest as is."""
        saved = []
        for a in args:
            if isinstance(a, Tensor):
                st = SavedTensor(a)
                # Without hooks PyTorch hands back the original input; a SavedTensor of ours keeps its array.
                saved.append((st, a if st.unpack_hook is None else None))
            else:
                saved.append(a)
        self.saved_args = saved

    def get_inputs(self):
        out = []
        for a in self.saved_args:
            if type(a) is tuple:
                st, original = a
                value = st.unpack()  # checks the version, or recomputes an enclosing checkpoint
                a = original if original is not None else value
            out.append(a)
        return out

    def check_recomputed_tensors_match(self, gid) -> None:
        """Raises CheckpointError if the recomputation saved other tensors than the forward did."""
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {len(self.weak_holders)}\nNumber of "
                f"tensors saved during recomputation: {self.recomp_counter[gid]}.\n{_DEBUG_TIP}")
        different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:  # its node was freed: nothing to check or hand out
                continue
            handle = holder.handles.get(gid)
            _internal_assert(handle is not None and handle in self.recomputed[gid],
                             "checkpoint: a live holder got no recomputed tensor")
            recomputed = self.metadata_fn(self.recomputed[gid][handle])
            if self.x_metadatas[idx] != recomputed:
                different.append((idx, self.x_metadatas[idx], recomputed))
        if different:
            listing = "".join(f"tensor at position {idx}:\nsaved metadata: {saved}\nrecomputed metadata: {got}\n"
                              for idx, saved, got in different)
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
                f"during the forward pass.\n{listing}.\n{_DEBUG_TIP}")


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_DETERMINISM_CHECKS = {_DEFAULT_DETERMINISM_MODE: _default_meta_extractor, "none": lambda _: None}

# Backward passes by id: a GraphTask gets the next integer the first time one of its nodes
# unpacks a checkpointed tensor (ids are never reused, unlike id()); an unpack outside any pass
# gets a fresh one.
_pass_ids = weakref.WeakKeyDictionary()
_next_pass_id = itertools.count().__next__
_pass_ids_lock = threading.Lock()
_graph_exec_group = None  # the GraphExecGroup in force, if any


def _current_pass_id():
    """The key of the current backward pass: its GraphExecGroup, its GraphTask's id, or a fresh id."""
    if _graph_exec_group is not None:
        return _graph_exec_group
    graph_task = _engine_local.current_graph_task
    if graph_task is None:
        return _next_pass_id()
    with _pass_ids_lock:
        gid = _pass_ids.get(graph_task)
        if gid is None:
            gid = _pass_ids[graph_task] = _next_pass_id()
    return gid


class _recomputation_hook(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """The hooks of a recomputation: the n-th saved tensor fills the n-th holder for pass ``gid``."""

    def __init__(self, frame_ref, gid):
        def pack(x):
            x = x.detach() if x.requires_grad else x  # kept outside the graph that will hold it, as PyTorch's
            frame = frame_ref()
            _internal_assert(frame is not None, "checkpoint: recomputing for a frame that is gone")
            _log_save(x)
            idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop, "checkpoint: early stop missed the last saved tensor")
                if not frame.forward_completed:  # a backward inside the forward, without early stop
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation "
                                      f"than during the original forward pass.\n{_DEBUG_TIP}")
            holder = frame.weak_holders[idx]()
            if holder is not None:  # else its node was freed, by a backward inside the forward say
                _internal_assert(holder.handles.get(gid) is None, "checkpoint: a holder recomputed twice in one pass")
                handle = holder.handles[gid] = _Handle()
                frame.recomputed[gid][handle] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputation
            return x  # the recomputed graph keeps it too, for a backward inside the forward

        super().__init__(pack, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """The hooks of a checkpointed forward: an empty holder per saved tensor, filled on unpack."""

    def __init__(self, frame):
        def pack(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            with no_grad():
                frame.x_metadatas.append(frame.metadata_fn(x))
            _log_save(x)
            return holder

        def unpack(holder):
            gid = _current_pass_id()
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputation as stop:
                    # Raised inside a backward that the segment runs, it went through engine frames
                    # that hold the GraphTask that holds it: drop the frames, or they form a cycle.
                    stop.__traceback__ = None
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles, "checkpoint: the recomputation skipped a live holder")
            handle = holder.handles[gid]
            if handle is None:
                extra = ("Performing two backward calls that overlap (i.e. require the same saved activation in "
                         "order to compute gradients) is not allowed while under the "
                         "torch.utils.checkpoint.GraphExecGroup context. " if isinstance(gid, GraphExecGroup) else "")
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                    f"{extra}A backward may read ctx.saved_tensors only once; for other uses please open an issue.")
            value = frame.recomputed[gid][handle]
            holder.handles[gid] = None
            return value

        if frame.unpack_error_cb is not None:
            def unpack_reporting(holder):
                try:
                    return unpack(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)
                    raise
            super().__init__(pack, unpack_reporting)
        else:
            super().__init__(pack, unpack)


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check, debug, early_stop,
                                  args, kwargs):
    """Runs ``function`` under the checkpoint's hooks. See Note [Non-reentrant checkpointing]."""
    unpack_error_cb = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context_and_cb()
    metadata_fn = _DETERMINISM_CHECKS.get(determinism_check)
    if metadata_fn is None:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    rng_state = get_rng_state() if preserve_rng_state else None
    autocast_state = _autocast_state()

    def recompute_fn(*inputs):
        with _fork_rng(rng_state, preserve_rng_state), _autocast_as_in(autocast_state), recompute_context:
            function(*inputs, **kwargs)

    frame = _CheckpointFrame(recompute_fn,
                             early_stop if _enable_checkpoint_early_stop is None else _enable_checkpoint_early_stop,
                             unpack_error_cb, metadata_fn)
    if not is_grad_enabled():
        return function(*args, **kwargs)
    frame.save_inputs(*args)
    completed = False
    with _checkpoint_hook(frame), forward_context:
        result = function(*args, **kwargs)
        completed = True
    if not completed:
        raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
                           "exception raised during the checkpointed forward. A failed forward has no value for "
                           "checkpoint to return.")
    frame.forward_completed = True
    return result


# -- debug mode ------------------------------------------------------------------------------------
class _SaveLogs(threading.local):
    active = None  # the list that this thread's saved tensors are logged to, if any


_save_logs = _SaveLogs()


def _log_save(x):
    """Logs a tensor saved inside a checkpointed segment to the active debug log, with the user's stack."""
    log = _save_logs.active
    if log is None:
        return
    stack = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PACKAGE_DIR)]
    log.append((f"{x.dtype}{list(x.shape)} on {x.device}", traceback.format_list(stack)))


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # retrograd's own frames


class _CaptureSaves:
    """A reusable context manager that logs the tensors saved in its body to ``logs`` (a new list each time)."""

    def __init__(self):
        self.logs = None
        self._prev = []

    def __enter__(self):
        self._prev.append(_save_logs.active)
        self.logs = _save_logs.active = []
        return self

    def __exit__(self, *exc):
        _save_logs.active = self._prev.pop()


_DEBUG_REPORT = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.

+------------------------------------------------------------------------------+
|        1. Tensors saved in the original forward                              |
+------------------------------------------------------------------------------+

{forward}
+------------------------------------------------------------------------------+
|        2. Tensors saved during recomputation                                 |
+------------------------------------------------------------------------------+

{recompute}
+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and the tensors saved during
 the original forward differ from those saved during recomputation, which happens when the segment
 runs other operations the second time. Compare the two lists above: each entry is a saved tensor
 (dtype, shape, device) with the stack of the code that saved it, in the order they were saved.
 (retrograd logs saved tensors; PyTorch's log of every operator needs its dispatch modes.)
--------------------------------------------------------------------------------
"""


def _debug_context_and_cb():
    """The ``context_fn`` and unpack error callback of debug mode: logs of both runs, reported on error."""
    forward, recompute = _CaptureSaves(), _CaptureSaves()

    def describe(capture, label):
        logs = capture.logs or []
        return "".join(f"{what}   ({i + 1} of {len(logs)} in {label})\n{''.join(stack)}\n"
                       for i, (what, stack) in enumerate(logs))

    def unpack_error_cb(error):
        raise CheckpointError(_DEBUG_REPORT.format(forward=describe(forward, "original"),
                                                   recompute=describe(recompute, "recompute"))) from error

    def context_fn():
        return forward, recompute

    return context_fn, unpack_error_cb


# -- the public API ----------------------------------------------------------------------------------
@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Context manager that overrides the ``debug`` of every checkpoint called in its body (None: defer to it).

    Args:
        enabled (bool or None): log saved tensors for non-determinism errors, or not, or defer.
    """
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Context manager that sets whether non-reentrant checkpoints stop recomputing early.

    By default the recomputation stops as soon as every tensor the backward pass needs has been
    recomputed; under ``set_checkpoint_early_stop(False)`` it runs the whole segment. The setting
    applies to the checkpoints whose forward runs in the body, even if their backward runs later,
    and overrides their ``early_stop`` argument.

    Args:
        enable (bool): stop early, or recompute the whole segment.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.utils.checkpoint import checkpoint, set_checkpoint_early_stop
        >>> calls = []
        >>> def f(t):
        ...     calls.append(1)
        ...     return t.sin().clone()
        >>> x = rg.ones(2, requires_grad=True)
        >>> with set_checkpoint_early_stop(False):
        ...     y = checkpoint(f, x, use_reentrant=False)
        >>> y.sum().backward(); len(calls)
        2
    """
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class GraphExecGroup:
    """Context manager under which backward calls share one recomputation of each checkpointed segment.

    The backward calls under one group must need disjoint saved tensors, even with
    ``retain_graph=True``; a tensor unpacked twice raises CheckpointError. Only non-reentrant
    checkpoints are affected.
    """

    def __enter__(self):
        global _graph_exec_group
        if _graph_exec_group is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {_graph_exec_group}")
        _graph_exec_group = self
        return self

    def __exit__(self, *exc):
        global _graph_exec_group
        _graph_exec_group = None

    @classmethod
    def _get_current_group(cls):
        return _graph_exec_group


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True, **kwargs):
    """Runs ``function(*args, **kwargs)`` without keeping its intermediate results; recomputes them in backward.

    Args:
        function: the segment to checkpoint.
        *args: its arguments; tensors among them are kept for the recomputation.
        use_reentrant (bool): the reentrant implementation (True) or the one built on saved-tensor
            hooks (False, recommended); see the module docstring. Pass it explicitly: leaving it out
            warns, and means True.
        context_fn (callable): only with ``use_reentrant=False``; returns two context managers,
            under which the forward and the recomputation run.
        determinism_check (str): ``"default"`` compares the shapes, dtypes and devices of the
            recomputed saved tensors with the forward's; ``"none"`` does not. Non-reentrant only.
        debug (bool): on a non-determinism error, also list the tensors saved in forward and in the
            recomputation, with the code that saved each. Non-reentrant only.
        early_stop (bool): stop the recomputation once every needed tensor is recomputed (default
            True; ``set_checkpoint_early_stop`` overrides it). Non-reentrant only.
        **kwargs: ``preserve_rng_state`` (bool, default True: restore the random generator's
            forward-time state before recomputing), then keyword arguments for ``function``, which
            only ``use_reentrant=False`` accepts.

    Returns:
        What ``function`` returns.

    Raises:
        ValueError: keyword arguments, ``context_fn`` or ``debug`` with the reentrant form, or an
            unknown ``determinism_check``.
        RuntimeError: in backward, for the reentrant form reached from ``autograd.grad``, or when
            no output of its recomputation requires grad.
        CheckpointError: in backward, when the recomputation saved other tensors than the forward.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.utils.checkpoint import checkpoint
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> checkpoint(lambda t: (t.sin() * 2).sum(), x, use_reentrant=False).backward()
        >>> bool(rg.allclose(x.grad, 2 * x.detach().cos()))
        True
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
                      "use_reentrant=False is recommended; pass use_reentrant=True to keep the current default. The "
                      "docstring of checkpoint says how the two implementations differ.", stacklevel=2)
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)  # keyword-only, as PyTorch takes it
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check, debug,
                                         early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002 - PyTorch's name
    """Runs a sequence of functions (or an ``nn.Sequential``) in ``segments`` chunks, checkpointing all but the last.

    Args:
        functions: an ``nn.Sequential``, or a list of modules or functions, run one after the other.
        segments (int): the number of chunks.
        input (Tensor): the input of the first function.
        use_reentrant (bool): as for ``checkpoint``; leaving it out warns, and means True.
        **kwargs: ``preserve_rng_state`` (bool, default True), as for ``checkpoint``.

    Returns:
        The output of the last function.

    Raises:
        ValueError: for keyword arguments other than ``preserve_rng_state``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.utils.checkpoint import checkpoint_sequential
        >>> x = rg.tensor([0.5, 1.0], requires_grad=True)
        >>> y = checkpoint_sequential([rg.sin, rg.exp, rg.cos], 2, x, use_reentrant=False)
        >>> y.sum().backward(); x.grad.shape
        retrograd.Size([2])
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. use_reentrant=False is recommended; pass use_reentrant=True to keep the current "
                      "default. The docstring of checkpoint says how the two implementations differ.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run_function(start, end, functions):
        def forward(input):  # noqa: A002
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1  # the last chunk runs as usual
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


# -- selective activation checkpointing ------------------------------------------------------------
# Note [Selective activation checkpointing]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``create_selective_checkpoint_contexts`` gives ``checkpoint`` (use_reentrant=False) two contexts
# that share one storage: the forward's (_CachingMode) and the recomputation's (_CachedMode). Each
# is an interposer (Note [Op call interposition]) while its context is open, for the thread that
# opened it, so nothing is paid outside them. In the forward, each op call runs, then the policy
# is asked (``policy(ctx, op, *args, **kwargs)``, ``op`` PyTorch's name of the call: Note
# [PyTorch's op names]); the n-th call of an op stores a detached alias of its outputs and their
# versions where the policy says ``*_SAVE``, else a mark to recompute it. In the recomputation the
# n-th call of the op looks its entry up: a mark runs the op again; stored outputs are handed out
# once (a second backward through the segment raises) after checking that nothing wrote into them,
# and the call goes on through the op call with a forward that returns them, so that the node is
# recorded and saves what it saved in the forward, which the checkpoint's holders count on (Note
# [Non-reentrant checkpointing]); an in-place op's call writes them into the recomputed tensor.
# A view op runs again instead: its output costs nothing to make, and is then a view of the
# recomputed base. A random op's stored output also puts the generator where the forward left it,
# if the recomputation finds it where the forward did, so that the draws after it are the
# forward's (PyTorch's recomputation draws them from the state before the skipped op). The policy
# is called in the forward only, as PyTorch's. Factories (``aten.rand.default``) and dropout's mask
# (``aten.bernoulli_``) are op calls while the contexts are open (Note [Factories as op calls] in
# _creation.py), so a policy can save a draw, and the recomputation hands the forward's out again.
class SelectiveCheckpointContext:
    """What a selective checkpointing policy function receives about the op call it decides on.

    Args:
        is_recompute (bool): always False: the policy is called in the forward only (PyTorch deprecates it).
        op_output: what the op call returned.
    """

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Whether selective checkpointing keeps an op's output (``*_SAVE``) or recomputes it (``*_RECOMPUTE``).

    ``MUST_*`` may not be overridden by other subsystems, ``PREFER_*`` may; ``*_CPU_OFFLOAD``, for
    PyTorch's compiler, is recomputed here as in PyTorch's eager mode.
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def _policy_from_bool(b):
    """A policy function's bool, as PyTorch still reads it: True saves, False recomputes."""
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


# Ops that selective checkpointing neither asks the policy about nor counts. PyTorch's holds the
# detach and metadata ops that its checkpoint calls in the forward only; retrograd's checkpoint
# makes no op call of its own, so none is needed.
SAC_IGNORED_OPS: set = set()

_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_RECOMPUTE = object()  # a storage entry: run the op again
_CONSUMED = object()  # a storage entry already handed out
_SAC_MISMATCH_MSG = ("This can happen if the operations in the checkpointed region are nondeterministic or depend on "
                     "global state that changed between forward and backward.")


def _generator_of(op, args):
    """The generator a random op's call draws from (its ``generator`` argument, else the default); None otherwise."""
    pos = op.index.get("generator")
    if pos is None:
        return None
    return args[pos] if pos < len(args) and args[pos] is not None else default_generator


def _policy_args(op, args):
    """The call's arguments as a policy receives them: positional, and keyword-only ones by name."""
    n = len(op.params) - len(op.kwonly)
    return args[:n], dict(zip(op.kwonly, args[n:], strict=False))


class _Stored:
    """The outputs of one saved op call: detached aliases, their versions, and where the generator was moved."""

    __slots__ = ("tensors", "versions", "rng")

    def __init__(self, out, rng):
        self.tensors = tuple(t.detach() for t in (out if isinstance(out, tuple) else (out,)))
        self.versions = tuple(t._version for t in self.tensors)
        self.rng = rng  # (generator, state before the call, state after it), or None

    def arrays(self, allow_mutation):
        """The outputs' arrays, in order. Raises RuntimeError if one was written to and that is not allowed."""
        if not allow_mutation and any(t._version != v for t, v in zip(self.tensors, self.versions, strict=True)):
            raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        return tuple(t._data for t in self.tensors)

    def replay_rng(self) -> None:
        """Moves the generator past the call, as the forward did, where the recomputation finds it before the call."""
        if self.rng is not None:
            generator, before, after = self.rng
            if generator.get_state() == before:
                generator.set_state(after)


def _replaying(op, arrays):
    """A copy of ``op`` whose forward returns ``arrays`` (the stored outputs) instead of computing them."""
    twin = copy.copy(op)
    result = arrays if op.multi_output else arrays[0]
    twin.forward = lambda xp, *vals: result
    return twin


class _SACMode:
    """What both of selective checkpointing's contexts do: interpose on op calls of their thread while open."""

    def __init__(self, storage):
        self.storage = storage
        self.counters = defaultdict(int)
        self.thread = None

    def __enter__(self):
        self.counters.clear()  # a second recomputation counts from the start, and meets consumed entries
        self.thread = threading.get_ident()
        push_interposer(self)
        return self

    def __exit__(self, *exc):
        pop_interposer(self)
        self.thread = None
        return False

    def interpose(self, op, args, inplace, proceed):
        if threading.get_ident() != self.thread:
            return proceed(op, args, inplace)
        func = overload_of(op.name, args, inplace is not None)
        if func in SAC_IGNORED_OPS:
            return proceed(op, args, inplace)
        idx = self.counters[func]
        self.counters[func] = idx + 1
        return self.run(func, idx, op, args, inplace, proceed)


class _CachingMode(_SACMode):
    """The forward's context: runs each op call and stores the outputs that the policy saves."""

    def __init__(self, policy_fn, storage):
        super().__init__(storage)
        self.policy_fn = policy_fn

    def run(self, func, idx, op, args, inplace, proceed):
        generator = _generator_of(op, args)
        before = generator.get_state() if generator is not None else None
        out = proceed(op, args, inplace)
        positional, keywords = _policy_args(op, args)
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out), func, *positional,
                                **keywords)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        entries = self.storage.setdefault(func, {})
        if policy in _SAVE:
            rng = None if generator is None else (generator, before, generator.get_state())
            entries[idx] = _Stored(out, rng)
        else:
            entries[idx] = _RECOMPUTE
        return out


class _CachedMode(_SACMode):
    """The recomputation's context: hands out the stored outputs instead of running their ops again."""

    def __init__(self, storage, allow_cache_entry_mutation):
        super().__init__(storage)
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def run(self, func, idx, op, args, inplace, proceed):
        entries = self.storage.get(func)
        if entries is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. {_SAC_MISMATCH_MSG}")
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward but not found in storage. "
                               f"{_SAC_MISMATCH_MSG}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any region "
                               "computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return proceed(op, args, inplace)
        entries[idx] = _CONSUMED
        arrays = entry.arrays(self.allow_cache_entry_mutation)
        entry.replay_rng()
        if op.view:  # See Note [Selective activation checkpointing]
            return proceed(op, args, inplace)
        return proceed(_replaying(op, arrays), args, inplace)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The ``context_fn`` pair of selective activation checkpointing: keep chosen ops' outputs, recompute the rest.

    Pass ``functools.partial(create_selective_checkpoint_contexts, policy)`` as ``context_fn`` to
    ``checkpoint(..., use_reentrant=False)``. In the forward each op call of the segment is shown
    to the policy; the outputs of the calls it saves are kept, and the recomputation in backward
    uses them instead of running those calls again. Ops are named as in PyTorch,
    ``retrograd.ops.aten.mm.default`` for ``torch.ops.aten.mm.default`` (all overloads of an op
    compare equal; a ``matmul`` is named ``mm``, ``bmm``, ``mv`` or ``dot`` by its operands' dims,
    as PyTorch decomposes it). See Note [Selective activation checkpointing].

    Args:
        policy_fn_or_list: a function ``(ctx, op, *args, **kwargs) -> CheckpointPolicy`` (a bool is
            read as ``MUST_SAVE`` or ``PREFER_RECOMPUTE``), or a list of ops to save (``MUST_SAVE``;
            every other op ``PREFER_RECOMPUTE``).
        allow_cache_entry_mutation (bool): allow the segment to write in place into a kept output,
            which the recomputation then hands out as it is; by default that raises in backward.

    Returns:
        A pair of context managers: the forward's and the recomputation's.

    Raises:
        TypeError: if ``policy_fn_or_list`` is neither a function nor a list.
        ValueError: if the list holds something other than an op overload.

    Example::
        >>> import functools
        >>> import retrograd as rg
        >>> from retrograd.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts
        >>> x = rg.tensor([0.5, 1.0], requires_grad=True)
        >>> context_fn = functools.partial(create_selective_checkpoint_contexts, [rg.ops.aten.sin.default])
        >>> y = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False, context_fn=context_fn)
        >>> y.sum().backward()  # recomputes exp, takes sin's output from the forward
        >>> bool(rg.allclose(x.grad, x.detach().sin().exp() * x.detach().cos()))
        True
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = (f"Name one of its overloads instead, as {op}.default."
                         if isinstance(op, OpOverloadPacket) else
                         "Ops are named as in PyTorch: retrograd.ops.aten.mm.default for torch.ops.aten.mm.default.")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. "
                                 f"{extra}")
        ops = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = {}  # op -> {index of the call: _Stored, _RECOMPUTE or _CONSUMED}
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)
