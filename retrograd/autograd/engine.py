"""The backward engine: runs a graph of Nodes from the roots to the leaves.

The algorithm, in five steps (each a function of that name):

1. ``Engine.compute_dependencies(root, graph_task)`` counts the incoming edges of every node
   reachable from the root, iteratively.
2. ``Engine.execute(...)`` builds a ``GraphTask`` and lets the calling thread run the root task
   and drive the CPU work until the task completes (or, in a reentrant call, nests; past the
   recursion limit the root goes to the queue a pool thread adopts).
3. ``Engine.thread_main(graph_task)`` pops tasks from the thread's ``ReadyQueue``, evaluates
   them, counts down ``outstanding_tasks`` and completes the GraphTask when it reaches zero.
4. ``Engine.evaluate_function(graph_task, node, inputs)`` runs the hooks and the node
   (``call_function``), validates its outputs, adds each into the next node's ``InputBuffer``
   and, when that node has heard from all its producers, pushes it onto the ready queue of the
   buffer's device.
5. ``GraphTask.mark_as_completed_and_run_post_processing()`` (graph_task.py) runs the
   post-processing: final callbacks, captured gradients, and the first error, which
   ``execute`` re-raises in the caller.

What a pass is made of (GraphTask, NodeTask, ReadyQueue, the per-thread state, and what a node
asks of the pass it runs in: ``queue_callback``, ``is_checkpoint_valid``) is in graph_task.py; the
device worker threads and the reentrant pool in engine_threads.py; the nodes, edges and hooks in
graph.py.

Note [GraphTask ownership]
~~~~~~~~~~~~~~~~~~~~~~~~~~
The caller of ``execute`` owns its GraphTask: ``owner`` records the calling thread's
``worker_device``. NodeTasks refer to their GraphTask strongly; this is safe because the owner
never returns before ``outstanding_tasks`` has drained to zero, errors included (see Note
[How errors travel]), so no task outlives the call that created it.

Note [Reentrant backwards]
~~~~~~~~~~~~~~~~~~~~~~~~~~
A node's apply may itself call backward/grad (a custom Function, a hook, reentrant
checkpointing). The calling thread must wait for the nested pass, but it is also the thread
responsible for its queue, so it cannot simply block. Up to ``max_recursion_depth`` levels it
runs ``thread_main`` for the nested GraphTask on the same thread and the same queue; the
nested tasks have a greater ``reentrant_depth`` and so pre-empt the outer ones (an unrelated
ready task of the outer pass may still run inside the nested loop). Past that depth, the
nested GraphTask moves to a pool thread that adopts the owner's queue while the caller blocks
on the GraphTask's future; each new thread has a fresh Python stack and recursion count, so
depth is bounded by neither. The pool grows when all of its threads are busy.

Note [How errors travel]
~~~~~~~~~~~~~~~~~~~~~~~~
An exception in a node, hook or callback, on any thread, is stored on its GraphTask (the first
one wins) and sets ``has_error``. Tasks of that GraphTask popped afterwards are drained
without running. When ``outstanding_tasks`` reaches zero the future is completed with the
error, and the owner re-raises the original exception object, so its type and message reach
the user unchanged. Only then does ``execute`` return, so no engine thread still touches the
user's tensors. With ``exit_on_error`` the GraphTask completes as soon as the error is set.

Note [Freeing saved tensors]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Unless ``keep_graph``, each node's saved tensors are released right after it runs, and the
NodeTask with its InputBuffer is dropped once the node finishes, so intermediate gradients
and saved arrays die by reference counting as the pass proceeds. Running the same node again
then raises "Trying to backward through the graph a second time".

Note [Thread safety of nodes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Several GraphTasks may run the same node at once (a shared graph with ``retain_graph``).
Nodes with mutable state take their own lock in ``apply``: AccumulateGrad (so that
concurrent accumulation into ``.grad`` is exact) and custom Function nodes. The locks are
reentrant, so a nested pass reaching the same node on the same thread does not deadlock.

Note [Handing over the next task]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A thread that finishes a node runs next what its ReadyQueue would pop next. Instead of pushing
every successor the node made ready and popping the first, ``evaluate_function`` keeps the one
that would pop first among them (the first by ``ReadyQueue.key``; on a tie the last made ready,
having pushed the earlier, so that ties reach the queue in the order they were made ready, as the
leaves' AccumulateGrads do in PyTorch) and pushes the rest; it returns that one, for ``thread_main``
to run without the queue, unless the queue's own first entry would pop before it (then it pushes
that one too and returns None). The order of nodes is the queue's, with a push and a pop fewer per
fan-out. The compiled loop does the same (``route`` and ``top_runs_first`` in _engine_loop.c).
"""
from __future__ import annotations

