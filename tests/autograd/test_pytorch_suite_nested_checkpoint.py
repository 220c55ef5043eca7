"""Scenarios of PyTorch's test/test_autograd.py, class TestNestedCheckpoint (non-reentrant checkpoints inside
checkpoints and inside ``autograd.grad``), written again and run with retrograd and torch on the same numbers.
See test_pytorch_suite_basics.py for the method. PyTorch's count of the ``sin`` kernels run (a TorchDispatchMode)
is out of scope; the count of Python calls is kept.
"""
import collections
import weakref

import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")

EARLY_STOP = pytest.mark.parametrize("early_stop", [True, False])


def grad(lib, fn):
    """``fn`` turned into its gradient, itself differentiable."""
    def wrapper(x):
        with lib.enable_grad():
            (g,) = lib.autograd.grad(fn(x), inputs=(x,), create_graph=True)
        return g
    return wrapper


def total(fn):
    return lambda x: fn(x).sum()


def ckpt(lib, fn):
    return lambda *args, **kwargs: lib.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False, **kwargs)


def variants(lib, fn, levels):
    """(reference, the same wrapped in checkpoints in various ways), for the first ``levels`` of: the function, its
    first, second and third derivative."""
    def g(f):
        return grad(lib, f)

    def c(f):
        return ckpt(lib, f)
    return ((fn, (c(fn), c(c(fn)))),
            (g(fn), (g(c(fn)), g(c(c(fn))))),
            (g(g(fn)), (g(c(g(fn))), c(g(g(c(fn)))), g(c(g(c(fn)))))),
            (g(g(g(fn))), (g(c(g(g(c(fn))))), g(c(g(c(g(c(fn)))))))))[:levels]


def nodes_left_alive(lib, fn):
    """The names of the graph's nodes still alive once ``fn``'s output is gone (each node is tagged in metadata)."""
    class Tag:
        def __init__(self, name):
            self.name = name

    def scope():
        out = fn(randn(lib, requires_grad=True))
        refs, seen, queue = [], set(), collections.deque([out.grad_fn] if out.grad_fn is not None else [])
        seen.update(queue)
        while queue:
            node = queue.popleft()
            tag = Tag(node.name())
            refs.append(weakref.ref(tag))
            node.metadata["tag"] = tag
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
        return refs
    return [r().name for r in scope() if r() is not None]


def _single_chain(lib):
    return lambda x: x.sin().exp().sin()


def _with_grads_inside(lib):
    def g(x):
        a = x.sin().exp().sin()
        b = x.sin().exp().sin()
        lib.autograd.grad(a, x)
        lib.autograd.grad(b, x)
        return x.sin()
    return g


@pytest.mark.parametrize("make, levels, early_stop", [(_single_chain, 4, True), (_single_chain, 3, False),
                                                       (_with_grads_inside, 2, True), (_with_grads_inside, 2, False)])
def test_nested_checkpoints_inside_grads_match_and_free_their_graph(make, levels, early_stop):
    # PyTorch runs each to the third derivative: without early stop, nested segments recompute nested segments, and
    # the segment with backward passes inside alone takes about 1.5 s for the two libraries (the CI clock)

    def scenario(lib):
        out = []
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            x = randn(lib, requires_grad=True)
            for expected_fn, actual_fns in variants(lib, make(lib), levels):
                expected = expected_fn(x)
                for actual_fn in actual_fns:
                    out.append((bool(lib.allclose(expected, actual_fn(x))), nodes_left_alive(lib, actual_fn)))
        return out
    result = same_in_both(scenario)
    assert result[1] == [(True, [])] * [2, 4, 7, 9][levels - 1]


