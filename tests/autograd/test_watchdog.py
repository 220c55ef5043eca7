"""dump_engine_state, the backward watchdog and the dump on SIGQUIT: what a hanging backward is doing.

Each test blocks a backward pass inside a custom Function's backward (on a threading.Event that the
test sets), looks at the pass from another thread, then lets it finish. They run with the compiled
loop and without it (the engine_loop fixture), which must show the same state.
"""
import faulthandler
import io
import os
import signal
import sys
import threading

import pytest

import retrograd as rg
from retrograd.autograd.graph_task import GraphTask

WAIT = 30  # seconds before a broken test gives up waiting; never reached when it passes


class Block(rg.autograd.Function):
    """Identity whose backward waits for ``release``, having set ``entered``."""
    entered = release = None

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        Block.entered.set()
        assert Block.release.wait(WAIT)
        return g


@pytest.fixture
def blocked():
    """A backward pass run by a thread named 'trainer', blocked in BlockBackward while
    MulBackward0 (of y = x * 3) waits for it, having heard from ExpBackward0 already."""
    Block.entered, Block.release = threading.Event(), threading.Event()
    x = rg.ones(3, requires_grad=True)
    y = x * 3
    out = (Block.apply(y) * y.exp()).sum()
    errors = []

    def run():
        try:
            out.backward()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    thread = threading.Thread(target=run, name="trainer")
    thread.start()

    def finish():
        Block.release.set()
        thread.join(WAIT)
        assert not thread.is_alive()
        return errors

    yield Block.entered, finish, x
    finish()


def _check_blocked_dump(text):
    assert "1 backward pass in flight" in text
    assert "GraphTask 0x" in text and "the backward pass from SumBackward0 on thread 'trainer'" in text
    assert "exit state: running" in text
    assert "running: BlockBackward" in text
    assert "waiting: MulBackward0 (seq" in text and "for 1 more producer(s): BlockBackward" in text
    assert "[running]" in text
    assert "CPU queue of thread 'trainer'" in text
    assert "thread 'trainer' (ident" in text and "reentrant depth 0" in text
    assert f'{__file__}", line' in text and "in backward" in text and "Block.release.wait(WAIT)" in text


def test_dump_from_another_thread_names_the_blocked_node_and_what_waits_on_it(blocked):
    entered, finish, x = blocked
    assert entered.wait(WAIT)
    buf = io.StringIO()
    text = rg.autograd.graph.dump_engine_state(buf)
    assert buf.getvalue() == text
    _check_blocked_dump(text)
    if rg.autograd.engine.compiled_loop_in_use():  # the compiled loop drives the pass, and the dump still sees it
        trainer = text.split("  thread 'trainer' (ident")[1].split("\n  thread '")[0]  # not a device worker's stack
        assert "in thread_main" not in trainer and "in _run_task" not in trainer and "in backward" in trainer
    assert finish() == []
    assert rg.allclose(x.grad, 3 * (3 * rg.ones(3)).exp() * 3 + 3 * (3 * rg.ones(3)).exp())
    assert GraphTask.in_flight == {}
    assert "0 backward passes in flight" in rg.autograd.graph.dump_engine_state(io.StringIO())


def test_dump_walks_a_deep_graph_without_recursion(blocked):
    entered, finish, _ = blocked
    assert entered.wait(WAIT)
    x = rg.ones(1, requires_grad=True)
    y = x
    for _ in range(sys.getrecursionlimit() + 100):
        y = y * 1.0
    bottom = y.grad_fn
    while bottom.next_edges and bottom.next_edges[0] is not None:
        bottom = bottom.next_edges[0][0]
    gt = GraphTask(False, False, 0)  # a pass whose waiting node sits below a chain deeper than the recursion limit
    gt.graph_root, gt.owner_thread, gt.started = y.grad_fn, threading.get_ident(), GraphTask.clock()
    gt.not_ready[bottom], gt.dependencies[bottom] = None, 1
    GraphTask.in_flight[gt] = None
    try:
        text = rg.autograd.graph.dump_engine_state(io.StringIO())
    finally:
        del GraphTask.in_flight[gt]
    assert "2 backward passes in flight" in text
    assert "waiting: torch::autograd::AccumulateGrad (seq" in text
    finish()


class _Signalling(io.StringIO):
    def __init__(self):
        super().__init__()
        self.written = threading.Event()

    def write(self, s):
        n = super().write(s)
        self.written.set()
        return n


def test_watchdog_dumps_a_pass_once_past_its_time_and_rearms_for_the_next(blocked):
    entered, finish, _ = blocked
    finish()  # the fixture's pass ran before the watchdog: not watched
    buf = _Signalling()
    with rg.autograd.set_backward_watchdog(0.01, file=buf):
        for n in (1, 2):
            buf.written.clear()
            Block.entered, Block.release = threading.Event(), threading.Event()
            x = rg.ones(3, requires_grad=True)
            y = x * 3
            out = (Block.apply(y) * y.exp()).sum()
            thread = threading.Thread(target=out.backward, name="trainer")
            thread.start()
            assert buf.written.wait(WAIT)
            Block.release.set()
            thread.join(WAIT)
            text = buf.getvalue()
            assert text.count("retrograd: backward watchdog: the backward pass from SumBackward0 on thread "
                              "'trainer' has run longer than 0.01 s") == n
    _check_blocked_dump(text.split("retrograd: backward watchdog:")[-1])
    x = rg.ones(2, requires_grad=True)
    (x * 2).sum().backward()  # off again: nothing more is written
    assert buf.getvalue().count("retrograd: backward watchdog:") == 2


def test_watchdog_rejects_a_nonpositive_time():
    with pytest.raises(ValueError, match="seconds must be a positive number or None"):
        rg.autograd.set_backward_watchdog(0)


@pytest.mark.skipif(not hasattr(signal, "SIGQUIT"), reason="SIGQUIT is POSIX's")
def test_sigquit_dumps_the_engine_state_and_chains_to_faulthandler(blocked, tmp_path):
    entered, finish, _ = blocked
    assert entered.wait(WAIT)
    path = tmp_path / "dump.txt"
    with open(path, "w") as f:
        previous = rg.autograd.graph.register_dump_on_signal(file=f)
        try:
            was_enabled = faulthandler.is_enabled()  # pytest enables it; else here, into the same file
            if not was_enabled:
                faulthandler.enable(file=f)
            os.kill(os.getpid(), signal.SIGQUIT)  # the handler runs on this thread at its next bytecode
            for _ in range(3):
                pass
        finally:
            signal.signal(signal.SIGQUIT, previous)
            if not was_enabled:
                faulthandler.disable()
    text = path.read_text()
    _check_blocked_dump(text)
    assert "most recent call first" in text  # faulthandler's own dump follows
    finish()