import atexit
import os
from threading import get_ident

from .. import _C
from .._device import cpu as _cpu
from .._errors import _internal_assert
from ..backends.numpy_backend import quiet_numpy, quietly
from . import grad_mode, observation as _obs
from .observation import Observation as _Observation
from .anomaly_mode import _Anomaly, check_nan, running
from .engine_threads import EngineThreads
from .grad_mode import set_multithreading_enabled
from .graph import GraphRoot, call_post_hooks, call_pre_hooks, call_tensor_pre_hooks, node_name, validate_outputs
from .graph_task import (CPU_DEVICE, NO_DEVICE, GraphTask, NodeTask, ReadyQueue, is_checkpoint_valid,  # noqa: F401
                         local, queue_callback)
from .input_buffer import InputBuffer
from .interrupts import Watchdog, arm, cancel_if_outer_cancelled, delivered_on_return, disarm

__all__ = ["Engine", "GraphTask", "NodeTask", "ReadyQueue", "get_default_engine", "queue_callback",
           "is_checkpoint_valid", "set_multithreading_enabled", "validate_outputs", "use_compiled_loop",
           "compiled_loop_in_use"]

_grad_state = grad_mode.state
in_flight = GraphTask.in_flight


class Engine(EngineThreads):
    """Runs backward passes. One default instance serves the process (``get_default_engine()``)."""

    HANDED_OVER_FIELDS = ("node", "inputs")  # what evaluate_function returns: See Note [Handing over the next task]

    def __init__(self, max_recursion_depth: int = 10):
        # Each inline level costs about a dozen Python frames; keep well inside the recursion limit.
        self.max_recursion_depth = max_recursion_depth
        super().__init__()

    @property
    def multithreading_enabled(self) -> bool:
        """This thread's setting of ``set_multithreading_enabled``: See Note [Multithreading switch]."""
        return _grad_state.multithreading

    @multithreading_enabled.setter
    def multithreading_enabled(self, mode: bool) -> None:
        _grad_state.multithreading = bool(mode)

    # -- step 1 --------------------------------------------------------------------------------
    @staticmethod
    def compute_dependencies(root, graph_task) -> None:
        """Counts, for every node reachable from ``root``, how many edges lead into it."""
        graph_task.graph_root, dependencies = root, graph_task.dependencies  # the root: for will_execute
        if _loop is not None and _loop.compute_dependencies(root, dependencies) is None:
            return  # the same walk, compiled: Note [The compiled loop]
        seen = {root}
        stack = [root]
        while stack:
            for edge in stack.pop().next_edges:
                if edge is not None:
                    nxt = edge[0]
                    dependencies[nxt] = dependencies.get(nxt, 0) + 1
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append(nxt)

    # -- step 2 --------------------------------------------------------------------------------
    @delivered_on_return  # See Note [Interrupts during backward]
    def execute(self, roots, inputs, keep_graph: bool, create_graph: bool, outputs=(), accumulate_grad: bool = False,
                timeout=None):
        """Runs the backward pass from ``roots`` (edges) seeded with ``inputs`` (gradients).

        Args:
            roots: one Edge per output tensor.
            inputs: the seed gradient of each root.
            keep_graph: keep saved tensors for another pass (``retain_graph``).
            create_graph: record the backward pass itself (grad mode on while nodes run).
            outputs: edges whose incoming gradients to return (``autograd.grad``); () for ``.backward()``.
            accumulate_grad: with ``outputs``, run only the nodes leading to them but accumulate
                into ``.grad`` instead of capturing (``backward(inputs=...)``).
            timeout: seconds the pass may run before it stops with ``BackwardTimeout``, or None.

        Returns:
            The captured gradients, one per entry of ``outputs``.
        """
        if (_loop is not None and local.worker_device == NO_DEVICE and timeout is None
                and Watchdog.seconds is None):  # See Note [Stopping a pass from outside]
            # a pass driven by this thread: the same steps, compiled (Note [The compiled loop])
            captured = quietly(_loop.execute, self, roots, inputs, keep_graph, create_graph, outputs,
                               accumulate_grad)  # as thread_main
            if captured is not NotImplemented:
                return captured
        inputs = validate_outputs(roots, list(inputs))
        if local.ready_queue is None:
            local.ready_queue = ReadyQueue()
        reentrant = local.worker_device != NO_DEVICE
        graph_task = GraphTask(keep_graph, create_graph, local.total_depth + 1 if reentrant else 0, local.ready_queue)
        graph_task.timeout = timeout
        graph_root = GraphRoot(roots, inputs)
        self.compute_dependencies(graph_root, graph_task)
        if outputs:
            graph_task.init_to_execute(graph_root, outputs, accumulate_grad)
        run = self._run_graph_task if not _Observation.active else _obs.execute(self._run_graph_task)
        run(graph_task, graph_root)  # See Note [Observing the engine]
        return graph_task.outcome()

    def execute_with_graph_task(self, graph_task, graph_root):
        """Runs a GraphTask built by the caller; returns a Future of its captured gradients.

        Outside the engine the calling thread drives the CPU work until the task completes.
        Inside it (a reentrant call) the task nests on this thread, or moves to a pool thread
        past ``max_recursion_depth`` while this thread waits. See Note [Reentrant backwards].
        """
        self._run_graph_task(graph_task, graph_root)
        return graph_task.future

    def _run_graph_task(self, graph_task, graph_root) -> None:
        """Runs the root task and returns once the GraphTask has completed; the pass is in flight
        meanwhile (Note [Passes in flight]), with its deadlines armed."""
        if local.ready_queue is None:
            local.ready_queue = ReadyQueue()
        graph_task.owner_thread, graph_task.started = get_ident(), GraphTask.clock()
        in_flight[graph_task] = None  # See Note [Passes in flight]
        deadline = graph_task.timeout is not None or Watchdog.seconds is not None
        if deadline:
            arm(graph_task)  # See Note [Stopping a pass from outside]
        try:
            self._run_registered(graph_task, graph_root)
        finally:
            in_flight.pop(graph_task, None)
            if deadline:
                disarm(graph_task)

    def _run_registered(self, graph_task, graph_root) -> None:
        """``_run_graph_task`` once the pass is in flight.

        A thread that drives the pass itself starts with the root instead of pushing it and
        popping it back: nothing in its queue would come first (a nested pass's tasks have the
        greater depth), so the order is the same, minus the queue's cost.
        """
        with graph_task.lock:
            graph_task.outstanding_tasks += 1
        root_task = (graph_root, [])
        if local.worker_device == NO_DEVICE:
            prev_queue = local.ready_queue
            local.worker_device = CPU_DEVICE
            local.ready_queue = graph_task.cpu_ready_queue
            graph_task.owner = CPU_DEVICE
            try:
                self.thread_main(graph_task, root_task)
            finally:
                local.worker_device = NO_DEVICE
                local.ready_queue = prev_queue
        else:
            graph_task.owner = local.worker_device
            cancel_if_outer_cancelled(graph_task)
            if local.current_depth >= self.max_recursion_depth:  # a pool thread adopts the queue
                graph_task.cpu_ready_queue.push(graph_task, *root_task)
                self._add_thread_pool_task(graph_task)
                graph_task.future.exception()  # wait; the result is read by the caller
            else:
                if graph_task.cpu_ready_queue is not local.ready_queue:  # not this thread's queue
                    graph_task.cpu_ready_queue.push(graph_task, *root_task)
                    root_task = None
                local.total_depth += 1
                local.current_depth += 1
                try:
                    self.thread_main(graph_task, root_task)
                finally:
                    local.current_depth -= 1
                    local.total_depth -= 1

    # -- step 3 --------------------------------------------------------------------------------
    @quiet_numpy  # once per pass, and for good on the engine's own threads: Note [NumPy's floating-point warnings]
    def thread_main(self, graph_task, first=None) -> None:
        """Pops and runs tasks until ``graph_task`` completes (forever for a device thread).

        ``first``: a task ``(node, inputs)`` of ``graph_task`` to run before popping any.
        """
        state = local
        queue = state.ready_queue
        outer_task = current = state.current_graph_task
        follow = first  # a ready task handed over without the queue, see evaluate_function
        gt = graph_task
        watched = _Observation.active  # read once per loop: See Note [Observing the engine]
        run_task = _obs.run_task if watched else Engine._run_task if _loop is None else _loop.run_task
        pop = queue.pop if not watched else lambda: _obs.pop(queue)
        try:
            while graph_task is None or not graph_task.completed:
                if follow is None:
                    if graph_task is None:  # a device thread holds nothing of a finished task while it waits
                        gt = node = current = state.current_graph_task = None
                    kind, _, _, _, gt, node, inputs = pop()
                    if kind == 0:  # shutdown
                        break
                    if node is None:  # a wake-up: our GraphTask may have completed elsewhere
                        continue
                else:
                    node, inputs = follow
                    follow = None
                if not gt.has_error:
                    if gt is not current:  # queue_callback and nested calls find the running pass here
                        state.current_graph_task = current = gt
                    follow = run_task(self, gt, node, inputs, queue)
                inputs = None  # free the gradients before waiting for more work
                with gt.lock:
                    gt.outstanding_tasks -= 1
                    done = gt.outstanding_tasks == 0 and not gt.completed
                if done:
                    gt.mark_as_completed_and_run_post_processing() if not watched else _obs.finish(gt)
                    owner_queue = self._ready_queue_of_owner(gt)
                    if owner_queue is not queue:  # the owner may be blocked in pop(): wake it
                        self._wake_owner(owner_queue, gt)
        finally:
            if follow is not None:  # our GraphTask completed elsewhere: leave the task to the queue
                queue.push(gt, *follow)
            state.current_graph_task = outer_task

    def _run_task(self, gt, node, inputs, queue=None):
        """Evaluates one node under its GraphTask's grad mode; errors go to the GraphTask. Returns
        the task that evaluate_function handed over for this thread to run next, if any."""
        grad_mode = gt.grad_mode
        prev_grad = _grad_state.grad_enabled
        if prev_grad is not grad_mode:
            _grad_state.grad_enabled = grad_mode
        prev_node = None
        if _Anomaly.enabled:  # nodes created in this backward record it as their parent
            prev_node = running.node
            running.node = node
        try:
            return self.evaluate_function(gt, node, inputs, queue)
        except BaseException as exc:  # noqa: BLE001 - every error travels to the caller
            gt.set_exception(exc, node)
            return None
        finally:
            if prev_grad is not grad_mode:
                _grad_state.grad_enabled = prev_grad
            if prev_node is not None or running.node is node:
                running.node = prev_node

    # -- step 4 --------------------------------------------------------------------------------
    def evaluate_function(self, graph_task, node, inputs, queue=None):
        """Runs ``node`` on its gathered ``inputs`` and routes its outputs to the next nodes.

        Returns the ready successor that ``thread_main`` is to run next, ``(node, inputs)``
        (``HANDED_OVER_FIELDS``), or None: See Note [Handing over the next task].
        """
        exec_info = graph_task.exec_info
        if exec_info is not None:
            info = exec_info.get(node)
            _internal_assert(info is not None, f"{node_name(node)} ran in a pruned pass that has no entry for it")
            needed, captures = info
            if captures is not None:
                grads = inputs if needed else call_tensor_pre_hooks(node, inputs, graph_task)
                with graph_task.lock:
                    for input_idx, output_idx in captures:
                        graph_task.captured_vars[output_idx] = grads[input_idx]
            if not needed:
                return
        outputs = self.call_function(graph_task, node, inputs)
        inputs = None
        if not graph_task.keep_graph:
            node.release_variables()
        if not outputs:
            return
        if _Anomaly.enabled and _Anomaly.check_nan:
            check_nan(node, outputs)
        multithreading = graph_task.multithreading  # See Note [Multithreading switch]
        cpu_queue = graph_task.cpu_ready_queue
        follow = None
        with graph_task.lock:
            dependencies = graph_task.dependencies
            not_ready = graph_task.not_ready
            for i, edge in enumerate(node.next_edges):
                if edge is None:
                    continue
                nxt, input_nr = edge
                count = dependencies.pop(nxt, None)
                if count is None:
                    raise RuntimeError(f"dependency not found for {node_name(nxt)}")
                grad = outputs[i]
                if count == 1:
                    buffer = not_ready.pop(nxt, None)
                    if buffer is None:
                        if exec_info is not None and not graph_task.should_execute(nxt):
                            continue
                        # The common case: a node with one producer. No InputBuffer needed.
                        n_inputs = len(nxt.input_metadata)
                        if n_inputs == 1:
                            grads = [grad]
                        else:
                            grads = [None] * n_inputs
                            grads[input_nr] = grad
                        device = _cpu if grad is None else grad._device
                    else:
                        buffer.add(input_nr, grad)
                        grads = buffer.buffer
                        device = buffer.device
                else:
                    dependencies[nxt] = count - 1
                    buffer = not_ready.get(nxt)
                    if buffer is None:
                        if exec_info is not None and not graph_task.should_execute(nxt):
                            continue
                        buffer = not_ready[nxt] = InputBuffer(len(nxt.input_metadata))
                    buffer.add(input_nr, grad)
                    continue
                graph_task.outstanding_tasks += 1
                if device is not _cpu and multithreading:
                    self._device_queue(device).push(graph_task, nxt, grads)
                elif cpu_queue is queue and (follow is None or
                                             ReadyQueue.key(graph_task, nxt) <= ReadyQueue.key(graph_task, follow[0])):
                    if follow is not None:  # See Note [Handing over the next task]
                        cpu_queue.push(graph_task, *follow)
                    follow = (nxt, grads)
                else:
                    cpu_queue.push(graph_task, nxt, grads)
        if follow is not None and cpu_queue.first_runs_before(graph_task, follow[0]):
            cpu_queue.push(graph_task, *follow)  # the queue's first task goes first: let the queue order them
            return None
        return follow

    @staticmethod
    def call_function(graph_task, node, grads):
        """Runs the node's hooks and the node itself; returns its validated outputs.

        Note [Checkpoint validity]
        ~~~~~~~~~~~~~~~~~~~~~~~~~~
        ``is_checkpoint_valid()`` is False while any GraphTask on this thread's stack is a pruned
        ``.grad()`` pass: a reentrant checkpoint could not run its nested ``.backward()`` there.
        It is set around each node of such a pass and restored afterwards, errors included.
        """
        pruned = graph_task.exec_info is not None  # See Note [Checkpoint validity]
        if pruned:
            prev_checkpoint_valid = local.checkpoint_valid
            local.checkpoint_valid = False
        try:
            extras = node._extras  # each kind read at its turn: See Note [A node's hooks and metadata] in graph.py
            if extras is not None and (extras.tensor_pre_hooks is not None or extras.retains_grad_hooks is not None) \
                    or node._leaf_hooks:
                grads = call_tensor_pre_hooks(node, grads, graph_task)
                extras = node._extras
            if extras is not None and extras.pre_hooks:
                grads = call_pre_hooks(node, grads)
            if not graph_task.keep_graph and node._will_release:
                node.will_release_variables()
            extras = node._extras
            had_post_hooks = extras is not None and bool(extras.post_hooks)
            if had_post_hooks:
                inputs = tuple(grads)
                grads = list(grads)
            outputs = _obs.apply(node, grads) if _Observation.active else node.apply(grads)
            if type(outputs) is not list:
                outputs = list(outputs)
            outputs = validate_outputs(node.next_edges, outputs, node)
        finally:
            if pruned:
                local.checkpoint_valid = prev_checkpoint_valid
        extras = node._extras
        if extras is not None and extras.post_hooks:  # also those registered while the node ran: as in PyTorch,
            # they get no grad_outputs
            outputs = call_post_hooks(node, outputs, inputs if had_post_hooks else ())
        return outputs

    @staticmethod
    def queue_callback(callback) -> None:
        """Runs ``callback()`` once the current backward pass has run all its nodes."""
        queue_callback(callback)

