"""retrograd.profiler: what ran, for how long, forward and backward (PyTorch's ``torch.profiler``).

``profile`` records, while it is active, every op call (``aten::<op>``, through the op call's
interposition, Note [Op call interposition]), every backward node and step of the engine
(through its observers, Note [Observing the engine]), every ``record_function`` range and, with
``with_modules=True``, every ``nn.Module`` forward (``nn.Module: Linear_0``). PyTorch's profiler
records module scopes only with its Python tracer on; so does this one only when asked.
Factory functions (``ones``, ``randn``, ``tensor``...) are not op calls and are not recorded.

What is not recorded as PyTorch does: ``profile_memory`` counts the bytes of the arrays an op
call returns that it newly allocated (views count nothing), not the allocator's every
allocation and free; there are no device (CUDA) kernels, so ``ProfilerActivity.CUDA`` adds nothing.
"""
from __future__ import annotations

import contextlib
import enum
import gzip
import itertools
import os
import socket
import sys
import threading
import time
import traceback
import weakref

from .._tensor import Tensor
from ..autograd import observation as _observation
from ..autograd.graph import MAX_SEQUENCE_NR
from ..nn.modules import module as _module
from ..ops._call import pop_interposer, push_interposer
from . import itt
from ._events import BACKWARD, ENGINE, MODULE, OP, USER, DeviceType, EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction", "tensorboard_trace_handler",
           "EventList", "FunctionEvent", "FunctionEventAvg", "DeviceType"]


