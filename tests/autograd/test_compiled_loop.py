"""The compiled per-node loop (Note [The compiled loop]) against the pure-Python one.

The rest of tests/autograd runs with each loop in turn (the engine_loop fixture); these tests
compare the two directly: the same gradients and the same order of nodes on random graphs,
no reference leaked per pass, and the loop actually built wherever a C compiler exists.
"""
import gc
import sys

import numpy as np
import pytest

import retrograd as rg
from retrograd._C import _configure
from retrograd.autograd import engine
from retrograd.autograd.input_buffer import InputBuffer


def test_built_and_in_use_where_a_compiler_exists(expects_compiled):
    assert engine.use_compiled_loop(True), "the C compiler exists but retrograd/autograd/_engine_loop was not built"


def _each_loop():
    """Switches to the C modules (the compiled loop and op call), then to the Python code alone, for
    a test to run the same work under each; skips the test where the C modules are not built."""
    if not _configure.use_compiled(True):
        pytest.skip("the compiled engine loop is not built")
    yield "compiled"
    _configure.use_compiled(False)
    yield "python"


def _random_graph(seed, order):
    """A random DAG of ops over two leaves, with fan-in, fan-out, broadcasting and a custom
    Function that logs the order its backward runs in. Returns (loss, leaves)."""
    rng = np.random.default_rng(seed)

    class Tag(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            order.append(ctx.k)
            return grad, None

    a = rg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = rg.tensor(rng.standard_normal(4), requires_grad=True)
    values = [a, b]
    for k in range(40):
        x, y = values[rng.integers(len(values))], values[rng.integers(len(values))]
        choice = rng.integers(7)
        if choice == 0:
            z = x * y  # may broadcast (3, 4) with (4,)
        elif choice == 1:
            z = x + y.tanh()
        elif choice == 2:
            z = Tag.apply(x, k)
        elif choice == 3:
            z = x.sin() - y
        elif choice == 4:
            z = (x * 0.5).exp().clamp(max=10.0)
        elif choice == 5:
            z = x.sum(dim=-1, keepdim=True) * y
        else:
            z = x.sigmoid()
        values.append(z)
    loss = sum(v.sum() for v in values[2:][-8:]) + values[-1].pow(2).sum()
    return loss, (a, b)


@pytest.mark.parametrize("seed", range(8))
def test_same_gradients_and_node_order_as_the_python_loop(seed):
    results = []
    for _ in _each_loop():
        order = []
        loss, (a, b) = _random_graph(seed, order)
        loss.backward()
        results.append((a.grad.numpy().copy(), b.grad.numpy().copy(), order))
    (ga1, gb1, order1), (ga2, gb2, order2) = results
    np.testing.assert_array_equal(ga1, ga2)
    np.testing.assert_array_equal(gb1, gb2)
    assert order1 == order2


def test_same_second_derivatives_as_the_python_loop():
    grads = []
    for _ in _each_loop():
        x = rg.tensor(np.linspace(-1, 1, 5), requires_grad=True)
        (g,) = rg.autograd.grad((x.tanh() * x).sum(), x, create_graph=True)
        g.pow(2).sum().backward()
        grads.append(x.grad.numpy().copy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=0, atol=0)


def test_no_reference_is_leaked_per_pass(engine_loop):
    x = rg.tensor(np.ones(4), requires_grad=True)
    y = x * x  # saves the leaf twice: unpacking links each copy to its AccumulateGrad
    for _ in range(10):
        y = (y * 1.5).tanh()  # tanh saves its result: unpacking links it to the node itself
    loss = y.sum()
    node = y.grad_fn
    acc = loss.grad_fn.next_functions[0][0]
    while type(acc).__name__ != "AccumulateGrad":
        acc = acc.next_functions[0][0]
    cpu = rg.device("cpu")
    loss.backward(retain_graph=True)  # warm up caches
    gc.collect()
    watched = (node, acc, cpu, x._data, engine.get_default_engine())
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(200):
        loss.backward(retain_graph=True)
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == before


def test_no_reference_is_leaked_by_a_failing_pass(engine_loop):
    class Fail(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("boom")

    x = rg.tensor(np.ones(3), requires_grad=True)
    mid = Fail.apply(x * 2.0) * 3.0
    loss = (mid * mid).sum()
    node = mid.grad_fn
    for _ in range(3):
        with pytest.raises(ValueError, match="boom"):
            loss.backward(retain_graph=True)
    gc.collect()
    before = sys.getrefcount(node)
    for _ in range(100):
        with pytest.raises(ValueError, match="boom"):
            loss.backward(retain_graph=True)
    gc.collect()
    assert sys.getrefcount(node) == before
    assert rg.is_grad_enabled()
    (x * 2.0).sum().backward()  # the engine keeps working
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_each_pass_leaves_the_thread_as_it_found_it(engine_loop):
    # execute, thread_main and the completion, compiled or not, restore the thread's engine
    # state, run final callbacks and re-raise errors.
    state = engine.local
    x = rg.tensor(np.ones(3), requires_grad=True)
    (x * 2.0).sum().backward()
    queue = state.ready_queue
    called = []
    y = x * 3.0
    y.register_hook(lambda grad: rg.autograd.queue_callback(lambda: called.append(grad.tolist())))
    y.sum().backward()

    def boom(grad):
        raise ValueError("boom")
    z = x * 4.0
    z.register_hook(boom)
    with pytest.raises(ValueError, match="boom"):
        z.sum().backward()
    assert called == [[1.0, 1.0, 1.0]]
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0, 5.0])
    assert state.worker_device == engine.NO_DEVICE and state.current_graph_task is None
    assert state.ready_queue is queue and not queue.heap


