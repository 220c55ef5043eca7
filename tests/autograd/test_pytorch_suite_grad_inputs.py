"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about what ``autograd.grad`` and
``autograd.backward`` are asked for: materialized gradients, GradientEdges as inputs and outputs, unreachable
inputs, ``inputs=``. See test_pytorch_suite_basics.py for the method.
"""
import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")


def test_materialized_gradients_of_unused_inputs_do_not_require_grad_without_create_graph():
    def scenario(lib):
        x, y = lib.ones(10, requires_grad=True), lib.ones(10, requires_grad=True)
        g = lib.autograd.grad((x ** 2).sum(), (x, y), allow_unused=True, materialize_grads=True, create_graph=False)
        return g, [t.requires_grad for t in g]
    assert same_in_both(scenario)[1][1] == [False, False]
