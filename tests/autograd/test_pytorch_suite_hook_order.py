"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about which nodes a pass runs and in
what order the hooks of tensors, nodes and leaves run. See test_pytorch_suite_basics.py for the method.
"""
import copy
import gc
import weakref

import pytest

from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def _node_of(t):
    """The node a gradient of ``t`` reaches first: its grad_fn, or a leaf's AccumulateGrad."""
    return t.grad_fn if t.grad_fn is not None else t.clone().grad_fn.next_functions[0][0]


def test_the_nodes_a_pass_runs_with_and_without_inputs():
    # PyTorch asks its private _will_engine_execute_node; the public face of it is which node pre-hooks run.
    def scenario(lib):
        twice = function(lib, lambda ctx, x: x * 2, lambda ctx, g: g * 2, name="MyFunction")
        a, a2 = randn(lib, 2, 3, 4, requires_grad=True), randn(lib, 2, 3, 4, requires_grad=True, seed=1)
        b = a * a2
        b2 = b.cos()
        c = twice.apply(b)
        ran, runs = [], []
        for name, t in (("a", a), ("a2", a2), ("b", b), ("b2", b2), ("c", c)):
            _node_of(t).register_prehook(lambda g, name=name: ran.append(name))
        out = c.sum()
        for call in (lambda: lib.autograd.backward(out, inputs=(a, b), retain_graph=True),
                     lambda: lib.autograd.backward(out, retain_graph=True),
                     lambda: lib.autograd.grad(out, (a,), retain_graph=True)):
            call()
            runs.append(sorted(ran))
            ran.clear()
        x = randn(lib, 1, 2, 3, requires_grad=True) * 2
        y = x * 2
        y.grad_fn.register_prehook(lambda g: ran.append("y"))
        lib.autograd.grad(y.sum(), (x,))
        return runs, ran
    assert same_in_both(scenario) == ("ok", ([["a", "b", "c"], ["a", "a2", "b", "c"], ["b", "c"]], ["y"]))


