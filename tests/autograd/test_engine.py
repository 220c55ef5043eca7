"""The graph (Node, Edge, AccumulateGrad, GraphRoot, SavedTensor) and the backward engine."""
import threading
import weakref

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.variable import gradient_edge
from retrograd.autograd.engine import Engine, GraphTask, ReadyQueue, NodeTask, get_default_engine
from retrograd.autograd.accumulate_grad import AccumulateGrad
from retrograd.autograd.graph import Edge, GraphRoot, Node


def _record(calls, label):
    """A custom Function that appends ``label`` to ``calls`` each time its backward runs."""
    class Record(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            calls.append(label)
            return grad
    return Record.apply


def _acc(t):
    return (t * 1).grad_fn.next_functions[0][0]


# -- Node ---------------------------------------------------------------------------------------
def test_sequence_nr_increases_with_creation_order():
    x = rg.ones(1, requires_grad=True)
    a = x * 2
    b = a + 1
    c = _record([], "c")(b)
    assert a.grad_fn.sequence_nr < b.grad_fn.sequence_nr < c.grad_fn.sequence_nr


def test_sequence_nr_is_unique_across_threads():
    x = rg.ones(1, requires_grad=True)
    seen = [[] for _ in range(4)]

    def work(out):
        for _ in range(2000):
            out.append((x * 2).grad_fn.sequence_nr)
    threads = [threading.Thread(target=work, args=(s,)) for s in seen]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [n for s in seen for n in s]
    assert len(set(everything)) == 8000
    assert all(s == sorted(s) for s in seen)


def test_next_functions_has_none_for_inputs_that_do_not_require_grad():
    x = rg.ones(2, requires_grad=True)
    c = rg.ones(2)
    y = x * c
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert (c * x).grad_fn.next_functions[0] == (None, 0)
    assert (x * 2).grad_fn.next_functions[1] == (None, 0)


def test_next_functions_points_to_the_producing_node_and_output_nr():
    x = rg.ones(4, requires_grad=True)
    a, b = x.split(2)
    y = a * b
    (na, ia), (nb, ib) = y.grad_fn.next_functions
    assert na is nb is a.grad_fn and (ia, ib) == (0, 1)


def test_node_name_and_metadata():
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    assert y.grad_fn.name() == "MulBackward0"
    assert _acc(x).name() == "torch::autograd::AccumulateGrad"
    assert y.grad_fn.metadata == {}
    y.grad_fn.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}


def test_edge_is_node_and_input_nr():
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    e = Edge(y.grad_fn, 0)
    assert e.node is y.grad_fn and e.input_nr == 0 and e == (y.grad_fn, 0)
    assert gradient_edge(y) == e
    assert gradient_edge(rg.ones(1)) is None


def test_node_prehook_and_posthook_see_and_replace_gradients():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []

    def pre(grad_outputs):
        seen.append(("pre", grad_outputs[0].tolist()))
        return (grad_outputs[0] * 10,)

    def post(grad_inputs, grad_outputs):
        seen.append(("post", grad_inputs[0].tolist(), grad_outputs[0].tolist()))
        return (grad_inputs[0] + 1, grad_inputs[1])
    y.grad_fn.register_prehook(pre)
    y.grad_fn.register_hook(post)
    y.sum().backward()
    assert seen == [("pre", [1.0, 1.0]), ("post", [30.0, 30.0], [10.0, 10.0])]
    assert x.grad.tolist() == [31.0, 31.0]


def test_removed_node_hooks_are_not_called():
    x = rg.ones(1, requires_grad=True)
    y = x * 3
    calls = []
    h1 = y.grad_fn.register_prehook(lambda g: calls.append("pre"))
    h2 = y.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    h1.remove()
    h2.remove()
    h2.remove()  # removing twice is harmless
    y.backward()
    assert calls == [] and x.grad.tolist() == [3.0]


def test_release_variables_frees_saved_tensors():
    x = rg.ones(2, requires_grad=True)
    y = (x * x).sum()
    (x * x).grad_fn.release_variables()  # another node: unaffected
    y.grad_fn.next_functions[0][0].release_variables()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


def test_graph_root_returns_the_seeds():
    x = rg.ones(1, requires_grad=True)
    seed = rg.tensor([5.0])
    root = GraphRoot([gradient_edge(x * 2)], [seed])
    assert root.apply([])[0] is seed
    assert root.next_functions[0][0].name() == "MulBackward0"


