"""Ctrl-C during a backward pass: the interrupt reaches the caller, the pass leaves nothing behind.

See Note [Interrupts during backward]. Each test sends the process a real SIGINT from a timer
thread; the engine_loop fixture runs each with the compiled loop and with the Python one.
"""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import interrupts
from retrograd.autograd.graph_task import CPU_DEVICE, local

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _our_handler():
    """The handler retrograd installs at the first backward of a process with Python's default."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    previous = signal.signal(signal.SIGINT, interrupts._on_sigint)
    yield
    signal.signal(signal.SIGINT, previous)
    interrupts.state.pending = False


class _interrupt_after:
    """Sends SIGINT ``seconds`` after ``go()``; the thread is started beforehand, so that the
    delay counts from the call that follows ``go()`` however loaded the machine is."""

    def __init__(self, seconds):
        self._go = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(seconds,), daemon=True)
        self._thread.start()

    def _run(self, seconds):
        self._go.wait()
        time.sleep(seconds)
        os.kill(os.getpid(), signal.SIGINT)

    def go(self):
        self._go.set()

    def join(self):
        self._thread.join()


class Sleepy(rg.autograd.Function):
    """Identity whose backward sleeps 2 ms and counts its calls."""
    calls = 0

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        time.sleep(0.002)
        Sleepy.calls += 1
        return grad


def _next_backward_is_exact():
    x = rg.ones(3, requires_grad=True)
    (x * 5).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


def test_an_interrupt_while_waiting_for_a_device_worker_drains_the_pass():
    x = rg.ones(3, requires_grad=True)
    y = x.to("fake")
    for _ in range(400):
        y = Sleepy.apply(y)
    loss = y.to("cpu").sum()
    Sleepy.calls = 0
    timer = _interrupt_after(0.15)
    with pytest.raises(KeyboardInterrupt):
        timer.go()
        loss.backward()
    timer.join()
    ran = Sleepy.calls
    assert 0 < ran < 400
    time.sleep(0.1)
    assert Sleepy.calls == ran  # no worker still runs the abandoned pass
    assert x.grad is None
    _next_backward_is_exact()
    x.grad = None
    (x * 5).sum().backward()  # nothing of the old pass is left in the caller's queue either
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


@pytest.mark.parametrize("seed", range(4))
def test_an_interrupt_anywhere_in_a_long_chain_leaves_no_task_behind(seed):
    delay = np.random.default_rng(seed).uniform(0.001, 0.02)
    x = rg.ones(2, requires_grad=True)
    y = x
    for _ in range(15_000):
        y = y * 1.0
    loss = y.sum()
    timer = _interrupt_after(delay)
    try:
        timer.go()
        loss.backward()
    except KeyboardInterrupt:
        pass
    else:  # the pass finished before the signal: it arrives as it would without retrograd
        with pytest.raises(KeyboardInterrupt):
            timer.join()
            time.sleep(0.05)
    timer.join()
    assert len(local.ready_queue or ()) == 0
    x.grad = None
    (x * 5).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_an_interrupt_in_a_nodes_backward_raises_there_and_later_nodes_do_not_run():
    class Stuck(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, grad):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # Python code: interruptible at once
                pass
            return grad

    x = rg.ones(2, requires_grad=True)
    y = Sleepy.apply(Stuck.apply(x * 2))
    Sleepy.calls = 0
    timer = _interrupt_after(0.1)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt) as info:
        timer.go()
        y.sum().backward()
    timer.join()
    assert time.monotonic() - start < 10
    assert "(raised in the backward of StuckBackward)" in getattr(info.value, "__notes__", [])
    assert Sleepy.calls == 1 and x.grad is None
    _next_backward_is_exact()


def test_an_interrupt_in_a_hook_reaches_the_caller():
    x = rg.ones(2, requires_grad=True)
    y = x * 2

    def hook(grad):
        time.sleep(5)  # time.sleep is cut short by the interrupt
        return grad

    y.register_hook(hook)
    timer = _interrupt_after(0.1)
    with pytest.raises(KeyboardInterrupt):
        timer.go()
        y.sum().backward()
    timer.join()
    assert x.grad is None
    _next_backward_is_exact()


def test_an_interrupt_in_a_nested_backward_fails_the_outer_pass_too():
    class Nested(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, grad):
            with rg.enable_grad():
                a = rg.ones(2, requires_grad=True)
                b = a
                for i in range(20_000):
                    b = Sleepy.apply(b) if i % 100 == 0 else b * 1.0
                b.sum().backward()
            return grad

    x = rg.ones(2, requires_grad=True)
    y = Nested.apply(x)
    timer = _interrupt_after(0.05)
    with pytest.raises(KeyboardInterrupt):
        timer.go()
        y.sum().backward()
    timer.join()
    assert x.grad is None
    assert len(local.ready_queue or ()) == 0
    _next_backward_is_exact()


def _call_handler_from(filename):
    """Calls the handler as if the signal arrived in code of ``filename``."""
    code = compile("handler(signal.SIGINT, sys._getframe())", filename, "exec")
    exec(code, {"handler": interrupts._on_sigint, "signal": signal, "sys": sys})


def test_outside_a_backward_pass_the_handler_raises_as_pythons_does():
    with pytest.raises(KeyboardInterrupt):
        _call_handler_from(rg.autograd.engine.__file__)
    assert not interrupts.state.pending


def test_an_interrupt_no_graph_task_could_take_is_raised_when_the_call_returns():
    saved = local.worker_device
    local.worker_device = CPU_DEVICE  # as while a pass starts, before its GraphTask runs
    try:
        _call_handler_from(rg.autograd.engine.__file__)  # in the engine's bookkeeping: deferred
    finally:
        local.worker_device = saved
    assert interrupts.state.pending
    x = rg.ones(2, requires_grad=True)
    with pytest.raises(KeyboardInterrupt):
        (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]  # the pass itself completed
    assert not interrupts.state.pending
    _next_backward_is_exact()


def _run(code):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)


def test_the_first_backward_takes_over_pythons_default_handler_only():
    out = _run("import signal, retrograd as rg\n"
               "from retrograd.autograd import interrupts\n"
               "before = signal.getsignal(signal.SIGINT)\n"
               "x = rg.ones(1, requires_grad=True); (x * 2).sum().backward()\n"
               "print(before is signal.default_int_handler, signal.getsignal(signal.SIGINT) is interrupts._on_sigint)")
    assert out.stdout.split() == ["True", "True"], out.stderr
    out = _run("import signal, retrograd as rg\n"
               "mine = lambda *a: None\n"
               "signal.signal(signal.SIGINT, mine)\n"
               "x = rg.ones(1, requires_grad=True); (x * 2).sum().backward()\n"
               "print(signal.getsignal(signal.SIGINT) is mine)")
    assert out.stdout.split() == ["True"], out.stderr
