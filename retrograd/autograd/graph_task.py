"""The state of backward passes: GraphTask, the ready queues and each thread's place in the engine.

``engine.py`` runs passes; this module holds what a pass is made of (PyTorch's ``graph_task.h``
and the ready queue of ``engine.h``): the ``GraphTask`` with its dependency counts, input buffers,
captures and outcome, including step 5 of the engine (its post-processing); the ``NodeTask`` and
the ``ReadyQueue`` that orders them; and ``local``, the engine's per-thread state.
"""
from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from concurrent.futures import Future

from .._errors import _internal_assert
from . import grad_mode
from .anomaly_mode import _Anomaly, warn_of_failed_node
from .graph import node_name
from .input_buffer import InputBuffer

__all__ = ["GraphTask", "NodeTask", "ReadyQueue", "local", "NO_DEVICE", "CPU_DEVICE", "queue_callback",
           "is_checkpoint_valid"]

NO_DEVICE = -2
CPU_DEVICE = -1
_grad_state = grad_mode.state


class _WorkerState(threading.local):
    """Per-thread engine state; class attributes are each thread's initial values."""
    worker_device = NO_DEVICE  # NO_DEVICE: not in the engine; CPU_DEVICE: driving a GraphTask; or a device
    ready_queue = None  # this thread's queue: its CPU queue, or its device's queue
    current_depth = 0  # nested GraphTasks run inline on this thread
    total_depth = 0  # nested GraphTasks across the chain of threads
    current_graph_task = None
    checkpoint_valid = True


local = _WorkerState()


def queue_callback(callback) -> None:
    """Queues ``callback()`` to run when the current backward pass finishes.

    Callbacks run once each, in FIFO order, on the thread that finishes the pass; a callback
    may queue another, which runs in the same pass. A callback queued during a nested
    (reentrant) pass runs when that nested pass ends.

    Raises:
        RuntimeError: outside a backward pass.
    """
    graph_task = local.current_graph_task
    if graph_task is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    with graph_task.lock:
        graph_task.final_callbacks.append(callback)


def is_checkpoint_valid() -> bool:
    """False while a node runs inside ``autograd.grad`` (where reentrant checkpointing cannot work).

    See Note [Checkpoint validity] in engine.py.
    """
    return local.checkpoint_valid