class ProfilerActivity(enum.Enum):
    """What a profile records: CPU work (all retrograd records), CUDA kernels (none on retrograd)."""

    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    """What a profile does at a step, as ``schedule`` decides."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0):
    """The profiling schedule of PyTorch: skip ``skip_first`` steps, then cycles of ``wait`` idle
    steps, ``warmup`` steps and ``active`` recorded steps (``repeat`` cycles; 0: until the end).

    Returns:
        A function of the step number giving its ``ProfilerAction``; the last active step of a cycle
        is ``RECORD_AND_SAVE``, after which ``on_trace_ready`` is called.

    Example::
        >>> from retrograd.profiler import schedule
        >>> s = schedule(wait=1, warmup=1, active=2)
        >>> [s(i).name for i in range(4)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"Invalid step number {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _record_always(step):
    return ProfilerAction.RECORD


_RETROGRAD = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_ids = itertools.count(1)
_recorders = ()  # the recorders now recording, innermost profile last


class _Recorder:
    """Records one profile's events: the op interposer, the engine observer, and the ranges' stack."""

    def __init__(self, record_shapes, profile_memory, with_stack, with_modules):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.events = []
        self.lock = threading.Lock()
        self.local = threading.local()
        self.module_index = weakref.WeakKeyDictionary()
        self.module_counts = {}
        self.handles = []

    # -- ranges ------------------------------------------------------------------------------
    def open(self, name, kind, input_shapes=None, sequence_nr=-1, args=None) -> FunctionEvent:
        stack = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        event = FunctionEvent(next(_ids), name, threading.get_native_id(), 0.0, kind=kind, sequence_nr=sequence_nr,
                              input_shapes=input_shapes if self.record_shapes else None,
                              stack=_user_stack() if self.with_stack and kind in (OP, USER) else None, args=args)
        if stack:
            event.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(event)
        stack.append(event)
        with self.lock:
            self.events.append(event)
        event.start_us = event.end_us = time.perf_counter_ns() / 1000.0
        return event

    def close(self, event) -> None:
        event.end_us = time.perf_counter_ns() / 1000.0
        stack = getattr(self.local, "stack", None)  # None where the range was opened on another thread
        while stack:  # a range left open by an error inside closes with its parent
            if stack.pop() is event:
                break

    # -- op calls: the interposer (Note [Op call interposition]) ------------------------------
    def interpose(self, op, args, inplace, proceed):
        name = "aten::" + op.name + ("_" if inplace is not None else "")
        tensors = [a for a in args if isinstance(a, Tensor)]
        before = {id(t._node) for t in tensors if t._node is not None}
        shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args] if self.record_shapes else None
        event = self.open(name, OP, shapes)
        try:
            out = proceed(op, args, inplace)
        finally:
            self.close(event)
        results = out if isinstance(out, tuple) else (out,)
        inputs = {id(t._data) for t in tensors} | {id(t._data.base) for t in tensors if t._data.base is not None}
        for r in results:
            if not isinstance(r, Tensor):
                continue
            node = r._node
            if (node is not None and id(node) not in before and event.sequence_nr < 0
                    and not any(c.sequence_nr == node.sequence_nr for c in event.cpu_children)):
                event.sequence_nr = node.sequence_nr  # this call made the node (its innermost op call)
            if self.profile_memory and r is not inplace and r._data.base is None and id(r._data) not in inputs:
                event.cpu_memory_usage += r._data.nbytes
        return out

    def composite_range(self, name, args):
        """The range of a composite function's call (``aten::linear``): See Note [Op call interposition]."""
        shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args] if self.record_shapes else None
        return _Range(self, self.open("aten::" + name, OP, shapes))

    # -- the engine: the observer (Note [Observing the engine]) --------------------------------
    def begin(self, name, node, grads, args):
        if node is None:
            return self.open(name, ENGINE, args=args)
        seq = node.sequence_nr if node.sequence_nr < MAX_SEQUENCE_NR else -1
        shapes = [list(g.shape) if g is not None else [] for g in grads] if grads is not None else []
        return self.open(name, BACKWARD, shapes if not name.startswith("autograd::") else [], seq)

    def end(self, event) -> None:
        self.close(event)

    # -- nn.Module scopes ----------------------------------------------------------------------
    def module_pre_hook(self, module, args):
        index = self.module_index.get(module)
        if index is None:
            cls = type(module).__name__
            index = self.module_index[module] = self.module_counts.get(cls, 0)
            self.module_counts[cls] = index + 1
        stack = getattr(self.local, "modules", None)
        if stack is None:
            stack = self.local.modules = []
        stack.append(self.open(f"nn.Module: {type(module).__name__}_{index}", MODULE))

    def module_hook(self, module, args, output):
        stack = getattr(self.local, "modules", None)
        if stack:
            self.close(stack.pop())

    # -- on and off ----------------------------------------------------------------------------
    def start(self) -> None:
        if self.with_modules:
            self.handles = [_module.register_module_forward_pre_hook(self.module_pre_hook),
                            _module.register_module_forward_hook(self.module_hook, always_call=True)]
        _activate(self)

    def stop(self) -> None:
        _deactivate(self)
        for h in self.handles:
            h.remove()
        self.handles = []

    def finished_events(self) -> EventList:
        """The events, each backward one with the thread of the op call that made its node, each
        range's memory with its children's."""
        if self.profile_memory:
            for e in reversed(self.events):  # a child began after its parent
                e.cpu_memory_usage += sum(c.cpu_memory_usage for c in e.cpu_children)
        threads = {e.sequence_nr: e.thread for e in self.events if e.kind == OP and e.sequence_nr >= 0}
        for e in self.events:
            if e.kind == BACKWARD:
                e.fwd_thread = threads.get(e.sequence_nr, 0)
        return EventList(sorted(self.events, key=lambda e: (e.start_us, e.id)), self.profile_memory)


def _activate(recorder) -> None:
    """Makes ``recorder`` see every op call (its ``interpose`` and ``composite_range``), backward pass (its
    ``begin`` and ``end``) and ``record_function`` range (its ``open`` and ``close``)."""
    global _recorders
    push_interposer(recorder)
    _observation.add_observer(recorder)
    _recorders = _recorders + (recorder,)


def _deactivate(recorder) -> None:
    """Undoes ``_activate(recorder)``."""
    global _recorders
    _recorders = tuple(r for r in _recorders if r is not recorder)
    _observation.remove_observer(recorder)
    pop_interposer(recorder)


class _Range:
    """An open range of a recorder, closed by ``close()``."""

    __slots__ = ("recorder", "event")

    def __init__(self, recorder, event):
        self.recorder = recorder
        self.event = event

    def close(self) -> None:
        self.recorder.close(self.event)


def _user_stack():
    """The caller's source lines outside retrograd, innermost first, as ``file(line): function``."""
    frame = sys._getframe(2)
    lines = []
    while frame is not None:
        if not frame.f_code.co_filename.startswith(_RETROGRAD):
            lines.append(f"{frame.f_code.co_filename}({frame.f_lineno}): {frame.f_code.co_name}")
        frame = frame.f_back
    return lines


