"""The engine's observers: how a profiler or a debugging aid sees a backward pass.

Note [Observing the engine]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
A profiler (or another debugging aid) sees a pass through ``add_observer(obj)``: while any
observer is registered, ``Observation.active`` is True, the compiled loop declines every pass
and task (its entry points ``execute``, ``backward`` and ``run_task`` read the flag once per
call), and the Python engine opens a *range* on each observer around the pass
(``autograd::engine::execute``), each wait on a ready queue (``autograd::engine::wait``), each
node (``autograd::engine::evaluate_function: <name>``, and ``<name>`` around its apply, as
PyTorch's profiler names them; the GraphRoot is not shown) and the post-processing of a
completed pass (``autograd::engine::post_processing``, where the final callbacks run). An
observer has ``begin(name, node, grads, args)``, returning a token, and ``end(token)``; it must
not raise. One may also have ``node_outputs(node, grads, outputs)``, called after each node's
apply; what it raises is the node's error (as anomaly mode's NaN check). A thread's loop reads
the flag when it starts, so a pass under way when an observer is added is seen from its next
loop on (a device worker's loop, which never ends, from its start: a known limit). Off, the cost
is one flag read per pass and per thread loop, and on the Python path one per node run.
"""
from __future__ import annotations

import threading

from .graph import GraphRoot, node_name

__all__ = ["Observation", "add_observer", "remove_observer", "observed", "run_task", "apply", "execute", "pop",
           "finish"]


class Observation:
    """Who observes the engine's passes (Note [Observing the engine]); the compiled loop reads ``active``."""

    active = False
    observers = ()


_lock = threading.Lock()


def add_observer(observer) -> None:
    """Makes ``observer`` see every backward pass from now on (Note [Observing the engine])."""
    with _lock:
        Observation.observers = Observation.observers + (observer,)
        Observation.active = True


def remove_observer(observer) -> None:
    """Stops ``observer`` seeing backward passes; a no-op where it was not added."""
    with _lock:
        Observation.observers = tuple(o for o in Observation.observers if o is not observer)
        Observation.active = bool(Observation.observers)


def observed(name, fn, *args, node=None, grads=None, info=None):
    """``fn(*args)`` inside a range named ``name`` on every observer."""
    opened = [(o, o.begin(name, node, grads, info)) for o in Observation.observers]
    try:
        return fn(*args)
    finally:
        for observer, token in reversed(opened):
            observer.end(token)


def run_task(engine, gt, node, inputs, queue=None):
    """``Engine._run_task`` inside an ``evaluate_function`` range (the GraphRoot's is not shown)."""
    if type(node) is GraphRoot:
        return engine._run_task(gt, node, inputs, queue)
    return observed("autograd::engine::evaluate_function: " + node_name(node), engine._run_task, gt, node, inputs,
                    queue, node=node, grads=inputs)


def apply(node, grads):
    """``node.apply(grads)`` inside a range named for the node; then each observer's ``node_outputs``, if it has
    one, sees the node's outputs (it may raise: the error is the node's)."""
    if type(node) is GraphRoot:
        return node.apply(grads)
    outputs = observed(node_name(node), node.apply, grads, node=node, grads=grads)
    for o in Observation.observers:
        seen = getattr(o, "node_outputs", None)
        if seen is not None:
            outputs = list(outputs)
            seen(node, grads, outputs)
    return outputs


def execute(run_graph_task):
    """``run_graph_task(graph_task, graph_root)`` inside an ``autograd::engine::execute`` range."""

    def run(graph_task, graph_root):
        info = {"keep_graph": graph_task.keep_graph, "create_graph": graph_task.grad_mode,
                "reentrant_depth": graph_task.reentrant_depth, "pruned": graph_task.exec_info is not None}
        return observed("autograd::engine::execute", run_graph_task, graph_task, graph_root, info=info)

    return run


def pop(queue):
    """``queue.pop()`` inside an ``autograd::engine::wait`` range."""
    return observed("autograd::engine::wait", queue.pop)


def finish(graph_task):
    """The GraphTask's completion inside an ``autograd::engine::post_processing`` range."""
    return observed("autograd::engine::post_processing", graph_task.mark_as_completed_and_run_post_processing)
