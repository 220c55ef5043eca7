"""Devices, worker threads and concurrent backward calls (issue: engine threads)."""
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import engine as engine_mod

pytestmark = pytest.mark.timeout(60)


class RecordThread(rg.autograd.Function):
    """Identity whose backward records the thread it ran on under ``tag``."""
    seen = {}

    @staticmethod
    def forward(ctx, x, tag):
        ctx.tag = tag
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        RecordThread.seen[ctx.tag] = threading.current_thread()
        return grad, None


def test_device_nodes_run_on_device_worker_and_cpu_nodes_on_caller():
    RecordThread.seen = {}
    x = rg.randn(3, requires_grad=True)
    y = RecordThread.apply(x, "cpu")
    z = RecordThread.apply(y.to("fake:0"), "fake")
    z.to("cpu").sum().backward()
    assert RecordThread.seen["cpu"] is threading.current_thread()
    assert RecordThread.seen["fake"] is not threading.current_thread()
    assert RecordThread.seen["fake"].name == "retrograd-fake:0"
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(3, np.float32))


def test_each_device_has_one_worker_thread_started_once():
    RecordThread.seen = {}
    for _ in range(3):
        x = rg.randn(2, requires_grad=True)
        RecordThread.apply(x.to("fake:1"), "f1").sum().backward()
        first = RecordThread.seen["f1"]
        y = rg.randn(2, requires_grad=True)
        RecordThread.apply(y.to("fake:1"), "f1").sum().backward()
        assert RecordThread.seen["f1"] is first
    names = [t.name for t in threading.enumerate()]
    assert names.count("retrograd-fake:1") == 1


def test_multithreading_disabled_runs_device_work_on_caller():
    RecordThread.seen = {}
    with rg.autograd.set_multithreading_enabled(False):
        x = rg.randn(3, requires_grad=True)
        RecordThread.apply(x.to("fake:0"), "fake").sum().backward()
    assert RecordThread.seen["fake"] is threading.current_thread()
    assert rg.autograd.get_default_engine().multithreading_enabled


def test_multithreading_switch_is_per_thread():
    seen = {}

    def other():
        seen["other"] = rg.autograd.is_multithreading_enabled()
        RecordThread.apply(rg.randn(3, requires_grad=True).to("fake:0"), "other").sum().backward()
    RecordThread.seen = {}
    with rg.autograd.set_multithreading_enabled(False):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        seen["here"] = rg.autograd.is_multithreading_enabled()
    assert seen == {"other": True, "here": False}
    assert RecordThread.seen["other"].name == "retrograd-fake:0"


def test_multithreading_switch_as_a_decorator_behaves_as_torchs():
    torch = pytest.importorskip("torch")

    def scenario(lib):
        seen = []

        @lib.autograd.set_multithreading_enabled(False)  # as PyTorch's, it takes effect where it is made, too
        def run():
            seen.append(lib.autograd.is_multithreading_enabled())
        seen.append(lib.autograd.is_multithreading_enabled())
        lib.autograd.set_multithreading_enabled(True)
        run()
        seen.append(lib.autograd.is_multithreading_enabled())
        lib.autograd.set_multithreading_enabled(True)
        return seen
    assert scenario(rg) == scenario(torch) == [False, False, True]


def test_multithreading_switch_off_in_a_decorated_function_runs_device_work_on_caller():
    @rg.autograd.set_multithreading_enabled(False)
    def run():
        RecordThread.apply(rg.randn(3, requires_grad=True).to("fake:0"), "fake").sum().backward()
    rg.autograd.set_multithreading_enabled(True)
    RecordThread.seen = {}
    run()
    assert RecordThread.seen["fake"] is threading.current_thread()
    assert rg.autograd.is_multithreading_enabled()


def test_pass_keeps_the_multithreading_setting_of_the_thread_that_started_it():
    class Flip(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            rg.autograd.set_multithreading_enabled(True)  # changes this thread's setting, not the running pass's
            return grad
    RecordThread.seen = {}
    with rg.autograd.set_multithreading_enabled(False):
        x = rg.randn(3, requires_grad=True)
        Flip.apply(RecordThread.apply(x.to("fake:0"), "fake")).sum().backward()
        assert rg.autograd.is_multithreading_enabled()
    assert RecordThread.seen["fake"] is threading.current_thread()


def test_gradients_cross_devices_and_come_back_on_the_leaf_device():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x.to("fake:0") * 3).exp().sum().to("cpu")
    y.backward()
    assert x.grad.device == rg.device("cpu")
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(3 * np.array([1.0, 2.0])), rtol=1e-5)


