"""Seeing a backward pass from outside: a dump of the engine's state, a watchdog, and cancelling a pass.

Note [Dumping the engine's state]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``dump_engine_state`` writes what the engine is doing, read from another thread (or a signal
handler) while it does it, at no cost to the passes: the passes in flight (Note [Passes in flight]
in graph_task.py), with, for each, its owner thread, how long it has run, its outstanding tasks,
reentrant depth and exit state; the nodes that are running (found on the threads' Python stacks: a
frame of ``Engine._run_task`` names its node, and so does the ``apply`` of a node written in
Python, such as a custom Function's, which is how a node run by the compiled loop is found); the
nodes waiting for gradients (a partly filled input buffer), each with the count of producers still
to report and, found by walking the pass's graph from its root with an explicit stack, the
producers that have not delivered yet and what they are doing (running, queued, or waiting
themselves); every ready queue's entries, CPU and device queues; and every engine thread's Python
stack. What it reads it copies first (a dict or list copy holds the GIL throughout), so it never
sees a half-changed structure, and it takes no lock, so a dump never waits on a stuck pass.
"""
from __future__ import annotations

import faulthandler
import io
import signal
import sys
import threading
import traceback
import weakref

from . import graph
from .engine import Engine, get_default_engine
from .graph import _NodeBase as Node, node_name
from .graph_task import GraphTask
from .interrupts import BackwardCancelled, Watchdog, cancel_pass, describe_pass

__all__ = ["dump_engine_state", "set_backward_watchdog", "register_dump_on_signal", "current_passes", "BackwardPass"]

_RUN_TASK = Engine._run_task.__code__
_THREAD_MAIN = getattr(Engine.thread_main, "__wrapped__", Engine.thread_main).__code__


def _label(node) -> str:
    return f"{node_name(node)} (seq {getattr(node, 'sequence_nr', '?')})"


def _gt_label(gt) -> str:
    return f"GraphTask 0x{id(gt):x}"


def _engine_threads(passes, frames):
    """The threads the engine runs on: the owners of the passes, and its own (named ``retrograd-...``; the
    watchdog's thread, which only dumps, is left out)."""
    owners = {gt.owner_thread for gt in passes}
    return [t for t in threading.enumerate() if t.ident in frames and t.name != "retrograd-watchdog"
            and (t.ident in owners or t.name.startswith("retrograd-"))]


def _running(frames, thread_ids):
    """[(thread ident, node, GraphTask or None)] of the nodes running on those threads, innermost first."""
    found, seen = [], set()
    for ident in thread_ids:
        frame = frames.get(ident)
        while frame is not None:
            code, node, gt = frame.f_code, None, None
            if code is _RUN_TASK:
                local_vars = frame.f_locals
                node, gt = local_vars.get("node"), local_vars.get("gt")
            elif code is _THREAD_MAIN:  # the loop's current task: the pass of the nodes run inside it
                gt = frame.f_locals.get("gt")
            elif code.co_name == "apply" and code.co_varnames[:1] == ("self",):
                node = frame.f_locals.get("self")
            if isinstance(node, Node) and id(node) not in seen:
                seen.add(id(node))
                found.append((ident, node, gt))
            if isinstance(gt, GraphTask):  # the nodes of apply frames above run in this pass
                for i, (tid, n, g) in enumerate(found):
                    if tid == ident and g is None:
                        found[i] = (tid, n, gt)
            frame = frame.f_back
    return found


def _queued(queue):
    """The entries of a ready queue, in the order they pop."""
    return sorted(list(queue.heap), key=lambda e: e[:4])