class GraphTask:
    """The state of one backward pass. See Note [GraphTask ownership].

    Note [Passes in flight]
    ~~~~~~~~~~~~~~~~~~~~~~~
    ``GraphTask.in_flight`` holds every GraphTask whose pass is running, top-level and nested:
    the thread that runs a pass (``Engine._run_graph_task``, the compiled ``execute``) records
    itself in ``owner_thread`` and the time in ``started``, adds the GraphTask, and removes it when
    the pass returns, errors included. That is one dict insertion and one removal per pass, never
    per node. ``dump_engine_state``, the watchdog and ``current_passes`` (autograd/watchdog.py) read
    it from other threads; they copy what they read (a dict copied while another thread changes it
    is retried), and change nothing but through ``GraphTask.cancel``.
    """

    # exec_info[node] is a list [needed, captures]; _outcome a tuple (captured, error).
    EXEC_INFO_FIELDS = ("needed", "captures")
    OUTCOME_FIELDS = ("captured", "error")
    __slots__ = ("has_error", "error", "outstanding_tasks", "keep_graph", "grad_mode", "lock", "not_ready",
                 "dependencies", "exec_info", "captured_vars", "owner", "reentrant_depth", "exit_on_error",
                 "_future", "_claimed", "_outcome", "completed", "final_callbacks", "cpu_ready_queue",
                 "graph_root", "_nodes_in_graph", "owner_thread", "started", "timeout", "multithreading", "__weakref__")
    in_flight = {}  # GraphTask -> None while its pass runs: See Note [Passes in flight]
    clock = staticmethod(time.monotonic)  # what ``started`` is read from

    def __init__(self, keep_graph: bool, grad_mode: bool, reentrant_depth: int, cpu_ready_queue=None,
                 exit_on_error: bool = False):
        self.has_error = False
        self.error = None
        self.outstanding_tasks = 0
        self.keep_graph = bool(keep_graph)
        self.grad_mode = bool(grad_mode)
        self.lock = threading.RLock()
        self.not_ready = {}  # node -> InputBuffer of partially received gradients
        self.dependencies = {}  # node -> producers still to report
        self.exec_info = None  # None: run everything (.backward()); else node -> [needed, captures]
        self.captured_vars = []
        self.owner = NO_DEVICE
        self.reentrant_depth = reentrant_depth
        self.exit_on_error = exit_on_error
        self._future = None  # created on demand: most passes are driven and read by their caller
        self._claimed = False  # a thread has started the post-processing
        self._outcome = None  # (captured gradients, error) once completed
        self.completed = False
        self.final_callbacks = []
        self.cpu_ready_queue = cpu_ready_queue if cpu_ready_queue is not None else ReadyQueue()
        self.graph_root = None  # the node compute_dependencies walked from
        self._nodes_in_graph = None  # the nodes reachable from it, once will_execute has asked
        self.owner_thread = None  # threading.get_ident() of the thread that runs the pass, once it runs
        self.started = None  # clock() when the pass began to run
        self.timeout = None  # seconds the pass may run (backward(timeout=...)), or None
        self.multithreading = _grad_state.multithreading  # the caller's: See Note [Multithreading switch]

    @property
    def future(self) -> Future:
        """A ``concurrent.futures.Future`` of the captured gradients, or of the error."""
        with self.lock:
            future = self._future
            if future is None:
                future = self._future = Future()
                if self._outcome is not None:
                    _resolve(future, self._outcome)
        return future

    def outcome(self):
        """The captured gradients of a completed GraphTask; raises its error if it has one.

        Raising hands the error over: the GraphTask lets go of it (and of its future, which holds it
        too), because the frames that the error's traceback gathers on its way out hold the GraphTask.
        See Note [A failed pass is freed by reference counting].
        """
        _internal_assert(self._outcome is not None, "GraphTask.outcome() before the GraphTask completed")
        captured, error = self._outcome
        if error is None:
            return captured
        self._outcome, self.error, self._future = (None, None), None, None
        try:
            raise error
        finally:
            del error  # this frame is in the traceback too

    def should_execute(self, node) -> bool:
        info = self.exec_info.get(node)
        return info is not None and (info[0] or info[1] is not None)

    def will_execute(self, node) -> bool:
        """Whether this pass runs ``node`` (or has run it): PyTorch's ``_will_engine_execute_node``.

        True if the node is reachable from the root and, in a pruned pass, needed or captured.

        Raises:
            RuntimeError: for a node with no next edges (a leaf's AccumulateGrad) that a
                ``.grad()`` pass captures, which PyTorch does not support either.
        """
        nodes = self._nodes_in_graph
        if nodes is None:  # walked once, on demand: most passes never ask
            nodes, stack = set(), [] if self.graph_root is None else [self.graph_root]
            while stack:
                for edge in stack.pop().next_edges:
                    if edge is not None and edge[0] not in nodes:
                        nodes.add(edge[0])
                        stack.append(edge[0])
            self._nodes_in_graph = nodes
        if node not in nodes:
            return False
        if self.exec_info is None:
            return True
        info = self.exec_info.get(node)
        if info is None or not (info[0] or info[1] is not None):
            return False
        if info[1] is not None and all(edge is None for edge in node.next_edges):
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                               "autograd.grad(). This is currently not supported.")
        return True

    def init_to_execute(self, graph_root, outputs, accumulate_grad: bool) -> None:
        """Marks the nodes on a path from the root to ``outputs`` as needed (``.grad()`` pruning).

        Without ``accumulate_grad``, each output edge gets a capture (input slot -> result slot);
        with it (``backward(inputs=...)``), the output nodes themselves are marked needed.
        """
        exec_info = self.exec_info = {}
        for output_idx, edge in enumerate(outputs):
            if edge is None:  # an input the graph never reached: never key exec_info on it
                continue
            info = exec_info.setdefault(edge[0], [False, None])
            if accumulate_grad:
                info[0] = True
            else:
                if info[1] is None:
                    info[1] = []
                info[1].append((edge[1], output_idx))
        self.captured_vars = [None] * len(outputs)
        exec_info.setdefault(graph_root, [False, None])[0] = True
        # Iterative post-order DFS: a node is needed if any child is needed or captures.
        visited = {graph_root}
        stack = [(graph_root, iter(graph_root.next_edges))]
        while stack:
            node, children = stack[-1]
            for edge in children:
                if edge is not None and edge[0] not in visited:
                    visited.add(edge[0])
                    stack.append((edge[0], iter(edge[0].next_edges)))
                    break
            else:
                stack.pop()
                for edge in node.next_edges:
                    if edge is not None:
                        info = exec_info.get(edge[0])
                        if info is not None and (info[0] or info[1] is not None):
                            exec_info.setdefault(node, [False, None])[0] = True
                            break

    def set_exception(self, exc: BaseException, node) -> None:
        """Records the first error of this GraphTask. See Note [How errors travel].

        Note [A failed pass is freed by reference counting]
        ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        An error's traceback holds the frames it passed through, and their locals. The engine's own
        frames (``_run_task``, ``evaluate_function``, ``call_function``) hold the GraphTask, which
        holds the error: a cycle that kept the pass's graph and saved tensors alive until the cyclic
        collector ran. So the error keeps only the frames below the engine's (the node's apply and
        the user's code, as PyTorch's tracebacks show them), and ``outcome`` lets go of the error
        when it raises it. A failed pass is then freed as soon as the caller drops the exception.
        """
        exc.__traceback__ = _without_engine_frames(exc.__traceback__)
        with self.lock:
            if self.has_error:
                return
            self.has_error = True
            self.error = exc
        if node is not None:
            _add_note(exc, f"(raised in the backward of {node_name(node)})")
            if _Anomaly.enabled:
                _add_note(exc, warn_of_failed_node(node))
        if self.exit_on_error:
            self.mark_as_completed_and_run_post_processing()

    def cancel(self, exc: BaseException) -> bool:
        """Fails the pass with ``exc`` from any thread; it stops at its next node boundary, as after an error.

        Returns False, changing nothing, if the pass has already failed or is completing.
        See Note [Stopping a pass from outside] in interrupts.py.
        """
        with self.lock:
            if self.has_error or self._claimed:
                return False
            self.error = exc
            self.has_error = True
        return True

    def interrupt(self, exc: BaseException) -> None:
        """Fails the pass with ``exc`` from a signal handler, taking no lock. See Note [Interrupts during backward]."""
        if not self.has_error and not self._claimed:
            self.error = exc
            self.has_error = True

    # -- step 5 of the engine (see engine.py) ------------------------------------------------------
    def mark_as_completed_and_run_post_processing(self) -> None:
        """Completes the GraphTask exactly once: post-processing, then its outcome and future.

        Whoever finishes the last task (or sets the error, with ``exit_on_error``) calls it; only
        the first call does anything.
        """
        with self.lock:
            if self._claimed:
                return
            self._claimed = True
        self._complete()

    def _complete(self) -> None:
        """The post-processing of a claimed GraphTask, then its outcome and future."""
        if self.has_error:
            outcome = (None, self.error)
        else:
            try:
                outcome = (self.exec_post_processing(), None)
            except BaseException as exc:  # noqa: BLE001 - a callback's error goes to the caller
                self.has_error = True
                self.error = exc
                outcome = (None, exc)
        with self.lock:
            self._outcome = outcome
            self.completed = True
            future = self._future
        if future is not None:
            _resolve(future, outcome)

    def exec_post_processing(self):
        """Runs the final callbacks (in this pass's grad mode) and returns the captured gradients."""
        if self.not_ready:
            raise RuntimeError("could not compute gradients for some functions")
        prev_task = local.current_graph_task
        prev_grad = _grad_state.grad_enabled
        local.current_graph_task = self
        _grad_state.grad_enabled = self.grad_mode
        try:
            i = 0
            while True:  # callbacks may queue more callbacks: re-read the length every time
                with self.lock:
                    if i >= len(self.final_callbacks):
                        break
                    callback = self.final_callbacks[i]
                callback()
                i += 1
        finally:
            local.current_graph_task = prev_task
            _grad_state.grad_enabled = prev_grad
        captured, self.captured_vars = self.captured_vars, []
        return captured


