"""Scenarios of PyTorch's test/test_autograd.py, class TestAutogradMultipleDispatch, the ones that do not need
PyTorch's test ops registered per dispatch key, written again and run with retrograd and torch on the same numbers.
See test_pytorch_suite_basics.py for the method.

Out of scope: the private test ops (``_test_autograd_multiple_dispatch*``) and their per-key formulas, nested
tensors, the CUDA scenarios, the private ``torch._C._autograd._get_current_graph_task_keep_graph``, and a wrapper
subclass with ``__torch_dispatch__``.
"""
import functools

import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")


def test_sum_over_a_dim_does_not_save_its_input():
    def scenario(lib):
        inp = randn(lib, 2, requires_grad=True)
        x = inp.clone()
        res = x.sum(-1, keepdim=True)
        x.add_(x)  # would fail the backward if sum had saved x
        res.backward()
        return inp.grad
    assert same_in_both(scenario) == ("ok", [1.0, 1.0])


def test_nodes_renumbered_run_in_the_order_of_their_new_sequence_numbers():
    def scenario(lib):
        x, y, z = (randn(lib, 10, requires_grad=True, seed=s) for s in range(3))
        a, b = x + y, y + z
        c = a + b
        for t, nr in ((a, 100), (b, 99), (c, 98)):
            t.grad_fn._set_sequence_nr(nr)
        order = []
        for t, name in ((a, "a"), (b, "b"), (c, "c")):
            t.register_hook(functools.partial(lambda g, name: order.append(name), name=name))
        c.sum().backward()  # c's node runs first, being the root; then a's, now numbered above b's
        return [t.grad_fn._sequence_nr() for t in (a, b, c)], order, x.grad, y.grad, z.grad
    assert same_in_both(scenario)[1][:2] == ([100, 99, 98], ["c", "a", "b"])


def test_atan2_gradient_at_the_origin_is_zero():
    def scenario(lib):
        x, y = lib.tensor([0.0], requires_grad=True), lib.tensor([0.0], requires_grad=True)
        lib.atan2(x, y).backward()
        return x.grad, y.grad
    assert same_in_both(scenario) == ("ok", ([0.0], [0.0]))


@pytest.mark.parametrize("shape", [(5, 2), (7, 3), (4, 1), (1, 5), (2, 5)])
def test_trace_backward_of_a_matrix_that_is_not_square(shape):
    def scenario(lib):
        x = randn(lib, *shape, requires_grad=True)
        lib.trace(x).backward()
        return x.grad
    expected = [[1.0 if i == j else 0.0 for j in range(shape[1])] for i in range(shape[0])]
    assert same_in_both(scenario) == ("ok", expected)
