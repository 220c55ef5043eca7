"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd), last part: custom Functions that make or
modify views, grad mode in reentrant backward, powers at zero, nansum, integer outputs.
See test_pytorch_suite_basics.py for the method.
"""
import warnings

import pytest

import retrograd as rg
from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def test_custom_function_returning_a_view_of_a_saved_input_then_modified():
    def scenario(lib):
        calls = [0]

        def forward(ctx, a, idx):
            a.narrow(0, idx, 1)
            res = a.select(0, idx)
            ctx.save_for_backward(a)
            ctx.idx = idx
            return res

        def backward(ctx, grad):
            calls[0] += 1
            a, = ctx.saved_tensors
            res = lib.zeros_like(a)
            res.select(0, ctx.idx).copy_(grad)
            return res, None
        f = function(lib, forward, backward, name="ComplexView")
        a = lib.ones(2, requires_grad=True)
        f.apply(a.clone(), 1).sum().backward()
        out = f.apply(a.clone(), 1)
        try:
            out += 1
            error = None
        except RuntimeError as e:
            error = str(e).split(".")[0]
        return calls[0], error
    same_in_both(scenario)


@pytest.mark.parametrize("case", ["plain", "extra_inplace", "input_is_view", "not_an_input", "two_outputs",
                                  "two_outputs_extra_inplace", "two_outputs_view_input", "dirty_not_returned"])
def test_custom_functions_that_modify_their_input_in_place(case):
    def scenario(lib):
        calls = [0]

        def adder_forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a

        def adder_backward(ctx, g):
            calls[0] += 1
            return g, g

        def bad_forward(ctx, a, b):
            c = 3 * a
            c.add_(b)
            ctx.mark_dirty(c)
            return c

        def two_forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        def two_backward(ctx, ga, gab):
            calls[0] += 1
            return ga + gab, ga + gab

        def out_forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a.clone(), a + b
        adder = function(lib, adder_forward, adder_backward, name="MyAdder")
        bad = function(lib, bad_forward, lambda ctx, g: (3 * g, 3 * g), name="MyAdderBad")
        two = function(lib, two_forward, two_backward, name="MyBadAdder")
        out = function(lib, out_forward, lambda ctx, ga, gab: (ga + gab, ga + 2 * gab), name="MyOutPlaceAdder")
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if case == "plain":
                adder.apply(a.clone(), b).sum().backward()
            elif case == "extra_inplace":
                c = adder.apply(a.clone(), b)
                c += 2
                c.sum().backward()
            elif case == "input_is_view":
                adder.apply(a.clone().view_as(a), b).sum().backward()
            elif case == "not_an_input":
                bad.apply(a.clone(), b)
            elif case.startswith("two_outputs"):
                c, d = two.apply(a.clone().view_as(a) if case.endswith("view_input") else a.clone(), b)
                if case.endswith("extra_inplace"):
                    c += 2
                (c * d).sum().backward()
            else:
                c, d = out.apply(a.clone().view_as(a), b)
                (c * d).sum().backward()
        return calls[0], len(caught), a.grad, b.grad
    same_in_both(scenario)


def test_custom_function_returning_a_view_under_no_grad():
    def scenario(lib):
        f = function(lib, lambda ctx, x: x[:], lambda ctx, g: g, name="Alias")
        inp = randn(lib, 2, requires_grad=True)
        with lib.no_grad():
            output = f.apply(inp)
            expected = inp[:]
        try:
            output.zero_()
        except RuntimeError as e:
            return output.requires_grad, expected.requires_grad, str(e).split(".")[0]
    same_in_both(scenario)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_mode_is_restored_after_a_reentrant_grad(create_graph):
    def scenario(lib):
        seen = []

        def backward(ctx, go):
            original = lib.is_grad_enabled()
            with lib.enable_grad():
                foo = randn(lib, *go.size(), requires_grad=True)
                grad, = lib.autograd.grad(foo ** 3, foo, grad_outputs=go)
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled() == original)
            return grad
        inp = randn(lib, 3, requires_grad=True)
        function(lib, lambda ctx, x: x.clone(), backward).apply(inp).sum().backward(create_graph=create_graph)
        return seen, inp.grad
    same_in_both(scenario)


@pytest.mark.parametrize("base", ["tensor", "scalar"])
def test_power_of_zero_gradient_for_the_exponent(base):
    def scenario(lib):
        b = lib.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        a = lib.tensor([0.0, 0.0, 0.0]) if base == "tensor" else 0
        lib.sum(a ** b).backward()
        return b.grad
    same_in_both(scenario)


@pytest.mark.parametrize("dims", [None, 0, (0, 2), (0, -1), "keepdim"], ids=str)
def test_nansum_with_nans_gradcheck(dims):
    def scenario(lib):
        a = randn(lib, 2, 2, 2, 2)
        with lib.no_grad():
            a[a < 0.2] = float("nan")
        a.requires_grad = True
        if dims is None:
            f = lambda x: x.nansum()  # noqa: E731
        elif dims == "keepdim":
            f = lambda x: x.nansum((0, -1), True)  # noqa: E731
        else:
            f = lambda x: x.nansum(dims)  # noqa: E731
        return lib.autograd.gradcheck(f, a), lib.autograd.gradgradcheck(f, a)
    assert same_in_both(scenario) == ("ok", (True, True))


@pytest.mark.parametrize("pair", [("float32", "float64"), ("float64", "float32")])
def test_sum_with_a_dtype_gives_the_input_dtype_gradient(pair):
    def scenario(lib):
        a = randn(lib, 2, 2, 2, 2).to(getattr(lib, pair[0])).requires_grad_()
        lib.sum(a, dtype=getattr(lib, pair[1])).backward()
        return a.dtype == a.grad.dtype
    assert same_in_both(scenario) == ("ok", True)


@pytest.mark.parametrize("which", ["forward", "backward"])
def test_custom_function_without_forward_or_backward_raises(which):
    def scenario(lib):
        inp = randn(lib, 1, requires_grad=True)
        if which == "forward":
            type("BadFw", (lib.autograd.Function,), {"backward": staticmethod(lambda ctx, g: g)}).apply(inp)
        else:
            bad = type("BadBw", (lib.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x.clone())})
            bad.apply(inp).sum().backward()
    same_in_both(scenario)


@pytest.mark.parametrize("inplace", [False, True])
def test_custom_function_modifying_a_local_view_keeps_its_node(inplace):
    def scenario(lib):
        def forward(ctx, inp, inplace):
            view = inp.clone()[:3]
            if inplace:
                view += 2
            return view
        foo = function(lib, forward, lambda ctx, g: (g, None), name="MyFn").apply(randn(lib, 10, requires_grad=True),
                                                                                 inplace)
        return foo.grad_fn.__class__.__name__
    assert same_in_both(scenario) == ("ok", "MyFnBackward")


def test_integer_outputs_do_not_require_grad():
    def scenario(lib):
        inp = randn(lib, 4, requires_grad=True)
        outs = [inp.argmax(), inp.argmin(), inp.argsort(), lib.searchsorted(inp.detach().sort()[0].requires_grad_(),
                                                                            randn(lib, 1, requires_grad=True))]
        return [(o.dtype.is_floating_point, o.requires_grad) for o in outs]
    assert same_in_both(scenario) == ("ok", [(False, False)] * 4)


@pytest.mark.parametrize("kind", [staticmethod, classmethod])
def test_setup_context_with_a_default_argument_of_forward(kind):
    def scenario(lib):
        # A classmethod receives its class first; the default of y reaches setup_context's inputs either way.
        if kind is classmethod:
            def forward(cls, x, y=3):
                return lib.pow(x, y)

            def setup_context(cls, ctx, inputs, output):
                ctx.save_for_backward(inputs[0])
                ctx.y = inputs[1]

            def backward(cls, ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.y * lib.pow(x, ctx.y - 1), None
        else:
            def forward(x, y=3):
                return lib.pow(x, y)

            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])
                ctx.y = inputs[1]

            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.y * lib.pow(x, ctx.y - 1), None
        pow_fn = type("Pow", (lib.autograd.Function,), {"forward": kind(forward), "setup_context": kind(setup_context),
                                                         "backward": kind(backward)})
        x = lib.tensor(2.0, requires_grad=True)
        y = pow_fn.apply(x)
        return y, lib.autograd.grad(y, x)
    assert same_in_both(scenario) == ("ok", (8.0, (12.0,)))


def test_error_in_a_branch_that_runs_before_a_custom_function_node_frees_it_cleanly():
    def scenario(lib):
        def run():
            inp = randn(lib, 2, requires_grad=True)
            right = function(lib, lambda ctx, x: x.clone(), lambda ctx, g: g.clone(), name="Foo").apply(inp)
            left = inp.clone()
            squared = left ** 2
            left += 1  # the branch of the pow raises in backward, before the custom node runs
            return squared + right
        try:
            run().sum().backward()
        except RuntimeError as e:
            error = str(e).startswith("one of the variables needed for gradient computation")
        run_again = randn(lib, 2, requires_grad=True)
        (run_again * 2).sum().backward()  # the engine works after the graph with the custom node was freed
        return error, run_again.grad
    assert same_in_both(scenario) == ("ok", (True, [2.0, 2.0]))
