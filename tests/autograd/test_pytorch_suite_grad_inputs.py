"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about what ``autograd.grad`` and
``autograd.backward`` are asked for: materialized gradients, GradientEdges as inputs and outputs, unreachable
inputs, ``inputs=``. See test_pytorch_suite_basics.py for the method.
"""
import warnings

import pytest

from errors_like_torch import first_sentence
from .test_pytorch_suite_basics import function, randn, same_in_both

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
        return ("RuntimeError", first_sentence(e))


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


def test_grad_to_the_gradient_edge_of_each_kind_of_node_matches_grad_to_the_tensor():
    def scenario(lib):
        seen = []

        def check(out, inp):
            ref = lib.autograd.grad(out.sum(), inp, retain_graph=True)
            edge = lib.autograd.graph.get_gradient_edge(inp)
            seen.append((type(edge.node).__name__, ref, lib.autograd.grad(out.sum(), edge)))
        x = randn(lib, 2, requires_grad=True)
        check(x.clone(), x)  # a leaf's AccumulateGrad
        x = x.clone()
        check(x.clone(), x)  # an op's node
        x = function(lib, lambda ctx, t: t.clone(), lambda ctx, g: g, name="Resize").apply(x)
        check(x.clone(), x)  # a custom Function's node
        x = lib.var_mean(x)[1]
        check(x.clone(), x)  # the second output of a node
        return seen
    same_in_both(scenario)


def test_gradient_edge_taken_before_an_in_place_op_reaches_the_old_value():
    def scenario(lib):
        x = randn(lib, 2, requires_grad=True).clone()
        edge = lib.autograd.graph.get_gradient_edge(x)
        x *= 2
        return lib.autograd.grad(x.sum(), (edge, x))
    assert same_in_both(scenario) == ("ok", ([2.0, 2.0], [1.0, 1.0]))


def test_gradient_edges_made_by_hand_as_inputs_of_grad_and_backward():
    def scenario(lib):
        edge = lib.autograd.graph.GradientEdge
        x, y = randn(lib, 2, requires_grad=True).clone(), randn(lib, 2, requires_grad=True, seed=1).clone()
        x_edge, y_edge = edge(x.grad_fn, x.output_nr), edge(y.grad_fn, y.output_nr)
        seen = [lib.autograd.grad((x + y).sum(), (x, y)), lib.autograd.grad((x + y).sum(), (x_edge, y_edge))]
        out = x.clone()
        for kwargs in ({"materialize_grads": True}, {}):
            for inputs in ((x_edge, y), (x, y), (x, y_edge)):
                seen.append(_error(lambda: lib.autograd.grad(out.sum(), inputs, allow_unused=True, **kwargs)))
        for inputs in ((x_edge, y), (x, y), (x, y_edge), (x_edge, y_edge)):
            lib.autograd.backward(out.sum(), inputs=inputs, retain_graph=True)
            seen.append((x.grad, y.grad))  # a GradientEdge names a node, which accumulates into no .grad
        return seen
    assert same_in_both(scenario)[1][4] == ("RuntimeError", "materialize_grads cannot be used when the given input "
                                                            "is a GradientEdge")


def test_gradient_edge_as_the_output_of_grad_and_backward():
    def scenario(lib):
        edge_of = lib.autograd.graph.get_gradient_edge
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)

        def fn(x, reduce=True):
            tmp = x.sin().cos()
            if reduce:
                tmp = tmp.sum()
            return tmp.exp().clone().sin().sum(), edge_of(tmp)
        seen = []
        out, edge = fn(x)
        tmp_grad, = lib.autograd.grad(out, (edge,))
        seen += [lib.autograd.grad(edge, (x,), grad_outputs=(tmp_grad,)), lib.autograd.grad(fn(x)[0], (x,))]
        seen.append(_error(lambda: lib.autograd.grad(fn(x, reduce=False)[1], (x,))))
        seen.append(lib.autograd.grad(fn(x)[1], (x,)))
        four = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64)
        seen.append(_error(lambda: lib.autograd.grad(fn(x)[1], (x,), grad_outputs=four)))
        _, edge = fn(x)
        lib.autograd.backward(edge, retain_graph=True)
        seen.append((x.grad, lib.autograd.grad(edge, (x,), retain_graph=True)))
        x.grad = None
        lib.autograd.backward((edge,), retain_graph=True)
        seen.append(x.grad)
        (_, edge1), (out2, _) = fn(x), fn(x)
        ref = lib.autograd.grad((edge1, out2), (x,), retain_graph=True)
        x.grad = None
        lib.autograd.backward((edge1, out2), retain_graph=True)
        seen.append((x.grad, ref))
        seen.append(_error(lambda: lib.autograd.backward(fn(x)[1], inputs=(x,), grad_tensors=four)))
        return seen
    result = same_in_both(scenario)
    assert result[1][2] == ("RuntimeError", "grad can be implicitly created only for scalar outputs")


def test_a_gradient_edge_keeps_its_node_alive_after_the_tensor_is_gone():
    def scenario(lib):
        clone = function(lib, lambda ctx, x: x.clone(), lambda ctx, g: g.clone(), name="Clone")
        inp = lib.rand(1, requires_grad=True).clone()
        runs = []
        for make in (lambda: inp.clone(), lambda: clone.apply(inp)):
            out = make()
            edge = lib.autograd.graph.get_gradient_edge(out)
            lib.autograd.backward(edge)
            del out
            lib.autograd.backward(edge)
            runs.append(type(edge.node).__name__)
        return runs
    assert same_in_both(scenario) == ("ok", ["CloneBackward0", "CloneBackward"])


def test_materialized_gradients_of_higher_derivatives_that_vanish():
    def scenario(lib):
        x, a = lib.tensor(0.5, requires_grad=True), lib.tensor(1.0, requires_grad=True)
        y = x * a
        dydx = lib.autograd.grad(y, x, create_graph=True)
        unused = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
        d2 = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
        d3 = lib.autograd.grad(d2, x, materialize_grads=True)  # allow_unused is implied
        try:
            lib.autograd.grad(y, x, allow_unused=False, materialize_grads=True)
        except ValueError as e:
            return unused, d2, d3, first_sentence(e)
    assert same_in_both(scenario)[1][:3] == ((None,), (0.0,), (0.0,))


def test_nodes_that_lead_to_no_input_asked_for_are_not_run():
    def scenario(lib):
        def backward(ctx, g):
            raise AssertionError("this node must not run")
        unreached = function(lib, lambda ctx, x: x, backward, name="MyFunc")
        seen = []
        x, y = unreached.apply(randn(lib, 1, requires_grad=True) * 2), randn(lib, 1, requires_grad=True, seed=1)
        seen.append(lib.autograd.grad(x, (y,), allow_unused=True))
        x, z = unreached.apply(randn(lib, 1, requires_grad=True) * 2), randn(lib, 1, requires_grad=True, seed=2)
        seen.append(lib.autograd.grad(x + z, (y, z), allow_unused=True))
        x = unreached.apply(randn(lib, 1, requires_grad=True) * 2)
        lib.autograd.backward(x, inputs=(y,))  # allow_unused is implied
        seen.append(y.grad)
        return seen
    assert same_in_both(scenario)[1] == [(None,), (None, [1.0]), None]


def test_batched_grad_outputs_of_a_tensor_and_of_a_scalar():
    def scenario(lib):
        def error(call):
            try:
                call()
            except RuntimeError as e:
                return first_sentence(e)
        x = randn(lib, 2, 2, requires_grad=True)
        batched = lib.arange(3).expand(2, 2, 3).transpose(0, 2)
        seen = [lib.autograd.grad(x.clone(), (x,), (batched,), is_grads_batched=True),
                error(lambda: lib.autograd.grad(x.clone(), (x,), (lib.ones(2, 2),), is_grads_batched=True)),
                lib.autograd.grad(x.sum(), (x,), (lib.arange(3),), is_grads_batched=True),
                error(lambda: lib.autograd.grad(x.sum(), (x,), (lib.ones(2).unsqueeze(1),), is_grads_batched=True))]
        return seen
    assert same_in_both(scenario)[1][1].startswith("If `is_grads_batched=True`, we interpret the first dimension")


def test_backward_with_inputs_accumulates_only_into_them():
    def scenario(lib):
        x, y = randn(lib, 2, 2, requires_grad=True), randn(lib, 2, 2, requires_grad=True, seed=1)
        seed = lib.ones(2, 2, dtype=lib.float64)
        seen = []
        for inputs in ([x, y], [x], [y], y):
            if x.grad is not None:
                with lib.no_grad():
                    x.grad.zero_()
                    y.grad.zero_()
            lib.autograd.backward(x ** 2 + y * x + y ** 2, seed, inputs=inputs)
            seen.append((x.grad.clone(), y.grad.clone()))
        try:
            lib.autograd.backward(x ** 2 + y * x + y ** 2, seed, inputs=[])
        except RuntimeError as e:
            seen.append(first_sentence(e))
        scalar = randn(lib, requires_grad=True)
        (scalar ** 2).backward(inputs=scalar)
        seen.append(scalar.grad)
        return seen
    assert same_in_both(scenario)[1][4] == "`inputs` argument to `backward()` cannot be empty."


def test_backward_with_non_leaf_inputs_and_an_input_the_graph_does_not_reach():
    def scenario(lib):
        x = randn(lib, 2, 2, requires_grad=True)
        x_non_leaf = x * 1
        y, z = randn(lib, 2, 2, requires_grad=True, seed=1), randn(lib, 2, 2, requires_grad=True, seed=2)
        out = x_non_leaf ** 2 + y * x_non_leaf + y ** 2
        seed = lib.ones(2, 2, dtype=lib.float64)
        out.backward(seed, create_graph=True, inputs=[x, y, x_non_leaf])
        seen = [x.grad, y.grad, x_non_leaf.grad]
        out.backward(seed, create_graph=True, inputs=[z])  # as if allow_unused: z.grad stays None
        seen.append(z.grad)
        x.grad = y.grad = x_non_leaf.grad = None  # the create_graph cycles
        return seen
    assert same_in_both(scenario)[1][3] is None


def test_backward_recording_its_pass_warns_of_the_cycle_it_makes_and_grad_does_not():
    def scenario(lib):
        before = lib.is_warn_always_enabled()
        lib.set_warn_always(True)  # the warning is otherwise given once per process
        try:
            b = randn(lib, 3, requires_grad=True)
            c = b * b
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                c.backward(lib.ones_like(c), create_graph=True)
            b.grad = None
            from_backward = [first_sentence(w.message) for w in caught]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                lib.autograd.grad(c, b, lib.ones_like(c), create_graph=True)
            return lib.is_warn_always_enabled(), from_backward, len(caught)
        finally:
            lib.set_warn_always(before)
    assert same_in_both(scenario) == ("ok", (True, ["Using backward() with create_graph=True will create a reference "
                                                    "cycle between the parameter and its gradient which can cause a "
                                                    "memory leak."], 0))


@pytest.mark.parametrize("view", ["diagonal", "select", "slice"])
def test_an_expanded_grad_output_of_a_view(view):
    def scenario(lib):
        if view == "diagonal":
            a, grad_output = randn(lib, 10, 10, requires_grad=True), randn(lib).expand(10)
            out = a.diagonal()
        elif view == "select":
            a, grad_output = randn(lib, 10, 10, 10, requires_grad=True), randn(lib, 10).expand(10, 10)
            out = a[0]
        else:
            a, grad_output = randn(lib, 10, 10, 10, requires_grad=True), randn(lib, 10, 1).expand(2, 10, 10)
            out = a[3:5]
        result, = lib.autograd.grad(out, a, grad_output)
        expected = lib.zeros_like(a)
        if view == "diagonal":
            expected = lib.eye(10, dtype=lib.float64) * grad_output[0]
        elif view == "select":
            expected[0] = grad_output
        else:
            expected[3:5] = grad_output
        return bool(lib.equal(result, expected))
    assert same_in_both(scenario) == ("ok", True)
