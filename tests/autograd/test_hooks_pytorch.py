"""Hooks and graph objects against PyTorch: each scenario runs on retrograd and on torch, on the
same numbers, and records what it sees (hook calls in order, gradients, errors) as plain values.

Post-accumulate-grad hooks, multi-grad hooks, GradientEdges in ``grad``/``backward``, Node
introspection, node hooks' results, the order of every kind of hook (Note [Hooks and their order]),
retain_grad on views and tensor hooks on views and multi-output ops. The suite runs each test with
the compiled loop and without it, so each holds for both; the last tests compare the two directly.
"""
import re
import threading

import pytest

import retrograd as rg
from retrograd._C import _configure
from retrograd.autograd import engine

torch = pytest.importorskip("torch")


def _error(fn):
    """(type name, first sentence) of what ``fn()`` raises, in retrograd's words for torch's names."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        message = str(exc).replace("torch.", "retrograd.")
        return type(exc).__name__, re.split(r"(?<=\.)\s", message, maxsplit=1)[0]
    return None


def _values(grads):
    return [None if g is None else g.tolist() for g in grads]


def _rounded(grads):
    """The values of each gradient (or None) to 5 decimals: float32 sin and cos differ in the last bits."""
    return [None if g is None else [round(v, 5) for v in g.reshape(-1).tolist()] for g in grads]


def _same_in_both(scenario):
    """Runs ``scenario(module)`` on retrograd and on torch; asserts they record the same; returns it."""
    ours, theirs = scenario(rg), scenario(torch)
    assert ours == theirs
    return ours


def _graph(m):
    """x * w over two leaves, the gradient flowing back through a sin."""
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    return x, w, x * w


# -- post-accumulate-grad hooks ---------------------------------------------------------------------
def test_post_accumulate_grad_hooks_run_in_registration_order_after_the_grad_is_updated():
    def scenario(m):
        calls = []
        x, w, y = _graph(m)
        first = x.register_post_accumulate_grad_hook(lambda t: calls.append(("first", t is x, t.grad.tolist())))
        x.register_post_accumulate_grad_hook(lambda t: calls.append(("second", t.grad.tolist())))
        (y * y).sum().backward(retain_graph=True)
        first.remove()
        (y * y).sum().backward()
        return calls
    assert _same_in_both(scenario) == [("first", True, [18.0, 64.0]), ("second", [18.0, 64.0]),
                                       ("second", [36.0, 128.0])]


def test_post_accumulate_grad_hook_runs_only_where_the_leaf_is_accumulated():
    def scenario(m):
        calls = []
        x, w, y = _graph(m)
        x.register_post_accumulate_grad_hook(lambda t: calls.append(("x", t.grad.tolist())))
        w.register_post_accumulate_grad_hook(lambda t: calls.append(("w", t.grad.tolist())))
        loss = y.sin().sum()
        m.autograd.grad(loss, [x, w], retain_graph=True)  # accumulates nothing: no hook
        calls.append("after grad")
        loss.backward(inputs=[w], retain_graph=True)
        calls.append("after inputs=[w]")
        loss.backward(inputs=[x])
        return calls, x.grad.tolist()
    calls, _ = _same_in_both(scenario)
    assert calls[0] == "after grad" and calls[2] == "after inputs=[w]"


def test_post_accumulate_grad_hook_sees_the_grad_of_create_graph():
    def scenario(m):
        seen = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: seen.append((t.grad.tolist(), t.grad.requires_grad)))
        (x ** 3).sum().backward(create_graph=True)
        return seen
    assert _same_in_both(scenario) == [([3.0, 12.0], True)]


def test_post_accumulate_grad_hook_can_step_the_parameter_during_backward():
    def scenario(m):
        w = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        b = m.tensor([0.5], requires_grad=True)

        def sgd(p):
            with m.no_grad():
                p.sub_(0.1 * p.grad)
            p.grad = None
        for p in (w, b):
            p.register_post_accumulate_grad_hook(sgd)
        for _ in range(3):
            ((w * m.tensor([1.0, 2.0, 3.0])).sum() + b).pow(2).sum().backward()
        return w.tolist(), b.tolist(), w.grad, b.grad
    _same_in_both(scenario)


def test_post_accumulate_grad_hook_on_a_retained_leaf_and_the_errors_on_other_tensors():
    def scenario(m):
        x = m.tensor([1.0], requires_grad=True)
        x.retain_grad()  # a no-op on a leaf
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        y = x * 2
        y.retain_grad()
        (y * 3).sum().backward()
        return (seen, y.grad.tolist(),
                _error(lambda: y.register_post_accumulate_grad_hook(lambda t: None)),
                _error(lambda: m.ones(1).register_post_accumulate_grad_hook(lambda t: None)))
    assert _same_in_both(scenario) == (
        [[6.0]], [3.0], ("RuntimeError", "post accumulate grad hooks cannot be registered on non-leaf tensors"),
        ("RuntimeError", "cannot register a hook on a tensor that doesn't require gradient"))


@pytest.mark.parametrize("result", ["tensor", "number", "the leaf"])
def test_post_accumulate_grad_hook_must_return_none(result):
    def scenario(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        later = []
        returns = {"tensor": lambda t: m.zeros(2), "number": lambda t: 5, "the leaf": lambda t: t}[result]
        x.register_post_accumulate_grad_hook(returns)
        x.register_post_accumulate_grad_hook(lambda t: later.append(t is x))
        error = _error(lambda: (x * 3).sum().backward())
        return error, later, x.grad.tolist()  # the gradient was accumulated before the hooks ran
    recorded = _same_in_both(scenario)
    assert recorded[2] == [3.0, 3.0]
    if result == "tensor":
        assert recorded[:2] == (("RuntimeError", "Tensor post accumulate grad hooks should return None."), [False])


# -- multi-grad hooks -------------------------------------------------------------------------------
def _four_tensors(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, 4.0], requires_grad=True)
    return a, b, a * b, a * b


def test_multi_grad_hook_all_runs_once_every_gradient_of_the_pass_is_computed():
    def scenario(m):
        calls = []
        a, b, c, d = _four_tensors(m)
        m.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda grads: calls.append(("all", _values(grads))))
        c.register_hook(lambda g: calls.append("c"))
        a.register_hook(lambda g: calls.append("a"))
        b.register_hook(lambda g: calls.append("b"))
        c.sum().backward(retain_graph=True)
        calls.append("--")
        (c.sum() + d.sum()).backward(retain_graph=True)
        calls.append("--")
        c.sum().backward(inputs=(a,))  # b is not needed: the hook does not wait for it
        return calls
    assert _same_in_both(scenario) == [
        "c", "a", ("all", [[3.0, 4.0], [1.0, 2.0], [1.0, 1.0], None]), "b", "--",
        "c", "a", ("all", [[6.0, 8.0], [2.0, 4.0], [1.0, 1.0], [1.0, 1.0]]), "b", "--",
        "c", ("all", [[3.0, 4.0], None, [1.0, 1.0], None]), "a"]


def test_multi_grad_hook_all_in_autograd_grad():
    def scenario(m):
        calls = []
        x = m.tensor([1.0], requires_grad=True)
        y = x * 2
        z = y * 3
        m.autograd.graph.register_multi_grad_hook((x, y), lambda grads: calls.append(_values(grads)))
        m.autograd.grad(z.sum(), y, retain_graph=True)  # x's AccumulateGrad does not run
        leaf_captured = _error(lambda: m.autograd.grad(z.sum(), x, retain_graph=True))
        z.sum().backward()
        return calls, leaf_captured
    assert _same_in_both(scenario) == (
        [[None, [3.0]], [[6.0], [3.0]]],
        ("RuntimeError", "A leaf node was passed to _will_engine_execute_node but we are currently running "
                         "autograd.grad()."))


def test_multi_grad_hook_all_sees_what_the_earlier_tensor_hooks_returned():
    def scenario(m):
        calls = []
        x = m.tensor([1.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 100)
        m.autograd.graph.register_multi_grad_hook((y,), lambda grads: calls.append(_values(grads)) or 7)
        y.register_hook(lambda g: g + 1)
        y.retain_grad()
        (y * 3).sum().backward()
        return calls, y.grad.tolist(), x.grad.tolist()  # what fn returns is ignored
    assert _same_in_both(scenario) == ([[[300.0]]], [301.0], [602.0])


def test_multi_grad_hook_any_runs_once_per_pass_on_the_first_gradient():
    def scenario(m):
        calls = []
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        c, d = a * 2, b * 3
        m.autograd.graph.register_multi_grad_hook((c, d, a, m.ones(2)), lambda g: calls.append(g.tolist()),
                                                  mode="any")  # the tensor without grad is left out
        (c.sum() + 10 * d.sum()).backward(retain_graph=True)
        (c.sum() + 10 * d.sum()).backward(retain_graph=True)
        c.sum().backward()
        return calls
    assert _same_in_both(scenario) == [[10.0, 10.0], [10.0, 10.0], [1.0, 1.0]]


def test_multi_grad_hook_state_of_a_failed_pass_does_not_reach_the_next():
    def scenario(m):
        calls = []
        x = m.tensor([1.0], requires_grad=True)
        y = x * 2
        fail = [True]

        def maybe_fail(g):
            if fail[0]:
                raise ValueError("stop")
        x.register_hook(maybe_fail)  # runs before x's part of the multi-grad hook: the first pass
        m.autograd.graph.register_multi_grad_hook((x, y), lambda grads: calls.append(_values(grads)))
        error = _error(lambda: (y * 3).sum().backward(retain_graph=True))
        fail[0] = False
        (y * 3).sum().backward()
        return error, calls
    assert _same_in_both(scenario) == (("ValueError", "stop"), [[[6.0], [3.0]]])


def test_multi_grad_hook_handle_removes_it_from_every_tensor():
    def scenario(m):
        calls = []
        a, b, c, d = _four_tensors(m)
        handle = m.autograd.graph.register_multi_grad_hook((a, b, c), lambda grads: calls.append("all"))
        with m.autograd.graph.register_multi_grad_hook((a, d), lambda g: calls.append("any"), mode="any"):
            pass
        handle.remove()
        handle.remove()
        (c.sum() + d.sum()).backward()
        return calls, isinstance(handle, m.utils.hooks.RemovableHandle), type(handle.handles).__name__
    assert _same_in_both(scenario) == ([], True, "tuple")


def test_multi_grad_hook_errors_and_empty_tensors():
    def scenario(m):
        register = m.autograd.graph.register_multi_grad_hook
        a = m.ones(2, requires_grad=True)
        empty = [register([], lambda g: None), register([], lambda g: None, mode="any")]
        (a * 2).sum().backward()
        return (_error(lambda: register([a], lambda g: None, mode="some")),
                _error(lambda: register([a, m.ones(2)], lambda g: None)),
                [type(h).__name__ for h in empty])
    assert _same_in_both(scenario) == (
        ("ValueError", "Expects mode to be one of ('all', 'any') but got some"),
        ("AssertionError", "Expected gradient function to be set"), ["_MultiHandle", "_MultiHandle"])


def test_multi_grad_hook_passes_on_two_threads_keep_their_own_state():
    def scenario(m):
        a = m.ones(3, requires_grad=True)
        b = m.ones(3, requires_grad=True)
        seen, lock = [], threading.Lock()

        def fn(grads):
            with lock:
                seen.append(tuple(g[0].item() for g in grads))
        m.autograd.graph.register_multi_grad_hook((a, b), fn)

        def work(k):
            for _ in range(20):
                ((a * k).sum() + (b * (k + 10)).sum()).backward()
        threads = [threading.Thread(target=work, args=(k,)) for k in (1.0, 2.0)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sorted(seen)
    assert _same_in_both(scenario) == [(1.0, 11.0)] * 20 + [(2.0, 12.0)] * 20


# -- GradientEdge -----------------------------------------------------------------------------------
def test_gradient_edge_names_the_node_and_input_of_a_tensor():
    def scenario(m):
        graph = m.autograd.graph
        x = m.ones(4, requires_grad=True)
        first, second = x.split(2)
        y = first * 3
        edges = [graph.get_gradient_edge(t) for t in (x, first, second, y)]
        return ([(type(e.node).__name__, e.output_nr, e.ownership_token, len(e)) for e in edges],
                edges[1].node is edges[2].node, edges[0] == (edges[0].node, 0, None),
                graph.GradientEdge._fields, isinstance(edges[0], tuple),
                _error(lambda: graph.get_gradient_edge(m.ones(2))))
    assert _same_in_both(scenario) == (
        [("AccumulateGrad", 0, None, 3), ("SplitBackward0", 0, None, 3), ("SplitBackward0", 1, None, 3),
         ("MulBackward0", 0, None, 3)], True, True, ("node", "output_nr", "ownership_token"), True,
        ("RuntimeError", "It is not possible to get the gradient edge for a Tensor that does not require gradients"))


def test_grad_takes_gradient_edges_as_inputs_and_outputs():
    def scenario(m):
        edge = m.autograd.graph.get_gradient_edge
        x = m.tensor([1.0, 2.0], requires_grad=True)
        b = x * 2
        c = b.sin()
        loss = c.sum()
        edge_b = edge(b)
        out = [m.autograd.grad(loss, [edge_b, edge(x), x], retain_graph=True),
               m.autograd.grad(edge(c), x, grad_outputs=m.tensor([1.0, -1.0]), retain_graph=True),
               m.autograd.grad([edge(c)], [edge_b], grad_outputs=[m.ones(2)], retain_graph=True),
               m.autograd.grad(edge(loss), edge(loss), retain_graph=True),
               m.autograd.grad(edge(c), x, grad_outputs=m.ones(2, dtype=m.float64), retain_graph=True)]
        del b  # the edge holds the node, not the tensor
        out.append(m.autograd.grad(loss, edge_b, retain_graph=True))
        out.append(m.autograd.grad(loss, m.autograd.graph.get_gradient_edge(m.ones(1, requires_grad=True)),
                                   allow_unused=True))
        return [_rounded(r) for r in out]
    assert _same_in_both(scenario)[3] == [[1.0]]


def test_backward_takes_gradient_edges_as_inputs_and_outputs():
    def scenario(m):
        edge = m.autograd.graph.get_gradient_edge
        calls = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        b = x * 2
        c = b.sin()
        b.grad_fn.register_prehook(lambda g: calls.append(("b node", _rounded(g))))
        loss = c.sum()
        m.autograd.backward(loss, inputs=[edge(b)], retain_graph=True)  # runs b's node, accumulates nothing
        calls.append(("x.grad", x.grad))
        loss.backward(inputs=edge(x), retain_graph=True)
        calls.append(("x.grad", _rounded([x.grad])))
        x.grad = None
        m.autograd.backward([edge(c)], grad_tensors=[m.ones(2)], retain_graph=True)
        calls.append(("x.grad", _rounded([x.grad])))
        m.autograd.backward(edge(x), grad_tensors=m.tensor([5.0, 6.0]))
        calls.append(("x.grad", _rounded([x.grad])))
        return calls
    _same_in_both(scenario)


def test_gradient_edge_errors_are_pytorchs():
    def scenario(m):
        graph = m.autograd.graph
        x = m.tensor([1.0, 2.0], requires_grad=True)
        c = (x * 2).sin()
        loss = c.sum()
        unused = graph.get_gradient_edge(m.ones(2, requires_grad=True) * 1)
        cases = [lambda: m.autograd.grad(loss, graph.GradientEdge(None, 0), retain_graph=True),
                 lambda: m.autograd.grad(loss, graph.GradientEdge(c.grad_fn, "0"), retain_graph=True),
                 lambda: m.autograd.grad(loss, graph.GradientEdge(c.grad_fn, 1.5), retain_graph=True),
                 lambda: m.autograd.grad(loss, (c.grad_fn, 0), retain_graph=True),
                 lambda: m.autograd.grad(loss, [3], retain_graph=True),
                 lambda: m.autograd.backward(loss, inputs=[3], retain_graph=True),
                 lambda: m.autograd.grad(loss, unused, retain_graph=True),
                 lambda: m.autograd.grad(loss, unused, retain_graph=True, materialize_grads=True),
                 lambda: m.autograd.grad(graph.get_gradient_edge(c), x, retain_graph=True),
                 lambda: m.autograd.grad(graph.get_gradient_edge(c), x, grad_outputs=m.ones(3), retain_graph=True)]
        errors = [_error(case) for case in cases]
        return errors, _rounded(m.autograd.grad(loss, x))  # and the engine still works
    errors, _ = _same_in_both(scenario)
    assert None not in errors


def test_gradient_edge_with_an_input_out_of_range_raises():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    c = (x * 2).sin()
    with pytest.raises(RuntimeError, match=r"^GradientEdge's output_nr 5 is out of range: SinBackward0 has 1 inputs"):
        rg.autograd.grad(c.sum(), rg.autograd.graph.GradientEdge(c.grad_fn, 5))  # PyTorch crashes here
    with pytest.raises(RuntimeError, match=r"^GradientEdge's output_nr -1 is out of range"):
        rg.autograd.backward(rg.autograd.graph.GradientEdge(c.grad_fn, -1), grad_tensors=rg.ones(2))


# -- nodes: introspection and the results of their hooks ----------------------------------------------
def test_node_name_next_functions_and_metadata():
    def scenario(m):
        x, w, y = _graph(m)
        z = y.sin().sum()
        fn = z.grad_fn
        chain = []
        while fn is not None:  # (PyTorch names an AccumulateGrad "torch::autograd::AccumulateGrad")
            name = fn.name() if fn.next_functions else type(fn).__name__
            chain.append((name, [(type(f).__name__, nr) for f, nr in fn.next_functions]))
            fn = fn.next_functions[0][0] if fn.next_functions else None
        y.grad_fn.metadata["tag"] = 1
        acc = y.grad_fn.next_functions[0][0]
        return (chain, y.grad_fn.metadata, acc.metadata, acc.next_functions, acc.variable is x, x.grad_fn,
                isinstance(acc, m.autograd.graph.Node), isinstance(z.grad_fn, m.autograd.graph.Node))
    recorded = _same_in_both(scenario)
    assert recorded[0][0] == ("SumBackward0", [("SinBackward0", 0)])


_PRE_RESULTS = {
    "a list": lambda m, g: [g[0] * 2],
    "too many": lambda m, g: (g[0], g[0]),
    "none at all": lambda m, g: (),
    "a tensor": lambda m, g: g[0],
    "a number": lambda m, g: 3,
    "a tuple with a number": lambda m, g: (3,),
    "a tuple with None": lambda m, g: (None,),
    "a new size": lambda m, g: (m.ones(3),),
    "a new dtype": lambda m, g: (g[0].double(),),
    "a new gradient": lambda m, g: (g[0] * 10,),
}


@pytest.mark.parametrize("result", sorted(_PRE_RESULTS))
def test_node_prehook_result(result):
    def scenario(m):
        x, w, y = _graph(m)

        def prehook(grads):
            return _PRE_RESULTS[result](m, grads)
        y.grad_fn.register_prehook(prehook)
        return _error(lambda: y.sum().backward()), _values([x.grad, w.grad])
    _same_in_both(scenario)


_POST_RESULTS = {
    "a list": lambda m, gi: [gi[0], gi[1]],
    "too few": lambda m, gi: (gi[0],),
    "a tensor": lambda m, gi: gi[0],
    "a tuple with a string": lambda m, gi: (gi[0], "g"),
    "a tuple with None": lambda m, gi: (None, gi[1] * 2),
    "a new size": lambda m, gi: (gi[0], m.ones(3)),
    "a new dtype": lambda m, gi: (gi[0].double(), gi[1]),
    "new gradients": lambda m, gi: (gi[0] * 10, gi[1] + 1),
}


@pytest.mark.parametrize("result", sorted(_POST_RESULTS))
def test_node_post_hook_result(result):
    def scenario(m):
        x, w, y = _graph(m)
        seen = []

        def posthook(grad_inputs, grad_outputs):
            seen.append((type(grad_inputs).__name__, _values(grad_inputs), _values(grad_outputs)))
            return _POST_RESULTS[result](m, grad_inputs)
        y.grad_fn.register_hook(posthook)
        return _error(lambda: y.sum().backward()), seen, _values([x.grad, w.grad])
    _same_in_both(scenario)


def test_node_hook_on_a_gradient_that_is_none():
    def scenario(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * m.ones(2)  # the second input needs no gradient
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append([g is None for g in gi]))
        y.sum().backward(retain_graph=True)
        y.grad_fn.register_hook(lambda gi, go: (gi[0], m.ones(2)))
        return seen, _error(lambda: y.sum().backward())
    assert _same_in_both(scenario) == (
        [[False, True]] * 2, ("RuntimeError", "can't replace a None gradient with a non-None value"))


# -- the order of hooks (Note [Hooks and their order]) -----------------------------------------------
def test_every_kind_of_hook_runs_in_pytorchs_order():
    def scenario(m):
        order = []
        x, w, y = _graph(m)
        y.retain_grad()
        y.grad_fn.register_prehook(lambda g: order.append(("y node pre", _values(g))) or (g[0] * 10,))
        y.register_hook(lambda g: order.append(("y tensor 1", g.tolist())) or g + 1)
        y.grad_fn.register_hook(lambda gi, go: order.append(("y node post", _values(gi), _values(go))))
        y.register_hook(lambda g: order.append(("y tensor 2", g.tolist())))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda g: order.append(("x acc pre", _values(g))))
        acc.register_hook(lambda gi, go: order.append(("x acc post", gi, _values(go), x.grad.tolist())))
        x.register_hook(lambda g: order.append(("x tensor", g.tolist())))
        x.register_post_accumulate_grad_hook(lambda t: order.append(("x post accumulate", t.grad.tolist())))
        w.register_hook(lambda g: order.append(("w tensor", g.tolist())))
        w.register_post_accumulate_grad_hook(lambda t: order.append(("w post accumulate", t.grad.tolist())))
        y.sum().backward()
        return order, y.grad.tolist()
    order, y_grad = _same_in_both(scenario)
    assert [o[0] for o in order] == ["y tensor 1", "y tensor 2", "y node pre", "y node post", "x tensor",
                                     "x acc pre", "x post accumulate", "x acc post", "w tensor", "w post accumulate"]
    assert y_grad == [2.0, 2.0]  # retain_grad records what the tensor hooks returned, not the pre-hook


def test_hooks_registered_during_backward_run_if_their_turn_is_still_to_come():
    def scenario(m):
        order = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()

        def register_more(g):
            order.append("first")
            y.register_hook(lambda g: order.append("tensor"))
            y.grad_fn.register_prehook(lambda g: order.append("node pre"))
            y.grad_fn.register_hook(lambda gi, go: order.append("node post"))
            x.register_hook(lambda g: order.append("leaf"))
            x.register_post_accumulate_grad_hook(lambda t: order.append("post accumulate"))
        y.register_hook(register_more)
        y.sum().backward(retain_graph=True)
        order.append("--")
        y.sum().backward()
        return order
    assert _same_in_both(scenario)[:6] == ["first", "node pre", "node post", "leaf", "post accumulate", "--"]


def test_hooks_removed_during_backward_stop_unless_their_snapshot_is_running():
    def scenario(m):
        order, handles = [], {}
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()

        def remove_the_rest(g):
            order.append("first")
            for name in ("second", "pre", "post", "leaf", "post accumulate"):
                handles[name].remove()
        handles["first"] = y.register_hook(remove_the_rest)
        handles["second"] = y.register_hook(lambda g: order.append("second"))
        handles["pre"] = y.grad_fn.register_prehook(lambda g: order.append("pre"))
        handles["post"] = y.grad_fn.register_hook(lambda gi, go: order.append("post"))
        handles["leaf"] = x.register_hook(lambda g: order.append("leaf"))
        handles["post accumulate"] = x.register_post_accumulate_grad_hook(lambda t: order.append("post accumulate"))
        y.sum().backward(retain_graph=True)
        order.append("--")
        y.sum().backward()
        return order
    assert _same_in_both(scenario) == ["first", "second", "--", "first"]


def test_accumulate_grad_hooks_reached_through_next_functions():
    def scenario(m):
        seen = []
        x, w, y = _graph(m)
        acc = y.grad_fn.next_functions[1][0]
        acc.register_prehook(lambda g: (g[0] * 10,))
        acc.register_hook(lambda gi, go: seen.append((gi, _values(go), w.grad.tolist())))
        y.sum().backward()
        return seen, x.grad.tolist(), w.grad.tolist(), type(acc).__name__, acc.variable is w
    assert _same_in_both(scenario)[:3] == ([((), [[10.0, 20.0]], [10.0, 20.0])], [3.0, 4.0], [10.0, 20.0])


@pytest.mark.parametrize("n", [2, 3])
def test_sibling_leaves_run_in_the_order_of_their_edges(n):
    def scenario(m):
        leaves = [m.ones(1, requires_grad=True) for _ in range(n)]
        order = []
        for i, leaf in enumerate(leaves):
            leaf.register_hook(lambda g, i=i: order.append(i))
        m.stack(leaves).sum().backward()
        return order
    assert _same_in_both(scenario) == list(range(n))


# -- tensor hooks: views, multi-output ops, results ----------------------------------------------------
def test_tensor_hooks_on_views_of_a_leaf_and_of_a_non_leaf():
    def scenario(m):
        seen = []
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = x[1:]
        v.register_hook(lambda g: seen.append(("leaf view", g.tolist())) or g * 2)
        x.register_hook(lambda g: seen.append(("leaf", g.tolist())))
        (v * m.tensor([5.0, 7.0])).sum().backward()
        b = x * 1
        u = b[:2]
        u.register_hook(lambda g: seen.append(("view", g.tolist())) or g * 2)
        b.register_hook(lambda g: seen.append(("base", g.tolist())))
        (u.sum() + b.sum()).backward()
        return seen, x.grad.tolist()
    _same_in_both(scenario)


def test_tensor_hook_on_a_view_modified_in_place_follows_its_new_value():
    def scenario(m):
        seen = []
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x * 1
        v = b[1:]
        v.mul_(2)
        v.register_hook(lambda g: seen.append(("view", g.tolist())))
        b.register_hook(lambda g: seen.append(("base", g.tolist())))
        (v * m.tensor([5.0, 7.0])).sum().backward()
        return seen, x.grad.tolist()
    assert _same_in_both(scenario) == ([("view", [5.0, 7.0]), ("base", [0.0, 5.0, 7.0])], [0.0, 10.0, 14.0])


def test_tensor_hooks_on_the_outputs_of_a_multi_output_op():
    def scenario(m):
        seen = []
        x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        first, second = x.split(2)
        second.register_hook(lambda g: seen.append(("second", None if g is None else g.tolist())))
        first.register_hook(lambda g: seen.append(("first", g.tolist())) or g * 3)
        (first.sum() * 2).backward(retain_graph=True)  # second gets no gradient: its hook sees None
        (first.sum() + second.sum()).backward()
        values, indices = x.max(dim=0)
        return seen, x.grad.tolist(), _error(lambda: indices.register_hook(lambda g: g)), values.requires_grad
    assert _same_in_both(scenario)[0][:2] == [("second", None), ("first", [2.0, 2.0])]


def _run_with(m, hook, leaf=False):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * m.tensor([3.0, 4.0])
    (x if leaf else y).register_hook(hook)
    (y * 2).sum().backward()


@pytest.mark.parametrize("leaf", [False, True], ids=["non-leaf", "leaf"])
def test_tensor_hooks_that_change_the_gradient_kind_raise(leaf):
    def scenario(m):
        def widen(g):
            return g.double()

        def grow(g):
            return m.ones(3)

        def tuple_of_it(g):
            return (g,)
        return [_error(lambda h=h: _run_with(m, h, leaf)) for h in (widen, grow, tuple_of_it, lambda g: "g")]
    assert _same_in_both(scenario)[0] == (
        "RuntimeError", "hook 'widen' has changed the type of value (was retrograd.FloatTensor got "
                        "retrograd.DoubleTensor)")


def test_register_hook_on_a_tensor_without_grad_raises():
    def scenario(m):
        return _error(lambda: m.ones(2).register_hook(lambda g: g)), _error(lambda: m.ones(2).retain_grad())
    assert _same_in_both(scenario) == (
        ("RuntimeError", "cannot register a hook on a tensor that doesn't require gradient"),
        ("RuntimeError", "can't retain_grad on Tensor that has requires_grad=False"))


# -- retain_grad on views ------------------------------------------------------------------------------
def test_retain_grad_on_views():
    def scenario(m):
        out = []
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = x[1:]  # a view of a leaf is not a leaf
        out.append((v.is_leaf, v.retains_grad))
        v.retain_grad()
        (v * m.tensor([2.0, 3.0])).sum().backward()
        out.append((v.retains_grad, v.grad.tolist(), x.grad.tolist()))
        b = x * 1
        u = b[1:]
        u.retain_grad()
        b.retain_grad()
        (u * m.tensor([2.0, 3.0])).sum().backward()
        out.append((u.grad.tolist(), b.grad.tolist()))
        return out
    _same_in_both(scenario)


def test_retain_grad_on_a_view_modified_in_place():
    def scenario(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x * 1
        v = b[1:]
        v.retain_grad()  # before: it stays with the old value, which the base's new history bypasses
        b.retain_grad()
        v.mul_(2)
        (b * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        before = (v.retains_grad, v.grad, b.grad.tolist(), x.grad.tolist())
        x.grad = None
        c = x * 1
        u = c[1:]
        u.mul_(2)
        u.retain_grad()  # after: it records the new value's gradient
        (u * m.tensor([5.0, 7.0])).sum().backward()
        return before, (u.retains_grad, u.grad.tolist(), c.retains_grad, x.grad.tolist())
    assert _same_in_both(scenario) == ((True, None, [1.0, 2.0, 3.0], [1.0, 4.0, 6.0]),
                                       (True, [5.0, 7.0], False, [0.0, 10.0, 14.0]))


# -- the compiled loop ----------------------------------------------------------------------------------
def _each_loop():
    if not _configure.use_compiled(True):
        pytest.skip("the compiled engine loop is not built")
    yield "compiled"
    _configure.use_compiled(False)
    yield "python"


def _hooked_pass(m):
    """A pass through leaves with post-accumulate-grad hooks and a multi-grad hook, recording every call."""
    calls = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    h = (x * w).sin() * x
    x.register_post_accumulate_grad_hook(lambda t: calls.append(("x", [round(v, 6) for v in t.grad.tolist()])))
    m.autograd.graph.register_multi_grad_hook(
        (w, h), lambda grads: calls.append(("all", [[round(v, 6) for v in g.tolist()] for g in grads])))
    h.sum().backward()
    return calls, [round(v, 6) for v in w.grad.tolist()]


def test_compiled_loop_hands_nodes_with_the_new_hooks_to_python(monkeypatch):
    runs = []
    for loop in _each_loop():
        python_nodes = []
        real = engine.Engine._run_task

        def recording(self, gt, node, inputs, queue=None):
            python_nodes.append(type(node).__name__)
            return real(self, gt, node, inputs, queue)
        monkeypatch.setattr(engine.Engine, "_run_task", recording)
        runs.append((_hooked_pass(rg), python_nodes))
        monkeypatch.undo()
    (compiled, compiled_nodes), (python, _) = runs
    assert compiled == python == _hooked_pass(torch)
    # x's AccumulateGrad (a post-accumulate-grad hook) and w's and h's nodes (the multi-grad hook's
    # tensor hooks) ran in Python; the plain ones between them in C.
    assert compiled_nodes.count("AccumulateGrad") == 2 and "MulBackward0" in compiled_nodes
    assert "SinBackward0" not in compiled_nodes
