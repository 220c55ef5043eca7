"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), seventh part: lerp, reductions with a
dtype, in-place ops on views, out= arguments, diagonal. See test_pytorch_suite_basics.py for the method.
"""
import gc
import math

import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")

LERP_SHAPES = [((3, 3, 3), (3, 3, 3), (3, 3, 3)), ((3,), (3, 3, 3), (3, 3, 3)), ((3, 3, 3), (3,), (3, 3, 3)),
               ((3, 3, 3), (3, 3, 3), (3,)), ((), (3, 3, 3), (3, 3, 3)), ((3, 3, 3), (), (3, 3, 3)),
               ((3, 3, 3), (3, 3, 3), ()), ((3, 3), (3, 3, 3), (3,))]


@pytest.mark.parametrize("shapes", LERP_SHAPES, ids=str)
def test_lerp_with_tensor_weights_gradcheck(shapes):
    def scenario(lib):
        args = [randn(lib, *s, requires_grad=True, seed=i) for i, s in enumerate(shapes)]
        return lib.autograd.gradcheck(lib.lerp, args), lib.autograd.gradgradcheck(lib.lerp, args)
    assert same_in_both(scenario) == ("ok", (True, True))


@pytest.mark.parametrize("op,has_no_dim,takes_dtype", [("sum", True, True), ("prod", True, True),
                                                       ("cumsum", False, True), ("cumprod", False, True),
                                                       ("logcumsumexp", False, False)])
def test_reduction_with_a_dtype_gives_the_inputs_gradient_dtype(op, has_no_dim, takes_dtype):
    def scenario(lib):
        f = getattr(lib, op)
        x = randn(lib, 3, 3).float().requires_grad_()
        pairs = []
        if has_no_dim:
            pairs.append((lib.autograd.grad([f(x)], [x])[0], lib.autograd.grad([f(x, dtype=lib.float64)], [x])[0]))
        gi = randn(lib, *f(x, dim=0).shape, seed=1).float()
        g1, = lib.autograd.grad([f(x, dim=0)], [x], gi)
        if takes_dtype:
            g2, = lib.autograd.grad([f(x, dim=0, dtype=lib.float64)], [x], gi.double())
        else:
            g2, = lib.autograd.grad([f(x.double(), dim=0)], [x], gi.double())
        pairs.append((g1, g2))
        # the same gradient within float32's rounding, in the input's dtype
        return [(bool(lib.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6)), str(b.dtype).split(".")[1])
                for a, b in pairs]
    result = same_in_both(scenario)
    assert all(close and dtype == "float32" for close, dtype in result[1])


def test_in_place_op_on_a_view_that_saves_its_output_makes_no_cycle():
    def scenario(lib):
        freed = [0]

        class CountOnDelete:
            def __del__(self):
                freed[0] += 1

        def run():
            copy = randn(lib, 3, 3, requires_grad=True).clone()
            copy.grad_fn.register_hook(CountOnDelete())
            lib.nn.functional.relu(copy.view(9), inplace=True)
        run()
        return freed[0]
    assert same_in_both(scenario) == ("ok", 1)


def test_in_place_op_on_a_view_of_a_leaf_requiring_grad_raises_at_once():
    def scenario(lib):
        x = lib.zeros(1, requires_grad=True)
        x.view_as(x).add_(1)
    assert same_in_both(scenario) == ("RuntimeError", "a view of a leaf Variable that requires grad is being used "
                                                      "in an in-place operation.")


def test_in_place_relu_after_instance_norm_double_backward():
    def scenario(lib):
        net = lib.nn.Sequential(lib.nn.InstanceNorm2d(2), lib.nn.ReLU(True))
        x = lib.tensor([[[[1.0, 1.0]]]], requires_grad=True)
        g, = lib.autograd.grad(net(x).pow(2), [x], grad_outputs=x.new_ones(x.shape), create_graph=True)
        lib.autograd.grad(g.sum(), [x])
        return x
    same_in_both(scenario)


def test_in_place_threshold_on_a_view_double_backward():
    def scenario(lib):
        inputs = lib.ones((1, 3, 8, 8), requires_grad=True)
        tmp1 = (inputs + 1).view_as(inputs)
        tmp2 = lib.nn.functional.threshold(tmp1, 0.0, 0.0, True)
        prob = lib.sigmoid(tmp2)
        gradients = lib.autograd.grad(outputs=prob, inputs=inputs, grad_outputs=lib.ones(prob.size()),
                                      create_graph=True, retain_graph=True)[0]
        penalty = gradients.sum()
        penalty.backward()
        second = penalty.grad_fn.next_functions[0][0].next_functions[1][0]
        # float32: the 192 equal terms sum in another order in NumPy than in PyTorch, hence the rounding
        return second.name(), round(float(inputs.grad.sum()), 4)
    assert same_in_both(scenario)[1][0] == "ThresholdBackwardBackward0"


def test_in_place_on_a_view_keeps_the_grad_fn_of_a_freed_view():
    def scenario(lib):
        a = lib.arange(10.0, requires_grad=True)
        b = a.narrow(0, 0, 2).clone().view(-1)
        b.relu_()
        c = b.clone()
        del b
        gc.collect()
        s = c.sum()
        s.backward()
        out = [s, a.grad]
        a = lib.rand(10, requires_grad=True).narrow(0, 0, 10)
        b = a.relu_()
        c = b.add_(100)
        del b
        try:
            c.sum().backward(lib.ones(1, requires_grad=True))
        except RuntimeError as e:
            out.append(type(e).__name__)
        return out
    same_in_both(scenario)


def test_out_argument_refuses_inputs_or_output_requiring_grad():
    def scenario(lib):
        a, b = randn(lib, 2, 2, requires_grad=True), randn(lib, 2, 2, requires_grad=True, seed=1)
        x = lib.zeros_like(a)
        out = []
        for args in ((a, b, x), (a.detach(), b.detach(), lib.zeros(2, 2, dtype=lib.float64, requires_grad=True))):
            try:
                lib.mul(args[0], args[1], out=args[2])
            except RuntimeError as e:
                out.append("out=" in str(e))
        with lib.no_grad():
            lib.mul(a, b, out=x)
        return out, x
    same_in_both(scenario)


def test_diagonal_backward_requires_grad_with_create_graph():
    def scenario(lib):
        a = randn(lib, 5, 6, requires_grad=True)
        c = (lib.diagonal(a) ** 2).sum()
        d, = lib.autograd.grad(c, a, retain_graph=True, create_graph=True)
        return d.requires_grad, d
    same_in_both(scenario)


def test_data_ptr_of_views_is_the_base_pointer_plus_the_offset():
    def scenario(lib):
        x = lib.zeros(3, 4, dtype=lib.float64)
        base = x.data_ptr()
        return (x[1:].data_ptr() - base, x[:, 2].data_ptr() - base, x.t().data_ptr() == base,
                x.view(-1).data_ptr() == base, x.detach().data_ptr() == base, x.clone().data_ptr() == base,
                lib.zeros(0).data_ptr())
    assert same_in_both(scenario) == ("ok", (32, 16, True, True, True, False, 0))


@pytest.mark.parametrize("call", ["threshold_", "inplace=True", "out of place"])
def test_threshold_in_place_records_threshold_backward1(call):
    def scenario(lib):
        F = lib.nn.functional
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = {"threshold_": lambda t: F.threshold_(t, 0.0, 5.0), "inplace=True": lambda t: F.threshold(t, 0.0, 5.0, True),
             "out of place": lambda t: F.threshold(t, 0.0, 5.0)}[call](x.clone())
        node = y.grad_fn
        return node.name(), [n.name() for n, _ in node.next_functions], node._saved_self, node._saved_threshold
    same_in_both(scenario)


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("threshold,value", [(0.5, 7.0), (0.5, math.nan), (math.nan, 7.0)])
def test_threshold_keeps_a_nan_input_and_its_gradient(threshold, value, inplace):
    # PyTorch's threshold is x <= threshold ? value : x: a NaN input, or threshold, is not below the threshold
    def scenario(lib):
        x = lib.tensor([math.nan, -1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.threshold(x.clone(), threshold, value, inplace)
        y.backward(lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64))
        return str(y.tolist()), x.grad  # NaN is not equal to itself: compared as text
    same_in_both(scenario)


def test_threshold_gradcheck():
    F = rg.nn.functional
    x = rg.tensor([-1.5, -0.2, 0.7, 2.0], dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: F.threshold(t, 0.3, -2.0), (x,))
    assert rg.autograd.gradgradcheck(lambda t: F.threshold(t, 0.3, -2.0), (x,))
    assert rg.autograd.gradcheck(lambda t: F.threshold_(t * 1, 0.3, -2.0), (x,))


def test_threshold_in_place_gradient_masks_by_the_old_value():
    def scenario(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = x.clone()
        lib.nn.functional.threshold_(y, 0.0, 5.0)  # 5 > threshold: only the old value can tell where to mask
        y.backward(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        return y, x.grad
    assert same_in_both(scenario) == ("ok", ([5.0, 0.5, 2.0], [0.0, 2.0, 3.0]))


def _raising_in_backward(lib):
    """An identity whose backward raises: it stands for PyTorch's internal DelayedError node."""
    def backward(ctx, g):
        raise RuntimeError("Boom!")
    return function(lib, lambda ctx, x: x.view_as(x), backward, name="DelayedError")


