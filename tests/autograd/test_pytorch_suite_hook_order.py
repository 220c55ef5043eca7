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
