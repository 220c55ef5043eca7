"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about the custom Function's class:
its defaults, calls without tensors, setup_context with several inputs, instances and their attributes.
See test_pytorch_suite_basics.py for the method.
"""
import gc
import warnings

import pytest

from errors_like_torch import first_sentence
from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def test_a_call_without_tensors_returns_forwards_values_as_they_are():
    def scenario(lib):
        def forward(ctx, t1, t2, scale, t3):
            t4, t5 = t1 + t2 * t3, t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            return scale, t4, None, True, t5, "bar", t1
        backward = lib.autograd.function.once_differentiable(lambda ctx, *g: (g[0], g[1], None, g[2]))
        return function(lib, forward, backward).apply(0.25, 0.5, 3, 0.75)
    assert same_in_both(scenario) == ("ok", (3, 1.875, None, True, 2.625, "bar", 0.25))


def test_vmap_defaults_of_a_function():
    def scenario(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                return g * 2 * ctx.saved_tensors[0]
        x = randn(lib, 3, requires_grad=True)
        try:
            Square.vmap(None, (0,), x)
        except NotImplementedError as e:
            refused = str(e)
        return Square.generate_vmap_rule, callable(Square.vmap), refused, lib.autograd.grad(Square.apply(x).sum(), x)
    same_in_both(scenario)


@pytest.mark.parametrize("shape,new_shape,scale_forward,scale_backward", [((24,), (3, 8), 7, 11),
                                                                         ((2, 3, 4), (6, 4), -1, 2)])
def test_setup_context_with_non_tensor_inputs_matches_a_forward_taking_ctx(shape, new_shape, scale_forward,
                                                                           scale_backward):
    def scenario(lib):
        def setup_context(ctx, inputs, output):
            x, _, _, ctx.scale_backward = inputs
            ctx.x_shape = x.shape

        def backward(ctx, g):
            return g.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

        def forward_with_ctx(ctx, x, shape, scale_forward, scale_backward):
            setup_context(ctx, (x, shape, scale_forward, scale_backward), None)
            return x.reshape(shape) * scale_forward
        split = type("MyReshape", (lib.autograd.Function,), {
            "forward": staticmethod(lambda x, shape, sf, sb: x.reshape(shape) * sf),
            "setup_context": staticmethod(setup_context), "backward": staticmethod(backward)})
        joint = function(lib, forward_with_ctx, backward, name="MyReshapeRef")
        x = randn(lib, *shape, requires_grad=True)
        results = []
        for f in (split, joint):
            y = f.apply(x, new_shape, scale_forward, scale_backward).sum()
            results.append((y, lib.autograd.grad(y, x)[0]))
        return results
    result = same_in_both(scenario)
    assert result[1][0] == result[1][1]


@pytest.mark.parametrize("materialize", [True, False])
def test_an_undefined_incoming_gradient_is_zeros_or_none_as_set_materialize_grads_says(materialize):
    def scenario(lib):
        seen = []

        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x

        def backward(ctx, g):
            seen.append(g)
            return g
        # An identity whose backward returns None stands for PyTorch's internal UndefinedGrad node.
        undefined = function(lib, lambda ctx, x: x.view_as(x), lambda ctx, g: None, name="UndefinedGrad")
        x = lib.ones(1, requires_grad=True)
        undefined.apply(function(lib, forward, backward).apply(x)).backward()
        return seen, x.grad
    assert same_in_both(scenario) == ("ok", ([[0.0]] if materialize else [None], [0.0] if materialize else None))


def test_an_instance_of_a_function_is_made_with_a_warning_and_calling_it_raises():
    def scenario(lib):
        identity = function(lib, lambda ctx, x: x, lambda ctx, g: g, name="Id")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            instance = identity()
        x = lib.zeros(1, requires_grad=True)
        try:
            instance(x)
        except RuntimeError as e:
            refused = first_sentence(e)
        return ([(w.category.__name__, first_sentence(w.message).rsplit(".", 2)[-2]) for w in caught],
                isinstance(instance, identity), refused, identity.apply(x).grad_fn.name())
    assert same_in_both(scenario) == ("ok", ([("DeprecationWarning", "Id'> should not be instantiated")], True,
                                             "Legacy autograd function with non-static forward method is deprecated.",
                                             "IdBackward"))


def test_the_forward_of_an_instance_whose_destructor_collects_may_be_called_directly():
    def scenario(lib):
        class CollectOnDelete(lib.autograd.Function):
            def forward(self, x):
                return x

            def backward(self, grad_output):
                return grad_output

            def __del__(self):
                gc.collect()
        grads = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for _ in range(10):
                x = lib.ones(1, requires_grad=True)
                CollectOnDelete().forward(x).backward()
                grads.append(x.grad)
        return grads
    assert same_in_both(scenario) == ("ok", [[1.0]] * 10)


def test_metadata_of_a_custom_functions_node_after_its_output_is_gone():
    # PyTorch's test marks this an expected failure; PyTorch 2.13 gives the node's dict, and so does retrograd.
    def scenario(lib):
        f = function(lib, lambda ctx, x: x, lambda ctx, g: g)
        y = f.apply(lib.zeros(1, requires_grad=True))
        y.backward()
        y.grad_fn.metadata["kept"] = 1
        node = y.grad_fn
        del y
        return node.metadata
    assert same_in_both(scenario) == ("ok", {"kept": 1})