# -- AccumulateGrad -----------------------------------------------------------------------------
def test_accumulate_grad_is_shared_by_every_use_of_a_leaf():
    x = rg.ones(2, requires_grad=True)
    a, b = x * 2, x + 1
    acc = a.grad_fn.next_functions[0][0]
    assert isinstance(acc, AccumulateGrad) and acc is b.grad_fn.next_functions[0][0]
    assert acc.variable is x
    assert acc.next_functions == ()


def test_accumulate_grad_does_not_keep_the_leaf_alive():
    x = rg.ones(2, requires_grad=True)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    ref = weakref.ref(x)
    del x
    assert ref() is None and acc.variable is None
    y.sum().backward()  # the leaf is gone: nothing to accumulate into, no error


def _returns(grad_factory):
    class Give(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad_factory(grad)
    return Give.apply


def test_accumulate_grad_steals_an_unshared_gradient():
    address = []

    def fresh(grad):
        g = grad * 2
        address.append(g._data.__array_interface__["data"][0])
        return g
    x = rg.ones(3, requires_grad=True)
    _returns(fresh)(x).sum().backward()
    assert x.grad.tolist() == [2.0] * 3
    assert x.grad._data.__array_interface__["data"][0] == address[0]


def test_accumulate_grad_copies_a_gradient_held_elsewhere():
    kept = rg.full((3,), 4.0)
    x = rg.ones(3, requires_grad=True)
    _returns(lambda grad: kept)(x).sum().backward()
    assert x.grad is not kept and not np.shares_memory(x.grad._data, kept._data)
    kept.add_(1)
    assert x.grad.tolist() == [4.0] * 3


def test_accumulate_grad_copies_a_fresh_tensor_on_a_shared_array():
    kept = rg.full((3,), 4.0)
    x = rg.ones(3, requires_grad=True)
    _returns(lambda grad: kept.detach())(x).sum().backward()  # nothing else holds the tensor, but its array...
    assert not np.shares_memory(x.grad._data, kept._data)
    kept.add_(1)
    assert x.grad.tolist() == [4.0] * 3


def test_accumulate_grad_copies_a_read_only_view_gradient():
    x = rg.ones(3, requires_grad=True)
    x.sum().backward()  # sum's gradient is a read-only broadcast of one number
    assert x.grad._base is None and x.grad._data.base is None and x.grad._data.flags.writeable
    x.grad.add_(1)
    assert x.grad.tolist() == [2.0] * 3


def test_grad_accumulates_in_place_keeping_its_identity():
    x = rg.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    first = x.grad
    (x * 3).sum().backward()
    assert x.grad is first and first.tolist() == [5.0, 5.0]


def test_grad_accumulated_with_create_graph_keeps_its_own_graph():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    g1 = x.grad
    assert g1.requires_grad and g1.grad_fn is not None and g1.tolist() == [2.0, 4.0]
    (x * x).sum().backward(create_graph=True)
    assert x.grad is not g1 and x.grad.grad_fn is not None and x.grad.tolist() == [4.0, 8.0]
    (dx,) = rg.autograd.grad(x.grad.sum(), x)
    assert dx.tolist() == [4.0, 4.0]


# -- SavedTensor --------------------------------------------------------------------------------
def test_saved_tensor_modified_in_place_raises_on_unpack():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"^one of the variables needed for gradient computation has been "
                                           r"modified by an inplace operation: \[retrograd.FloatTensor \[2\]\], "
                                           r"which is output 0 of Exp, is at version 1; expected "
                                           r"version 0 instead."):
        y.sum().backward()


def test_saved_leaf_modified_under_no_grad_raises():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with rg.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match="^one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation: .* is at version 1; expected "
                                           "version 0 instead"):
        y.backward()


def test_modifying_a_tensor_that_was_not_saved_is_fine():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = a + 1  # add saves nothing
    a.mul_(5)  # rebases a's history; y keeps the old one
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


# -- Engine.execute and GraphTask -------------------------------------------------------------
def test_engine_execute_runs_from_root_edges():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    out = get_default_engine().execute([gradient_edge(y)], [rg.tensor([1.0, 10.0])], keep_graph=False,
                                       create_graph=False)
    assert x.grad.tolist() == [2.0, 40.0] and list(out) == []


def test_engine_execute_captures_outputs_without_touching_grad():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    (gx,) = Engine().execute([gradient_edge(y)], [rg.ones(2)], False, False, outputs=[Edge(_acc(x), 0)])
    assert gx.tolist() == [2.0, 4.0] and x.grad is None


