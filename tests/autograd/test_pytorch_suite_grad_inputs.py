"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about what ``autograd.grad`` and
``autograd.backward`` are asked for: materialized gradients, GradientEdges as inputs and outputs, unreachable
inputs, ``inputs=``. See test_pytorch_suite_basics.py for the method.
"""
import pytest

from .test_pytorch_suite_basics import _first_sentence, function, randn, same_in_both

torch = pytest.importorskip("torch")


def test_materialized_gradients_of_unused_inputs_do_not_require_grad_without_create_graph():
    def scenario(lib):
        x, y = lib.ones(10, requires_grad=True), lib.ones(10, requires_grad=True)
        g = lib.autograd.grad((x ** 2).sum(), (x, y), allow_unused=True, materialize_grads=True, create_graph=False)
        return g, [t.requires_grad for t in g]
    assert same_in_both(scenario)[1][1] == [False, False]


def _error(call):
    try:
        return call()
    except RuntimeError as e:
        return ("RuntimeError", _first_sentence(e))


def test_after_set_a_leaf_is_no_longer_in_the_graphs_recorded_before_but_its_gradient_edge_is():
    def scenario(lib):
        x = randn(lib, 2, requires_grad=True)
        x_edge = lib.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with lib.no_grad():
            x.set_(lib.rand_like(x))
        return _error(lambda: lib.autograd.grad(out.sum(), x, retain_graph=True)), lib.autograd.grad(out.sum(), x_edge)
    assert same_in_both(scenario)[1][0] == ("RuntimeError", "The differentiated Tensor at index 0 appears to not "
                                                            "have been used in the graph.")


def test_input_metadata_of_a_node_gives_each_forward_outputs_shape_dtype_and_device():
    def scenario(lib):
        def described(node):
            return [(m.shape, str(m.dtype).split(".")[1], str(m.device), m.is_nested_tensor, m.is_cpp_nested_tensor)
                    for m in node._input_metadata]
        x, y = lib.rand(2, requires_grad=True), lib.rand(2, requires_grad=True)
        var, _ = lib.var_mean(lib.rand(3, 3, requires_grad=True), dim=0)
        identity = function(lib, lambda ctx, x: (x, 3), lambda ctx, g, _: g, name="Test")
        out = identity.apply(randn(lib, 3, 3, requires_grad=True))[0]
        return described((x * y).grad_fn), described(var.grad_fn), described(out.grad_fn)
    assert same_in_both(scenario)[1][0] == [([2], "float32", "cpu", False, False)]
