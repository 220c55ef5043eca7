"""Stopping a backward pass (Ctrl-C, a cancel from another thread, a timeout) where it leaves the engine consistent.

Note [Interrupts during backward]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Python raises KeyboardInterrupt in the main thread between any two bytecodes. Raised inside the
engine's own bookkeeping (between popping a task and counting it done, between counting a task
and pushing it), it would leave tasks of an abandoned pass in a queue, or a count that never
drains: the next backward would run them, or wait forever. So from the first backward pass the
main thread runs, if the process's SIGINT handler is then Python's default, retrograd's handler
takes its place. Outside a backward pass it does what Python's does: it raises KeyboardInterrupt.
During one:

- In code that is not the engine's (a node's backward, a hook, an op that a node calls), it
  raises KeyboardInterrupt at once. There it is an error of that node, and it travels as any
  error does (Note [How errors travel]).
- In the engine's bookkeeping (``engine.py``, ``engine_threads.py``, ``graph_task.py``,
  ``input_buffer.py``, and waits on a queue or a future), it takes no lock and raises nothing: it
  marks the GraphTask running on the thread as failed with the KeyboardInterrupt. That pass then
  drains as after any error:
  tasks already queued, on every thread, are dropped without running, and a device worker
  finishes the node it is running, if any.

Either way the backward call raises the KeyboardInterrupt only once nothing of its pass is
queued or running anywhere, so the next backward starts clean. An interrupt that no GraphTask
could take (while a pass starts or completes) is raised when the call returns. The compiled
loop runs no Python bytecode between nodes written in C, so it sees an interrupt at the next
node that runs Python code, or when the pass returns.
PyTorch's engine runs in C++ and sees an interrupt only where Python code runs: in a node or a
hook, or after backward returns. This is the same, with the engine's bookkeeping in the place
of its C++.

A SIGINT handler that the user installed before the first backward is left alone: interrupts are
then the user's to handle.

Note [Stopping a pass from outside]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A pass is cancelled (``BackwardPass.cancel()``, autograd/watchdog.py) or times out
(``backward(timeout=...)``) the way an interrupt stops it: ``GraphTask.cancel`` stores a
``BackwardCancelled`` (or ``BackwardTimeout``) as the pass's error, under its lock, and the pass
drains as after any error (Note [How errors travel]): the node running on each thread finishes,
its outputs are routed, and every task popped afterwards is dropped without running, in the
Python engine and in the compiled loop alike (both read ``has_error`` before each node). So the
error reaches the thread that called backward at the next node boundary, once nothing of the
pass is queued or running, and the next backward starts clean. A leaf's ``.grad`` is then what the
AccumulateGrad nodes that ran before that boundary accumulated: each such node had received every
gradient of its leaf (it runs only then), so ``.grad`` holds either the leaf's whole gradient of
this pass or nothing of it. Without ``retain_graph`` the graph is freed as after any error.
Cancelling a pass also cancels the passes nested in it on its thread (a reentrant backward
running inside one of its nodes), and a nested pass started by a node of a cancelled pass is
cancelled as it starts, so a reentrant checkpoint stops at its first node boundary too.

Deadlines (a pass's timeout, the watchdog's ``set_backward_watchdog``) are kept by one daemon
thread, started on first use; arming one is a dict insertion under a lock, which wakes the
thread only when the new deadline comes before the one it sleeps until. A pass with a deadline
runs in Python: the compiled loop is not entered while one is set (the thread that watches
needs the pass's GraphTask before it runs). A pass with neither costs one check.
"""
from __future__ import annotations

import functools
import os
import signal
import sys
import threading
from concurrent.futures import _base as _futures

from ..backends.numpy_backend import FP_QUIET, FP_STATE
from .graph import node_name
from .graph_task import NO_DEVICE, GraphTask, local

__all__ = ["delivered_on_return", "deliver_compiled", "install", "state", "BackwardCancelled", "BackwardTimeout", "Watchdog",
           "cancel_pass", "describe_pass", "arm", "disarm"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_ENGINE_FILES = frozenset([*(os.path.join(_HERE, f"{m}.py") for m in ("engine", "engine_threads", "graph_task",
                                                                     "input_buffer", "interrupts")),
                           os.path.abspath(threading.__file__), os.path.abspath(_futures.__file__)])


class _State:
    installed = False  # tried to take over SIGINT (done once, on the main thread)
    pending = False  # an interrupt arrived during the outermost backward call; raised at its end


state = _State()


def install() -> None:
    """Takes over SIGINT if its handler is Python's default; the first call on the main thread decides."""
    if state.installed or threading.current_thread() is not threading.main_thread():
        return
    state.installed = True
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


def _on_sigint(signum, frame):
    if local.worker_device == NO_DEVICE or frame is None or frame.f_code.co_filename not in _ENGINE_FILES:
        raise KeyboardInterrupt  # not in the engine's bookkeeping: as Python's own handler
    gt = local.current_graph_task
    if gt is not None:
        gt.interrupt(KeyboardInterrupt())
    state.pending = True  # in case the GraphTask completed without it


def delivered_on_return(run):
    """Wraps an entry of the engine (``Engine.execute``, the compiled ``backward``): a pending
    interrupt is raised once the call's pass is over."""
    @functools.wraps(run)
    def delivering(*args, **kwargs):
        if not state.installed:
            install()
        try:
            result = run(*args, **kwargs)
        except BaseException:
            state.pending = False  # the pass's own error, or the interrupt itself, is on its way
            raise
        if state.pending:
            state.pending = False
            raise KeyboardInterrupt
        return result
    return delivering


def deliver_compiled(entry, *args):
    """A compiled entry of the engine (``backward`` or ``grad`` of ``_engine_loop``) called as ``Engine.execute``
    runs a pass, in one frame: NumPy's floating-point errors ignored (``quietly``), so a hook's NumPy call warns
    in neither engine mode, and a pending interrupt raised once the pass is over (``delivered_on_return``), with
    no generic wrapper or adapter around the plainest ``tensor.backward()`` and ``autograd.grad``."""
    if not state.installed:
        install()
    token = FP_STATE.set(FP_QUIET)
    try:
        result = entry(*args)
    except BaseException:
        state.pending = False  # as delivering
        raise
    finally:
        FP_STATE.reset(token)
    if state.pending:
        state.pending = False
        raise KeyboardInterrupt
    return result


class BackwardCancelled(RuntimeError):
    """Raised by ``backward``/``grad`` whose pass was cancelled from another thread. See Note [Stopping a pass from
    outside]."""


class BackwardTimeout(BackwardCancelled):
    """Raised by ``backward``/``grad`` whose pass ran past its ``timeout=``."""


def describe_pass(gt) -> str:
    """How messages name a pass: its roots' nodes and the thread that runs it."""
    root = gt.graph_root
    names = [] if root is None else [node_name(e[0]) for e in root.next_edges if e is not None]
    roots = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "") if names else "no node"
    thread = _thread_name(gt.owner_thread)
    depth = f", nested at reentrant depth {gt.reentrant_depth}" if gt.reentrant_depth else ""
    return f"the backward pass from {roots} on thread {thread!r}{depth}"


