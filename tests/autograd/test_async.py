"""The services distributed autograd builds on: execute_with_graph_task, blocked tasks, exit_on_error."""
import threading
import time

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.engine import Engine, GraphTask, NodeTask, get_default_engine
from retrograd.autograd.graph import GraphRoot
from retrograd.autograd.input_buffer import InputBuffer

pytestmark = pytest.mark.timeout(30)


def _pending_task(loss):
    """A GraphTask that must wait for the gradient of ``loss``, delivered later as a blocked task."""
    graph_task = GraphTask(keep_graph=False, grad_mode=False, reentrant_depth=0)
    Engine.compute_dependencies(loss.grad_fn, graph_task)
    with graph_task.lock:
        graph_task.outstanding_tasks += 1  # the gradient expected from elsewhere
    return graph_task


def _deliver_later(graph_task, node, grad, delay=0.1):
    def deliver():
        time.sleep(delay)
        buffer = InputBuffer(1)
        buffer.add(0, grad)
        get_default_engine().enqueue_blocked_task_on_cpu(NodeTask(graph_task, node, buffer))
    thread = threading.Thread(target=deliver)
    thread.start()
    return thread


def test_blocked_task_from_another_thread_completes_the_graph_task():
    x = rg.tensor([1.0, 2.0], dtype=rg.float64, requires_grad=True)
    loss = (x * x * 3).sum()
    graph_task = _pending_task(loss)
    thread = _deliver_later(graph_task, loss.grad_fn, rg.tensor(2.0, dtype=rg.float64))
    future = get_default_engine().execute_with_graph_task(graph_task, GraphRoot((), ()))
    thread.join()
    assert future.done() and future.exception() is None
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 24.0])
    assert graph_task.outstanding_tasks == 0


def test_future_reports_error_of_late_task():
    class Fail(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise ArithmeticError("remote part failed")

    x = rg.ones(2, requires_grad=True)
    loss = Fail.apply(x).sum()
    graph_task = _pending_task(loss)
    thread = _deliver_later(graph_task, loss.grad_fn, rg.tensor(1.0))
    future = get_default_engine().execute_with_graph_task(graph_task, GraphRoot((), ()))
    thread.join()
    assert isinstance(future.exception(), ArithmeticError)
    assert x.grad is None


def test_exit_on_error_completes_without_waiting_for_outstanding_work():
    class Fail(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise ArithmeticError("stop now")

    x = rg.ones(2, requires_grad=True)
    loss = Fail.apply(x).sum()
    graph_task = GraphTask(keep_graph=False, grad_mode=False, reentrant_depth=0, exit_on_error=True)
    root = GraphRoot([rg.autograd.graph.make_edge(rg.autograd.graph.Edge, (loss.grad_fn, 0))],
                     [rg.tensor(1.0)])
    Engine.compute_dependencies(root, graph_task)
    with graph_task.lock:
        graph_task.outstanding_tasks += 1  # a gradient that will never arrive
    future = get_default_engine().execute_with_graph_task(graph_task, root)
    assert isinstance(future.exception(), ArithmeticError)
    # the engine is still usable on this thread afterwards
    y = rg.ones(1, requires_grad=True)
    (y * 5).sum().backward()
    assert y.grad.item() == 5.0
