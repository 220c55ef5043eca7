"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) on graph nodes as a type, views made by
custom Functions and by ops, in-place ops on them, custom Functions in forward mode, and the reference cycles
hooks and custom Functions can make. See test_pytorch_suite_basics.py for the method.
"""
import gc
import itertools
import warnings
import weakref

import pytest

from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def raised(call):
    """What ``call()`` returned, or the type and first sentence of what it raised."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the outcome is compared, whatever it is
        return type(e).__name__, str(e).split("\n")[0].split(". ")[0]


def typed(lib, name, **methods):
    """A custom Function class named ``name`` with the given static methods (forward, backward, vjp, jvp)."""
    return type(name, (lib.autograd.Function,), {k: staticmethod(v) for k, v in methods.items()})


# -- nodes as a type ------------------------------------------------------------------------------
def test_every_kind_of_node_is_a_graph_node():
    def scenario(lib):
        Node = lib.autograd.graph.Node
        a = randn(lib, 3, 3, requires_grad=True)
        b = a.exp()
        accumulate = b.grad_fn.next_functions[0][0]
        seen = [isinstance(b.grad_fn, Node), issubclass(type(b.grad_fn), Node), isinstance(type(accumulate), Node),
                issubclass(type(accumulate), Node), isinstance(accumulate, Node), isinstance(None, Node),
                isinstance(1, Node), isinstance(Node, Node), issubclass(Node, Node),
                issubclass(lib.autograd.function.BackwardCFunction, Node)]
        ctx_is_node = []
        f = function(lib, lambda ctx, x: (ctx_is_node.append(isinstance(ctx, Node)), x)[1],
                     lambda ctx, g: (ctx_is_node.append(isinstance(ctx, Node)), g)[1], name="Func")
        out = f.apply(a)
        seen += [isinstance(out.grad_fn, Node), issubclass(type(out.grad_fn), Node)]
        out.sum().backward()
        # the node of an error to raise if reached (PyTorch's DelayedError makes it): once_differentiable's
        once = function(lib, lambda ctx, x: x * 2, lib.autograd.function.once_differentiable(lambda ctx, g: g * 2))
        v = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        error_node = lib.autograd.grad(once.apply(a), a, v, create_graph=True)[0].grad_fn
        return seen, ctx_is_node, error_node.name(), isinstance(error_node, Node)
    assert same_in_both(scenario) == ("ok", ([True, True, False, True, True, False, False, False, True, True, True,
                                              True], [True, True], "torch::autograd::Error", True))


def test_graph_node_is_a_virtual_base_class_outside_the_mro():
    def scenario(lib):
        Node = lib.autograd.graph.Node
        a = randn(lib, 3, 3, requires_grad=True)
        f = function(lib, lambda ctx, x: x, lambda ctx, g: g, name="Func")

        class MyNode(Node):  # subclassing the virtual base class makes a real subclass of it
            pass
        acc = a.exp().grad_fn.next_functions[0][0]
        return (Node in type(a.exp().grad_fn).mro(), Node in type(f.apply(a).grad_fn).mro(),
                Node in type(acc).mro(), isinstance(acc, Node), issubclass(MyNode, Node),
                isinstance(a.exp().grad_fn, MyNode))
    assert same_in_both(scenario) == ("ok", (False, False, False, True, True, False))


# -- views of custom Functions -------------------------------------------------------------------
def test_in_place_on_views_a_custom_function_or_unbind_returned():
    def scenario(lib):
        view_fn = function(lib, lambda ctx, inp: inp.view_as(inp), lambda ctx, g: g, name="MyFn")
        b = randn(lib, 1, requires_grad=True)

        def add_into(view):
            view += b
        seen = [raised(lambda: add_into(view_fn.apply(randn(lib, 1, 2)))),
                raised(lambda: view_fn.apply(randn(lib, 1, 2)).copy_(b)),
                raised(lambda: randn(lib, 1, 2).unbind()[0].copy_(b))]
        a = randn(lib, 1, 2)
        a.select(1, 0).copy_(b)  # a view of an op made the default way: fine
        return seen, a.requires_grad
    outcome = same_in_both(scenario)
    assert outcome[1][1] is True