def test_compute_dependencies_counts_incoming_edges():
    x = rg.ones(1, requires_grad=True)
    a, b = x * 2, x * 3
    c = a * b
    root = GraphRoot([gradient_edge(c)], [rg.ones(1)])
    task = GraphTask(keep_graph=False, grad_mode=False, reentrant_depth=0)
    Engine.compute_dependencies(root, task)
    acc = a.grad_fn.next_functions[0][0]
    assert task.dependencies == {c.grad_fn: 1, a.grad_fn: 1, b.grad_fn: 1, acc: 2}


def test_compute_dependencies_is_iterative():
    x = rg.ones(1, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + 1
    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        task = GraphTask(False, False, 0)
        Engine.compute_dependencies(GraphRoot([gradient_edge(y)], [rg.ones(1)]), task)
    finally:
        sys.setrecursionlimit(limit)
    assert len(task.dependencies) == 5001


def test_grad_runs_only_the_nodes_leading_to_the_inputs():
    calls = []
    x = rg.ones(2, requires_grad=True)
    w = rg.ones(2, requires_grad=True)
    out = (_record(calls, "to_x")(x) * _record(calls, "to_w")(w)).sum()
    (gx,) = rg.autograd.grad(out, x)
    assert calls == ["to_x"] and gx.tolist() == [1.0, 1.0]
    assert x.grad is None and w.grad is None


def test_grad_with_non_leaf_input_stops_there():
    calls = []
    x = rg.ones(2, requires_grad=True)
    mid = _record(calls, "below")(x) * 2
    out = _record(calls, "above")(mid).sum()
    (g,) = rg.autograd.grad(out, mid)
    assert calls == ["above"] and g.tolist() == [1.0, 1.0] and x.grad is None


def test_backward_with_inputs_runs_only_the_needed_nodes():
    calls = []
    x = rg.ones(2, requires_grad=True)
    w = rg.ones(2, requires_grad=True)
    out = (_record(calls, "to_x")(x) * _record(calls, "to_w")(w)).sum()
    out.backward(inputs=[w])
    assert calls == ["to_w"] and x.grad is None and w.grad.tolist() == [1.0, 1.0]


# -- ReadyQueue ordering ------------------------------------------------------------------------
def test_independent_branches_run_later_created_first():
    calls = []
    x = rg.ones(1, requires_grad=True)
    first = _record(calls, "first")(x)
    second = _record(calls, "second")(x)
    (first + second).backward()
    assert calls == ["second", "first"]


def test_a_task_handed_over_still_waits_for_an_earlier_queued_one():
    # See Note [Handing over the next task]: the add of a and b makes B and A ready; B, the
    # later created, is the one to run next among them, but E, queued before, runs first.
    calls = []
    x = rg.ones(1, requires_grad=True)
    a = _record(calls, "A")(x)
    b = _record(calls, "B")(x)
    e = _record(calls, "E")(x)
    n = _record(calls, "N")(a + b)
    (n + e).backward()
    assert calls == ["N", "E", "B", "A"]
    np.testing.assert_array_equal(x.grad.numpy(), [3.0])


def test_accumulate_grad_runs_as_soon_as_it_is_ready():
    calls = []
    x = rg.ones(1, requires_grad=True)
    w = rg.ones(1, requires_grad=True)
    x.register_hook(lambda g: calls.append("acc_x"))
    w.register_hook(lambda g: calls.append("acc_w"))
    b = _record(calls, "B")(w)
    a = _record(calls, "A")(x)
    (a + b).backward()
    assert calls == ["A", "acc_x", "B", "acc_w"]


def test_ready_queue_pops_by_descending_sequence_nr():
    x = rg.ones(1, requires_grad=True)
    nodes = [(x * 1).grad_fn for _ in range(3)]
    task = GraphTask(False, False, 0)
    q = ReadyQueue()
    for n in (nodes[1], nodes[0], nodes[2], _acc(x)):
        q.push_task(NodeTask(task, n, []))
    popped = [q.pop()[5] for _ in range(4)]  # entries are (kind, -depth, -seq, order, task, node, inputs)
    assert popped == [_acc(x), nodes[2], nodes[1], nodes[0]]


def test_ready_queue_puts_shutdown_then_wakeups_then_deeper_tasks_first():
    x = rg.ones(1, requires_grad=True)
    late = (x * 1).grad_fn
    early_deep = GraphTask(False, False, 3)
    shallow = GraphTask(False, False, 0)
    q = ReadyQueue()
    q.push(shallow, late, [])
    q.push(early_deep, (x * 2).grad_fn, [])
    q.push_task(NodeTask(shallow, None, None))
    q.push_task(NodeTask(None, None, None, is_shutdown=True))
    kinds = [q.pop() for _ in range(4)]
    assert [k[0] for k in kinds] == [0, 1, 2, 2]
    assert kinds[2][4] is early_deep and kinds[3][5] is late


# -- validate_outputs ---------------------------------------------------------------------------
def test_broadcastable_gradient_is_summed_to_the_input_shape():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    _returns(lambda g: rg.ones(3, 2))(x).sum().backward()
    assert x.grad.shape == (2,) and x.grad.tolist() == [3.0, 3.0]


def test_gradient_of_another_dtype_is_cast_to_the_input_dtype():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    _returns(lambda g: rg.ones(2, dtype=rg.float64))(x).sum().backward()
    assert x.grad.dtype is rg.float32


def test_wrong_shaped_gradient_names_the_node_index_and_shapes():
    class Bad(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad):
            return grad, rg.ones(3)
    x = rg.ones(2, requires_grad=True)
    y = rg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^Function BadBackward returned an invalid gradient at index 1 - "
                                           r"got \[3\] but expected shape compatible with \[2\]"):
        Bad.apply(x, y).sum().backward()