class record_function(contextlib.ContextDecorator):
    """Marks a range of code with a name in the active profiles (a context manager or a decorator).

    Outside a profile it records nothing and costs one check.

    Args:
        name (str): the range's name, as tables and traces show it.
        args (str, optional): shown in the trace's event arguments.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile, record_function
        >>> with profile() as prof:
        ...     with record_function("my_block"):
        ...         y = rg.ones(2) * 2
        >>> [e.name for e in prof.events()]
        ['my_block', 'aten::ones', 'aten::mul']
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._open = threading.local()

    def __enter__(self):
        stack = getattr(self._open, "stack", None)
        if stack is None:
            stack = self._open.stack = []
        stack.append([(r, r.open(self.name, USER, args={"args": self.args} if self.args else None))
                      for r in _recorders])
        return self

    def __exit__(self, *exc):
        stack = getattr(self._open, "stack", None)
        if stack:
            for recorder, event in reversed(stack.pop()):
                recorder.close(event)
        return False


class profile:
    """Profiles the code in its scope (PyTorch's ``torch.profiler.profile``).

    Args:
        activities: ``ProfilerActivity`` values to record; None for CPU.
        schedule: a function of the step number giving a ``ProfilerAction`` (see ``schedule``); None
            records every step.
        on_trace_ready: called with the profile at the end of each recorded cycle (and at exit).
        record_shapes (bool): record the shapes of each op's inputs and each node's gradients.
        profile_memory (bool): record the bytes each op call allocated for its results.
        with_stack (bool): record the source lines of each op call and ``record_function``.
        with_flops (bool): accepted for PyTorch's signature; retrograd counts no FLOPs.
        with_modules (bool): record each ``nn.Module`` forward as ``nn.Module: <Class>_<i>``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile, ProfilerActivity
        >>> x = rg.ones(3, requires_grad=True)
        >>> with profile(activities=[ProfilerActivity.CPU]) as prof:
        ...     (x * 2).sum().backward()
        >>> "autograd::engine::evaluate_function: MulBackward0" in [e.name for e in prof.events()]
        True
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False):
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.schedule = schedule if schedule is not None else _record_always
        self.record_steps = schedule is not None  # ProfilerStep#<n> ranges, as PyTorch's, only with a schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._recorder = None
        self._finished = None
        self._step_range = None

    # -- recording -----------------------------------------------------------------------------
    def _begin_recording(self):
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_stack, self.with_modules)
        self._recorder.start()

    def _end_recording(self):
        if self._recorder is None:
            return
        self._close_step()
        recorder, self._recorder = self._recorder, None
        recorder.stop()
        self._finished = recorder.finished_events()

    def _open_step(self):
        if self._recorder is not None and self.record_steps:
            self._step_range = self._recorder.open(f"ProfilerStep#{self.step_num}", USER)

    def _close_step(self):
        if self._step_range is not None and self._recorder is not None:
            self._recorder.close(self._step_range)
        self._step_range = None

    def _enter_action(self, action):
        """Moves from the current action to ``action``, as PyTorch's profiler's state machine does."""
        prev = self.current_action
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev == ProfilerAction.RECORD_AND_SAVE or (prev in recording and action not in recording):
            self._end_recording()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if action in recording and self._recorder is None:
            self._begin_recording()
        self.current_action = action

    def start(self):
        """Starts profiling (what entering the ``with`` block does)."""
        self._enter_action(self.schedule(self.step_num))
        self._open_step()

    def stop(self):
        """Stops profiling; a recording in progress is finished and handed to ``on_trace_ready``."""
        if self._recorder is not None:
            self._end_recording()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        self.current_action = ProfilerAction.NONE

    def step(self):
        """Marks the end of a training step: the schedule decides what the next one records."""
        self._close_step()
        self.step_num += 1
        self._enter_action(self.schedule(self.step_num))
        self._open_step()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- results -------------------------------------------------------------------------------
    def events(self) -> EventList:
        """The events of the last finished recording, in the order they began."""
        if self._finished is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._finished

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0) -> EventList:
        """The events averaged by name (see ``EventList.key_averages``)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path) -> None:
        """Writes the last recording as Trace Event JSON (see ``EventList.export_chrome_trace``)."""
        self.events().export_chrome_trace(path)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each recording's trace into ``dir_name``, as
    ``<worker_name>.<time in ns>.pt.trace.json`` (``.gz`` with ``use_gzip``)."""

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns()}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
                g.write(f.read())
            os.remove(path)

    return handler