def test_optimizers_stepped_by_post_accumulate_grad_hooks_train_as_a_separate_step_does():
    def scenario(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        inp = randn(lib, 2, 3).float()
        optimizers, handles = {}, []

        def step(p):
            optimizers[p].step()
            optimizers[p].zero_grad()
        for p in model.parameters():
            optimizers[p] = lib.optim.Adam([p])
            handles.append(p.register_post_accumulate_grad_hook(step))
        reference = copy.deepcopy(model)
        reference_optimizer = lib.optim.Adam(reference.parameters())

        def train():
            for _ in range(5):
                model(inp).sum().backward()
                reference(inp).sum().backward()
                reference_optimizer.step()
                reference_optimizer.zero_grad()
        train()
        same = [bool(lib.equal(a, b)) for a, b in zip(reference.parameters(), model.parameters())]
        frozen = [p.detach().clone() for p in model.parameters()]
        for h in handles:
            h.remove()
        train()  # the hooks are gone: model no longer changes, the reference does
        return (same, [bool(lib.equal(a, b)) for a, b in zip(frozen, model.parameters())],
                [bool(lib.equal(a, b)) for a, b in zip(reference.parameters(), model.parameters())])
    assert same_in_both(scenario) == ("ok", ([True, True], [True, True], [False, False]))


def test_what_a_post_accumulate_grad_hook_holds_lives_as_long_as_its_tensor():
    def scenario(lib):
        def make():
            held = lib.rand(3)

            def hook(t):
                t.sub_(t.grad)
                t.add_(held)
            t = lib.rand(3, requires_grad=True)
            t.register_post_accumulate_grad_hook(hook)
            t.sum().backward()
            return t, weakref.ref(held)
        gc.disable()
        try:
            t, ref = make()
            alive = ref() is not None
            del t
            return alive, ref() is None
        finally:
            gc.enable()
    assert same_in_both(scenario) == ("ok", (True, True))


def test_tensor_hook_then_node_prehook_then_post_accumulate_grad_hook_then_node_posthook_of_a_leaf():
    def scenario(lib):
        t = lib.ones(3, dtype=lib.float64, requires_grad=True)
        acc = t.view_as(t).grad_fn.next_functions[0][0]

        def post_accumulate(tensor):
            tensor.grad.add_(0.5)

        def node_posthook(grad_inputs, grad_outputs):
            t.grad = grad_outputs[0].mul(10)
        t.register_hook(lambda g: g.sub(2.0))
        acc.register_prehook(lambda grad_outputs: (grad_outputs[0].div(5.0),))
        t.register_post_accumulate_grad_hook(post_accumulate)
        acc.register_hook(node_posthook)
        t.sum().backward()
        return t.grad  # ((1 - 2) / 5 + 0.5) * 10
    assert same_in_both(scenario) == ("ok", [3.0, 3.0, 3.0])


def test_a_post_hook_registered_while_its_node_runs_runs_without_grad_outputs():
    # PyTorch's test finds the node with its private _current_autograd_node; here the unpack hook knows it.
    def scenario(lib):
        a = randn(lib, 3, 3, requires_grad=True)
        nodes, seen = [], []

        def model():
            var, mean = lib.var_mean(a, dim=0)
            nodes.append(var.grad_fn)
            (var + mean).sum().backward()
        model()
        first = a.grad.clone()

        def unpack(t):
            def halve(grad_inputs, grad_outputs):
                seen.append(len(grad_outputs))
                return tuple(None if g is None else g / 2.0 for g in grad_inputs)
            nodes[-1].register_hook(halve)
            return t
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            model()
        return first, a.grad, seen
    result = same_in_both(scenario)
    assert result[1][2] == [0]


def test_a_custom_backward_registering_a_post_hook_on_its_own_node():
    def scenario(lib):
        seen = []

        def backward(ctx, g):
            ctx.register_hook(lambda grad_inputs, grad_outputs: seen.append(len(grad_outputs)) or
                              tuple(t * 3 for t in grad_inputs))
            return g * 2
        x = randn(lib, 2, requires_grad=True)
        (function(lib, lambda ctx, x: x * 2, backward, name="Hooked").apply(x) * 1).sum().backward()
        return seen, x.grad
    assert same_in_both(scenario) == ("ok", ([0], [6.0, 6.0]))


def test_tensor_hooks_run_before_node_prehooks_in_backward_grad_and_backward_with_inputs():
    def scenario(lib):
        log = []

        def tensor_hook(g):
            log.append("tensor")
            return g * 3

        def node_prehook(grads):
            log.append("node")
            return tuple(g * 2 for g in grads)
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(node_prehook)
        b.register_hook(tensor_hook)
        b.grad_fn.register_prehook(node_prehook)
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(tensor_hook)
        acc.register_prehook(node_prehook)
        a.register_hook(tensor_hook)
        runs = []
        for call in (lambda: b.sum().backward(retain_graph=True),
                     lambda: lib.autograd.grad(b.sum(), inputs=(a,), retain_graph=True),  # no AccumulateGrad runs
                     lambda: b.sum().backward(inputs=(b,))):
            call()
            runs.append(list(log))
            log.clear()
        return runs, b.grad  # retain_grad records before the node's prehooks change the gradient
    assert same_in_both(scenario) == ("ok", ([["tensor", "node", "node", "tensor", "tensor", "node"],
                                              ["tensor", "node", "node", "tensor", "tensor"],
                                              ["tensor", "node", "node"]], 3.0))


@pytest.mark.parametrize("hook_first", [True, False])
def test_retain_grad_sees_every_tensor_hook_whenever_it_was_registered(hook_first):
    def scenario(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        if hook_first:
            b.register_hook(lambda g: g * 2)
        b.retain_grad()
        b.register_hook(lambda g: g * 2)
        b.clone().backward()
        return b.grad
    assert same_in_both(scenario) == ("ok", 4.0 if hook_first else 2.0)


def test_a_leafs_accumulate_grad_hooks_see_what_its_tensor_hooks_returned():
    def scenario(lib):
        a = lib.tensor(1.0, requires_grad=True)
        seen = []
        b = a.clone()
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(lambda grad_inputs, grad_outputs: seen.append(("post", grad_outputs, len(grad_inputs))))
        acc.register_prehook(lambda grad_outputs: seen.append(("pre", grad_outputs)))
        a.register_hook(lambda g: g * 2)
        b.backward()
        return seen
    assert same_in_both(scenario) == ("ok", [("pre", (2.0,)), ("post", (2.0,), 0)])


def test_hooks_of_leaves_a_pass_with_inputs_does_not_reach_do_not_run():
    def scenario(lib):
        def fail(*args):
            raise RuntimeError("this hook must not run")
        a, b = lib.tensor(1.0, requires_grad=True), lib.tensor(1.0, requires_grad=True)
        a.register_hook(fail)
        c = a.clone()
        c.grad_fn.next_functions[0][0].register_hook(fail)
        (a + b + c).sum().backward(inputs=[b])
        return a.grad, b.grad
    assert same_in_both(scenario) == ("ok", (None, 1.0))


def test_grad_runs_the_tensor_hooks_of_its_inputs_but_not_their_nodes_hooks():
    def scenario(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 2
        counts = {"tensor": 0, "pre": 0, "post": 0}

        def count(kind):
            def hook(*args):
                counts[kind] += 1
            return hook
        a.register_hook(count("tensor"))
        b.register_hook(count("tensor"))
        acc = b.grad_fn.next_functions[0][0]
        for node in (acc, b.grad_fn):
            node.register_hook(count("post"))
            node.register_prehook(count("pre"))
        runs = []
        for call in (lambda: lib.autograd.grad(c, inputs=(b,), retain_graph=True),
                     lambda: lib.autograd.grad(c, inputs=(a, b), retain_graph=True),
                     lambda: c.backward(retain_graph=True),
                     lambda: c.backward(inputs=(a, b), retain_graph=True)):
            call()
            runs.append(dict(counts))
            counts.update(tensor=0, pre=0, post=0)
        return runs
    assert same_in_both(scenario)[1][:2] == [{"tensor": 1, "pre": 0, "post": 0}, {"tensor": 2, "pre": 1, "post": 1}]


def _times_two(lib, custom):
    if custom:
        return function(lib, lambda ctx, x: x * 2, lambda ctx, g: g * 2, name="Mul2").apply
    return lambda x: x * 2


@pytest.mark.parametrize("custom", [True, False])
def test_node_prehooks_run_in_order_each_on_what_the_one_before_returned(custom):
    def scenario(lib):
        mul2 = _times_two(lib, custom)
        seen, pre = [], [0]

        def posthook(grad_inputs, grad_outputs):
            seen.append((pre[0], grad_outputs, grad_inputs))
            return grad_inputs

        def prehook(grad_outputs):
            pre[0] += 1
            return (grad_outputs[0] * 2,)
        a = lib.tensor([1.0], requires_grad=True)
        b = mul2(a)
        b.grad_fn.register_hook(posthook)
        b.grad_fn.register_hook(posthook)
        for hook in (prehook, lambda g: None, prehook, prehook, lambda g: g, lambda g: None):
            b.grad_fn.register_prehook(hook)
        b.sum().backward()
        a2 = randn(lib, 3, 3, requires_grad=True)
        b2 = mul2(a2)
        b2.grad_fn.register_prehook(lambda g: pre.__setitem__(0, pre[0] + 1))  # returns None: nothing changes
        b2.sum().backward()
        return seen, a.grad, pre[0], a2.grad
    result = same_in_both(scenario)[1]
    assert [r[:2] for r in result[0]] == [(3, ([8.0],))] * 2 and result[1:3] == ([16.0], 4)


def test_node_prehooks_of_a_node_with_several_outputs():
    def scenario(lib):
        b = randn(lib, 3, 3, requires_grad=True)
        var, mean = lib.var_mean(b, dim=0)
        (var + mean).sum().backward()
        a = b.detach().requires_grad_()
        calls = []

        def double_both(grad_outputs):
            calls.append(len(grad_outputs))
            return tuple(g * 2 for g in grad_outputs)
        var, mean = lib.var_mean(a, dim=0)
        mean.grad_fn.register_prehook(double_both)
        (var + mean).sum().backward()

        def forward(ctx, x, k, y):
            ctx.k = k
            return k * x * 2, k, k * y * 2
        f = function(lib, forward, lambda ctx, g1, _, g2: (ctx.k * g1 * 2, None, ctx.k * g2 * 2), name="DoubleMul2")
        seen = []

        def double_tensors(grad_outputs):
            g1, gk, g2 = grad_outputs
            seen.append(gk)
            return g1 * 2, None, g2 * 2
        x, y = randn(lib, 3, 3, requires_grad=True), randn(lib, 3, 3, requires_grad=True, seed=1)
        c, _, d = f.apply(x, 3, y)
        c.grad_fn.register_prehook(double_tensors)
        (c + d).sum().backward()
        return calls, bool(lib.allclose(a.grad, b.grad * 2)), seen, x.grad, y.grad
    assert same_in_both(scenario)[1][:3] == ([2], True, [None])


@pytest.mark.parametrize("custom", [True, False])
def test_node_prehooks_removed_before_or_during_backward(custom):
    def scenario(lib):
        mul2 = _times_two(lib, custom)
        runs = []
        a = randn(lib, 3, 3, requires_grad=True)
        b = mul2(a)
        count = [0]

        def counted(grad_outputs):
            count[0] += 1
        handle = b.grad_fn.register_prehook(counted)
        b.grad_fn.register_prehook(counted)
        handle.remove()
        b.sum().backward()
        runs.append((count[0], a.grad))
        a = randn(lib, 3, 3, requires_grad=True, seed=1)
        b = mul2(a)
        count[0] = 0

        def removes_the_others(grad_outputs):
            second.remove()
            third.remove()  # removing a removed hook again is fine
        b.grad_fn.register_prehook(removes_the_others)
        second = b.grad_fn.register_prehook(counted)
        third = b.grad_fn.register_prehook(counted)
        third.remove()
        b.sum().backward()
        runs.append((count[0], a.grad))
        return runs
    assert [r[0] for r in same_in_both(scenario)[1]] == [1, 1]


def test_retain_grad_follows_a_tensor_through_in_place_ops_and_in_place_ops_on_its_views():
    def scenario(lib):
        seen = []
        for times in (1, 2):
            a = lib.tensor([1.0], requires_grad=True).clone()
            a.retain_grad()
            for _ in range(times):
                a.mul_(2)
            a.sum().backward()
            seen.append(a.grad)  # the gradient of the latest version
        x = lib.tensor([1.0], requires_grad=True).clone()
        x.retain_grad()
        view = x[:]
        view *= 2  # the retain_grad hook moves to the CopySlices node
        x *= 2
        x.sum().backward()
        seen.append(x.grad)
        base = lib.zeros(4)  # a base that did not require grad has no hook to move
        base.view(2, 2).add_(randn(lib, 2, 2, requires_grad=True))
        seen.append(base.requires_grad)
        return seen
    assert same_in_both(scenario) == ("ok", [[1.0], [1.0], [1.0], True])


def _two_outputs(lib):
    """A custom Function and an op, each with two outputs."""
    twice = function(lib, lambda ctx, x: (x * 2, x * 3), lambda ctx, g1, g2: g1 * 2 + g2 * 3, name="DoubleMul")
    return [twice.apply, lambda b: lib.var_mean(b, dim=0)]


def test_retain_grad_on_outputs_of_a_multi_output_node_after_one_is_modified_in_place():
    def scenario(lib):
        seen = []
        for fn in _two_outputs(lib):
            b = randn(lib, 3, 3, requires_grad=True)
            var, mean = fn(b)
            var.retain_grad()
            mean.retain_grad()
            var.mul_(2)
            (var + mean).sum().backward()
            a = b.detach().requires_grad_(True)
            var2, mean2 = fn(a)
            var2.mul_(2)
            expected = lib.autograd.grad((var2 + mean2).sum(), inputs=(var2, mean2))
            seen.append((var.grad, mean.grad, expected))
        return seen
    result = same_in_both(scenario)
    assert all(r[0] == r[2][0] and r[1] == r[2][1] for r in result[1])


def test_retain_grad_on_two_views_after_one_is_modified_in_place():
    def scenario(lib):
        base = lib.tensor([1.0], requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view + view2).sum().backward()
        return view.grad, view2.grad
    assert same_in_both(scenario) == ("ok", ([1.0], [1.0]))


def test_tensor_hooks_registered_before_and_after_in_place_ops():
    def scenario(lib):
        seen = []

        def hook(name):
            def run(g):
                seen.append((name, g))
                return g * 2
            return run
        a = lib.tensor([1.0], requires_grad=True)
        b = a.clone()
        b.register_hook(hook("before"))  # sees the gradient of the value before mul_
        b.mul_(2)
        b.register_hook(hook("after"))
        b.sum().backward()
        first = a.grad
        a = lib.tensor([1.0], requires_grad=True)
        b = a.clone()
        b.register_hook(hook("before two"))
        b.mul_(2)
        b.mul_(2)
        b.sum().backward()
        return seen, first, a.grad
    assert same_in_both(scenario)[1][0] == [("after", [1.0]), ("before", [4.0]), ("before two", [4.0])]


def test_tensor_hooks_on_outputs_of_a_multi_output_node_after_one_is_modified_in_place():
    def scenario(lib):
        runs = []
        for fn in _two_outputs(lib):
            seen = []

            def hook(name):
                return lambda g: seen.append((name, g.sum().item()))
            b = randn(lib, 3, 3, requires_grad=True)
            out1, out2 = fn(b)
            handles = [out1.register_hook(hook("out1")), out2.register_hook(hook("out2"))]
            out1.mul_(2)
            handles.append(out1.register_hook(hook("out1 after mul_")))
            (out1 + out2 * 3).sum().backward()
            for h in handles:
                h.remove()
            runs.append(sorted(seen))
        return runs
    same_in_both(scenario)


def test_tensor_hooks_of_a_view_whose_sibling_was_modified_in_place():
    def scenario(lib):
        seen = []
        base = lib.tensor([1.0], requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.register_hook(lambda g: seen.append("view"))
        view2.register_hook(lambda g: seen.append("view2 before"))
        view.mul_(2)
        view2.grad_fn  # reading it regenerates view2's history; hooks registered before stay with the old one
        view2.register_hook(lambda g: seen.append(("view2 after", g)))
        (view + view2).sum().backward()
        return seen
    assert same_in_both(scenario) == ("ok", [("view2 after", [1.0])])


def test_the_hook_of_a_leaf_whose_gradient_is_none_runs_before_the_branch_still_to_come():
    # PyTorch's test runs on CUDA in bfloat16; the order is the engine's, the same on the CPU.
    def scenario(lib):
        executed = []

        def matmul_forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x @ w

        def matmul_backward(ctx, g):
            x, w = ctx.saved_tensors
            w.main_grad = (x.T @ g).float()  # w's gradient is kept aside; autograd gets None for it
            return g @ w.T, None

        def passing_backward(ctx, g):
            executed.append("A")
            return g
        matmul = function(lib, matmul_forward, matmul_backward, name="Matmul")
        passing = function(lib, lambda ctx, x: x, passing_backward, name="HookFunction")
        x = passing.apply(randn(lib, 3, 3, requires_grad=True))
        w = randn(lib, 3, 3, requires_grad=True, seed=1)
        w.register_hook(lambda *args: executed.append("B"))
        matmul.apply(x, w).sum().backward()
        return executed
    assert same_in_both(scenario) == ("ok", ["B", "A"])


def test_the_order_in_which_a_pass_without_multithreading_runs_its_nodes():
    # PyTorch's test predicts the order with its private _current_graph_task_execution_order; here the hooks tell it.
    def scenario(lib):
        runs = []

        def run(tensors, call):
            order = []
            for name, t in tensors.items():
                t.register_hook(lambda g, name=name: order.append(name))
            with lib.autograd.set_multithreading_enabled(False):
                call(tensors)
            runs.append(order)
        a, b = lib.tensor(1.0, requires_grad=True), lib.tensor(2.0, requires_grad=True)
        c, d = b.sin(), a.cos()
        run({"a": a, "b": b, "c": c, "d": d, "out": c * d}, lambda t: t["out"].backward())  # not sequence_nr order
        a = lib.tensor(1.0, requires_grad=True)
        b, c = a.sin(), a.cos()
        run({"a": a, "b": b, "c": c, "out": b * c}, lambda t: t["out"].backward())  # a leaf reached twice
        a = lib.tensor(1.0, requires_grad=True)
        b = a * 2
        run({"a": a, "b": b, "out": b.sin(), "out2": b.cos(), "out3": b.cos()},  # several roots
            lambda t: lib.autograd.grad((t["out"], t["out3"], t["out2"]), inputs=(t["a"],)))
        for call in (lambda t: t["out"].backward(),  # an edge to None
                     lambda t: lib.autograd.grad((t["out"],), inputs=(t["a"], t["b"]))):  # two inputs on one path
            a = lib.tensor(1.0, requires_grad=True)
            b = a * 2
            run({"a": a, "b": b, "out": b.sin()}, call)
        a, b = lib.tensor(1.0, requires_grad=True), lib.tensor(1.0, requires_grad=True)
        c = a * b
        run({"a": a, "b": b, "c": c, "out": c.sin()}, lambda t: lib.autograd.grad((t["out"],), inputs=(t["a"],)))
        nodes, node = [], lib.tensor(1.0, requires_grad=True).clone().sin().exp()
        t = node
        node = node.grad_fn
        while node is not None:
            node.register_prehook(lambda g, name=node.name(): nodes.append(name))
            node = node.next_functions[0][0] if node.next_functions else None
        with lib.autograd.set_multithreading_enabled(False):
            t.backward()
        return runs, nodes
    assert same_in_both(scenario)[1][1] == ["ExpBackward0", "SinBackward0", "CloneBackward0",
                                            "torch::autograd::AccumulateGrad"]


def test_module_full_backward_hooks_among_the_hooks_of_every_node_tensor_and_leaf():
    def scenario(lib):
        order = []
        lib.manual_seed(0)
        linear = lib.nn.Linear(10, 10)
        module = lib.nn.Sequential(linear)
        x = randn(lib, 10, 10).float().requires_grad_()
        module.register_full_backward_hook(lambda m, grad_input, grad_output: order.append("module"))
        count = [0]

        def register_on_every_node(nodes):
            for node, _ in nodes:
                count[0] += 1
                tag = f"{node.name()}_{count[0]}"
                node.register_prehook(lambda g, tag=tag: order.append(f"pre {tag}"))
                node.register_hook(lambda grad_inputs, grad_outputs, tag=tag: order.append(f"post {tag}"))
                register_on_every_node(node.next_functions)
        loss = module(x).sum()
        register_on_every_node(((loss.grad_fn, None),))
        for name, t in (("x", x), ("weight", linear.weight), ("bias", linear.bias)):
            t.register_hook(lambda g, name=name: order.append(f"tensor {name}"))
            t.register_post_accumulate_grad_hook(lambda t, name=name: order.append(f"accumulated {name}"))
        loss.backward()
        return order
    result = same_in_both(scenario)
    assert result[1][:4] == ["pre SumBackward0_1", "post SumBackward0_1", "pre BackwardHookFunctionBackward_2",
                             "post BackwardHookFunctionBackward_2"]
