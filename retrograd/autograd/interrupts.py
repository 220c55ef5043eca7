"""Interrupts (Ctrl-C) during a backward pass, delivered where they leave the engine consistent.

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
"""
from __future__ import annotations

import functools
import os
import signal
import threading
from concurrent.futures import _base as _futures

from .graph_task import NO_DEVICE, local

__all__ = ["delivered_on_return", "install", "state"]

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
