"""Custom Functions: forward/backward, the ctx API, once_differentiable and the errors they raise."""
import pytest

import retrograd as rg
from retrograd.autograd import Function, once_differentiable


class MulConst(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


def test_apply_records_one_node_named_after_the_function():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward" and y.requires_grad and not y.is_leaf
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_forward_runs_without_recording():
    seen = []

    class Peek(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            seen.append((rg.is_grad_enabled(), y.requires_grad))
            return y

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    Peek.apply(rg.ones(1, requires_grad=True))
    assert seen == [(False, False)]


def test_non_tensor_inputs_get_none_gradients():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = MulConst.apply(x, 5.0)
    assert len(y.grad_fn.next_functions) == 1
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_free_attributes_on_ctx_reach_backward():
    x = rg.ones(1, requires_grad=True)
    y = MulConst.apply(x, 7.0)
    assert y.grad_fn.k == 7.0  # the ctx is the node
    y.backward()
    assert x.grad.tolist() == [7.0]


def test_output_does_not_require_grad_when_no_input_does():
    y = Cube.apply(rg.tensor([2.0]))
    assert not y.requires_grad and y.grad_fn is None and y.tolist() == [8.0]


def test_apply_under_no_grad_records_nothing():
    with rg.no_grad():
        y = Cube.apply(rg.tensor([2.0], requires_grad=True))
    assert not y.requires_grad and y.grad_fn is None


def test_custom_function_matches_gradcheck():
    x = rg.tensor([0.5, -1.5, 2.0], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(Cube.apply, (x,))
    assert rg.autograd.gradgradcheck(Cube.apply, (x,))


# -- ctx ---------------------------------------------------------------------------------------
def test_needs_input_grad_per_input():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad, None
    Two.apply(rg.ones(1, requires_grad=True), rg.ones(1), 2.0)
    assert seen == [(True, False, False)]


def test_saved_tensors_are_version_checked():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = Cube.apply(a)
    a.mul_(2)
    with pytest.raises(RuntimeError, match="^one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensors_are_freed_after_backward():
    x = rg.tensor([1.0], requires_grad=True)
    y = Cube.apply(x)
    y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


def test_saved_output_is_reconnected_to_the_node():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y
    x = rg.tensor([0.0, 1.0], dtype=rg.float64, requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.saved_tensors[0].grad_fn is y.grad_fn
    assert rg.autograd.gradgradcheck(Exp.apply, (x,))


def test_save_for_backward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad
    with pytest.raises(TypeError, match="^save_for_backward can only save variables, but argument 1 is of type int"):
        Bad.apply(rg.ones(1, requires_grad=True))


def test_mark_dirty_makes_the_modified_input_an_output_of_the_node():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    leaf = rg.tensor([1.0, 2.0], requires_grad=True)
    a = leaf * 1
    out = AddOneInplace.apply(a)
    assert out is a and a.grad_fn.name() == "AddOneInplaceBackward" and a.tolist() == [2.0, 3.0]
    assert a._version == 2  # add_, then mark_dirty's own bump, as in PyTorch
    a.sum().backward()
    assert leaf.grad.tolist() == [2.0, 2.0]


def test_mark_dirty_on_a_leaf_requiring_grad_raises():
    class Touch(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad has been used in an in-place "
                                           "operation."):
        Touch.apply(rg.ones(1, requires_grad=True))


def test_mark_non_differentiable_output_does_not_require_grad():
    seen = []

    class SortIdx(Function):
        @staticmethod
        def forward(ctx, x):
            values = x * 2
            idx = x * 0
            ctx.mark_non_differentiable(idx)
            return values, idx

        @staticmethod
        def backward(ctx, grad_values, grad_idx):
            seen.append(grad_idx.tolist())
            return grad_values * 2
    x = rg.ones(2, requires_grad=True)
    values, idx = SortIdx.apply(x)
    assert values.requires_grad and not idx.requires_grad and idx.grad_fn is None
    values.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0] and seen == [[0.0, 0.0]]


def test_undefined_output_gradients_are_materialized_as_zeros():
    seen = []

    class Split2(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 1

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append((ga.tolist(), gb.tolist()))
            return ga + gb
    x = rg.ones(2, requires_grad=True)
    a, _ = Split2.apply(x)
    a.sum().backward()
    assert seen == [([1.0, 1.0], [0.0, 0.0])]


def test_set_materialize_grads_false_passes_none():
    seen = []

    class Split2(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 1

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append(gb)
            return ga
    x = rg.ones(2, requires_grad=True)
    a, _ = Split2.apply(x)
    a.sum().backward()
    assert seen == [None] and x.grad.tolist() == [1.0, 1.0]


def test_returning_none_gives_no_gradient():
    class NoGrad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return grad, None
    x = rg.ones(1, requires_grad=True)
    y = rg.ones(1, requires_grad=True)
    NoGrad.apply(x, y).backward()
    assert x.grad.tolist() == [1.0] and y.grad is None


def test_input_returned_as_is_gets_its_own_output_tensor():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 3
    x = rg.ones(1, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentityBackward"
    y.backward()
    assert x.grad.tolist() == [3.0]


# -- wrong gradient counts and types -----------------------------------------------------------
def _returning(value):
    class Ret(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return value(grad)
    return Ret


def test_too_few_gradients_raise():
    with pytest.raises(RuntimeError, match=r"^function RetBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        _returning(lambda g: (g,)).apply(rg.ones(1, requires_grad=True), 2.0).backward()


def test_extra_none_gradients_are_allowed_but_not_extra_tensors():
    x = rg.ones(1, requires_grad=True)
    _returning(lambda g: (g, None, None)).apply(x, 2.0).backward()
    assert x.grad.tolist() == [1.0]
    with pytest.raises(RuntimeError, match=r"^function RetBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 3\)"):
        _returning(lambda g: (g, None, g)).apply(x, 2.0).backward()


def test_gradient_for_a_non_tensor_input_raises():
    with pytest.raises(RuntimeError, match="^function RetBackward returned a gradient different than None at "
                                           "position 2, but the corresponding forward input was not a Variable"):
        _returning(lambda g: (g, g)).apply(rg.ones(1, requires_grad=True), 2.0).backward()


def test_non_tensor_gradient_raises_runtime_error():
    with pytest.raises(RuntimeError, match=r"^expected Variable or None \(got float\)"):
        _returning(lambda g: (1.0, None)).apply(rg.ones(1, requires_grad=True), 2.0).backward()


def test_legacy_function_instance_warns_and_calling_it_raises():
    class Legacy(Function):
        def forward(self, x):
            return x * 2

        def backward(self, g):
            return g

    # apply calls the class's forward as it finds it, as PyTorch's: ctx takes the place of self
    assert Legacy.apply(rg.ones(1)).tolist() == [2.0]
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        legacy = Legacy()
    with pytest.raises(RuntimeError, match="^Legacy autograd function with non-static forward method is "
                                           "deprecated."):
        legacy(rg.ones(1))
    assert legacy.forward(rg.ones(1)).tolist() == [2.0]  # an instance is still made, its methods callable


# -- once_differentiable ----------------------------------------------------------------------
class CubeOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        assert not rg.is_grad_enabled()
        return grad * 3 * x ** 2


def test_once_differentiable_gives_first_derivatives():
    x = rg.tensor([2.0], requires_grad=True)
    CubeOnce.apply(x).backward()
    assert x.grad.tolist() == [12.0]


def test_once_differentiable_raises_when_differentiated_twice():
    x = rg.tensor([2.0], requires_grad=True)
    z = CubeOnce.apply(x)
    (g,) = rg.autograd.grad((z * z).sum(), x, create_graph=True)  # the gradient reaching backward requires grad
    assert g.tolist() == [192.0] and g.requires_grad
    with pytest.raises(RuntimeError, match="^trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.backward()


def test_once_differentiable_result_does_not_require_grad_when_its_incoming_gradient_does_not():
    x = rg.tensor([2.0], requires_grad=True)
    (g,) = rg.autograd.grad(CubeOnce.apply(x), x, create_graph=True)
    assert g.tolist() == [12.0] and not g.requires_grad