def _simple_view_functions(lib, calls, nonzero):
    def one_forward(ctx, a, make_view):
        return a.narrow(0, 0, 2) if make_view else a.clone()

    def one_backward(ctx, ga):
        calls[0] += 1
        return ga, None

    def two_forward(ctx, a, b, make_view):
        a = a.narrow(0, 0, 2) if make_view else a.clone()
        return a, a + b

    def two_backward(ctx, ga, gab):
        calls[0] += 1
        nonzero[0] = not bool(ga.eq(0).all())
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
    return (function(lib, one_forward, one_backward, name="IdOneOutput"),
            function(lib, two_forward, two_backward, name="IdTwoOutput"),
            function(lib, temp_forward, temp_backward, name="ViewOfTemp"))


@pytest.mark.parametrize("fn_id,inplace,make_view", list(itertools.product(["one_output", "two_output",
                                                                             "view_of_temp"], [True, False],
                                                                            [True, False])))
def test_custom_function_returning_an_input_a_view_or_a_view_of_a_temporary(fn_id, inplace, make_view):
    def scenario(lib):
        calls, nonzero = [0], [True]
        one, two, temp = _simple_view_functions(lib, calls, nonzero)

        def fn(a, b):
            a, b = a.clone(), b.clone()  # gradcheck's inputs are never modified
            if fn_id == "two_output":
                t1, t2 = two.apply(a, b, make_view)
                if inplace:
                    t1 += 3
                    t2 += 3
                else:
                    t1, t2 = t1 + 3, t2 + 3
                t = t1 * t2
            else:
                t = one.apply(a, make_view) if fn_id == "one_output" else temp.apply(a + b, make_view)
                if inplace:
                    t += 3
                else:
                    t = t + 3
            return t.sum()
        a, b = lib.ones(2, dtype=lib.float64, requires_grad=True), lib.ones(2, dtype=lib.float64, requires_grad=True)
        checked = raised(lambda: lib.autograd.gradcheck(fn, (a, b), check_batched_grad=False))
        calls[0], nonzero[0] = 0, True
        ran = raised(lambda: fn(a, b).abs().backward())
        return checked, ran, calls[0], nonzero[0], a.grad, b.grad
    same_in_both(scenario)


@pytest.mark.parametrize("inplace_view", ["as_strided_", "transpose_", "t_", "squeeze_", "unsqueeze_", "swapdims_",
                                          "swapaxes_"])
def test_in_place_view_ops_on_views_made_in_each_mode(inplace_view):
    def scenario(lib):
        call = {"as_strided_": lambda v: v.as_strided_((1, 0), (2, 2)), "transpose_": lambda v: v.transpose_(0, 0),
                "t_": lambda v: v.t_(), "squeeze_": lambda v: v.squeeze_(0), "unsqueeze_": lambda v: v.unsqueeze_(0),
                "swapdims_": lambda v: v.swapdims_(0, 0), "swapaxes_": lambda v: v.swapaxes_(0, 0)}[inplace_view]
        view_custom = function(lib, lambda ctx, x: x.view_as(x), lambda ctx, g: g, name="Func")
        seen = []
        for kind, view_mode, op_mode, requires_grad in itertools.product(("normal", "multi_view", "custom"),
                                                                         (True, False), (True, False), (True, False)):
            base = randn(lib, 2, 3, requires_grad=requires_grad).clone()
            with lib.set_grad_enabled(view_mode):
                inp = {"multi_view": lambda: base.unbind()[0], "custom": lambda: view_custom.apply(base),
                       "normal": lambda: base.view_as(base)}[kind]()
            with lib.set_grad_enabled(op_mode):
                first = raised(lambda: call(inp))  # the in-place view op on the view
            seen.append((first, None if first is not None else raised(lambda: inp.add_(1))))  # then in place on it
        return seen
    same_in_both(scenario)


def test_printing_tensors_with_their_history_or_an_invalid_one():
    def scenario(lib):
        a = lib.ones(1, requires_grad=True)
        seen = [repr(a), repr(a.clone())]
        with lib.no_grad():
            b = a[:]
            b *= 2
        seen.append(repr(b))  # a view made and modified in place under no_grad
        seen.append(repr(function(lib, lambda ctx, x: x, lambda ctx, g: g, name="Func").apply(a)))
        return seen
    assert same_in_both(scenario) == ("ok", ["tensor([1.], requires_grad=True)", "tensor([1.], grad_fn=<CloneBackward0>)",
                                             "tensor([2.], grad_fn=<Invalid>)", "tensor([2.], grad_fn=<FuncBackward>)"])