def _waiting(gt, running_nodes, queued_nodes):
    """[(node, producers still to report, [(producer, what it does)])] of the nodes with a partly filled buffer."""
    not_ready = dict(gt.not_ready)
    if not not_ready:
        return []
    deps = dict(gt.dependencies)
    producers = {node: [] for node in not_ready}
    root = gt.graph_root
    seen = {root}
    stack = [root] if root is not None else []
    while stack:  # explicit stack: the graph may be a million nodes deep
        node = stack.pop()
        for edge in node.next_edges:
            if edge is None:
                continue
            nxt = edge[0]
            if nxt in producers:
                producers[nxt].append(node)
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    rows = []
    for node, buffer in not_ready.items():
        missing = []
        for p in producers[node]:
            if id(p) in running_nodes:
                missing.append((p, "running"))
            elif id(p) in queued_nodes:
                missing.append((p, "queued"))
            elif p in deps:
                missing.append((p, f"waiting for {deps[p]} producer(s)"))
        rows.append((node, deps.get(node, 0), missing))
    return rows


def _exit_state(gt) -> str:
    if gt.completed:
        return "completed"
    if gt.has_error:
        return f"failing with {gt.error!r}, draining its tasks"
    return "running"


def dump_engine_state(file=None) -> str:
    """Writes the state of every backward pass in flight, the ready queues and the engine threads' stacks.

    For each pass (GraphTask): its owner thread, how long it has run, its outstanding tasks, reentrant
    depth and exit state, the nodes running, and the nodes waiting on producers that have not delivered
    yet. Then every ready queue (CPU and device) and every engine thread's Python stack. Safe to call from
    any thread or a signal handler while passes run: it reads copies and takes no lock. See Note [Dumping
    the engine's state].

    Args:
        file (file-like, optional): where to write; ``sys.stderr`` by default.

    Returns:
        str: the text written.

    Example::
        >>> import io, retrograd as rg
        >>> rg.autograd.graph.dump_engine_state(io.StringIO()).splitlines()[0]
        'retrograd engine state: 0 backward passes in flight'
    """
    text = _format_state()
    out = sys.stderr if file is None else file
    out.write(text)
    out.flush()
    return text


def _format_state(header=None) -> str:
    passes = sorted(list(GraphTask.in_flight), key=lambda g: (g.started or 0.0, g.reentrant_depth))
    frames = sys._current_frames()
    threads = _engine_threads(passes, frames)
    running = _running(frames, [t.ident for t in threads])
    names = {t.ident: t.name for t in threading.enumerate()}
    queues = []  # (title, queue)
    seen_queues = set()
    for gt in passes:
        q = gt.cpu_ready_queue
        if id(q) not in seen_queues:
            seen_queues.add(id(q))
            queues.append((f"CPU queue of thread {names.get(gt.owner_thread, gt.owner_thread)!r}", q))
    for device, q in list(dict(get_default_engine()._device_queues).items()):
        if id(q) not in seen_queues:
            seen_queues.add(id(q))
            queues.append((f"device queue of {device} (thread 'retrograd-{device}')", q))
    entries = [(title, _queued(q)) for title, q in queues]
    queued_nodes = {id(e[5]) for _, es in entries for e in es if e[5] is not None}
    running_nodes = {id(n) for _, n, _ in running}
    now = GraphTask.clock()
    w = io.StringIO()
    if header:
        w.write(header + "\n")
    w.write(f"retrograd engine state: {len(passes)} backward pass{'' if len(passes) == 1 else 'es'} in flight\n")
    for gt in passes:
        owner = gt.owner_thread
        elapsed = "" if gt.started is None else f", running for {now - gt.started:.3f} s"
        timeout = "" if gt.timeout is None else f", timeout {gt.timeout:g} s"
        w.write(f"{_gt_label(gt)}: {describe_pass(gt)}\n")
        w.write(f"  owner thread: {names.get(owner, '?')!r} (ident {owner}){elapsed}{timeout}\n")
        w.write(f"  outstanding tasks: {gt.outstanding_tasks}, reentrant depth: {gt.reentrant_depth}, "
                f"keep_graph: {gt.keep_graph}, create_graph: {gt.grad_mode}, pruned: {gt.exec_info is not None}\n")
        w.write(f"  exit state: {_exit_state(gt)}\n")
        deepest = max((g.reentrant_depth for g in passes if g.owner_thread == owner), default=0)
        mine = [(tid, n) for tid, n, g in running
                if g is gt or (g is None and tid == owner and gt.reentrant_depth == deepest)]
        for tid, node in mine:
            w.write(f"  running: {_label(node)} on thread {names.get(tid, tid)!r}\n")
        for node, count, missing in _waiting(gt, running_nodes, queued_nodes):
            w.write(f"  waiting: {_label(node)} for {count} more producer(s)")
            if missing:
                w.write(": " + ", ".join(f"{_label(p)} [{what}]" for p, what in missing))
            w.write("\n")
    w.write("ready queues:\n")
    if not entries:
        w.write("  (none)\n")
    for title, es in entries:
        w.write(f"  {title}: {len(es)} entr{'y' if len(es) == 1 else 'ies'}\n")
        for kind, neg_depth, _, order, gt, node, _ in es:
            what = "shutdown" if kind == 0 else "wake-up" if node is None else _label(node)
            w.write(f"    {what}, depth {-neg_depth}, {'' if gt is None else _gt_label(gt)}\n")
    w.write("engine threads:\n")
    for t in threads:
        owned = [g for g in passes if g.owner_thread == t.ident]
        adopted = _adopted(frames.get(t.ident))
        depth = max((g.reentrant_depth for g in owned + adopted), default=0)
        w.write(f"  thread {t.name!r} (ident {t.ident}): owns {len(owned)} pass(es), reentrant depth {depth}\n")
        for line in traceback.format_stack(frames[t.ident]):
            w.write("    " + line.rstrip("\n").replace("\n", "\n    ") + "\n")
    return w.getvalue()


