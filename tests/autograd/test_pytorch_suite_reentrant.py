"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), ninth part: reentrant backward, callbacks,
checkpointing, views made by custom Functions. See test_pytorch_suite_basics.py for the method.
"""
import warnings

import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def _countdown(lib, order=None, name="DeepReentrant", with_sum=True):
    cls = []

    def forward(ctx, x):
        with lib.enable_grad():
            ctx.x = lib.autograd.Variable(x.detach(), requires_grad=True)
            ctx.x = ctx.x - 1
        return ctx.x.detach()

    def backward(ctx, g):
        if order is not None:
            order.append(name)
        if ctx.x < 0:
            return g
        with lib.enable_grad():
            out = cls[0].apply(ctx.x)
            (out.sum() if with_sum else out).backward()
        return g
    cls.append(function(lib, forward, backward, name=name))
    return cls[0]


def test_deep_reentrant_backward_does_not_overflow_the_stack():
    def scenario(lib):
        f = _countdown(lib)
        v = lib.tensor(1200.0, requires_grad=True)
        f.apply(v).sum().backward()
        v2 = lib.tensor(200.0, requires_grad=True)
        f.apply(v2).sum().backward()
        return v.grad, v2.grad
    same_in_both(scenario)


def test_reentrant_tasks_run_before_the_rest_of_the_outer_pass():
    def scenario(lib):
        order = []

        def backward(ctx, g):
            order.append("MyFunction")
            return g
        a = function(lib, lambda ctx, x: x, backward).apply(lib.tensor(6.0, requires_grad=True))
        b = _countdown(lib, order, name="Reentrant", with_sum=False).apply(lib.tensor(9.0, requires_grad=True))
        (a * b).backward()
        return order
    result = same_in_both(scenario)
    assert len(result[1]) == 11 and result[1][-1] == "MyFunction"


def test_checkpointed_segments_backward():
    def scenario(lib):
        lib.manual_seed(0)
        module = lib.nn.Sequential(lib.nn.Linear(10, 50), lib.nn.ReLU(), lib.nn.Linear(50, 10))
        feats = []
        for r in range(20):
            data = randn(lib, 1, 10, seed=r).float().requires_grad_()
            feats.append(lib.utils.checkpoint.checkpoint(module, data, use_reentrant=True))
        lib.stack(feats).mean().backward()
        return [p.grad is not None for p in module.parameters()]
    assert same_in_both(scenario) == ("ok", [True] * 4)


def test_callback_queued_by_a_callback_runs_in_the_same_pass():
    def scenario(lib):
        called = []
        queue = lib.autograd.Variable._execution_engine.queue_callback

        def adds_a_callback():
            called.append("first")
            queue(lambda: called.append("second"))

        def backward(ctx, g):
            queue(adds_a_callback)
            return g
        f = function(lib, lambda ctx, x: x, lib.autograd.function.once_differentiable(backward), name="MyFunc")
        f.apply(randn(lib, 3, 3, requires_grad=True)).sum().backward()
        return called
    assert same_in_both(scenario) == ("ok", ["first", "second"])


@pytest.mark.parametrize("depths", [[0], [1], [0, 1]], ids=str)
def test_callbacks_queued_in_reentrant_backward_run_once_per_pass(depths):
    def scenario(lib):
        counter = {"inner": 0, "outer": 0}
        once = lib.autograd.function.once_differentiable

        def inner_backward(ctx, g):
            if 1 in depths:
                lib.autograd.Variable._execution_engine.queue_callback(
                    lambda: counter.__setitem__("inner", counter["inner"] + 1))
            return g
        inner = function(lib, lambda ctx, x: x, once(inner_backward), name="MyFunc")

        def outer_backward(ctx, g):
            if 0 in depths:
                lib.autograd.Variable._execution_engine.queue_callback(
                    lambda: counter.__setitem__("outer", counter["outer"] + 1))
            tmp = g.detach().requires_grad_()
            with lib.enable_grad():
                out = inner.apply(tmp).sum()
            out.backward()
            return g
        outer = function(lib, lambda ctx, x: x, once(outer_backward), name="MyReentrantFunc")
        t1 = randn(lib, 3, 3, requires_grad=True)
        lib.autograd.backward([outer.apply(t1).sum()])
        return counter
    same_in_both(scenario)


def test_reentrant_backward_inside_a_leaf_hook():
    def scenario(lib):
        param = randn(lib, 10, requires_grad=True)
        handle = []

        def penalty(grad):
            handle[0].remove()
            old = grad
            param.grad = None
            with lib.enable_grad():
                g = grad.detach().requires_grad_()
                new_param = param.detach().requires_grad_()
                ((g * 2) + new_param).sum().backward()
            res = g.grad + grad
            param.grad = old
            return res
        handle.append(param.register_hook(penalty))
        (param * param).sum().backward()
        return param.grad
    same_in_both(scenario)


def test_reentrant_backward_inside_a_non_leaf_hook():
    def scenario(lib):
        param = randn(lib, 10, requires_grad=True)
        handle = []

        def increase(grad):
            handle[0].remove()
            with lib.enable_grad():
                g = grad.detach().requires_grad_()
                ((g * 2) + 5).sum().backward()
            return g.grad + grad
        tmp = param * param
        handle.append(tmp.register_hook(increase))
        tmp.sum().backward()
        return param.grad
    same_in_both(scenario)


@pytest.mark.parametrize("grad_mode,requires_grad", [(True, False), (True, True), (False, True), (False, False)])
def test_views_made_by_view_as_and_unbind_and_in_place_on_them(grad_mode, requires_grad):
    def scenario(lib):
        def attempt(fn):
            try:
                fn()
                return None
            except RuntimeError as e:
                return str(e).split(".")[0]
        out = []
        inp = randn(lib, 2, requires_grad=requires_grad).clone()
        with lib.set_grad_enabled(grad_mode):
            v = inp.view_as(inp)
        out += [v._is_view(), attempt(lambda: v.add_(1))]
        inp = randn(lib, 2, requires_grad=requires_grad).clone()
        with lib.set_grad_enabled(grad_mode):
            parts = inp.unbind()
        out += [parts[0]._is_view(), parts[1]._is_view(), attempt(lambda: parts[0].add_(1)),
                attempt(lambda: parts[1].add_(1))]
        return out
    same_in_both(scenario)


@pytest.mark.parametrize("fn_id", ["one_output", "two_output", "view_of_temp"])
@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("make_view", [True, False])
def test_custom_function_returning_views_then_modified(fn_id, inplace, make_view):
    def scenario(lib):
        calls = [0]

        def one_forward(ctx, a, b, make_view):
            return a.narrow(0, 0, 2) if make_view else a.clone()

        def one_backward(ctx, ga):
            calls[0] += 1
            return ga, None, None

        def two_forward(ctx, a, b, make_view):
            a = a.narrow(0, 0, 2) if make_view else a.clone()
            return a, a + b

        def two_backward(ctx, ga, gab):
            calls[0] += 1
            return ga + gab, gab, None

        def temp_forward(ctx, a, make_view):
            ctx.save_for_backward(a)
            a = a.narrow(0, 0, 2) if make_view else a.clone()
            return a.clone().select(0, 0)

        def temp_backward(ctx, grad):
            calls[0] += 1
            a, = ctx.saved_tensors
            res = lib.zeros_like(a)
            res.select(0, 0).copy_(grad)
            return res, None
        one = function(lib, one_forward, one_backward, name="IdOneOutput")
        two = function(lib, two_forward, two_backward, name="IdTwoOutput")
        temp = function(lib, temp_forward, temp_backward, name="ViewOfTemp")

        def fn(a, b):
            a, b = a.clone(), b.clone()
            if fn_id == "two_output":
                t1, t2 = two.apply(a, b, make_view)
                if inplace:
                    t1 += 3
                    t2 += 3
                else:
                    t1, t2 = t1 + 3, t2 + 3
                t = t1 * t2
            else:
                t = one.apply(a, b, make_view) if fn_id == "one_output" else temp.apply(a + b, make_view)
                if inplace:
                    t += 3
                else:
                    t = t + 3
            return t.sum()
        a, b = lib.ones(2, dtype=lib.float64, requires_grad=True), lib.ones(2, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(a, b).backward()
        return calls[0], a.grad, b.grad
    same_in_both(scenario)
