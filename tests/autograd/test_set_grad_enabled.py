"""set_grad_enabled as a function call, a context manager and a decorator; grad mode per thread."""
import threading

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

LIBS = [rg, torch]


@pytest.fixture(params=LIBS, ids=["retrograd", "torch"])
def lib(request):
    yield request.param
    request.param.set_grad_enabled(True)


def test_set_grad_enabled_switches_at_once_as_a_function_call(lib):
    lib.set_grad_enabled(False)
    assert not lib.is_grad_enabled()
    assert not (lib.ones(1, requires_grad=True) * 2).requires_grad
    lib.set_grad_enabled(True)
    assert (lib.ones(1, requires_grad=True) * 2).requires_grad


def test_set_grad_enabled_object_restores_the_mode_it_was_made_in(lib):
    mode = lib.set_grad_enabled(False)  # switches now
    assert not lib.is_grad_enabled()
    with mode:
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()  # the mode before the call


def test_set_grad_enabled_as_a_decorator_applies_inside_calls_only(lib):
    @lib.set_grad_enabled(False)
    def inside():
        return lib.is_grad_enabled()
    assert lib.is_grad_enabled()
    assert inside() is False
    assert lib.is_grad_enabled()


def test_set_grad_enabled_nested_in_no_grad(lib):
    with lib.no_grad():
        with lib.set_grad_enabled(True):
            assert (lib.ones(1, requires_grad=True) * 2).requires_grad
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()


@pytest.mark.parametrize("mode", [1, "yes", None])
def test_set_grad_enabled_rejects_a_non_bool(mode):
    messages = []
    for lib in LIBS:
        with pytest.raises(TypeError) as info:
            lib.set_grad_enabled(mode)
        messages.append(str(info.value))
        assert lib.is_grad_enabled()
    assert messages[0] == messages[1]


def test_new_threads_start_enabled_after_a_switch_by_function_call(lib):
    seen = []
    lib.set_grad_enabled(False)
    t = threading.Thread(target=lambda: seen.append(lib.is_grad_enabled()))
    t.start()
    t.join(10)
    assert seen == [True] and not lib.is_grad_enabled()


def test_a_switch_in_another_thread_stays_there(lib):
    def other():
        lib.set_grad_enabled(False)
    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    assert lib.is_grad_enabled()


class Probe(rg.autograd.Function):
    """Records, per backward call, the thread it ran on and its grad mode."""

    seen = []

    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        Probe.seen.append((threading.current_thread().name, rg.is_grad_enabled()))
        return grad


@pytest.mark.parametrize("create_graph", [False, True])
def test_device_worker_thread_runs_nodes_in_the_passs_mode(create_graph):
    Probe.seen = []
    x = rg.ones(2, requires_grad=True)
    y = Probe.apply(x.to("fake:0")).sum()
    with rg.set_grad_enabled(not create_graph):  # the caller's mode does not matter
        y.backward(create_graph=create_graph)
        assert rg.is_grad_enabled() is (not create_graph)
    assert Probe.seen == [("retrograd-fake:0", create_graph)]


def test_reentrant_pool_thread_runs_nodes_in_the_nested_passs_mode():
    seen = []

    class Nested(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            seen.append(rg.is_grad_enabled())
            with rg.enable_grad():
                inner = Probe.apply(rg.ones(1, requires_grad=True)).sum()
            rg.set_grad_enabled(False)  # a switch inside a node stays inside it
            inner.backward(create_graph=True)
            return grad

    Probe.seen = []
    engine = rg.autograd.get_default_engine()
    depth = engine.max_recursion_depth
    engine.max_recursion_depth = 0  # every nested pass goes to a pool thread
    try:
        Nested.apply(rg.ones(1, requires_grad=True)).sum().backward()
    finally:
        engine.max_recursion_depth = depth
    assert seen == [False]
    assert [mode for _, mode in Probe.seen] == [True]
    assert Probe.seen[0][0] != threading.current_thread().name
    assert rg.is_grad_enabled()