def _adopted(frame):
    """The GraphTasks whose loop (``thread_main``) runs on this stack."""
    found = []
    while frame is not None:
        if frame.f_code is _THREAD_MAIN:
            gt = frame.f_locals.get("graph_task")
            if isinstance(gt, GraphTask):
                found.append(gt)
        frame = frame.f_back
    return found


def _watchdog_dump(gt, file) -> None:
    seconds = Watchdog.seconds
    header = f"retrograd: backward watchdog: {describe_pass(gt)} has run longer than {seconds:g} s"
    out = sys.stderr if file is None else file
    out.write(_format_state(header))
    out.flush()


Watchdog.dump = _watchdog_dump


class set_backward_watchdog:
    """Dumps the engine's state once for every backward pass that runs longer than ``seconds``.

    A daemon thread watches the passes (top-level ones: a dump shows their nested passes too); each
    pass is re-armed as it starts and dumped at most once. Off (``seconds=None``), it costs one check
    per pass. While it is on, passes run in the Python engine rather than the compiled loop (Note
    [Stopping a pass from outside]). As a context manager it restores the previous setting on exit.

    Args:
        seconds (float or None): how long a pass may run before it is dumped; None turns it off.
        file (file-like, optional): where to write the dump (``dump_engine_state``); ``sys.stderr`` by default.

    Example::
        >>> import retrograd as rg
        >>> with rg.autograd.set_backward_watchdog(60.0):
        ...     rg.ones(2, requires_grad=True).sum().backward()
    """

    def __init__(self, seconds, file=None):
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or not 0 < seconds < float("inf")):
            raise ValueError(f"set_backward_watchdog(): seconds must be a positive number or None, but got {seconds!r}")
        self.prev = (Watchdog.seconds, Watchdog.file)
        Watchdog.seconds, Watchdog.file = (None if seconds is None else float(seconds)), file

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        Watchdog.seconds, Watchdog.file = self.prev