def test_compiled_plain_backward_runs_only_the_plain_call(expects_compiled):
    # Tensor.backward()'s compiled front takes a one-element floating non-leaf that is not a
    # view; for anything else it returns False having done nothing, and the Python path runs.
    assert engine.use_compiled_loop(True)
    loop, eng = engine._loop, engine.get_default_engine()
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert loop.backward(eng, (x * x).sum(), False) is True
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    declined = [x * 2.0,  # three elements
                (x * 2.0)[1],  # a view
                rg.tensor(2.0, requires_grad=True),  # a leaf
                (x * 2.0).sum().detach()]  # no graph
    for t in declined:
        assert loop.backward(eng, t, False) is False
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    assert loop.backward(eng, (x.float() * 2.0).sum(), False) is True  # float32: plain too
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 6.0, 8.0])
    x.grad = None
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0, 12.0])


def test_compiled_graph_task_and_root_are_made_as_the_classes_make_them(expects_compiled, slot_fields):
    assert engine.use_compiled_loop(True)
    loop, queue = engine._loop, engine.ReadyQueue()
    for keep, mode in [(False, False), (1, 0), (True, True)]:
        made = slot_fields(loop.new_graph_task(keep, mode, queue))
        expected = slot_fields(engine.GraphTask(keep, mode, 0, queue))
        assert made.keys() == expected.keys()
        for name, value in expected.items():
            assert type(made[name]) is type(value), name
            if name != "lock":
                assert made[name] == value, name
        assert made["not_ready"] is not made["dependencies"] and made["captured_vars"] is not made["final_callbacks"]
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    roots, seeds = [rg.autograd.variable.gradient_edge((x * x).sum())], [rg.tensor(1.0, dtype=rg.float64)]
    made, expected = loop.new_graph_root(roots, seeds), engine.GraphRoot(roots, seeds)
    assert slot_fields(made) == slot_fields(expected)
    assert made.outputs is not seeds and made.apply([]) is made.outputs
    for size in (0, 1, 3):
        made = loop.new_input_buffer(size)
        assert type(made) is InputBuffer and slot_fields(made) == slot_fields(InputBuffer(size))


