"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) on multi-grad hooks over the outputs of every
kind of node, and on "any" hooks registered by modules, written again and run with retrograd and torch on the
same numbers. See test_pytorch_suite_basics.py for the method.

Out of scope: PyTorch's own kinds of node that only its C++ makes (an op defined by a C++ extension, the private
``UndefinedGrad`` node); a leaf takes their place here.
"""
import functools

import pytest

from .test_pytorch_suite_basics import function, randn, same_in_both

torch = pytest.importorskip("torch")


def _four_kinds(lib):
    """Four tensors whose last node differs: an op's, a custom Function's, a leaf's, and a custom Function's
    whose backward raises."""
    t1, t2, t3, t4 = (randn(lib, 2, requires_grad=True, seed=s) for s in range(4))
    clone = function(lib, lambda ctx, a: a.clone(), lambda ctx, g: g, name="Clone")
    return t1.mul(2), clone.apply(t2), t3, clone.apply(t4)


def test_multi_grad_hook_all_over_each_kind_of_node_waits_only_for_the_passs_tensors():
    def scenario(lib):
        t1, t2, t3, t4 = _four_kinds(lib)
        seen = []
        handle = lib.autograd.graph.register_multi_grad_hook(
            (t1, t2, t3, t4), lambda grads: seen.append([g is not None for g in grads]))
        out = t2 * t3
        log = []
        for inputs in ((t2, t3), (t1, t4), (t1, t3)):  # (t1, t4): none of the four gets a gradient: no call
            out.sum().backward(inputs=inputs, retain_graph=True)
            log.append(list(seen))
        failing = function(lib, lambda ctx, x: x, lambda ctx, g: (_ for _ in ()).throw(RuntimeError("error message")))
        try:
            (failing.apply(t2) * t3).sum().backward(inputs=(t2, t3), retain_graph=True)
        except RuntimeError as e:
            log.append(str(e))
        log.append(len(seen))  # a pass that failed does not call the hook
        handle.remove()
        out.sum().backward(inputs=(t1, t3), retain_graph=True)
        return log, len(seen)
    assert same_in_both(scenario) == ("ok", (
        [[[False, True, True, False]], [[False, True, True, False]],
         [[False, True, True, False], [False, False, True, False]], "error message", 2], 2))


def test_multi_grad_hook_any_of_modules_runs_once_before_their_tensor_hooks():
    def scenario(lib):
        order, handles = [], []
        counter = [0]

        def hook(hook_id, *unused):
            order.append(hook_id)

        class TwoOutputs(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, x):
                z = self.lin(x)
                out = lib.sin(z), lib.cos(z)
                z.register_hook(functools.partial(hook, counter[0]))
                handles.append(lib.autograd.graph.register_multi_grad_hook(
                    out, functools.partial(hook, counter[0] + 1), mode="any"))
                counter[0] += 2
                return out

        class Model(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.mod1, self.mod2 = TwoOutputs(), TwoOutputs()

            def forward(self, x):
                y = self.mod1(x)
                return self.mod2(y[0] + y[1])
        lib.manual_seed(0)
        model, inp = Model(), randn(lib, 2, 3).float()
        out = model(inp)
        (out[0] + out[1]).sum().backward()
        first = list(order)
        order.clear()
        handles.clear()
        counter[0] = 0
        out = model(inp)
        for handle in handles:
            handle.remove()
        (out[0] + out[1]).sum().backward()
        return first, order
    assert same_in_both(scenario) == ("ok", ([3, 2, 1, 0], [2, 0]))