@pytest.mark.parametrize("uses_base_before", [False, True])
def test_an_in_place_add_on_a_view_runs_only_the_branches_a_pass_needs(uses_base_before):
    def scenario(lib):
        x, y = randn(lib, 2, requires_grad=True), randn(lib, 2, requires_grad=True, seed=1)
        y_safe = _raising_in_backward(lib).apply(y)

        def f(x, y):
            out = x.clone().view(-1)
            before = out * 2
            out += y
            return out + before if uses_base_before else out
        seen = []
        for wrt in (None, (y,), (x,), (y_safe,), (x, y_safe)):
            out = f(x, y_safe)
            try:
                seen.append(out.sum().backward() if wrt is None else lib.autograd.grad(out.sum(), wrt))
            except RuntimeError as e:
                seen.append(str(e))
        return seen
    assert same_in_both(scenario)[1][:2] == ["Boom!", "Boom!"]


def test_the_history_an_in_place_op_on_a_view_replaced_is_not_run():
    def scenario(lib):
        x, y = randn(lib, 2, requires_grad=True), randn(lib, 2, requires_grad=True, seed=1)
        y_safe = _raising_in_backward(lib).apply(y)
        out = x.clone().view(-1)
        called = []
        out.register_hook(lambda g: called.append(g))
        b = out + y_safe
        out += y_safe
        return lib.autograd.grad((out + b).sum(), (b, y_safe)), called
    assert same_in_both(scenario)[1][1] == []