def test_wrong_number_of_gradients_from_a_node_raises():
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match=r"incorrect number of values \(got 1, but expected 2\)"):
        y.backward()


# -- releasing saved tensors ------------------------------------------------------------------
def test_backward_twice_raises():
    x = rg.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"^Trying to backward through the graph a second time"):
        y.backward()


def test_backward_twice_with_retain_graph_accumulates():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_nodes_that_saved_no_tensor_run_twice():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_custom_function_that_saved_nothing_runs_twice():
    x = rg.ones(2, requires_grad=True)
    y = _record([], "r")(x).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


# -- InputBuffer accumulation -------------------------------------------------------------------
def test_diamond_sums_both_paths():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    a, b = x * 2, x * 3
    (a * b).sum().backward()  # d(6x^2)/dx = 12x
    assert x.grad.tolist() == [12.0, 24.0]


def test_fan_in_sums_every_use():
    x = rg.tensor([1.0], requires_grad=True)
    y = x * 1
    (y + y + y + y + y).backward()
    assert x.grad.tolist() == [5.0]


def test_fan_in_into_a_multi_output_node():
    x = rg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = x.split(2)
    (a * 2 + b * 3 + a).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0, 3.0]


def test_duplicate_roots_sum_their_seeds():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    rg.autograd.backward([y, y], [rg.tensor([1.0, 0.0]), rg.tensor([0.0, 10.0])])
    assert x.grad.tolist() == [2.0, 20.0]


def test_dependent_roots_wait_for_each_other():
    calls = []
    x = rg.tensor([1.0], requires_grad=True)
    y = _record(calls, "y")(x)
    z = y * 3
    rg.autograd.backward([y, z], [rg.tensor([1.0]), rg.tensor([1.0])])
    assert x.grad.tolist() == [4.0] and calls == ["y"]


def test_input_buffer_does_not_modify_incoming_gradients():
    g = rg.tensor([1.0, 1.0])
    x = rg.ones(2, requires_grad=True)
    y = x * 1
    rg.autograd.backward([y, y, y], [g, g, g])
    assert g.tolist() == [1.0, 1.0] and x.grad.tolist() == [3.0, 3.0]


# -- API.md "Details users rely on": callbacks and checkpoint validity ----------------------------
def test_callback_queued_from_a_callback_runs_in_the_same_pass():
    order = []
    x = rg.ones(1, requires_grad=True)
    y = x * 2

    def second():
        order.append("second")

    def first():
        order.append("first")
        rg.autograd.queue_callback(second)
    y.grad_fn.register_prehook(lambda g: rg.autograd.queue_callback(first))
    y.backward()
    assert order == ["first", "second"]


def test_callback_queued_in_a_nested_pass_runs_when_that_pass_ends():
    order = []

    class Nested(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            inner = rg.ones(1, requires_grad=True)
            with rg.enable_grad():
                z = inner * 3
            z.grad_fn.register_prehook(lambda g: rg.autograd.queue_callback(lambda: order.append("inner")))
            z.backward()
            order.append("nested pass returned")
            rg.autograd.queue_callback(lambda: order.append("outer"))
            return grad
    x = rg.ones(1, requires_grad=True)
    Nested.apply(x).backward()
    assert order == ["inner", "nested pass returned", "outer"]


def test_queue_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match="^Final callbacks can only be installed during backward pass."):
        rg.autograd.queue_callback(lambda: None)


def test_is_checkpoint_valid_is_false_inside_grad_only():
    seen = []
    x = rg.ones(1, requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda g: seen.append(rg.autograd.is_checkpoint_valid()))
    y.backward(retain_graph=True)
    rg.autograd.grad(y, x)
    assert seen == [True, False] and rg.autograd.is_checkpoint_valid()


