"""Scenarios of PyTorch's test/test_autograd.py, class TestMultithreadAutograd (backward passes from several Python
threads at once), written again and run with retrograd and torch on the same numbers. See
test_pytorch_suite_basics.py for the method. The threads of a scenario start together at a barrier and are joined.
Out of scope: the TorchScript fork/join scenario (no ``torch.jit``), the complex cat/stack one, the CUDA one, and
PyTorch's check of its own test helper.
"""
import sys
import threading
import traceback
import weakref

import pytest

from .test_pytorch_suite_basics import function, ones, randn, same_in_both

torch = pytest.importorskip("torch")


def run_in_threads(fn, args=(), n=10):
    """Runs ``fn(*args)`` on ``n`` threads released together; returns their results, re-raises the first error."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def body(i):
        barrier.wait()
        try:
            results[i] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)
    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]
    return results


def test_each_thread_trains_its_own_graph():
    def scenario(lib):
        def train():
            x = ones(lib, 5, 5, requires_grad=True)
            ((x + 3) * (x + 4) * 0.5).sum().backward()
            return x.grad
        grads = run_in_threads(train)
        return all(bool(lib.equal(g, grads[0])) for g in grads), grads[0]
    assert same_in_both(scenario)[1][0] is True


def test_threads_sharing_an_input_accumulate_into_its_grad():
    def scenario(lib):
        x = ones(lib, 5, 5, requires_grad=True)

        def backward(x):
            ((x + 3) * (x + 4) * 0.5).sum().backward()

        def grad(x):
            return lib.autograd.grad(((x + 3) * (x + 4) * 0.5).sum(), x)
        run_in_threads(backward, (x,))
        grads = run_in_threads(grad, (x,))
        return x.grad, [len(g) for g in grads], grads[0][0], all(bool(lib.equal(g[0], grads[0][0])) for g in grads)
    result = same_in_both(scenario)
    assert result[1][1] == [1] * 10 and result[1][3] is True


def _failing_once(lib):
    """A pass-through Function whose first backward (of all threads) raises."""
    calls, lock = [0], threading.Lock()

    def backward(ctx, g):
        with lock:
            calls[0] += 1
            if calls[0] == 1:
                raise RuntimeError("error message")
        return g
    return function(lib, lambda ctx, x: x, backward)


@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook_fires_once_per_concurrent_backward(mode):
    def scenario(lib):
        t1, t2, t3, t4 = (randn(lib, 2, requires_grad=True, seed=i) for i in range(4))
        seen, lock = [], threading.Lock()

        def hook(grads):
            with lock:
                seen.append([g is not None for g in grads] if mode == "all" else type(grads).__name__)
        handle = lib.autograd.graph.register_multi_grad_hook((t1, t2, t3, t4), hook, mode=mode)
        errors = [0]

        def backward(out):
            try:
                out.backward(inputs=(t2, t3), retain_graph=True)
            except RuntimeError:
                with lock:
                    errors[0] += 1
        run_in_threads(backward, ((t2 * t3).sum(),), n=5)
        first = list(seen)
        seen.clear()
        run_in_threads(backward, ((_failing_once(lib).apply(t2) * t3).sum(),), n=5)
        handle.remove()
        return first, seen, errors[0]
    result = same_in_both(scenario)
    # mode="all": the pass that raised never completes its hook; mode="any" runs it before the Function's backward
    first, second, errors = result[1]
    assert len(first) == 5 and len(second) == (4 if mode == "all" else 5) and errors == 1
    assert first[0] == ([False, True, True, False] if mode == "all" else "Tensor")


def test_saved_tensors_hooks_are_per_thread():
    def scenario(lib):
        packed = []

        def pack(x):
            packed.append(threading.current_thread().name)
            return x
        x = ones(lib, 5, 5, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            run_in_threads(lambda: x * x, n=2)
            in_threads = len(packed)
            x * x
        return in_threads, len(packed)
    assert same_in_both(scenario) == ("ok", (0, 2))


def test_data_parallel_forward_on_one_device_calls_the_saved_tensors_hooks():
    def scenario(lib):
        packed = []

        class Model(lib.nn.Module):
            def forward(self, x):
                return x * x
        with lib.autograd.graph.saved_tensors_hooks(lambda x: packed.append(1) or x, lambda x: x):
            lib.nn.DataParallel(Model())(ones(lib, 5, 5, requires_grad=True))
        return len(packed) > 0
    assert same_in_both(scenario) == ("ok", True)


def test_threads_backward_through_a_shared_graph_need_retain_graph():
    def scenario(lib):
        outcomes, lock = [], threading.Lock()

        def no_retain(y):
            try:
                (y + y ** 2).sum().backward()
                outcome = "ok"
            except RuntimeError as e:
                outcome = "Specify retain_graph=True" in str(e)
            with lock:
                outcomes.append(outcome)
        x = ones(lib, 5, 5, requires_grad=True)
        run_in_threads(no_retain, (x + x ** 2,), n=5)
        x_retain = ones(lib, 5, 5, requires_grad=True)
        run_in_threads(lambda y: (y + y ** 2).sum().backward(retain_graph=True), (x_retain + x_retain ** 2,), n=5)
        return "ok" in outcomes, set(outcomes) <= {"ok", True}, x_retain.grad
    result = same_in_both(scenario)
    assert result[1][:2] == (True, True)


def test_error_raised_in_a_custom_backward_keeps_its_traceback():
    def scenario(lib):
        def backward(ctx, *g):
            raise ValueError("something")
        f = function(lib, lambda ctx, x: x, backward)
        try:
            f.apply(randn(lib, 10, requires_grad=True)).sum().backward()
        except ValueError:
            return 'raise ValueError("something")' in "\n".join(traceback.format_tb(sys.exc_info()[2]))
    assert same_in_both(scenario) == ("ok", True)


def test_set_multithreading_enabled_as_context_manager_and_function():
    def scenario(lib):
        ag, seen = lib.autograd, []
        with ag.set_multithreading_enabled(False):
            seen.append(ag.is_multithreading_enabled())
        seen.append(ag.is_multithreading_enabled())
        with ag.set_multithreading_enabled(True):
            seen.append(ag.is_multithreading_enabled())
        with ag.set_multithreading_enabled(False):
            ag.set_multithreading_enabled(True)
            seen.append(ag.is_multithreading_enabled())
        seen.append(ag.is_multithreading_enabled())
        ag.set_multithreading_enabled(False)
        seen.append(ag.is_multithreading_enabled())
        ag.set_multithreading_enabled(True)
        seen.append(ag.is_multithreading_enabled())
        return seen
    assert same_in_both(scenario) == ("ok", [False, True, True, True, True, False, True])


def test_threads_reading_grad_at_once_see_the_same_tensor():
    def scenario(lib):
        same = []
        for _ in range(3):
            t = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            (t ** 2).sum().backward()
            refs = run_in_threads(lambda: weakref.ref(t.grad), n=4)
            same.append(all(ref() is t.grad for ref in refs))
        return same, t.grad
    assert same_in_both(scenario) == ("ok", ([True] * 3, [2.0, 4.0, 6.0]))


def test_an_assertion_failing_in_a_backward_on_a_thread_reaches_the_caller():
    def scenario(lib):
        def backward(ctx, g):
            if not g.sum() < 0:
                raise AssertionError("the gradient is not negative")
            return g
        checked = function(lib, lambda ctx, x: x.clone(), backward, name="Checked")
        try:
            run_in_threads(lambda: checked.apply(ones(lib, 2, requires_grad=True)).sum().backward(), n=3)
        except AssertionError as e:
            return str(e)
    assert same_in_both(scenario) == ("ok", "the gradient is not negative")
