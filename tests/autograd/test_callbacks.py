"""queue_callback: final callbacks belong to the running backward pass."""
import pytest

import retrograd as rg
from retrograd.autograd import queue_callback

pytestmark = pytest.mark.timeout(60)


class Hooked(rg.autograd.Function):
    """Identity whose backward calls ``Hooked.action()``."""
    action = None

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        Hooked.action()
        return grad


def test_queue_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match=r"^Final callbacks can only be installed during backward pass\.$"):
        queue_callback(lambda: None)


def test_callbacks_run_once_in_fifo_order_after_all_nodes():
    log = []
    x = rg.ones(2, requires_grad=True)

    def action():
        queue_callback(lambda: log.append(("cb1", x.grad is not None)))
        queue_callback(lambda: log.append(("cb2", x.grad is not None)))
    Hooked.action = action
    Hooked.apply(x).sum().backward()
    assert log == [("cb1", True), ("cb2", True)]
    (x * 2).sum().backward()
    assert len(log) == 2  # not run again by a later pass


def test_callback_may_queue_another_in_the_same_pass():
    log = []

    def second():
        log.append("second")

    def first():
        log.append("first")
        queue_callback(second)
    Hooked.action = lambda: queue_callback(first)
    Hooked.apply(rg.ones(1, requires_grad=True)).sum().backward()
    assert log == ["first", "second"]


def test_nested_pass_runs_its_own_callbacks_at_its_end():
    log = []

    class Outer(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            queue_callback(lambda: log.append("outer callback"))
            Hooked.action = lambda: queue_callback(lambda: log.append("inner callback"))
            with rg.enable_grad():
                t = rg.ones(1, requires_grad=True)
                Hooked.apply(t).sum().backward()
            log.append("nested pass returned")
            return grad

    Outer.apply(rg.ones(1, requires_grad=True)).sum().backward()
    assert log == ["inner callback", "nested pass returned", "outer callback"]


def test_error_in_callback_reaches_caller_and_engine_keeps_working():
    def bad():
        raise ZeroDivisionError("callback failed")
    Hooked.action = lambda: queue_callback(bad)
    with pytest.raises(ZeroDivisionError, match="callback failed"):
        Hooked.apply(rg.ones(1, requires_grad=True)).sum().backward()
    y = rg.ones(1, requires_grad=True)
    (y * 3).sum().backward()
    assert y.grad.item() == 3.0


def test_callback_runs_for_device_work_too():
    log = []
    x = rg.ones(2, requires_grad=True)
    Hooked.action = lambda: queue_callback(lambda: log.append(x.grad.tolist()))
    Hooked.apply(x.to("fake:0")).to("cpu").sum().backward()
    assert log == [[1.0, 1.0]]
