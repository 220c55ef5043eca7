"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about the legacy profiler API,
``autograd.profiler`` and ``autograd.profiler_util``: what a profile records, its events, their averages
and tables, ``record_function``. Times differ from run to run: what is compared is what was recorded.
See test_pytorch_suite_basics.py for the method.
"""
import os
import tempfile

import pytest

from .test_pytorch_suite_basics import randn, same_in_both

torch = pytest.importorskip("torch")


def test_a_profile_records_the_ops_and_says_it_is_enabled_only_inside():
    def scenario(lib):
        x = randn(lib, 10, 10)
        with lib.autograd.profiler.profile(use_kineto=lib.autograd.kineto_available()) as p:
            inside = lib.autograd._profiler_enabled()
            x * 2 + 4
        return inside, lib.autograd._profiler_enabled(), sorted({e.name for e in p.function_events} &
                                                                {"aten::mul", "aten::add"})
    assert same_in_both(scenario) == ("ok", (True, False, ["aten::add", "aten::mul"]))


def test_forward_ops_and_their_backward_nodes_share_sequence_numbers():
    # PyTorch's test writes z.sum(dim=None), whose node PyTorch names SumBackward1 (see the xfail below).
    def scenario(lib):
        with lib.autograd.profiler.profile() as p:
            x, y = randn(lib, 10, 10, requires_grad=True), randn(lib, 10, 10, requires_grad=True, seed=1)
            (x + y).sum().backward()
        seen = []
        for forward, backward in (("aten::add", "Add"), ("aten::sum", "Sum")):
            ops = [e for e in p.function_events if e.name == forward or (backward in e.name and "Backward" in e.name)]
            seen.append(([e.name for e in ops], len({e.sequence_nr for e in ops}), ops[0].sequence_nr >= 0,
                         ops[0].fwd_thread, [e.fwd_thread == ops[0].thread for e in ops[1:]]))
        return seen
    assert same_in_both(scenario)[1][0] == (["aten::add", "autograd::engine::evaluate_function: AddBackward0",
                                             "AddBackward0"], 1, True, 0, [True, True])


def test_an_explicit_dim_of_none_names_the_node_after_the_dim_overload():
    def scenario(lib):
        x = randn(lib, 2, 3, requires_grad=True)
        calls = (x.sum(dim=None), lib.sum(x, None), x.mean(dim=None), x.sum(), x.mean(), x.sum(dim=()), x.sum(1))
        lib.autograd.backward([c.sum() for c in calls])
        return ([c.grad_fn.name() for c in calls], [calls[i].grad_fn._saved_dim for i in (0, 1, 2, 5, 6)],
                [c.item() if c.dim() == 0 else c for c in calls], x.grad)
    assert same_in_both(scenario)[1][:2] == (
        ["SumBackward1", "SumBackward1", "MeanBackward1", "SumBackward0", "MeanBackward0", "SumBackward1",
         "SumBackward1"], [None, None, None, (), (1,)])


def test_resize_in_place_under_a_profile():
    def scenario(lib):
        x = lib.rand(3, 4)
        with lib.autograd.profiler.profile():
            x.resize_([3, 2])
        return tuple(x.shape)
    assert same_in_both(scenario) == ("ok", (3, 2))


def test_record_function_ranges_their_order_and_the_decorator():
    def scenario(lib):
        profiler = lib.autograd.profiler
        x = randn(lib, 10, 10)

        def forward(x):
            with profiler.record_function("outer"):
                y = x * 2 + 4
                with profiler.record_function("inner"):
                    y = y - 1
            return y / 1
        forward(x)  # outside a profile: nothing recorded, nothing fails
        with profiler.profile() as p:
            forward(x)
        names = [e.name for e in p.function_events]
        expected = ["outer", "aten::mul", "aten::add", "inner", "aten::sub", "aten::div"]
        found = 0
        for name in names:
            if found < len(expected) and name == expected[found]:
                found += 1
        foo = next(e for e in p.function_events if e.name == "outer")

        @profiler.record_function("my_func")
        def f(a, b):
            return a + b
        with profiler.profile() as p2:
            f(1, 2)
        return found, foo.count, "my_func" in str(p2)
    assert same_in_both(scenario) == ("ok", (6, 1, True))


def test_record_function_left_in_another_order_than_entered():
    def scenario(lib):
        outer = lib.autograd.profiler.record_function("outer")
        outer.__enter__()
        with lib.autograd.profiler.record_function("inner"):
            outer.__exit__(None, None, None)  # left before the range entered after it
        with lib.autograd.profiler.record_function("inner"):
            outer.__enter__()
        outer.__exit__(None, None, None)  # left after the range entered before it ended
        return True
    assert same_in_both(scenario) == ("ok", True)


def test_events_made_by_hand_find_their_parents_from_their_time_ranges():
    def scenario(lib):
        util = lib.autograd.profiler_util
        events = util.EventList()
        ids = iter(range(1, 10))
        for thread, ranges in ((1, [(0, 1), (1, 2)]), (0, [(0, 2), (1, 2), (1, 3)])):
            for start, end in ranges:
                events.append(util.FunctionEvent(id=next(ids), node_id=0, name="", thread=thread, start_us=start,
                                                 end_us=end))
        events._populate_cpu_children()  # (1, 3) closes (0, 2) first: (1, 2) is its child, not (0, 2)'s
        return [[child.id for child in e.cpu_children] for e in events]
    assert same_in_both(scenario) == ("ok", [[], [], [], [], [4]])


def test_the_string_of_a_profile_is_its_table():
    def scenario(lib):
        with lib.autograd.profiler.profile() as prof:
            lib.einsum("i->", randn(lib, 1024))
        return str(prof) == prof.table()
    assert same_in_both(scenario) == ("ok", True)


def test_an_average_of_events_and_of_itself():
    def scenario(lib):
        util = lib.autograd.profiler_util
        avg = util.FunctionEventAvg()
        avg.add(util.FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
        avg.add(util.FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
        avg.add(avg)
        return (avg.key, avg.count, float(avg.cpu_time_total), float(avg.self_cpu_time_total), avg.device_time_total,
                avg.cpu_time)
    assert same_in_both(scenario) == ("ok", ("foo", 4, 30.0, 30.0, 0, 7.5))


def test_tables_of_a_profiled_lstm_and_its_chrome_trace():
    def scenario(lib):
        lib.manual_seed(0)
        rnn = lib.nn.LSTM(10, 20, 2)
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            for _ in range(2):
                rnn(lib.randn(5, 3, 10), (lib.randn(2, 3, 20), lib.randn(2, 3, 20)))
        averages = prof.key_averages(group_by_input_shape=True)
        tables = [prof.table(sort_by="self_cpu_time_total", row_limit=10, header="TEST"),
                  averages.table(sort_by="self_cpu_time_total", row_limit=10),
                  prof.table(sort_by="self_cpu_time_total", row_limit=10, max_src_column_width=300, header="TEST",
                             top_level_events_only=True),
                  averages.table(sort_by="self_cpu_time_total", row_limit=10, top_level_events_only=True)]
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "trace.json")
            prof.export_chrome_trace(path)
            written = os.path.getsize(path) > 0
        # how each table begins (its header, rules), as PyTorch lays it out
        return ([t.splitlines()[0] == t.splitlines()[2] for t in tables], prof.self_cpu_time_total > 0, written,
                lib.autograd.profiler_util._format_time(1500.0))
    assert same_in_both(scenario) == ("ok", ([False, True, True, False], True, True, "1.500ms"))


def test_record_shapes_gives_the_input_shapes_of_linear():
    def scenario(lib):
        lib.manual_seed(0)
        layer1, layer2 = lib.nn.Linear(20, 30), lib.nn.Linear(30, 40)
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            layer2(layer1(randn(lib, 128, 20).float()))
        return [e.input_shapes for e in prof.function_events if e.name == "aten::linear"]
    assert same_in_both(scenario) == ("ok", [[[128, 20], [30, 20], [30]], [[128, 30], [40, 30], [40]]])