def test_in_place_on_a_view_of_a_view_made_under_no_grad_or_inference_mode():
    def scenario(lib):
        seen = []
        for mode in (lib.no_grad, lib.inference_mode):
            x = lib.zeros(2)
            with mode():
                y = x.view(2)
            y.requires_grad_(True)
            z = y.view(2)

            def divide():
                nonlocal z
                z /= 2
            seen.append(raised(divide))
        return seen
    outcome = same_in_both(scenario)
    assert [kind for kind, _ in outcome[1]] == ["RuntimeError"] * 2


def test_custom_function_returning_a_select_of_an_input_it_narrowed():
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

        def add_one():
            nonlocal out
            out += 1
        return calls[0], a.grad, raised(add_one)
    assert same_in_both(scenario)[1][2] == ("RuntimeError", "Output 0 of ComplexView is a view and is being modified "
                                                            "inplace")


def test_custom_functions_that_modify_their_inputs_in_place():
    def scenario(lib):
        calls = [0]

        def count(result):
            calls[0] += 1
            return result

        def add_in_place(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a
        adder = function(lib, add_in_place, lambda ctx, g: count((g, g)), name="MyAdder")
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        seen = []
        for prepare in (lambda c: c, lambda c: c.__iadd__(2), None):
            calls[0] = 0
            c = adder.apply(a.clone().view_as(a) if prepare is None else a.clone(), b)
            (c if prepare is None else prepare(c)).sum().backward()
            seen.append(calls[0])

        def add_to_a_new_tensor(ctx, a, b):
            c = 3 * a
            c.add_(b)
            ctx.mark_dirty(c)
            return c
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            function(lib, add_to_a_new_tensor, lambda ctx, g: (3 * g, 3 * g), name="MyAdderBad").apply(a.clone(), b)
        seen.append([str(w.message).split(". ")[0] for w in caught])

        def add_and_return_two(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b
        two = function(lib, add_and_return_two, lambda ctx, ga, gab: count((ga + gab, ga + gab)), name="MyBadAdder")
        for extra in (False, True):
            calls[0] = 0
            c, d = two.apply(a.clone(), b)
            if extra:
                c += 2
            (c * d).sum().backward()
            seen.append(calls[0])
        seen.append(raised(lambda: two.apply(a.clone().view_as(a), b)))

        def add_and_return_others(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a.clone(), a + b
        others = function(lib, add_and_return_others, lambda ctx, ga, gab: (ga + gab, ga + 2 * gab),
                          name="MyOutPlaceAdder")
        seen.append(raised(lambda: others.apply(a.clone().view_as(a), b)))
        return seen, a.grad, b.grad
    same_in_both(scenario)


def test_mark_dirty_of_views_that_are_not_plain_inputs():
    def scenario(lib):
        def dirty_view_of_a_copy(ctx, inp):
            out = inp.clone().view_as(inp)
            ctx.mark_dirty(out)
            return out

        def add_one(ctx, inp):
            inp.add_(1)
            ctx.mark_dirty(inp)
            return inp
        of_copy = function(lib, dirty_view_of_a_copy, lambda ctx, g: None, name="Func")
        in_place = function(lib, add_one, lambda ctx, g: None, name="Func")
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        first, _ = a.split_with_sizes([1, 1], dim=0)
        return (raised(lambda: of_copy.apply(lib.tensor([1.0], requires_grad=True).clone())),
                raised(lambda: in_place.apply(first)),  # an output of a multi-output view op
                raised(lambda: in_place.apply(a.view_as(a))))  # a view of a leaf that requires grad
    outcome = same_in_both(scenario)
    assert outcome[1][0] == ("RuntimeError", "ctx.mark_dirty() received a tensor that was not an input")
    assert outcome[1][1][1].startswith("Output 0 of SplitWithSizes")


def test_a_dirty_view_saved_for_backward_is_freed_with_its_graph():
    def scenario(lib):
        def forward(ctx, x):
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x
        f = function(lib, forward, lambda ctx, g: None, name="Test")

        def scope():
            x = lib.tensor(1.0, requires_grad=True).clone()
            x = x.view_as(x)
            f.apply(x)
            return weakref.ref(x)
        gc.disable()  # what a reference cycle keeps alive would stay
        try:
            return scope()() is None
        finally:
            gc.enable()
    assert same_in_both(scenario) == ("ok", True)


def test_custom_function_returning_an_input_as_is_keeps_its_torch_function_subclass():
    def scenario(lib):
        class Custom(lib.Tensor):
            def __init__(self, data):
                super().__init__()
                self.wrapped = data

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                args = tuple(a.wrapped if isinstance(a, cls) else a for a in args)
                out = func(*args, **(kwargs or {}))
                return cls(out) if isinstance(out, lib.Tensor) else out
        f = function(lib, lambda ctx, inp: inp, lambda ctx: None, name="Fn")
        return type(f.apply(Custom(randn(lib, 2, 3)))).__name__
    assert same_in_both(scenario) == ("ok", "Custom")


# -- grad mode, pow ----------------------------------------------------------------------------------
def test_grad_mode_inside_a_custom_backward_that_runs_autograd_grad():
    def scenario(lib):
        seen = []

        def backward(ctx, go):
            original = lib.is_grad_enabled()
            with lib.enable_grad():
                seen.append(lib.is_grad_enabled())
                foo = randn(lib, *go.shape, requires_grad=True)
                grad, = lib.autograd.grad(foo ** 3, foo, grad_outputs=go)
                seen.append(lib.is_grad_enabled())
            seen.append((original, lib.is_grad_enabled() == original))
            return grad
        f = function(lib, lambda ctx, inp: inp.clone(), backward, name="MyFunction")
        inp = randn(lib, 3, requires_grad=True)
        f.apply(inp).sum().backward()
        f.apply(inp).sum().backward(create_graph=True)
        return seen
    assert same_in_both(scenario) == ("ok", [True, True, (False, True), True, True, (True, True)])


def test_gradient_of_zero_to_a_power_with_respect_to_the_power():
    def scenario(lib):
        seen = []
        for base in (lib.tensor([0.0, 0.0, 0.0]), 0):
            b = lib.tensor([-1.0, 0.0, 1.0], requires_grad=True)
            lib.sum(base ** b).backward()
            seen.append(str(b.grad.tolist()))  # -inf is compared as text
        return seen
    assert same_in_both(scenario) == ("ok", ["[-inf, 0.0, 0.0]"] * 2)


# -- custom Functions in forward mode ------------------------------------------------------------------
def test_custom_function_missing_a_method_raises_when_it_is_needed():
    def scenario(lib):
        inp = randn(lib, 1, requires_grad=True)
        no_forward = typed(lib, "BadFw", backward=lambda ctx, foo: foo)
        no_backward = typed(lib, "BadBw", forward=lambda ctx, foo: foo.clone())
        both_names = typed(lib, "BadBw2", forward=lambda ctx, foo: foo.clone(), backward=lambda ctx, foo: foo,
                           vjp=lambda ctx, foo: foo)
        no_jvp = typed(lib, "BadJvp", forward=lambda ctx, foo: foo.clone())

        def forward_mode():
            fw = lib.autograd.forward_ad
            with fw.dual_level():
                no_jvp.apply(fw.make_dual(inp, lib.rand_like(inp)))
        return [raised(lambda: no_forward.apply(inp)), raised(lambda: no_backward.apply(inp).sum().backward()),
                raised(lambda: both_names.apply(inp).sum().backward()), raised(forward_mode)]
    outcome = same_in_both(scenario)
    assert [kind for kind, _ in outcome[1]] == ["NotImplementedError", "NotImplementedError", "RuntimeError",
                                                "NotImplementedError"]


@pytest.mark.parametrize("flag", ["ok", "not_a_view", "not_a_view_of_inp", "not_a_view_of_inp_base"])
def test_custom_function_returning_a_view_needs_a_jvp_returning_a_view_of_the_tangent(flag):
    def scenario(lib):
        def forward(ctx, foo, flag):
            ctx.flag, ctx.size = flag, foo.size()
            return foo.narrow(0, 0, 2)

        def vjp(ctx, g):
            gi = g.new_zeros(ctx.size)
            gi.narrow(0, 0, 2).copy_(g)
            return gi, None

        def jvp(ctx, gi, _):
            res = gi.narrow(0, 0, 2)
            if ctx.flag != "ok":
                res = res.clone()  # breaks the view
            if ctx.flag in ("not_a_view_of_inp", "not_a_view_of_inp_base"):
                res = res.view_as(res)  # a view, of something else
            return res
        f = typed(lib, "ViewFn", forward=forward, vjp=vjp, jvp=jvp)

        def test_fn(inp):
            if flag == "not_a_view_of_inp_base":
                inp = inp.view_as(inp)
            return f.apply(inp, flag)
        return raised(lambda: lib.autograd.gradcheck(test_fn, randn(lib, 4, 4, requires_grad=True),
                                                     check_forward_ad=True))
    outcome = same_in_both(scenario)
    assert (outcome[1] is True) == (flag == "ok")


def test_custom_function_in_forward_mode_checks_its_in_place_and_wrong_jvps():
    def scenario(lib):
        def forward(ctx, foo, flag):
            ctx.mark_dirty(foo)
            ctx.flag = flag
            foo.mul_(2)
            return foo

        def jvp(ctx, gi, _):
            if ctx.flag:
                return 2 * gi  # not in place
            gi.mul_(2)
            return gi
        in_place = typed(lib, "InplaceFn", forward=forward, vjp=lambda ctx, g: (2 * g, None), jvp=jvp)
        inp = randn(lib, 4, 4, requires_grad=True)
        seen = [raised(lambda: lib.autograd.gradcheck(lambda t, flag: in_place.apply(t.clone(), flag), (inp, flag),
                                                      check_forward_ad=True)) for flag in (False, True)]

        def forward2(ctx, foo, should_fail):
            ctx.should_fail = should_fail
            return foo * 2
        wrong = typed(lib, "UserFn", forward=forward2, vjp=lambda ctx, g: (2 * g, None),
                      jvp=lambda ctx, gi, _: 3 * gi if ctx.should_fail else 2 * gi)
        inp = randn(lib, 10, requires_grad=True)
        seen += [raised(lambda: lib.autograd.gradcheck(wrong.apply, (inp, fail), check_forward_ad=True))
                 for fail in (False, True)]
        return seen
    outcome = same_in_both(scenario)
    assert outcome[1][0] is True and outcome[1][2] is True
    assert outcome[1][1] == ("RuntimeError", "An inplace custom Function is not modifying the forward mode gradients "
                                             "inplace")


@pytest.mark.parametrize("requires_grad,jvp_in_place", list(itertools.product([True, False], repeat=2)))
def test_custom_function_marking_its_input_dirty_returns_it_and_its_tangent(requires_grad, jvp_in_place):
    def scenario(lib):
        fw = lib.autograd.forward_ad

        def forward(ctx, x):
            result = x.mul_(2)
            ctx.mark_dirty(result)
            return result
        f = typed(lib, "InplaceMul", forward=forward, backward=lambda ctx, g: None,
                  jvp=lambda ctx, t: t.mul_(2) if jvp_in_place else t)
        z = lib.tensor(1.0, requires_grad=requires_grad)
        x = z.clone()
        y = f.apply(x)
        seen = [x is y, x]
        with fw.dual_level():
            tangent = lib.ones_like(x)
            dual = fw.make_dual(x, tangent)

            def apply():
                out = f.apply(dual)
                return out is dual, fw.unpack_dual(out).tangent is tangent, fw.unpack_dual(out).tangent
            seen.append(raised(apply))
        return seen
    same_in_both(scenario)


def test_custom_function_in_forward_mode_with_non_tensor_arguments_first():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        seen = []

        def jvp(ctx, nt, x_t, nt2, y_t):
            seen.append((nt, nt2))
            return x_t * 2 + y_t * 3
        f = typed(lib, "MyFn", forward=lambda ctx, nt, x, nt2, y: x * 2 + y * 3, jvp=jvp)
        x, t, y = (lib.tensor(1.0, dtype=lib.float64) for _ in range(3))
        with fw.dual_level():
            tangent = fw.unpack_dual(f.apply(1, fw.make_dual(x, t), 1, y)).tangent
        checked = lib.autograd.gradcheck(f.apply, (1, x.requires_grad_(True), 1, y.requires_grad_(True)),
                                         check_forward_ad=True, check_backward_ad=False, check_batched_grad=False)
        return tangent, checked, sorted(set(seen))
    assert same_in_both(scenario) == ("ok", (2.0, True, [(None, None)]))


@pytest.mark.parametrize("second", ["view_as", "self", "mul_by_2"])
def test_custom_function_returning_an_input_as_is_in_forward_mode(second):
    def scenario(lib):
        fw = lib.autograd.forward_ad
        make = {"view_as": lambda x: x.view_as(x), "self": lambda x: x, "mul_by_2": lambda x: x * 2}[second]
        f = typed(lib, "MyFn", forward=lambda ctx, x, y: (x + y, x), vjp=lambda ctx, g1, g2: (g1 + g2, g1),
                  jvp=lambda ctx, x_t, y_t: (x_t + y_t, make(x_t)))
        a, b = (lib.tensor(1.0, dtype=lib.float64, requires_grad=True) for _ in range(2))
        c, d, t, t2 = (lib.tensor(1.0, dtype=lib.float64) for _ in range(4))
        seen = []
        with fw.dual_level():
            for primal, tangent, other in ((a, t, b), (c, t2, d)):
                dual = fw.make_dual(primal, tangent)
                seen.append(raised(lambda: fw.unpack_dual(f.apply(dual, other)[1]).tangent._base is tangent))
        seen.append(raised(lambda: lib.autograd.gradcheck(f.apply, (a, c), check_forward_ad=True)))
        return seen
    outcome = same_in_both(scenario)
    assert outcome[1] == ([True] * 3 if second == "view_as" else
                          [("RuntimeError", "A custom Function's forward is returning a view (or an input as-is) but "
                                            "the jvp is not returning a view.")] * 3)


def test_custom_function_returning_a_view_of_an_input_without_tangent_gives_the_input_one():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        f = typed(lib, "V", forward=lambda ctx, a, b: (a.narrow(0, 0, 1), b * 2),
                  jvp=lambda ctx, ga, gb: (gb.narrow(0, 0, 1) * 0 + 1, gb * 2))
        with fw.dual_level():
            a = randn(lib, 2)
            b = fw.make_dual(randn(lib, 2, seed=1), lib.ones(2, dtype=lib.float64))
            o1, _ = f.apply(a, b)
            return fw.unpack_dual(o1).tangent, fw.unpack_dual(a).tangent
    assert same_in_both(scenario) == ("ok", ([1.0], [1.0, 0.0]))


def test_custom_function_save_for_forward_in_both_modes():
    def scenario(lib):
        fw = lib.autograd.forward_ad

        def forward(ctx, x, y, z):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.z = z
            return z * x * y

        def jvp(ctx, x_t, y_t, _):
            x_p, y_p = ctx.saved_tensors
            return ctx.z * (y_p * x_t + x_p * y_t)

        def vjp(ctx, g):
            x, y = ctx.saved_tensors
            return ctx.z * g * y, ctx.z * g * x, None
        f = typed(lib, "Func", forward=forward, jvp=jvp, vjp=vjp)
        a = lib.tensor(1.0, requires_grad=True, dtype=lib.float64)
        t = lib.tensor(1.0, dtype=lib.float64)
        b = lib.tensor(2.0, requires_grad=True, dtype=lib.float64)
        with fw.dual_level():
            out = f.apply(fw.make_dual(a, t), b, 4)
            seen = [fw.unpack_dual(out).tangent]
            out.backward()
        seen += [a.grad, b.grad, lib.autograd.gradcheck(f.apply, (a, b, 4), check_forward_ad=True)]
        counts = []

        def jvp2(ctx, x_t):
            counts.append(("jvp", len(ctx.saved_tensors)))  # saved for backward only: nothing in jvp
            return x_t

        def vjp2(ctx, g):
            counts.append(("vjp", len(ctx.saved_tensors)))
            return g
        f2 = typed(lib, "Func", forward=lambda ctx, x: (ctx.save_for_backward(x), x.clone())[1], jvp=jvp2, vjp=vjp2)
        with fw.dual_level():
            f2.apply(fw.make_dual(a, t)).backward()
        direct = sorted(set(counts))
        seen.append(lib.autograd.gradcheck(f2.apply, (a,), check_forward_ad=True))
        return seen, direct, sorted(set(counts))
    assert same_in_both(scenario)[1][1] == [("jvp", 0), ("vjp", 1)]


def test_custom_function_non_differentiable_outputs_in_forward_mode():
    def scenario(lib):
        fw = lib.autograd.forward_ad

        def marks_second(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out
        x, x_t = lib.tensor(2.0), lib.tensor(1.0)
        seen = []
        marked = typed(lib, "Func", forward=marks_second, jvp=lambda ctx, xt, yt: (xt, None))
        with fw.dual_level():
            seen.append(fw.unpack_dual(marked.apply(fw.make_dual(x, x_t), lib.tensor(3.0))[1]).tangent)
        integer_tangents = []
        integer = typed(lib, "Func", forward=lambda ctx, x, y: (x.clone(), y.clone()),
                        jvp=lambda ctx, xt, yt: (integer_tangents.append(yt), (xt, None))[1])
        with fw.dual_level():
            seen += [fw.unpack_dual(integer.apply(fw.make_dual(x, x_t), lib.tensor(3))[1]).tangent, integer_tangents]
        wrong = typed(lib, "FuncWrong", forward=marks_second, jvp=lambda ctx, xt, yt: (xt, xt.clone()))
        with fw.dual_level():
            seen.append(raised(lambda: wrong.apply(fw.make_dual(x, x_t), lib.tensor(3))))
        with_object = typed(lib, "Func", forward=lambda ctx, x: (x.clone(), object(), x.clone()),
                            jvp=lambda ctx, xt: (xt, None, xt))
        with fw.dual_level():
            first, _, third = with_object.apply(fw.make_dual(x, x_t))
            seen += [fw.unpack_dual(first).tangent, fw.unpack_dual(third).tangent]
        return seen
    assert same_in_both(scenario)[1][:3] == [None, None, [None]]


# -- integer outputs ------------------------------------------------------------------------------------
def test_integer_outputs_do_not_require_grad_and_unique_values_do():
    def scenario(lib):
        inp = randn(lib, 4, requires_grad=True)
        seen = [(o.dtype.is_floating_point, o.requires_grad) for o in (
            inp.argmax(), inp.argmin(), inp.argsort(), lib.searchsorted(inp, randn(lib, requires_grad=True)),
            lib.bucketize(randn(lib, 5, 5, requires_grad=True), lib.linspace(0, 1.0, steps=100, requires_grad=True)),
            lib.empty(5).requires_grad_().count_nonzero())]
        for is_sorted, inverse, counts in itertools.product((True, False), repeat=3):
            for result in (lib.unique(inp, sorted=is_sorted, return_inverse=inverse, return_counts=counts),
                           lib.unique(inp, sorted=is_sorted, return_inverse=inverse, return_counts=counts, dim=0),
                           lib.unique_consecutive(inp, return_inverse=inverse, return_counts=counts),
                           lib.unique_consecutive(inp, return_inverse=inverse, return_counts=counts, dim=0)):
                result = result if isinstance(result, tuple) else (result,)
                seen.append([r.requires_grad for r in result])
        values = lib.unique(inp)
        return seen, values.grad_fn.name(), raised(lambda: values.sum().backward())
    outcome = same_in_both(scenario)
    assert outcome[1][2] == ("NotImplementedError", "the derivative for '_unique2' is not implemented.")


# -- reference cycles -----------------------------------------------------------------------------------
class _Tag:
    pass


def test_custom_function_whose_saved_output_holds_its_own_metadata_is_collected():
    def scenario(lib):
        seen = []

        def forward(ctx, x, metadata):
            x = x.clone()
            ctx.meta = metadata
            ctx.save_for_backward(x)
            return x

        def backward(ctx, g):
            x, = ctx.saved_tensors
            seen.append((round(x.item(), 2), round(ctx.meta["foo"].item(), 2)))
            return g * x, None
        f = function(lib, forward, backward, name="MyFn")

        def make(with_backward):
            a = lib.tensor(3.14, requires_grad=True)
            metadata = {}
            out = f.apply(a, metadata)
            metadata["foo"] = out  # the output, through ctx, holds itself: a cycle the collector frees
            if with_backward:
                out.sum().backward()
                seen.append(round(a.grad.item(), 2))
            return weakref.ref(out)
        for with_backward in (False, True):
            gc.disable()
            try:
                ref = make(with_backward)
                seen.append(ref() is not None)
            finally:
                gc.enable()
            gc.collect()
            seen.append(ref() is None)
        return seen
    assert same_in_both(scenario) == ("ok", [True, True, (3.14, 3.14), 3.14, True, True])


@pytest.mark.parametrize("hooks", [1, 2, 3])
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_create_graph_backward_through_full_backward_hooks_leaves_no_uncollectable_cycle(hooks, input_requires_grad):
    def scenario(lib):
        previous = lib.is_warn_always_enabled()
        lib.set_warn_always(True)  # the warning is given once per process otherwise
        try:
            t = randn(lib, 10, requires_grad=input_requires_grad)
            a = lib.tensor(1.0, requires_grad=True)

            class Test(lib.nn.Module):
                def forward(self, x):
                    return x ** 2 * a ** 2
            mod = Test()
            for _ in range(hooks):
                mod.register_full_backward_hook(lambda m, gi, go: None)
            tmp = mod(t)
            tag = _Tag()
            ref = weakref.ref(tag)
            tmp.grad_fn.metadata["a"] = tag
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                tmp.exp().sum().backward(create_graph=True)
            found = sum("Using backward() with create_graph=True" in str(w.message) for w in caught)
            a.grad = t.grad = None  # breaks the cycle backward made between the leaves and their gradients
            del tag, tmp, mod
            gc.collect()
            return found, ref() is None
        finally:
            lib.set_warn_always(previous)
    assert same_in_both(scenario) == ("ok", (1, True))


@pytest.mark.parametrize("custom_function", [True, False])
@pytest.mark.parametrize("tensor_hook", [True, False])
def test_a_hook_holding_its_node_lives_as_long_as_the_graph(custom_function, tensor_hook):
    def scenario(lib):
        f = function(lib, lambda ctx, x: x, lambda ctx, g: g, name="Function")
        count = [0]

        def scope():
            a = lib.tensor(1.0, requires_grad=True)
            b = f.apply(a) if custom_function else a.clone()
            grad_fn_b = b.grad_fn
            tag = _Tag()

            def hook(*args):
                grad_fn_b, tag  # noqa: B018 - the closure holds the node: a cycle through the node's hooks
                count[0] += 1
            (b.register_hook if tensor_hook else b.grad_fn.register_hook)(hook)
            return b.clone(), weakref.ref(tag)
        gc.disable()
        try:
            out, ref = scope()
            out.backward(retain_graph=True)
            gc.collect()  # the hook is alive and runs again after a collection
            out.backward(retain_graph=True)
            seen = [count[0], ref() is not None]
            del out
            gc.collect()
            return seen + [ref() is None]
        finally:
            gc.enable()
    assert same_in_both(scenario) == ("ok", [2, True, True])


def test_full_backward_hook_runs_once_for_a_gradient_and_its_double_backward():
    def scenario(lib):
        x = randn(lib, 1, requires_grad=True)
        loss = lib.nn.MSELoss()
        counter = [0]
        loss.register_full_backward_hook(lambda m, gi, go: counter.__setitem__(0, counter[0] + 1))
        gx, = lib.autograd.grad(loss(x, randn(lib, 1, seed=1)), x, create_graph=True)
        after_first = counter[0]
        lib.autograd.grad(gx, x)
        return after_first, counter[0]
    assert same_in_both(scenario) == ("ok", (1, 1))


# -- what backward keeps of its inputs ------------------------------------------------------------------
def test_backward_leaves_the_gradients_given_to_it_unchanged():
    def scenario(lib):
        leaf = randn(lib, 2, 2, requires_grad=True)
        out2 = leaf.gather(0, lib.tensor([[0, 0]]))
        out1 = leaf.clone()
        grad_out1 = randn(lib, 2, 2, seed=1)
        original = grad_out1.clone()
        lib.autograd.backward((out1, out2), (grad_out1, randn(lib, 1, 2, seed=2)))
        return bool(lib.equal(grad_out1, original)), leaf.grad
    assert same_in_both(scenario)[1][0] is True


def test_saved_tensors_are_the_tensors_themselves_where_they_can_be():
    def scenario(lib):
        a = randn(lib, 5, requires_grad=True)
        a_orig = a.detach().clone()
        b = a * a
        c = a * b
        d = lib.exp(a)
        seen = [b.grad_fn._saved_self is a, b.grad_fn._saved_other is a, c.grad_fn._saved_self is a,
                c.grad_fn._saved_other is b,  # an input, not an output of c's node: itself
                bool(lib.equal(d.grad_fn._saved_result, d)), d.grad_fn._saved_result is not d]  # an output: a copy
        c.sum().backward()
        return seen, raised(lambda: c.grad_fn._saved_self), bool(lib.equal(a, a_orig))
    assert same_in_both(scenario)[1][0] == [True] * 6


def test_an_unpacked_saved_output_shares_the_outputs_version_counter():
    def scenario(lib):
        b = lib.exp(randn(lib, 2, requires_grad=True))
        unpacked = b.grad_fn._saved_result
        seen = [bool(lib.equal(b, unpacked)), b._version == unpacked._version]
        with lib.no_grad():
            b += 1
        return seen + [bool(lib.equal(b, unpacked)), b._version == unpacked._version]
    assert same_in_both(scenario) == ("ok", [True] * 4)