def test_reentrant_checkpoint_reached_from_grad_raises():
    try:
        from retrograd.utils.checkpoint import checkpoint
    except ImportError:
        pytest.skip("retrograd.utils.checkpoint.checkpoint is not implemented on this branch yet")
    x = rg.ones(2, requires_grad=True)
    y = checkpoint(lambda t: (t * t).sum(), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="^When use_reentrant=True, torch.utils.checkpoint is incompatible with "
                                           ".grad()"):
        rg.autograd.grad(y, x)


# -- higher derivatives ---------------------------------------------------------------------------
def test_third_derivative_of_x_to_the_fourth():
    x = rg.tensor([1.0, 2.0, -3.0], dtype=rg.float64, requires_grad=True)
    (d1,) = rg.autograd.grad((x ** 4).sum(), x, create_graph=True)
    (d2,) = rg.autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = rg.autograd.grad(d2.sum(), x)
    assert d1.tolist() == [4.0, 32.0, -108.0]
    assert d2.tolist() == [12.0, 48.0, 108.0]
    assert d3.tolist() == [24.0, 48.0, -72.0]


def test_mixed_second_derivative():
    x = rg.tensor(2.0, dtype=rg.float64, requires_grad=True)
    y = rg.tensor(3.0, dtype=rg.float64, requires_grad=True)
    f = x ** 2 * y ** 3  # d2f/dxdy = 6 x y^2
    (dx,) = rg.autograd.grad(f, x, create_graph=True)
    (dxy,) = rg.autograd.grad(dx, y)
    assert dx.item() == 2 * 2.0 * 27.0 and dxy.item() == 6 * 2.0 * 9.0


def test_double_backward_through_matmul_and_tanh():
    rg.manual_seed(1)
    a = rg.randn(3, 4, dtype=rg.float64, requires_grad=True)
    b = rg.randn(4, 2, dtype=rg.float64, requires_grad=True)
    assert rg.autograd.gradgradcheck(lambda p, q: (p @ q).tanh(), (a, b))


def test_double_backward_matches_pytorch():
    torch = pytest.importorskip("torch")
    a_np = np.array([[0.5, -1.0], [2.0, 0.25]])
    b_np = np.array([[1.0, 0.5], [-0.5, 1.5]])

    def run(lib, make):
        a, b = make(a_np), make(b_np)
        out = (a @ b).tanh().sum()
        ga, gb = lib.autograd.grad(out, (a, b), create_graph=True)
        ((ga * ga).sum() + (gb * gb).sum()).backward()
        return a.grad.detach().numpy(), b.grad.detach().numpy()
    ours = run(rg, lambda v: rg.tensor(v, requires_grad=True))
    theirs = run(torch, lambda v: torch.tensor(v, requires_grad=True))
    for o, t in zip(ours, theirs, strict=True):
        assert np.allclose(o, t, rtol=1e-10, atol=1e-12)


def test_a_broken_internal_invariant_says_it_is_a_bug_in_retrograd():
    graph_task = GraphTask(keep_graph=False, grad_mode=False, reentrant_depth=0)
    with pytest.raises(RuntimeError, match="GraphTask.outcome\\(\\) before the GraphTask completed: an internal "
                                           "invariant failed, which is a bug in retrograd"):
        graph_task.outcome()


_BROADCASTS = [((4, 3), (3,)), ((4, 3), (1, 3)), ((4, 3), (4, 1)), ((2, 4, 3), (4, 1)), ((2, 1, 3), (1, 3)),
               ((5,), (1,)), ((2, 3), ()), ((16, 3), (3,)), ((2, 8, 5), (5,))]  # the last two: by a product


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shapes", _BROADCASTS, ids=str)
def test_a_broadcast_gradient_is_summed_down_as_pytorchs(shapes, dtype):
    # Note [Summing a broadcast gradient]: the array's own sums where no one sees op calls; the values,
    # dtype and shape of PyTorch's sum_to_size
    torch = pytest.importorskip("torch")
    big, small = shapes
    values = np.linspace(-1.0, 2.0, int(np.prod(big))).reshape(big) ** 3

    def run(lib):
        g = lib.tensor(values, dtype=getattr(lib, dtype))
        b = lib.zeros(small, dtype=getattr(lib, dtype), requires_grad=True)
        (b + lib.zeros(big, dtype=getattr(lib, dtype))).backward(g)
        return b.grad
    ours, theirs = run(rg), run(torch)
    assert ours.dtype == getattr(rg, dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64),
                               rtol={"float16": 2e-3, "float32": 1e-6, "float64": 1e-15}[dtype])
