"""The engine's threads: one worker per non-CPU device, and the pool that runs deep reentrant passes.

``Engine`` (engine.py) runs passes; this module holds the threads it hands work to and their
queues, as a base class of ``Engine``: a device's worker thread and its ``ReadyQueue`` (started
on first use), the pool of threads that adopt a reentrant GraphTask past the inline depth (Note
[Reentrant backwards] in engine.py), waking a GraphTask's owner, and the process-wide life of
these threads (shutdown at exit, a fresh start after ``fork``).

Note [Threads and queues]
~~~~~~~~~~~~~~~~~~~~~~~~~
CPU work of a GraphTask runs on the thread that called backward/grad, from that thread's own
ReadyQueue, so backward calls from different threads never serialize. Every other device has
one worker thread with one queue, started lazily and once, shared by all GraphTasks. A task
goes to the queue of its InputBuffer's device (the GraphRoot always goes to the CPU queue).
Whoever finishes a GraphTask's last task completes it, and wakes the owner with a dummy task
if the owner is another thread. ``set_multithreading_enabled(False)`` on the thread that starts
a pass sends every task of that pass to the caller's queue (Note [Multithreading switch]).
"""
from __future__ import annotations

import threading

from .graph_task import CPU_DEVICE, NO_DEVICE, NodeTask, ReadyQueue, local

__all__ = ["EngineThreads"]


class _ThreadPoolShared:
    """Threads that run reentrant GraphTasks past the inline depth. See Note [Reentrant backwards]."""

    def __init__(self):
        self.lock = threading.Lock()
        self.work = threading.Condition(self.lock)
        self.graphtasks_queue = []
        self.num_workers = 0  # idle threads waiting for work


class EngineThreads:
    """The device worker threads and the reentrant pool of an ``Engine``. See Note [Threads and queues].

    ``thread_main`` (the loop each thread runs) is ``Engine``'s.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._device_queues = {}
        self._pool = _ThreadPoolShared()

    def _device_queue(self, device):
        """The worker queue of a non-CPU device, starting its thread on first use."""
        queue = self._device_queues.get(device)
        if queue is None:
            queue = self._start_device_thread(device)
        return queue

    def _ready_queue_of_owner(self, graph_task):
        if graph_task.owner == CPU_DEVICE:
            return graph_task.cpu_ready_queue
        return self._device_queues[graph_task.owner]

    @staticmethod
    def _wake_owner(owner_queue, graph_task) -> None:
        """Pushes a wake-up task: the owner, blocked in pop(), then sees its task completed."""
        owner_queue.push_task(NodeTask(graph_task, None, None))

    def _start_device_thread(self, device):
        """Starts the one worker thread of ``device`` (once) and returns its queue."""
        with self._lock:
            queue = self._device_queues.get(device)
            if queue is None:
                queue = ReadyQueue()
                thread = threading.Thread(target=self._device_thread_main, args=(device, queue),
                                          name=f"retrograd-{device}", daemon=True)
                self._device_queues[device] = queue
                thread.start()
        return queue

    def _device_thread_main(self, device, queue) -> None:
        local.worker_device = device
        local.ready_queue = queue
        self.thread_main(None)

    def _add_thread_pool_task(self, graph_task) -> None:
        pool = self._pool
        with pool.lock:
            pool.graphtasks_queue.append(graph_task)
            if pool.num_workers < len(pool.graphtasks_queue):  # every idle thread already has work
                threading.Thread(target=self._reentrant_thread_main, name="retrograd-reentrant", daemon=True).start()
            pool.work.notify()

    def _reentrant_thread_main(self) -> None:
        pool = self._pool
        while True:
            with pool.lock:
                while not pool.graphtasks_queue:
                    pool.num_workers += 1
                    pool.work.wait()
                    pool.num_workers -= 1
                graph_task = pool.graphtasks_queue.pop(0)
            local.worker_device = graph_task.owner
            local.ready_queue = self._ready_queue_of_owner(graph_task)
            local.total_depth = graph_task.reentrant_depth
            local.current_depth = 0
            try:
                self.thread_main(graph_task)
            finally:
                local.worker_device = NO_DEVICE
                local.ready_queue = None
                graph_task = None

    def enqueue_blocked_task_on_cpu(self, task: NodeTask) -> None:
        """Pushes ``task`` on its GraphTask's CPU queue without counting it as outstanding again.

        The caller raised ``outstanding_tasks`` beforehand (for instance when it registered a
        gradient expected over the network), so the GraphTask could not complete before this
        task arrives.
        """
        task.graph_task.cpu_ready_queue.push_task(task)

    def shutdown(self) -> None:
        """Stops the device worker threads (they are daemons; this lets them exit cleanly)."""
        with self._lock:
            queues = list(self._device_queues.values())
            self._device_queues.clear()
        for queue in queues:
            queue.push_task(NodeTask(None, None, None, is_shutdown=True))

    def _after_fork(self) -> None:
        """In a forked child, the parent's engine threads do not exist: start afresh."""
        self._lock = threading.Lock()
        self._device_queues = {}
        self._pool = _ThreadPoolShared()
        local.__dict__.clear()  # back to the class defaults: this thread is not inside the engine