def test_hook_added_during_the_pass_to_a_later_node_runs(engine_loop):
    # The loop checks for hooks node by node: one registered by an earlier node's backward
    # must still run.
    x = rg.tensor(np.ones(3), requires_grad=True)
    a = x * 2.0
    b = a * 3.0
    c = b * 4.0
    seen = []

    class AddHook(rg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, grad):
            a.grad_fn.register_prehook(lambda grads: seen.append(grads[0].numpy().copy()))
            return grad

    AddHook.apply(c).sum().backward()
    np.testing.assert_array_equal(seen[0], [12.0, 12.0, 12.0])
    np.testing.assert_array_equal(x.grad.numpy(), [24.0, 24.0, 24.0])


def test_error_in_the_middle_of_a_chain_names_the_node_and_restores_grad_mode(engine_loop):
    class Bad(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return rg.ones(7, dtype=rg.float64)  # not broadcastable to (3,)

    x = rg.tensor(np.ones(3), requires_grad=True)
    y = Bad.apply(x * 2.0) * 3.0
    with pytest.raises(RuntimeError, match=r"Function BadBackward returned an invalid gradient at index 0"):
        y.sum().backward()
    assert rg.is_grad_enabled()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("start", ["empty", "counted"])
def test_compute_dependencies_matches_the_python_walk(seed, start):
    # The same counts in the same order (the order nodes are first reached), from an empty dict (every pass) and
    # from one that holds counts already (the walk's own record of what it has seen then differs from the counts).
    loss, _ = _random_graph(seed, [])
    counts = []
    for _ in _each_loop():
        task = engine.GraphTask(False, False, 0)
        root = rg.autograd.graph.GraphRoot([rg.autograd.variable.gradient_edge(loss)], [rg.ones((), dtype=rg.float64)])
        if start == "counted":
            task.dependencies[loss.grad_fn] = 2
        engine.Engine.compute_dependencies(root, task)
        counts.append([(id(node), n) for node, n in task.dependencies.items()])
    assert counts[0] == counts[1]
    assert len(counts[0]) > 10


@pytest.mark.parametrize("seed", range(6))
def test_pruned_passes_match_the_python_loop(seed):
    # autograd.grad and backward(inputs=...) run only the nodes leading to their inputs.
    results = []
    for _ in _each_loop():
        order = []
        rg.manual_seed(seed)
        loss, (a, b) = _random_graph(seed, order)
        mid = loss.grad_fn.next_functions[0][0]  # keep the graph alive while grad runs
        grads = rg.autograd.grad(loss, (b, a), retain_graph=True, allow_unused=True)
        loss.backward(inputs=[b], retain_graph=True)
        g2 = rg.autograd.grad(loss, a, create_graph=True)[0]
        (hv,) = rg.autograd.grad(g2.sum(), a, allow_unused=True)
        results.append(([g.numpy().copy() for g in grads], b.grad.numpy().copy(), a.grad,
                        None if hv is None else hv.numpy().copy(), order, mid is not None))
    first, second = results
    for x, y in zip(first[0], second[0]):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(first[1], second[1])
    assert first[2] is None and second[2] is None  # backward(inputs=[b]) left a alone
    if first[3] is None:
        assert second[3] is None
    else:
        np.testing.assert_array_equal(first[3], second[3])
    assert first[4] == second[4]


def _declared_formulas():
    """(op, formula index, formula, declaration) for every formula declared one op call (same_as_op)."""
    from retrograd.ops import REGISTRY
    found = []
    for op in REGISTRY.values():
        plan = getattr(getattr(op.node_cls, "apply", None), "plan", None) or ()
        for k, (fn, _, _) in enumerate(plan):
            if getattr(fn, "same_as_op", None) is not None:
                found.append((op, k, fn, fn.same_as_op))
    return found


def test_declared_formulas_are_their_ops():
    # Each same_as_op declaration (op_call(), passthrough, shortcut()) holds: where its conditions hold, the formula returns what
    # the op returns (or its first argument), on a gradient that requires grad or not.
    from retrograd.ops import REGISTRY
    declared = _declared_formulas()
    assert {op.name for op, *_ in declared} >= {"add", "sub", "mul", "div", "sum", "tanh", "relu", "exp"}
    rng = np.random.default_rng(0)
    for op, k, fn, (name, nargs, when) in declared:
        for requires_grad in (False, True):
            grad = rg.tensor(rng.standard_normal(()) if name == "expand" else rng.standard_normal((2, 3)),
                             requires_grad=requires_grad)
            args = [grad]
            for a in list(fn.__code__.co_varnames[1:fn.__code__.co_argcount]):  # a tensor unless named otherwise
                args.append((2, 3) if a == "input_shape" else None if a in ("dim", "keepdim", "alpha") else
                            rg.tensor(rng.uniform(-2, 2, (2, 3))))
            for pos, value in when:
                args[pos] = value
            got, want = fn(*args), args[0] if name is None else REGISTRY[name].function(*args[:nargs])
            assert type(got) is type(want) and got.shape == want.shape, op.name
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy(), err_msg=op.name)
            assert got.requires_grad == want.requires_grad == requires_grad, op.name
            if name is None:
                assert got is want, op.name