def _thread_name(ident) -> str:
    for t in threading.enumerate():
        if t.ident == ident:
            return t.name
    return f"<thread {ident}>"


def cancel_pass(gt, make_error) -> bool:
    """Cancels ``gt`` with ``make_error(gt)``, and the passes nested in it on its thread. Returns whether ``gt``
    was still running (not failed, not completing). See Note [Stopping a pass from outside]."""
    error = make_error(gt)
    cancelled = gt.cancel(error)
    for other in list(GraphTask.in_flight):
        if other is not gt and other.owner_thread == gt.owner_thread and other.reentrant_depth > gt.reentrant_depth:
            other.cancel(error)
    return cancelled


def cancel_if_outer_cancelled(gt) -> None:
    """A nested pass started by a node of a cancelled pass is cancelled at once, with the same error."""
    outer = local.current_graph_task
    if outer is not None and isinstance(outer.error, BackwardCancelled):
        gt.cancel(outer.error)


class Watchdog:
    """The backward watchdog's setting (``set_backward_watchdog``): ``seconds`` is None while it is off."""

    seconds = None
    file = None
    dump = None  # dump(graph_task, file), set by autograd/watchdog.py


class _Deadlines:
    """One daemon thread that runs each armed action once its time has come, unless disarmed before."""

    def __init__(self):
        self.cond = threading.Condition(threading.Lock())
        self.due = {}  # key -> (when, action, argument)
        self.wakes_at = None  # when the thread next wakes by itself; None: it waits for a notify
        self.thread = None

    def arm(self, key, when, action, argument) -> None:
        with self.cond:
            self.due[key] = (when, action, argument)
            if self.thread is None:
                self.thread = threading.Thread(target=self._main, name="retrograd-watchdog", daemon=True)
                self.thread.start()
            if self.wakes_at is None or when < self.wakes_at:
                self.cond.notify()

    def disarm(self, key) -> None:
        with self.cond:
            self.due.pop(key, None)

    def _main(self) -> None:
        while True:
            with self.cond:
                now = GraphTask.clock()
                ready = [(k, v) for k, v in self.due.items() if v[0] <= now]
                for key, _ in ready:
                    del self.due[key]
                if not ready:
                    self.wakes_at = min((v[0] for v in self.due.values()), default=None)
                    self.cond.wait(None if self.wakes_at is None else self.wakes_at - now)
                    continue
            for _, (_, action, argument) in ready:
                try:
                    action(argument)
                except Exception as exc:  # noqa: BLE001 - the watching thread must survive
                    print(f"retrograd: the backward watchdog failed: {exc!r}", file=sys.stderr)
            ready = None  # hold no GraphTask while waiting


def _after_fork() -> None:
    """In a forked child only the forking thread exists: no watching thread, no other thread's passes."""
    _deadlines.__init__()
    me = threading.get_ident()
    for gt in list(GraphTask.in_flight):
        if gt.owner_thread != me:
            GraphTask.in_flight.pop(gt, None)


_deadlines = _Deadlines()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _time_out(gt) -> None:
    elapsed = GraphTask.clock() - gt.started
    cancel_pass(gt, lambda g: BackwardTimeout(f"{describe_pass(g)} timed out: it ran {elapsed:.3g} s, past its "
                                              f"timeout of {gt.timeout:g} s"))


def _watch(gt) -> None:
    dump = Watchdog.dump
    if dump is not None and gt in GraphTask.in_flight:
        dump(gt, Watchdog.file)


def arm(gt) -> None:
    """Arms the deadlines of a starting pass: its timeout, and the watchdog's for a top-level pass."""
    if gt.timeout is not None:
        _deadlines.arm((gt, 0), gt.started + gt.timeout, _time_out, gt)
    seconds = Watchdog.seconds
    if seconds is not None and gt.reentrant_depth == 0:
        _deadlines.arm((gt, 1), gt.started + seconds, _watch, gt)


def disarm(gt) -> None:
    """Disarms what ``arm`` armed for a pass that has returned."""
    _deadlines.disarm((gt, 0))
    _deadlines.disarm((gt, 1))
