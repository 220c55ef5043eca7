"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about which nodes a pass runs and in
what order the hooks of tensors, nodes and leaves run. See test_pytorch_suite_basics.py for the method.
"""
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
