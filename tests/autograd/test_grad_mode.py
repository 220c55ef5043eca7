"""Grad modes: context managers, decorators (also on generators), thread-locality."""
import threading

import pytest

import retrograd as rg

MODES = [(rg.no_grad, False), (rg.enable_grad, True), (lambda: rg.set_grad_enabled(False), False),
         (lambda: rg.set_grad_enabled(True), True), (rg.inference_mode, False)]


@pytest.mark.parametrize("make, enabled", MODES)
def test_mode_as_context_manager_restores_the_previous_mode(make, enabled):
    for outer in (True, False):
        rg.autograd.grad_mode.state.grad_enabled = outer
        with make():
            assert rg.is_grad_enabled() is enabled
        assert rg.is_grad_enabled() is outer


@pytest.mark.parametrize("make, enabled", MODES)
def test_mode_as_decorator(make, enabled):
    @make()
    def f():
        return rg.is_grad_enabled()
    for outer in (True, False):
        rg.autograd.grad_mode.state.grad_enabled = outer
        assert f() is enabled
        assert rg.is_grad_enabled() is outer


@pytest.mark.parametrize("make, enabled", MODES)
def test_mode_as_decorator_on_a_generator_holds_across_yields(make, enabled):
    @make()
    def gen():
        for _ in range(3):
            received = yield rg.is_grad_enabled()
            assert received == "ping"

    for outer in (True, False):
        rg.autograd.grad_mode.state.grad_enabled = outer
        g = gen()
        assert next(g) is enabled
        assert rg.is_grad_enabled() is outer
        assert g.send("ping") is enabled
        assert rg.is_grad_enabled() is outer
        g.close()


def test_bare_decorators():
    @rg.no_grad
    def f():
        return rg.is_grad_enabled()

    @rg.inference_mode
    def h():
        return rg.is_inference_mode_enabled()
    assert f() is False and h() is True and rg.is_grad_enabled()


def test_set_grad_enabled_takes_effect_as_a_function_call():
    rg.set_grad_enabled(False)
    assert not rg.is_grad_enabled()
    rg.set_grad_enabled(True)
    assert rg.is_grad_enabled()


def test_mode_is_restored_when_the_body_raises():
    with pytest.raises(ValueError):
        with rg.no_grad():
            raise ValueError
    assert rg.is_grad_enabled()


def test_no_grad_stops_recording():
    x = rg.ones(1, requires_grad=True)
    with rg.no_grad():
        y = x * 2
        with rg.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn.name() == "MulBackward0"


def test_inference_mode_false_keeps_recording():
    x = rg.ones(1, requires_grad=True)
    with rg.inference_mode(False):
        assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    seen = {}
    started, release = threading.Event(), threading.Event()

    def other():
        seen["initial"] = rg.is_grad_enabled()
        with rg.no_grad():
            started.set()
            release.wait(10)
            seen["inside"] = rg.is_grad_enabled()

    t = threading.Thread(target=other)
    with rg.no_grad():
        t.start()
        started.wait(10)
        rg.set_grad_enabled(True)  # this thread's change must not leak into the other
        assert rg.is_grad_enabled()
        release.set()
        t.join(10)
        rg.set_grad_enabled(False)
    assert seen == {"initial": True, "inside": False}
    assert rg.is_grad_enabled()


def test_backward_runs_nodes_in_the_create_graph_mode():
    seen = []

    class Probe(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            seen.append(rg.is_grad_enabled())
            return grad
    x = rg.ones(1, requires_grad=True)
    Probe.apply(x).backward()
    y = Probe.apply(x)
    with rg.no_grad():
        y.backward(create_graph=True)  # the pass records whatever the caller's mode
        assert not rg.is_grad_enabled()
    assert seen == [False, True] and rg.is_grad_enabled()