def test_ops_on_two_devices_raise_naming_both():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*cpu.*fake:0|fake:0.*cpu"):
        rg.ones(2) + rg.ones(2).to("fake:0")


def test_cuda_without_cupy_or_gpu_says_which_is_missing():
    try:
        import cupy  # noqa: F401
        has_cupy = True
    except ImportError:
        has_cupy = False
    if has_cupy:
        try:
            ok = cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:
            ok = False
        if ok:
            pytest.skip("a GPU is present")
        with pytest.raises(RuntimeError, match="no CUDA GPU"):
            rg.ones(2).cuda()
    else:
        with pytest.raises(RuntimeError, match="CuPy, which is not installed"):
            rg.ones(2).cuda()


def _run_threads(n, target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised by the test
            errors.append(exc)
    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=50)
        assert not t.is_alive(), "a backward thread hung"
    return errors


def test_concurrent_backward_on_shared_graph_sums_exactly():
    x = rg.tensor([1.0, 2.0, 3.0], dtype=rg.float64, requires_grad=True)
    y = (x * x).tanh().sum()
    single = rg.autograd.grad(y, x, retain_graph=True)[0].numpy().copy()

    def work(_):
        for _ in range(50):
            y.backward(retain_graph=True)

    assert _run_threads(8, work) == []
    np.testing.assert_allclose(x.grad.numpy(), 400 * single, rtol=1e-12)


def test_concurrent_backward_on_separate_graphs_gives_each_its_own_result():
    results = {}

    def work(i):
        x = rg.full((4,), float(i + 1), dtype=rg.float64, requires_grad=True)
        for _ in range(20):
            x.grad = None
            (x ** 3).sum().backward()
        results[i] = x.grad.numpy().copy()

    assert _run_threads(8, work) == []
    for i in range(8):
        np.testing.assert_allclose(results[i], np.full(4, 3.0 * (i + 1) ** 2))


class Boom(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("boom in backward")


def test_failing_backward_in_one_thread_leaves_others_correct():
    shared = rg.tensor([1.0, 2.0], dtype=rg.float64, requires_grad=True)
    good = (shared * 2).sum()
    failures = []

    def work(i):
        if i == 3:
            x = rg.ones(2, requires_grad=True)
            with pytest.raises(ValueError, match="boom in backward"):
                Boom.apply(x).sum().backward()
            failures.append(i)
        else:
            for _ in range(10):
                good.backward(retain_graph=True)

    assert _run_threads(6, work) == []
    assert failures == [3]
    np.testing.assert_allclose(shared.grad.numpy(), [100.0, 100.0])


def test_error_on_device_thread_reaches_caller_and_worker_survives():
    x = rg.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="boom in backward"):
        Boom.apply(x.to("fake:2")).sum().backward()
    RecordThread.seen = {}
    y = rg.ones(2, requires_grad=True)
    RecordThread.apply(y.to("fake:2"), "after").sum().backward()
    assert RecordThread.seen["after"].name == "retrograd-fake:2"
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 1.0])


def test_first_error_wins_and_rest_of_task_is_drained():
    calls = []

    class Count(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            calls.append(1)
            return grad

    x = rg.ones(2, requires_grad=True)
    # Count runs after Boom (created earlier => lower sequence number), so it must be skipped.
    y = Boom.apply(Count.apply(x))
    with pytest.raises(ValueError):
        y.sum().backward()
    assert calls == []
    assert x.grad is None
    assert engine_mod.local.worker_device == engine_mod.NO_DEVICE


def test_backward_works_in_a_forked_child_after_device_threads_started():
    import os
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    x = rg.ones(2, requires_grad=True)
    (x.to("fake:0") * 2).to("cpu").sum().backward()  # the parent has a device thread now
    pid = os.fork()
    if pid == 0:  # child: the parent's threads do not exist here; the engine must start afresh
        code = 1
        try:
            y = rg.ones(2, requires_grad=True)
            (y.to("fake:0") * 3).to("cpu").sum().backward()
            code = 0 if y.grad.tolist() == [3.0, 3.0] else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


def test_error_in_tensor_hook_on_either_thread_reaches_caller_unchanged():
    def bad_hook(grad):
        raise LookupError("hook failed")

    for device in ("cpu", "fake:3"):
        x = rg.ones(2, requires_grad=True)
        y = x.to(device) * 2
        y.register_hook(bad_hook)
        with pytest.raises(LookupError, match="hook failed"):
            y.to("cpu").sum().backward()
        assert x.grad is None
        z = rg.ones(2, requires_grad=True)
        (z.to(device) * 3).to("cpu").sum().backward()  # the engine keeps working on that device
        assert z.grad.tolist() == [3.0, 3.0]