_default_engine = Engine()

_loop = None  # the compiled module retrograd._C._engine_loop while it is in use


def use_compiled_loop(enabled: bool = True) -> bool:
    """Switches the compiled per-node loop on or off; returns whether it is now in use.

    Note [The compiled loop]
    ~~~~~~~~~~~~~~~~~~~~~~~~
    ``retrograd/_C/_engine_loop.c`` re-states in C the steps ``_run_task``,
    ``evaluate_function`` and ``call_function`` take for an ordinary node (no hooks, no anomaly
    mode; in a pruned pass, a node that is needed and captures nothing, or one that only
    captures; for AccumulateGrad, ``accumulate_grad`` with grad mode off), and runs on into the
    next task of the same pass, handed over or popped from this thread's queue, without
    returning to ``thread_main``. A pass (``.backward()`` or ``autograd.grad``) called outside
    the engine runs ``execute``, ``thread_main`` and the GraphTask's
    completion in C as well (the common case of each; a pass with final callbacks or an error
    completes in Python), and so do the plainest calls of all: ``tensor.backward()`` of a
    one-element non-leaf (``Tensor.backward``, the seed and root edge of ``autograd.backward``)
    and ``autograd.grad`` of such outputs with no gradients given, for inputs that are Tensors
    and not views (``grad``'s checks, ``_make_grads`` and ``_engine_run_backward``; the caller
    keeps every other argument in Python). It calls the same Python objects in the same order and
    hands every other node back to ``_run_task``, so this file remains the definition of what
    the engine does; the C loop only removes CPython's per-bytecode cost from the common case
    (see the comment at the top of the C file). It is one of the compiled modules of Note [The
    compiled modules]: in use once configured, unless ``RETROGRAD_COMPILED=0``.
    """
    global _loop
    loop = _C.engine_loop
    _loop = loop if enabled and loop is not None and loop.is_configured() else None
    return _loop is not None


def compiled_loop_in_use() -> bool:
    """Whether backward passes run the compiled loop (Note [The compiled loop])."""
    return _loop is not None


def get_default_engine() -> Engine:
    """The process-wide engine that ``backward`` and ``grad`` use."""
    return _default_engine


atexit.register(_default_engine.shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_default_engine._after_fork)