def register_dump_on_signal(signum=None, file=None):
    """Makes the signal ``signum`` (``signal.SIGQUIT``, Ctrl-\\ in a terminal, by default) dump the engine's state.

    The dump is written by a Python signal handler, on the main thread, as soon as it runs Python code
    again (a wait on a lock or an event is interrupted for it). If ``faulthandler`` is enabled
    (``faulthandler.is_enabled()``), the handler then chains to its dump: ``faulthandler.dump_traceback
    (all_threads=True)`` into the same file (or ``sys.stderr`` where the file has no descriptor), which
    shows every thread's stack even where Python's frames cannot be read. A handler of the signal that was
    already a Python function runs after both. Call it on the main thread (as ``signal.signal``).

    Args:
        signum (int, optional): the signal; ``signal.SIGQUIT`` by default (POSIX only).
        file (file-like, optional): where to write; ``sys.stderr`` by default.

    Returns:
        The previous handler of the signal: ``signal.signal(signum, previous)`` puts it back.
    """
    if signum is None:
        if not hasattr(signal, "SIGQUIT"):
            raise ValueError("register_dump_on_signal(): this platform has no SIGQUIT; pass the signal to use")
        signum = signal.SIGQUIT
    previous = signal.getsignal(signum)

    def dump_on_signal(sig, frame):
        dump_engine_state(file)
        if faulthandler.is_enabled():
            target = sys.stderr if file is None else file
            try:
                target.fileno()
            except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
                target = sys.__stderr__
            faulthandler.dump_traceback(file=target, all_threads=True)
        if callable(previous):
            previous(sig, frame)

    signal.signal(signum, dump_on_signal)
    return previous


class BackwardPass:
    """A backward pass in flight, as ``current_passes()`` returns it: what it is, and ``cancel()``.

    It refers to the pass weakly: once the pass has returned, ``done`` is True and ``cancel()`` does nothing.
    """

    __slots__ = ("_ref", "thread_id", "reentrant_depth", "started", "timeout", "description")

    def __init__(self, gt):
        self._ref = weakref.ref(gt)
        self.thread_id = gt.owner_thread
        self.reentrant_depth = gt.reentrant_depth
        self.started = gt.started
        self.timeout = gt.timeout
        self.description = describe_pass(gt)

    @property
    def thread(self):
        """The ``threading.Thread`` that called backward (or grad) for this pass, if it still runs."""
        for t in threading.enumerate():
            if t.ident == self.thread_id:
                return t
        return None

    @property
    def elapsed(self) -> float:
        """Seconds since the pass started."""
        return GraphTask.clock() - self.started

    @property
    def done(self) -> bool:
        """Whether the pass has returned (or raised) in its thread."""
        gt = self._ref()
        return gt is None or gt not in GraphTask.in_flight

    def cancel(self, reason: str | None = None) -> bool:
        """Stops the pass at its next node boundary: the thread that runs it raises ``BackwardCancelled``.

        The passes nested in it on its thread are cancelled too. What the leaves' ``.grad`` holds then:
        Note [Stopping a pass from outside].

        Args:
            reason (str, optional): added to the error's message.

        Returns:
            bool: False if the pass had already returned, failed or was completing (nothing changes).
        """
        gt = self._ref()
        if gt is None or gt not in GraphTask.in_flight:
            return False
        who = threading.current_thread().name

        def error(g):
            msg = f"{describe_pass(g)} was cancelled by thread {who!r} after {GraphTask.clock() - g.started:.3g} s"
            return BackwardCancelled(msg + (f": {reason}" if reason else ""))

        return cancel_pass(gt, error)

    def __repr__(self):
        return f"<BackwardPass {self.description}, running for {self.elapsed:.3f} s>"


def current_passes():
    """The backward passes in flight in this process, oldest first, top-level and nested, as ``BackwardPass``.

    Example::
        >>> import retrograd as rg
        >>> rg.autograd.graph.current_passes()
        []
    """
    passes = sorted(list(GraphTask.in_flight), key=lambda g: (g.started or 0.0, g.reentrant_depth))
    return [BackwardPass(gt) for gt in passes]


# See Note [Graph functions defined above the graph]
graph.dump_engine_state = dump_engine_state
graph.register_dump_on_signal = register_dump_on_signal
graph.current_passes = current_passes
graph.BackwardPass = BackwardPass