def test_the_history_of_a_view_is_first_read_under_no_grad_after_its_base_changed_in_place():
    def scenario(lib):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        a = leaf.clone()
        view = a[:1]
        a.add_(1)
        with lib.no_grad():
            regenerated = view.grad_fn is not None
        (view * 3).sum().backward()
        return regenerated, view.requires_grad, leaf.grad
    assert same_in_both(scenario) == ("ok", (True, True, [3.0, 0.0]))


def test_view_replay_is_off_by_default_and_switched_as_a_context_manager_or_a_function():
    def scenario(lib):
        def f(x):
            out = x.clone().view(-1)
            out.add_(1)  # modifies the view: its history is regenerated
            return type(out.grad_fn).__name__
        x = lib.ones(2, 2, requires_grad=True)
        seen = [f(x), lib.autograd.is_view_replay_enabled()]
        with lib.autograd._force_original_view_tracking(False):
            seen += [f(x), lib.autograd.is_view_replay_enabled()]
        seen.append(lib.autograd.is_view_replay_enabled())
        with lib.autograd._force_original_view_tracking(True):
            seen += [f(x), lib.autograd.is_view_replay_enabled()]
        seen += [f(x), lib.autograd.is_view_replay_enabled()]
        with lib.autograd._force_original_view_tracking(False):
            lib.autograd._force_original_view_tracking(True)  # a function call switches at once
            seen += [f(x), lib.autograd.is_view_replay_enabled()]
        seen.append(lib.autograd.is_view_replay_enabled())
        try:
            lib.autograd._force_original_view_tracking(True)
            seen += [f(x), lib.autograd.is_view_replay_enabled()]
        finally:
            lib.autograd._force_original_view_tracking(False)
        seen += [f(x), lib.autograd.is_view_replay_enabled()]
        return seen
    assert same_in_both(scenario)[1][:2] == ["AsStridedBackward0", False]


@pytest.mark.parametrize("replay", [False, True])
def test_a_view_regenerated_either_way_gives_the_same_gradients(replay):
    def scenario(lib):
        with lib.autograd._force_original_view_tracking(replay):
            leaf = randn(lib, 4, 3, requires_grad=True)
            base = leaf * 1
            view = base[1:3].t()
            base.mul_(2)
            (view * randn(lib, 3, 2, seed=1)).sum().backward()
            return type(view.grad_fn).__name__, leaf.grad
    assert same_in_both(scenario)[1][0] == ("TBackward0" if replay else "AsStridedBackward0")
