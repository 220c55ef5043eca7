"""retrograd.profiler.itt and autograd.profiler.emit_itt: Intel ITT ranges, as PyTorch's (whose CPU build has ITT)."""
import sys
import threading

import pytest

import retrograd as rg
from retrograd.autograd.observation import Observation
from retrograd.ops._call import interposition
from retrograd.profiler import itt

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _nothing_left_active():
    yield
    assert interposition.stack == ()
    assert not Observation.active and rg.profiler._recorders == ()


def _outcome(scenario, lib):
    try:
        return "ok", scenario(lib)
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return type(e).__name__, str(e).split(". ")[0]


def same_in_both(scenario):
    ours, theirs = _outcome(scenario, rg), _outcome(scenario, torch)
    assert ours == theirs
    return ours


class _Recording:
    """A stand-in for ittapi's native module that records each task's begin and end, per thread."""

    def __init__(self):
        self.calls = []

    def Domain(self, name):  # noqa: N802 - ittapi's names
        return ("domain", name)

    def StringHandle(self, name):  # noqa: N802
        return ("handle", name)

    def task_begin(self, domain, handle):
        assert domain == ("domain", "retrograd")
        self.calls.append((threading.get_ident(), "begin", handle[1]))

    def task_end(self, domain):
        self.calls.append((threading.get_ident(), "end", None))


@pytest.fixture
def recording(monkeypatch):
    native = _Recording()
    monkeypatch.setattr(itt, "_binding", itt._Binding(native))
    return native


@pytest.fixture
def without_ittapi(monkeypatch):
    monkeypatch.setitem(sys.modules, "ittapi", None)  # `import ittapi` raises ImportError
    monkeypatch.setattr(itt, "_binding", itt._UNLOADED)


def _step(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU())
    x = lib.randn(2, 4)
    with lib.autograd.profiler.record_function("my_block"):
        loss = model(x).pow(2).mean()
    loss.backward()


def _ranges(calls):
    """The (depth, name) of each range begun by the main thread, from the begin/end calls; ends balance begins."""
    depth, ranges = 0, []
    for thread, what, name in calls:
        if thread != threading.get_ident():
            continue
        if what == "begin":
            ranges.append((depth, name))
            depth += 1
        else:
            depth -= 1
            assert depth >= 0
    assert depth == 0
    return ranges


def _depth(event):
    d = 0
    while event.cpu_parent is not None:
        d, event = d + 1, event.cpu_parent
    return d


def test_emit_itt_makes_every_event_of_the_profiler_a_range_nested_as_its_events(recording):
    with rg.autograd.profiler.profile() as prof:
        _step(rg)
    expected = [(_depth(e), e.name) for e in prof.function_events if e.thread == threading.get_native_id()]
    with rg.autograd.profiler.emit_itt():
        _step(rg)
    got = _ranges(recording.calls)
    assert got == expected
    names = {name for _, name in got}
    assert {"my_block", "aten::linear", "aten::addmm", "AddmmBackward0", "autograd::engine::evaluate_function: "
            "AddmmBackward0"} <= names
    assert _step(rg) is None and len(recording.calls) == 2 * len(got)  # nothing recorded once it is left


def test_emit_itt_disabled_records_nothing(recording):
    with rg.autograd.profiler.emit_itt(enabled=False) as e:
        _step(rg)
    assert e is None and recording.calls == []


def test_itt_functions_push_pop_and_mark(recording):
    itt.range_push("outer")
    itt.mark("instant")
    with itt.range("step {} of {n}", 1, n=2):
        pass
    itt.range_pop()
    assert _ranges(recording.calls) == [(0, "outer"), (1, "instant"), (1, "step 1 of 2")]


def test_itt_functions_and_emit_itt_as_pytorchs():
    pytest.importorskip("ittapi")

    def scenario(lib):
        i = lib.profiler.itt
        got = [i.is_available(), i.range_push("a"), i.mark("m"), i.range_pop()]
        with i.range("r {}", 1):
            got.append(lib.autograd._profiler_enabled())
        e = lib.autograd.profiler.emit_itt(record_shapes=True)
        with e as entered:
            got += [entered is e, lib.autograd._profiler_enabled(), lib.ones(2).add(1.0).tolist()]
        got.append(lib.autograd._profiler_enabled())
        return got
    assert same_in_both(scenario) == ("ok", [True, None, None, None, False, True, True, [2.0, 2.0], False])


@pytest.mark.parametrize("case", ["reentered", "nested", "inside_profile", "profile_inside", "bad_message"])
def test_emit_itt_errors_as_pytorchs(case):
    pytest.importorskip("ittapi")

    def scenario(lib):
        e = lib.autograd.profiler.emit_itt()
        if case == "reentered":
            with e:
                pass
            e.__enter__()
        elif case == "nested":
            with e, lib.autograd.profiler.emit_itt():
                pass
        elif case == "inside_profile":
            with lib.autograd.profiler.profile(), e:
                pass
        elif case == "profile_inside":
            with e, lib.autograd.profiler.profile():
                pass
        else:
            lib.profiler.itt.range_push(3)
    assert same_in_both(scenario)[0] in ("RuntimeError", "TypeError")
    with rg.autograd.profiler.profile() as prof:  # nothing was left on
        rg.ones(1).add(1.0)
    assert [e.name for e in prof.function_events] == ["aten::ones", "aten::add"]


def test_without_ittapi_everything_is_as_a_pytorch_built_without_itt(without_ittapi):
    assert not itt.is_available()
    for call in (lambda: itt.range_push("a"), itt.range_pop, lambda: itt.mark("m")):
        with pytest.raises(RuntimeError, match=r"^ITT functions not installed\. Are you sure you have a ITT build\?"):
            call()
    with pytest.raises(RuntimeError, match=r"^Can't use ITT profiler - PyTorch was compiled without ITT"):
        with rg.autograd.profiler.emit_itt():
            pass
    with rg.autograd.profiler.emit_itt(enabled=False):
        y = rg.ones(2, requires_grad=True)
        (y * 2).sum().backward()
    assert y.grad.tolist() == [2.0, 2.0] and not rg.autograd._profiler_enabled()
