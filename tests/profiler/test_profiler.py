"""retrograd.profiler: op calls, backward nodes, engine steps and ranges, laid out as PyTorch's profiler."""
import json
import re
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd import profiler
from retrograd.autograd import engine
from retrograd.autograd.observation import Observation, add_observer, remove_observer
from retrograd.ops._call import interposition
from retrograd.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


@pytest.fixture(autouse=True)
def _nothing_left_observing():
    yield
    assert interposition.stack == ()
    assert not Observation.active and Observation.observers == ()


def _training_step(lib, prof_cls, **kwargs):
    """One Linear+ReLU+MSE+SGD step under a profile of ``lib``; returns the profile and the graph's node names."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU())
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x, target = lib.randn(2, 4), lib.randn(2, 3)
    with prof_cls(activities=[ProfilerActivity.CPU] if lib is rg else None, **kwargs) as prof:
        loss = lib.nn.functional.mse_loss(model(x), target)
        names = _node_names(loss.grad_fn)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return prof, names


def _node_names(root):
    seen, stack, names = set(), [root], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(node.name())
        stack.extend(n for n, _ in node.next_functions)
    return names


def test_the_trace_of_a_training_step_is_trace_event_json_with_every_op_and_node_linked(tmp_path):
    prof, node_names = _training_step(rg, profile, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    for e in complete:
        assert {"name", "ts", "dur", "pid", "tid", "cat", "args"} <= set(e)
        assert e["dur"] >= 0
    names = [e["name"] for e in complete]
    for op in ("aten::t", "aten::addmm", "aten::relu", "aten::sub", "aten::mean", "aten::add_"):
        assert op in names
    for node in node_names:
        assert node in names
        assert f"autograd::engine::evaluate_function: {node}" in names
    # every backward node that an op call made is linked to that op call by a fwdbwd flow
    starts = {e["id"]: e for e in events if e["ph"] == "s" and e["cat"] == "fwdbwd"}
    ends = {e["id"]: e for e in events if e["ph"] == "f" and e["cat"] == "fwdbwd"}
    assert starts.keys() == ends.keys()
    by_ts = {(e["tid"], e["ts"]): e for e in complete}
    linked = set()
    for i, end in ends.items():
        node_event = by_ts[(end["tid"], end["ts"])]
        op_event = next(e for e in complete if e["cat"] == "cpu_op" and e["ts"] == starts[i]["ts"]
                        and e["name"].startswith("aten::"))
        assert op_event["args"]["Sequence number"] == node_event["args"]["Sequence number"]
        linked.add(node_event["name"])
    assert linked == {n for n in node_names if n != "torch::autograd::AccumulateGrad"}


def test_forward_op_and_backward_node_share_the_sequence_number_and_thread():
    x = rg.ones(2, 3, requires_grad=True)
    with profile() as prof:
        y = x * 2
        y.sum().backward()
    events = prof.events()
    mul = next(e for e in events if e.name == "aten::mul")
    node = next(e for e in events if e.name == "MulBackward0")
    outer = next(e for e in events if e.name == "autograd::engine::evaluate_function: MulBackward0")
    assert mul.sequence_nr == y.grad_fn.sequence_nr == node.sequence_nr == outer.sequence_nr
    assert node.fwd_thread == mul.thread == threading.get_native_id()
    assert node.cpu_parent is outer
    acc = next(e for e in events if e.name == "torch::autograd::AccumulateGrad")
    assert acc.sequence_nr == -1
    assert "torch::autograd::GraphRoot" not in [e.name for e in events]


def _header(table):
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def test_the_tables_headers_are_pytorchs():
    torch = pytest.importorskip("torch")
    from torch.profiler import profile as torch_profile
    for kwargs, group in (({}, False), ({"profile_memory": True}, False), ({"record_shapes": True}, True)):
        ours, _ = _training_step(rg, profile, **kwargs)
        theirs, _ = _training_step(torch, torch_profile, **kwargs)
        ours_table = ours.key_averages(group_by_input_shape=group).table(sort_by="cpu_time_total", row_limit=5)
        theirs_table = theirs.key_averages(group_by_input_shape=group).table(sort_by="cpu_time_total", row_limit=5)
        assert _header(ours_table) == _header(theirs_table)
        assert ours_table.splitlines()[0] == ours_table.splitlines()[2]
        assert ours_table.splitlines()[-1].startswith("Self CPU time total: ")


def test_the_tables_rows_are_the_averages_sorted_and_limited():
    x = rg.ones(2, 3, requires_grad=True)
    with profile() as prof:
        y = x * 2 * 3 * 4
        y.sum().backward()
    averages = prof.key_averages()
    counts = {a.key: a.count for a in averages}
    assert counts["aten::mul"] == 3 + 3  # three forward calls, one in each MulBackward0
    assert counts["MulBackward0"] == 3
    table = averages.table(sort_by="cpu_time_total", row_limit=4)
    rows = table.splitlines()[3:-2]
    assert len(rows) == 4
    top = sorted(averages, key=lambda a: a.cpu_time_total, reverse=True)[:4]
    cells = [re.split(r"\s{2,}", r.strip()) for r in rows]
    assert [c[0] for c in cells] == [a.key if len(a.key) < 52 else a.key[:52] + "..." for a in top]
    assert [c[-1] for c in cells] == [str(a.count) for a in top]


def test_input_shapes_are_recorded_with_record_shapes_only():
    x = rg.ones(2, 3, requires_grad=True)
    with profile(record_shapes=True) as prof:
        (x * rg.ones(3)).sum().backward()
    events = prof.events()
    assert next(e for e in events if e.name == "aten::mul").input_shapes == [[2, 3], [3]]
    assert next(e for e in events if e.name == "MulBackward0").input_shapes == [[2, 3]]
    by_shape = prof.key_averages(group_by_input_shape=True)
    assert "Input Shapes" in by_shape.table()
    with profile() as prof:
        x * 2
    assert prof.events()[0].input_shapes == []


def test_memory_counts_the_bytes_an_op_call_allocated():
    x = rg.ones(2, 3)
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            y = x * 2
            y.t()
    events = {e.name: e for e in prof.events()}
    assert events["aten::mul"].cpu_memory_usage == 2 * 3 * 4
    assert events["aten::t"].cpu_memory_usage == 0  # a view allocates nothing
    assert events["block"].cpu_memory_usage == 24 and events["block"].self_cpu_memory_usage == 0
    assert "CPU Mem" in prof.key_averages().table()


def test_record_function_as_context_manager_and_decorator_nests_ranges():
    @record_function("decorated")
    def f(t):
        return t + 1

    with profile() as prof:
        with record_function("outer") as rf:
            f(rg.ones(1))
    assert isinstance(rf, record_function)
    events = {e.name: e for e in prof.events()}
    assert events["decorated"].cpu_parent is events["outer"]
    assert events["aten::add"].cpu_parent is events["decorated"]
    assert events["outer"].start_us <= events["decorated"].start_us <= events["decorated"].end_us <= \
        events["outer"].end_us


def test_record_function_outside_a_profile_records_nothing():
    with record_function("nothing"):
        rg.ones(1) + 1
    with profile() as prof:
        pass
    assert list(prof.events()) == []


@pytest.mark.parametrize("args", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=0, active=1, repeat=2),
                                  dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3)])
def test_schedule_gives_pytorchs_actions(args):
    torch = pytest.importorskip("torch")
    theirs = torch.profiler.schedule(**args)
    ours = schedule(**args)
    assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]


def test_a_scheduled_profile_records_the_active_steps_and_hands_each_cycle_to_on_trace_ready():
    ready = []

    def on_ready(prof):
        ready.append(sorted({e.name for e in prof.events() if e.name.startswith("ProfilerStep#")}))

    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=on_ready) as prof:
        for _ in range(10):
            rg.ones(2) * 2
            prof.step()
    assert ready == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]
    step = next(e for e in prof.events() if e.name == "ProfilerStep#6")
    assert [c.name for c in step.cpu_children] == ["aten::ones", "aten::mul"]  # a factory is an op call, as PyTorch's
    assert prof.current_action == ProfilerAction.NONE


def test_engine_steps_are_ranges_around_the_pass_its_nodes_and_its_callbacks():
    x = rg.ones(2, requires_grad=True)
    y = x * 2

    def hook(grad):
        rg.autograd.queue_callback(lambda: rg.ones(1).neg() * 3)
        return grad

    y.register_hook(hook)
    with profile() as prof:
        y.sum().backward()
    events = prof.events()
    execute = next(e for e in events if e.name == "autograd::engine::execute")
    assert execute.args["keep_graph"] is False and execute.args["reentrant_depth"] == 0
    evaluates = [e for e in events if e.name.startswith("autograd::engine::evaluate_function: ")]
    assert evaluates and all(e.cpu_parent is execute for e in evaluates)
    post = next(e for e in events if e.name == "autograd::engine::post_processing")
    assert post.cpu_parent is execute
    assert [c.name for c in post.cpu_children] == ["aten::ones", "aten::neg", "aten::mul"]  # the final callback's ops


def test_a_reentrant_backward_nests_inside_the_node_that_ran_it():
    class Reentrant(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            with rg.enable_grad():
                inner = x.detach().requires_grad_()
                (inner * 3).sum().backward()
            return grad * inner.grad

    x = rg.ones(2, requires_grad=True)
    with profile() as prof:
        Reentrant.apply(x).sum().backward()
    executes = [e for e in prof.events() if e.name == "autograd::engine::execute"]
    assert len(executes) == 2
    nested = executes[1]
    assert nested.args["reentrant_depth"] == 1 and executes[0].args["reentrant_depth"] == 0
    parent = nested.cpu_parent
    while parent is not None and not parent.name.endswith("ReentrantBackward"):
        parent = parent.cpu_parent
    assert parent is not None and parent.cpu_parent.name == "autograd::engine::evaluate_function: ReentrantBackward"
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_module_scopes_are_recorded_with_with_modules():
    model = rg.nn.Sequential(rg.nn.Linear(2, 2), rg.nn.ReLU(), rg.nn.Linear(2, 1))
    with profile(with_modules=True) as prof:
        model(rg.ones(1, 2))
    names = [e.name for e in prof.events() if e.name.startswith("nn.Module")]
    assert names == ["nn.Module: Sequential_0", "nn.Module: Linear_0", "nn.Module: ReLU_0", "nn.Module: Linear_1"]
    events = {e.name: e for e in prof.events()}
    assert events["aten::relu"].cpu_parent is events["nn.Module: ReLU_0"]
    with profile() as prof:  # as PyTorch, not by default
        model(rg.ones(1, 2))
    assert not any(e.name.startswith("nn.Module") for e in prof.events())


def test_with_stack_records_the_callers_source_line():
    with profile(with_stack=True) as prof:
        rg.ones(1) * 2
    mul = next(e for e in prof.events() if e.name == "aten::mul")
    assert mul.stack[0].startswith(__file__) and "test_with_stack_records_the_callers_source_line" in mul.stack[0]
    assert "Source Location" in prof.key_averages(group_by_stack_n=1).table()


def test_the_compiled_loop_declines_while_observed_and_runs_again_after():
    loop = engine._loop
    if loop is None:
        pytest.skip("the compiled loop is not in use")
    x = rg.ones(2, requires_grad=True)
    add_observer(_Silent())
    try:
        y = (x * 2).sum()
        assert loop.backward(engine.get_default_engine(), y, False) is False
        root = rg.autograd.graph.Edge(y.grad_fn, 0)
        assert loop.execute(engine.get_default_engine(), [root], [rg.ones(())], False, False) is NotImplemented
    finally:
        remove_observer(_Silent.last)
    assert loop.backward(engine.get_default_engine(), (x * 2).sum(), False) is True
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


class _Silent:
    last = None

    def __init__(self):
        _Silent.last = self

    def begin(self, name, node, grads, args):
        return None

    def end(self, token):
        pass


def test_profiles_on_several_threads_record_each_threads_events():
    with profile() as prof:
        t = threading.Thread(target=lambda: (rg.ones(2, requires_grad=True) * 2).sum().backward())
        t.start()
        t.join()
        rg.ones(1).neg()
    threads = {e.thread for e in prof.events()}
    assert len(threads) == 2
    assert any(e.name == "MulBackward0" and e.thread != threading.get_native_id() for e in prof.events())


def test_tensorboard_trace_handler_writes_a_trace_file(tmp_path):
    with profile(on_trace_ready=profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w")):
        rg.ones(2) * 2
    (written,) = list(tmp_path.iterdir())
    assert written.name.startswith("w.") and written.name.endswith(".pt.trace.json")
    assert "aten::mul" in [e["name"] for e in json.loads(written.read_text())["traceEvents"]]


def test_events_before_the_profile_finished_raise():
    prof = profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.events()