def test_compiled_loop_applies_declared_formulas_without_calling_them(monkeypatch):
    # The compiled loop calls the op for a declared formula whose conditions hold, and the
    # formula itself where they do not (or without the compiled loop); the gradients agree.
    from retrograd.ops import REGISTRY
    calls = []
    for op, k, fn, _ in _declared_formulas():
        if op.name in ("mul", "sum", "add"):
            def counting(*args, _fn=fn, _name=op.name):
                calls.append(_name)
                return _fn(*args)
            entry = op.node_cls.apply.plan[k]
            plan = list(op.node_cls.apply.plan)
            plan[k] = (counting, entry[1], entry[2])
            monkeypatch.setattr(op.node_cls.apply, "plan", tuple(plan))
    linked = REGISTRY["mul"].node_cls.apply.plan[0][2] is not None  # not without the C op call
    for loop in _each_loop():
        calls.clear()
        x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).sum().backward()  # mul and a full sum: direct where compiled
        np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
        if loop == "compiled" and linked:  # (the Python loop runs the generated apply, not the plan)
            assert calls == []
        calls.clear()
        x.grad = None
        (x.sum(0) + rg.add(x, x, alpha=2).sum(dim=0)).backward()  # dim given, alpha 2: the formulas
        np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0, 4.0])
        if loop == "compiled" and linked:
            assert sorted(calls) == ["add", "sum", "sum"]


def test_a_formula_past_the_compiled_loops_limit_runs_as_in_python():
    # The compiled loop holds at most 8 formula arguments; a formula with more is left to the
    # node's own apply, which gives the same gradient (it once raised "a formula with more than
    # 8 arguments" there).
    from retrograd.ops._declarations import REGISTRY, defop
    names = [f"w{i}" for i in range(8)]
    env = {}
    exec(f"def forward(xp, input, {', '.join(names)}):\n    return input * ({' + '.join(names)})\n"  # noqa: S102
         f"def formula(grad, {', '.join(names)}):\n    return grad * ({' + '.join(names)})\n", env)
    try:
        wide = defop("_wide_probe", env["forward"], public=False, input=env["formula"])
    finally:
        REGISTRY.pop("_wide_probe", None)
    grads = []
    for _ in _each_loop():
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        wide(x, *range(1, 9)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads == [[36.0, 36.0], [36.0, 36.0]]


def _grads_and_python_nodes(monkeypatch, lib, hooked):
    """autograd.grad of a small MLP's loss w.r.t. its leaves and its hidden activation; with
    ``hooked``, a hook on w1 doubles its gradient. Returns the gradients and, for retrograd, the
    nodes that ran in Engine._run_task."""
    python_nodes = []
    if lib is rg:
        real = engine.Engine._run_task

        def recording(self, gt, node, inputs, queue=None):
            python_nodes.append(type(node).__name__)
            return real(self, gt, node, inputs, queue)
        monkeypatch.setattr(engine.Engine, "_run_task", recording)
    rng = np.random.default_rng(0)
    w1, b1, w2 = (lib.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 4), (4,), (4, 2)))
    if hooked:
        w1.register_hook(lambda grad: grad * 2)
    x = lib.tensor(rng.standard_normal((1, 3)))
    h = lib.relu(x @ w1 + b1)
    loss = (h @ w2).tanh().sum()
    plain = lib.autograd.grad(loss, (w1, b1, w2), retain_graph=True)
    with_h = lib.autograd.grad(loss, (h, w1))  # h's node is needed for w1 and captures
    monkeypatch.undo()
    return [g.detach().numpy().copy() for g in plain + with_h], python_nodes