def _without_engine_frames(tb):
    """``tb`` from its first frame that is not the engine's running a node or its hooks."""
    while tb is not None and tb.tb_frame.f_code.co_filename in _ENGINE_FILES:
        tb = tb.tb_next
    return tb


_ENGINE_FILES = frozenset(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{m}.py")
                          for m in ("engine", "graph"))


def _resolve(future, outcome):
    captured, error = outcome
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(captured)


def _add_note(exc, note):
    """PEP 678's ``exc.add_note(note)``; Python 3.10 lacks the method, so there the note is
    appended to ``__notes__`` directly (3.10's tracebacks do not print it, but it is there)."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
        return
    try:
        exc.__notes__ = [*getattr(exc, "__notes__", ()), note]
    except (AttributeError, TypeError):  # an exception type that takes no new attributes
        pass


class NodeTask:
    """A node that is ready to run, with its gathered inputs; or a shutdown/wake-up marker."""

    __slots__ = ("graph_task", "node", "inputs", "is_shutdown")

    def __init__(self, graph_task, node, inputs, is_shutdown=False):
        self.graph_task = graph_task
        self.node = node
        self.inputs = inputs
        self.is_shutdown = is_shutdown


class ReadyQueue:
    """A priority queue of ready tasks, ordered as in PyTorch.

    Shutdown tasks first, then wake-up (dummy) tasks, then deeper reentrant depth, then higher
    ``sequence_nr`` (later-created nodes first; AccumulateGrad, at the maximum, as soon as it
    is ready). Ties go to the earlier push, which makes runs deterministic. Entries are flat
    tuples of ``ENTRY_FIELDS``, ``(kind, -depth, -sequence_nr, order, graph_task, node, inputs)``.
    """

    __slots__ = ("heap", "lock", "cond", "waiting", "counter")
    ENTRY_FIELDS = ("kind", "neg_depth", "neg_sequence_nr", "order", "graph_task", "node", "inputs")

    def __init__(self):
        self.heap = []
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.waiting = 0  # threads blocked in pop(); push notifies only when there are some
        self.counter = itertools.count().__next__

    @staticmethod
    def key(graph_task, node) -> tuple:
        """The order of a node task: the first three fields of its entry. See the class docstring."""
        return (2, -graph_task.reentrant_depth, -node.sequence_nr)

    def first_runs_before(self, graph_task, node) -> bool:
        """Whether the queue's first entry would pop before ``node`` of ``graph_task`` pushed now.

        It peeks without the lock: only the owning thread pops this queue, and a push by another
        thread just after the peek is a race that pushing and popping would have had too.
        """
        heap = self.heap
        return bool(heap) and heap[0][:3] <= ReadyQueue.key(graph_task, node)

    def push(self, graph_task, node, inputs) -> None:
        """Adds a ready node with its gathered gradients (a list, one per node input)."""
        entry = (*ReadyQueue.key(graph_task, node), self.counter(), graph_task, node, inputs)
        with self.lock:
            heapq.heappush(self.heap, entry)
            if self.waiting:
                self.cond.notify()

    def push_task(self, task: "NodeTask") -> None:
        """Adds a NodeTask: a node with its InputBuffer, a wake-up (no node) or a shutdown."""
        if task.is_shutdown:
            entry = (0, 0, 0, self.counter(), None, None, None)
        elif task.node is None:
            entry = (1, 0, 0, self.counter(), task.graph_task, None, None)
        else:
            inputs = task.inputs.buffer if isinstance(task.inputs, InputBuffer) else list(task.inputs)
            entry = (*ReadyQueue.key(task.graph_task, task.node), self.counter(), task.graph_task, task.node, inputs)
        with self.lock:
            heapq.heappush(self.heap, entry)
            if self.waiting:
                self.cond.notify()

    def pop(self):
        """Removes and returns the first entry, waiting for one if the queue is empty."""
        with self.lock:
            while not self.heap:
                self.waiting += 1
                try:
                    self.cond.wait()
                finally:
                    self.waiting -= 1
            return heapq.heappop(self.heap)

    def __len__(self):
        return len(self.heap)
