"""backward(timeout=...) and BackwardPass.cancel(): a pass stopped from outside stops at a node boundary,
raises in the thread that called backward, and leaves the engine ready for the next pass.

No test depends on how fast the machine is: a node that must still be running when the pass is stopped
waits, on an event or until the pass has failed, instead of sleeping.
"""
import io
import threading
import time

import pytest

import retrograd as rg
from retrograd.autograd import BackwardCancelled, BackwardTimeout
from retrograd.autograd.graph_task import GraphTask

from .test_watchdog import WAIT, Block


def _wait_until_stopped():
    """Polls until every pass in flight has failed (been cancelled or timed out); fails past WAIT seconds."""
    give_up = GraphTask.clock() + WAIT
    while not all(gt.has_error for gt in list(GraphTask.in_flight)):
        assert GraphTask.clock() < give_up
        time.sleep(0.001)


class Gate(rg.autograd.Function):
    """Identity whose backward returns only once the pass it runs in has been stopped."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        _wait_until_stopped()
        return g


def _in_thread(fn):
    """Runs ``fn`` in a thread named 'trainer'; returns (thread, errors)."""
    errors = []

    def run():
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    thread = threading.Thread(target=run, name="trainer")
    thread.start()
    return thread, errors


def _engine_is_idle():
    assert GraphTask.in_flight == {}
    assert rg.autograd.graph.current_passes() == []
    x = rg.ones(2, requires_grad=True)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_timeout_stops_the_pass_keeps_finished_leaves_and_frees_the_graph():
    x, w = rg.ones(2, requires_grad=True), rg.ones(2, requires_grad=True)
    out = (Gate.apply(x * 2) * w).sum()  # w's AccumulateGrad runs before the gate, x's after it
    with pytest.raises(BackwardTimeout, match=r"^the backward pass from SumBackward0 on thread 'MainThread' "
                                              r"timed out: it ran .* s, past its timeout of 0.01 s"):
        out.backward(timeout=0.01)
    assert isinstance(BackwardTimeout("x"), BackwardCancelled) and isinstance(BackwardTimeout("x"), RuntimeError)
    assert w.grad.tolist() == [2.0, 2.0]  # accumulated whole before the timeout
    assert x.grad is None  # its AccumulateGrad never ran
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.backward()
    _engine_is_idle()


def test_timeout_of_grad_and_of_autograd_backward():
    x = rg.ones(2, requires_grad=True)
    with pytest.raises(BackwardTimeout, match="past its timeout of 0.01 s"):
        rg.autograd.grad(Gate.apply(x * 2).sum(), x, timeout=0.01)
    with pytest.raises(BackwardTimeout, match="past its timeout of 0.02 s"):
        rg.autograd.backward(Gate.apply(x * 2).sum(), timeout=0.02)
    assert x.grad is None
    (g,) = rg.autograd.grad((x * 2).sum(), x, timeout=WAIT)  # a pass within its time is unchanged
    assert g.tolist() == [2.0, 2.0]
    _engine_is_idle()


def test_bad_timeout_raises():
    x = rg.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="timeout must be a positive, finite number of seconds, but got -1"):
        (x * 2).sum().backward(timeout=-1)
    with pytest.raises(TypeError, match="timeout must be a number of seconds or None, but got str"):
        rg.autograd.grad((x * 2).sum(), x, timeout="1")
    _engine_is_idle()


def test_cancel_from_another_thread_while_blocked_in_a_custom_backward():
    Block.entered, Block.release = threading.Event(), threading.Event()
    x, w = rg.ones(2, requires_grad=True), rg.ones(2, requires_grad=True)
    out = (Block.apply(x * 2) * w).sum()
    thread, errors = _in_thread(out.backward)
    assert Block.entered.wait(WAIT)
    (p,) = rg.autograd.graph.current_passes()
    assert p.thread is thread and p.reentrant_depth == 0 and not p.done
    assert p.cancel("enough") is True
    assert p.cancel() is False  # already stopping
    Block.release.set()
    thread.join(WAIT)
    (err,) = errors
    assert type(err) is BackwardCancelled
    assert str(err).startswith("the backward pass from SumBackward0 on thread 'trainer' was cancelled by thread "
                               "'MainThread' after ")
    assert str(err).endswith(": enough")
    assert p.done and p.cancel() is False
    assert w.grad.tolist() == [2.0, 2.0] and x.grad is None
    _engine_is_idle()


def test_cancel_during_a_reentrant_backward_stops_the_nested_pass_too():
    Block.entered, Block.release = threading.Event(), threading.Event()
    ran_after = []

    class Outer(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            with rg.enable_grad():
                inner = rg.ones(2, requires_grad=True)
                (gi,) = rg.autograd.grad((Block.apply(inner * 3) * 2).sum(), inner)
            ran_after.append(True)
            return g * gi

    x = rg.ones(2, requires_grad=True)
    thread, errors = _in_thread(Outer.apply(x).sum().backward)
    assert Block.entered.wait(WAIT)
    passes = rg.autograd.graph.current_passes()
    assert [p.reentrant_depth for p in passes] == [0, 1]
    assert passes[0].cancel() is True
    assert passes[1].done is False and GraphTask.in_flight and all(gt.has_error for gt in GraphTask.in_flight)
    Block.release.set()
    thread.join(WAIT)
    (err,) = errors
    assert type(err) is BackwardCancelled and "was cancelled by thread 'MainThread'" in str(err)
    assert ran_after == []  # the nested pass raised inside the outer node
    assert x.grad is None
    _engine_is_idle()


def test_cancel_with_a_device_thread_running_the_blocked_node():
    Block.entered, Block.release = threading.Event(), threading.Event()
    x = rg.ones(2, requires_grad=True)
    out = Block.apply(x.to("fake:0") * 2).to("cpu").sum()
    thread, errors = _in_thread(out.backward)
    assert Block.entered.wait(WAIT)
    (p,) = rg.autograd.graph.current_passes()
    text = rg.autograd.graph.dump_engine_state(io.StringIO())
    assert "running: BlockBackward" in text and "thread 'retrograd-fake:0'" in text
    assert p.cancel() is True
    Block.release.set()
    thread.join(WAIT)
    (err,) = errors
    assert type(err) is BackwardCancelled
    assert x.grad is None
    y = rg.ones(2, requires_grad=True)
    (y.to("fake:0") * 5).to("cpu").sum().backward()  # the device worker is idle and working
    assert y.grad.tolist() == [5.0, 5.0]
    _engine_is_idle()