@EARLY_STOP
def test_checkpoint_of_two_checkpointed_children(early_stop):
    def scenario(lib):
        def g(fn):
            return grad(lib, fn)

        def c(fn):
            return ckpt(lib, fn)

        def f(x):
            return x.sin().exp().sin()

        def h2(x):
            return x.cos().sin().exp()

        def hc(x):
            return c(h2)(c(f)(x))
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            a = randn(lib, 3, 3, requires_grad=True)
            expected = g(total(g(total(lambda x: h2(f(x))))))(a)
            first = g(total(g(total(c(hc)))))(a)
            second = g(total(c(g(total(c(hc))))))(a)
            alive = [nodes_left_alive(lib, fn) for fn in (g(c(hc)), g(total(g(total(c(hc))))),
                                                          g(total(c(g(total(c(hc)))))))]
            return expected, bool(lib.allclose(expected, first)), bool(lib.allclose(expected, second)), alive
    result = same_in_both(scenario)
    assert result[1][1:] == (True, True, [[], [], []])


@EARLY_STOP
def test_checkpoint_with_non_tensor_inputs_and_outputs(early_stop):
    def scenario(lib):
        def fn(k, a, b, f):
            return f(k * a * b.exp()), 1, "abcd"
        a = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out, one, text = lib.utils.checkpoint.checkpoint(fn, 3, a, b, lambda x: x.sin(), use_reentrant=False)
        actual = lib.autograd.grad(out, (a, b))
        expected = lib.autograd.grad(fn(3, a, b, lambda x: x.sin())[0], (a, b))
        return one, text, actual, expected
    same_in_both(scenario)


@EARLY_STOP
def test_checkpoint_with_a_keyword_argument(early_stop):
    def scenario(lib):
        def fn(a, blah=None):
            out = a.sin().exp()
            if blah is not None:
                out = out * blah
            return out.sin().exp()
        a = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            actual = lib.autograd.grad(ckpt(lib, fn)(a, blah=b), (a, b))
            expected = lib.autograd.grad(fn(a, blah=b), (a, b))
        return actual, expected
    same_in_both(scenario)


@EARLY_STOP
def test_hook_on_the_original_graph_runs_once(early_stop):
    def scenario(lib):
        counter = [0]
        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out = ckpt(lib, lambda t: t.sin().cos().sin())(a)
        out.grad_fn.next_functions[0][0].register_hook(lambda *args: counter.__setitem__(0, counter[0] + 1))
        out.backward()
        return counter[0], a.grad
    assert same_in_both(scenario)[1][0] == 1


@EARLY_STOP
def test_reentrant_backward_from_a_hook_inside_a_checkpointed_graph(early_stop):
    def scenario(lib):
        def fn(t):
            x = t.sin().cos()
            return x, x.sin()
        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            x, out = ckpt(lib, fn)(a)
        out.grad_fn.register_hook(lambda *args: x.backward(retain_graph=True))
        out.backward(retain_graph=True)
        return a.grad
    same_in_both(scenario)


def test_early_stop_by_argument_by_context_and_their_precedence():
    def scenario(lib):
        counter = [0]

        def clone(x):
            counter[0] += 1
            return x.clone()

        def fn(x):
            return clone(x.sin().cos())  # clone saves nothing: with early stop, it is not recomputed

        def run(outer=(), **kwargs):
            counter[0] = 0
            a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
            managers = [lib.utils.checkpoint.set_checkpoint_early_stop(v) for v in outer]
            for m in managers:
                m.__enter__()
            try:
                out = ckpt(lib, fn)(a, **kwargs)
            finally:
                for m in reversed(managers):
                    m.__exit__(None, None, None)
            out.backward()
            return counter[0]
        return [run(), run(early_stop=False), run(early_stop=True), run((False,)), run((True,)),
                run((False, True), early_stop=False), run((False,), early_stop=True), run((True,), early_stop=False)]
    assert same_in_both(scenario) == ("ok", [1, 2, 1, 2, 1, 1, 2, 1])


@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("saves", [True, False])
def test_segment_that_needs_no_recomputation_runs_python_the_same_times(early_stop, saves):
    def scenario(lib):
        counter = [0]

        def fn(x):
            counter[0] += 1
            return x.sin() if saves else x.clone()
        a = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out = ckpt(lib, fn)(a)
        out.backward()
        return counter[0], a.grad
    assert same_in_both(scenario)[1][0] == (2 if saves else 1)
