"""What the C modules read of the Python objects, held against the Python classes.

Each C module (Note [The compiled modules]) reports through ``layout()`` the namespace entries it
binds, the slot offsets it reads and writes, the fields of every tuple it reads by position, and
the attributes it reads or calls by name. These tests check each against the Python code, so a
renamed slot, a reordered tuple or a renamed method fails here rather than in the C.
"""
import concurrent.futures
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd import _C
from retrograd._C import _configure
from retrograd.autograd import engine, grad_mode, graph, saved_variable
from retrograd.autograd.anomaly_mode import _Anomaly
from retrograd.autograd.input_buffer import InputBuffer
from retrograd.autograd.observation import Observation
from retrograd.ops import REGISTRY, _call, _compiled

MODULES = [pytest.param(name, id=name) for name in ("engine_loop", "op_call")]


def _module(name):
    module = getattr(_C, name)
    if module is None or not module.is_configured():
        pytest.skip(f"retrograd._C.{name} is not built, or RETROGRAD_COMPILED=0")
    return module


def test_both_modules_are_built_and_configured_where_a_compiler_exists(expects_compiled):
    assert _C.engine_loop is not None and _C.engine_loop.is_configured()
    assert _C.op_call is not None and _C.op_call.is_configured()


def test_the_namespace_holds_what_the_modules_bind_and_nothing_else():
    bound = set()
    for name in ("engine_loop", "op_call"):
        bound |= set(_module(name).layout()["namespace"])
    assert bound == set(vars(_configure.namespace()))


@pytest.mark.parametrize("name", MODULES)
def test_every_slot_offset_is_that_slot_of_the_class(name):
    module = _module(name)
    ns = _configure.namespace()
    for cls_name, fields in module.layout()["slots"].items():
        cls = getattr(ns, cls_name)
        slots = {s for c in cls.__mro__ for s in getattr(c, "__slots__", ())}
        obj = object.__new__(cls)
        for field, offset in fields.items():
            assert field in slots, f"{cls_name}.{field} is not a slot"
            sentinel = object()
            object.__setattr__(obj, field, sentinel)
            assert module.read_slot(obj, offset) is sentinel, f"{cls_name}.{field} is not at offset {offset}"


def _python_tuples():
    """The field tables of the Python code, by the names the C modules report them under."""
    return {
        "queue_entry": engine.ReadyQueue.ENTRY_FIELDS,
        "input_metadata": graph.INPUT_METADATA_FIELDS,
        "plan_entry": _compiled.PlanEntry._fields,
        "direct_form": _compiled.DirectForm._fields,
        "exec_info_entry": engine.GraphTask.EXEC_INFO_FIELDS,
        "outcome": engine.GraphTask.OUTCOME_FIELDS,
        "edge": graph.Edge._fields,
        "handed_over": engine.Engine.HANDED_OVER_FIELDS,
        "graph_task_init": tuple(s for s in engine.GraphTask.__slots__ if not s.startswith("__")),
        "spec": _compiled.OpSpec._fields,
        "save": _compiled.SaveSpec._fields,
        "kernel": _compiled.Kernel._fields,
        "ufunc_form": _compiled.UfuncForm._fields,
        "view_link": _call.VIEW_LINK_FIELDS,
    }


@pytest.mark.parametrize("name", MODULES)
def test_every_tuple_is_read_with_the_fields_python_writes(name):
    tables = _python_tuples()
    for table, fields in _module(name).layout()["tuples"].items():
        assert table in tables, f"the C reads a tuple {table!r} that no Python table declares"
        assert tuple(fields) == tuple(tables[table]), table


def _owners():
    """One object of each kind the C reads named attributes on."""
    t = rg.ones(2, requires_grad=True)
    return {
        "Engine": engine.get_default_engine(), "GraphTask": engine.GraphTask(False, False, 0),
        "ReadyQueue": engine.ReadyQueue(), "InputBuffer": InputBuffer(1), "SavedTensor": saved_variable.SavedTensor,
        "Node": graph._NodeBase, "Tensor": t, "VersionCounter": t._version_counter, "worker_state": engine.local,
        "grad_state": grad_mode.state, "Anomaly": _Anomaly, "Observation": Observation,
        "saved_hooks_state": graph._saved_hooks_state,
        "OpInfo": REGISTRY["mul"], "apply_function": REGISTRY["mul"].node_cls.apply,
        "ndarray": np.ones(2), "dtype": np.dtype("float32"), "flags": np.ones(2).flags,
        "lock": threading.Lock(), "cond": threading.Condition(), "future": concurrent.futures.Future(),
    }


@pytest.mark.parametrize("name", MODULES)
def test_every_attribute_read_by_name_exists(name):
    owners = _owners()
    for owner, names in _module(name).layout()["attributes"].items():
        assert owner in owners, f"the C reads attributes of {owner!r}, which this test does not know"
        for attr in names:
            assert hasattr(owners[owner], attr), f"{owner} has no attribute {attr!r}"


def test_a_failed_configuration_names_the_missing_entry_and_keeps_the_modules_working():
    for name in ("engine_loop", "op_call"):
        module = _module(name)
        ns = _configure.namespace()
        del ns.Tensor
        with pytest.raises(AttributeError, match="Tensor"):
            module.configure(ns)
        assert not module.is_configured()
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()  # the C declines everything until configured again
        assert x.grad.tolist() == [2.0, 4.0]
        _configure.install()
        assert module.is_configured()


def test_is_compiled_answers_for_each_component():
    assert rg.is_compiled() == (rg.is_compiled("engine") and rg.is_compiled("ops"))
    with pytest.raises(ValueError, match="component must be"):
        rg.is_compiled("loop")


@pytest.mark.parametrize("name", MODULES)
def test_ndarray_fields_are_read_directly_where_their_layout_checks_out(name):
    # Each module reads an ndarray's dims, base, dtype and flags from NumPy's PyArrayObject_fields once configure
    # has checked that layout against the attributes of arrays of several kinds (ArrayHead in _capi.h); NumPy keeps
    # that layout, so on the NumPy installed here it holds.
    arrays = _module(name).layout()["arrays"]
    assert arrays["read_directly"] is True
    assert tuple(arrays["fields"]) == ("nd", "dimensions", "base", "descr", "flags")