@pytest.mark.parametrize("hooked", [False, True])
def test_grad_captures_leaves_in_the_compiled_loop_as_pytorch(monkeypatch, expects_compiled, hooked):
    # A node a pruned pass only captures from is captured in C; one that is needed too, or whose
    # leaf has a hook, runs in Python. The gradients are PyTorch's either way.
    torch = pytest.importorskip("torch")
    assert engine.use_compiled_loop(True)
    grads, python_nodes = _grads_and_python_nodes(monkeypatch, rg, hooked)
    expected, _ = _grads_and_python_nodes(monkeypatch, torch, hooked)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert sorted(python_nodes) == ["AccumulateGrad"] * (2 if hooked else 0) + ["ReluBackward0"]


@pytest.mark.parametrize("seed", range(3))
def test_compiled_init_to_execute_marks_as_the_python_method(expects_compiled, seed):
    # The same exec_info entries, in the same order, and captured_vars, for grad and backward(inputs=...).
    assert engine.use_compiled_loop(True)
    loss, (a, b) = _random_graph(seed, [])
    root = loss.grad_fn
    mid = tuple(root.next_functions[0])
    edge_a, edge_b = (tuple(rg.autograd.graph.get_gradient_edge(t))[:2] for t in (a, b))
    for outputs, accumulate in [([edge_b, edge_a], False), ([mid, edge_b, None, edge_b], False),
                                ([edge_a, mid], True)]:
        made = []
        for compiled in (True, False):
            gt = engine.GraphTask(False, False, 0)
            if compiled:
                assert engine._loop.init_to_execute(gt, root, outputs, accumulate) is True
            else:
                gt.init_to_execute(root, outputs, accumulate)
            made.append((list(gt.exec_info.items()), gt.captured_vars))
        assert made[0] == made[1]
        assert any(info[0] for _, info in made[0][0][1:]) and (accumulate or made[0][0][0][1][1])
    gt = engine.GraphTask(False, False, 0)
    assert engine._loop.init_to_execute(gt, root, [("not a node", 0)], False) is False  # left to the method
    assert gt.exec_info is None


def test_each_thread_reads_its_own_switches(engine_loop):
    # Grad mode, the engine's per-thread state and saved-tensor hooks are threading.local: the C modules read
    # each thread's own (Note ThreadLocal in _capi.h), a thread that never set one reads the class default, and
    # a switch set in one thread is not seen in another while both run passes.
    import threading
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    packed = []
    seen = {}
    step = threading.Barrier(2, timeout=30)

    def other():
        seen["default"] = (x * x).requires_grad  # never set in this thread: the class's default, True
        step.wait()  # the main thread is inside no_grad and saved_tensors_hooks now
        y = (x * 3.0).tanh().sum()  # recorded here, with no hooks: the main thread's are its own
        seen["grad"] = rg.autograd.grad(y, x)[0].numpy().copy()
        with rg.no_grad():
            seen["off"] = (x * x).requires_grad
        step.wait()

    thread = threading.Thread(target=other)
    thread.start()
    with rg.no_grad(), rg.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        step.wait()
        step.wait()
        assert not (x * x).requires_grad
    thread.join()
    assert seen["default"] and not seen["off"] and packed == []
    np.testing.assert_allclose(seen["grad"], 3.0 * (1.0 - np.tanh(3.0 * x.detach().numpy()) ** 2))
    z = (x * x).tanh().sum()  # and the main thread records again, the hooks gone
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * x.detach().numpy() * (1.0 - np.tanh(x.detach().numpy() ** 2) ** 2))
