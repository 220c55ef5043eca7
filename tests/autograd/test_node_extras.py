"""A node's hooks and metadata in one holder (Note [A node's hooks and metadata] in autograd/graph.py).

A node keeps its five kinds of hooks and annotations in one slot, made when the first is; the
scenarios check, against PyTorch on the same numbers, that hooks added at any moment (before the
pass, from a hook of the same node, from its tensor's hook) run at their turn, and that a node
with metadata alone still runs as any other. Each runs with the compiled loop and without it.
"""
import pytest

import retrograd as rg
from retrograd.autograd.graph import NodeExtras

torch = pytest.importorskip("torch")


def _same_in_both(scenario):
    ours, theirs = scenario(rg), scenario(torch)
    assert ours == theirs
    return ours


def test_nodes_are_made_without_a_holder_and_get_one_with_their_first_hook_or_metadata():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    s = y.sum()
    for node in (y.grad_fn, s.grad_fn, y.grad_fn.next_functions[0][0]):  # an op's node and an AccumulateGrad
        assert node._extras is None and node._metadata is None and node._post_hooks is None
    y.grad_fn.metadata["tag"] = 1
    assert type(y.grad_fn._extras) is NodeExtras and y.grad_fn._metadata == {"tag": 1}
    assert y.grad_fn._pre_hooks is None and y.grad_fn._tensor_pre_hooks is None
    handle = s.grad_fn.register_prehook(lambda g: None)
    assert len(s.grad_fn._pre_hooks) == 1
    handle.remove()
    assert len(s.grad_fn._pre_hooks) == 0


def test_a_node_with_metadata_alone_runs_as_any_other():
    def scenario(m):
        x = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
        y = (x * x).exp()
        y.grad_fn.metadata["seen"] = True
        y.grad_fn.next_functions[0][0].metadata["inner"] = 2
        y.sum().backward()
        return [round(v, 6) for v in x.grad.tolist()], dict(y.grad_fn.metadata)

    _same_in_both(scenario)


def test_hooks_registered_by_hooks_of_the_same_node_run_at_their_turn(engine_loop):
    def scenario(m):
        calls = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y.sum()
        node = y.grad_fn

        def post(grad_inputs, grad_outputs):
            calls.append(("post", [None if g is None else g.tolist() for g in grad_inputs],
                          [g.tolist() for g in grad_outputs]))

        def pre(grad_outputs):
            calls.append(("pre", grad_outputs[0].tolist()))
            node.register_hook(post)  # before the node runs: it gets the node's grad_outputs

        def tensor_hook(grad):
            calls.append(("tensor", grad.tolist()))
            node.register_prehook(pre)  # its turn is still to come
            return grad * 10

        y.register_hook(tensor_hook)
        z.backward()
        return calls, x.grad.tolist()

    calls, grad = _same_in_both(scenario)
    assert [c[0] for c in calls] == ["tensor", "pre", "post"] and grad == [20.0, 20.0]


def test_retain_grad_and_hooks_share_the_holder_with_metadata(engine_loop):
    def scenario(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.sin()
        y.grad_fn.metadata["k"] = "v"
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        (y * y).sum().backward()
        return [round(v, 6) for v in y.grad.tolist()], [round(v, 6) for v in x.grad.tolist()]

    _same_in_both(scenario)
