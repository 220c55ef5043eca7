"""Configures the C modules with what they work with, and switches them on.

The one module of retrograd allowed to import from every layer (see Note [The compiled
modules] in this package's ``__init__``): the C reads and calls objects of the tensor, the
graph, the engine and the ops, and this is where they are named for it, once. Each module takes
the attributes it needs from the namespace by name (its ``bindings`` table) and reports what it
reads through ``layout()``, which tests/test_compiled_layout.py holds against the classes.
"""
from __future__ import annotations

import heapq
import threading
import types

import numpy as np

from .. import _dtype, _tensor
from .._device import cpu
from ..backends import numpy_backend
from ..autograd import (accumulate_grad, anomaly_mode, engine, grad_mode, graph, graph_task, input_buffer,
                        observation, saved_variable, variable)
from ..nn import parameter
from ..ops import _call, _compiled, _node
from . import engine_loop, op_call

__all__ = ["namespace", "install", "use_compiled", "is_compiled"]


def namespace() -> types.SimpleNamespace:
    """The classes, functions and values the C modules bind, by the names their tables use."""
    return types.SimpleNamespace(
        # the tensor and the graph
        Tensor=_tensor.Tensor, Parameter=parameter.Parameter, VersionCounter=_tensor.VersionCounter, cpu=cpu,
        gradient_edge=variable.gradient_edge, accumulator_lock=variable.accumulator_lock,
        Node=graph._NodeBase, NodeExtras=graph.NodeExtras, Edge=graph.Edge, GraphRoot=graph.GraphRoot, AccumulateGrad=accumulate_grad.AccumulateGrad,
        SavedTensor=saved_variable.SavedTensor, saved_hooks_state=graph._saved_hooks_state,
        next_sequence_nr=graph._next_sequence_nr, MAX_SEQUENCE_NR=graph.MAX_SEQUENCE_NR, node_name=graph.node_name,
        validate_outputs=graph.validate_outputs, call_post_hooks=graph.call_post_hooks, grad_state=grad_mode.state, Anomaly=anomaly_mode._Anomaly,
        Observation=observation.Observation,
        record_forward_trace=anomaly_mode.record_forward_trace,
        # inference mode and views (Note [Inference tensors], Note [The autograd state of views])
        InferenceCensus=grad_mode.InferenceCensus, inference_census=grad_mode.census,
        INFERENCE_COUNTER=_tensor.INFERENCE_COUNTER, InferenceVersionCounter=_tensor.InferenceVersionCounter,
        VIEW_DEFAULT=variable.CreationMeta.DEFAULT, VIEW_NO_GRAD_MODE=variable.CreationMeta.NO_GRAD_MODE,
        VIEW_INFERENCE_MODE=variable.CreationMeta.INFERENCE_MODE,
        VIEW_MULTI_OUTPUT_NODE=variable.CreationMeta.MULTI_OUTPUT_NODE,
        # the engine
        Engine=engine.Engine, GraphTask=graph_task.GraphTask, ReadyQueue=graph_task.ReadyQueue,
        InputBuffer=input_buffer.InputBuffer,
        worker_state=graph_task.local, NO_DEVICE=graph_task.NO_DEVICE, CPU_DEVICE=graph_task.CPU_DEVICE,
        # the ops
        OpNode=_node.OpNode, nothing_saved=_call.NOTHING_SAVED, describe=_call.describe,
        mark_views=_call.mark_views, promote=_call.promote, float_dtypes=_compiled.FLOAT_DTYPES,
        bfloat16=_dtype.bfloat16,  # and set_wide_dtype once it loads: Note [bfloat16 arrays] in _dtype.py
        FP_STATE=numpy_backend.FP_STATE, FP_QUIET=numpy_backend.FP_QUIET,  # Note [NumPy's floating-point warnings]
        # the libraries, as the Python code uses them
        numpy=np, heappush=heapq.heappush, heappop=heapq.heappop, RLock=type(threading.RLock()),
    )


def install() -> None:
    """Configures every C module that is built and wanted, and switches it on."""
    ns = namespace()
    for module in (op_call, engine_loop):
        if module is not None:
            module.configure(ns)
    if op_call is not None:  # See Note [bfloat16 arrays] in _dtype.py
        _dtype.WIDE.listeners.append(op_call.set_wide_dtype)
        if _dtype.WIDE.loaded:
            op_call.set_wide_dtype(_dtype.WIDE.dtype)
    use_compiled(True)


def use_compiled(enabled: bool) -> bool:
    """Switches both C modules on or off (off: every step runs in Python); returns whether they are on.

    The engine's loop switches alone with ``engine.use_compiled_loop``; the test suite switches
    both, to run each test with each implementation.
    """
    if op_call is not None:
        op_call.set_enabled(enabled)
    engine.use_compiled_loop(enabled)
    return is_compiled()


def is_compiled(component: str | None = None) -> bool:
    """Whether retrograd's optional C modules are in use.

    Args:
        component (str, optional): ``"engine"`` for the engine's per-node loop, ``"ops"`` for the
            op call; None (the default) for both.

    Returns:
        True where the module was built, is not switched off (``RETROGRAD_COMPILED=0``) and runs.

    Example::
        >>> import retrograd as rg
        >>> isinstance(rg.is_compiled(), bool)
        True
    """
    if component not in (None, "engine", "ops"):
        raise ValueError(f"is_compiled(): component must be 'engine', 'ops' or None, but got {component!r}")
    loop = engine.compiled_loop_in_use()
    ops = op_call is not None and op_call.is_enabled() and _compiled.compiled_module() is not None
    if component == "engine":
        return loop
    if component == "ops":
        return ops
    return loop and ops
