"""What the C op call and the compiled engine loop need to know of the ops, in the tuples they read.

Note [The compiled op call]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
The generated Python function of an op (``build_fast_call`` in _codegen.py) still pays
CPython's cost for every check and every attribute it sets: about 1.4 us of a recorded
16-element multiply, against NumPy's 0.5 us. ``retrograd/_C/_op_call.c`` runs the same steps in
C for the plain case (tensors on the CPU, of one dtype where the op promotes, no view whose
base changed in place), calling the same Python objects for the forward, promotion, SavedTensor,
leaf edges, view links and anomaly traces. Anything else makes it return None before it has done anything visible, and
the generated Python function runs the call. Where the op's forward is declared one NumPy ufunc
call (``ufunc()`` in _declarations.py), the C call calls the ufunc itself.

It also runs the ops of several outputs (``c_eligible``: native ``layer_norm``, ``split``/``unbind``
and so ``chunk``, ``max``/``min``/``sort``/``topk`` with their indices, ``var_mean``...), whose
public function is otherwise a call of ``call_op``: it does what ``run_op`` does for them (the
results ``tuple(out)``, the first promoted; each output of a view op linked to the base with its
index in the view step and a multi-output creation; one node whose input metadata holds every
output's, the history of each floating output that is not one of the op's ``nondiff_outputs``;
a saved result as the tuple of every output's SavedTensor, made after the arguments'). Ops of
tensor lists (``rnn_layer``, the attention op, foreach) and device moves stay in Python.

The public function is an ``OpFunction`` (also in ``_op_call.c``): it binds a call's arguments
to the op's parameters, with their defaults, and runs the C call, without a Python frame; any
call it cannot bind, and any the C call declines, goes to the generated Python function with the
arguments as given. It carries the op's signature (``__signature__``) and, like a Python
function, binds as a method, so Tensor's methods and operators are the same object. It is built
where the C module is (see Note [The compiled modules] in retrograd/_C), and like the engine's
compiled loop it is switched off by ``RETROGRAD_COMPILED=0``; tests/ops/test_codegen.py compares
the two paths.
"""
from __future__ import annotations

import inspect
from collections import namedtuple

import numpy as np

from .. import _C

__all__ = ["OpSpec", "SaveSpec", "Kernel", "UfuncForm", "DirectForm", "PlanEntry", "FLOAT_DTYPES",
           "eligible", "c_eligible", "compiled_module", "compiled_spec", "compiled_call", "link_direct_formulas"]

# The tuples the C reads by position; their fields are the C's own tables (layout(), checked by
# tests/test_compiled_layout.py).
OpSpec = namedtuple("OpSpec", ["op", "tensor_pos", "promote", "differentiable", "node_cls", "formula_pos", "saves",
                               "nondiff_output", "view", "kernel", "ufunc", "node_edges", "multi_output"])
OpSpec.__doc__ = ("What the C op call needs to know of one op (``compiled_spec``); ``node_edges`` is None or "
                  "``{node class: indices in formula_pos of the edges it records}`` (Note [Node names per call]); "
                  "``multi_output`` is None for an op of one output, else the sorted indices of its outputs that "
                  "never require grad (``op.nondiff_outputs``).")
SaveSpec = namedtuple("SaveSpec", ["kind", "position", "users", "suffix"])
SaveSpec.__doc__ = ("One saved slot: kind 0 an argument, 1 the result, 2 an argument's shape/dtype/device "
                    "(``suffix``), 3 an argument of ``saved_lists`` (``save_list``); ``users`` has bit k set if "
                    "formula k reads it.")
Kernel = namedtuple("Kernel", ["forward", "kernel", "kwonly"])
Kernel.__doc__ = "A forward with keyword-only parameters: its positional adapter, itself, and those names."
UfuncForm = namedtuple("UfuncForm", ["forward", "ufunc", "nargs", "when"])
UfuncForm.__doc__ = ("A forward declared one NumPy ufunc call: while ``op.forward`` is ``forward``, it returns "
                     "``ufunc(*arrays[:nargs])`` where every ``(position, value)`` of ``when`` holds.")
DirectForm = namedtuple("DirectForm", ["call", "spec", "nargs", "when"])
DirectForm.__doc__ = ("A formula declared one op call: ``call(spec, *args[:nargs])`` (the C op call), or "
                      "``args[0]`` where ``call`` is None, where every ``(position, value)`` of ``when`` holds.")
PlanEntry = namedtuple("PlanEntry", ["formula", "sources", "direct"])
PlanEntry.__doc__ = ("One formula of a node's apply plan: the function, where each argument comes from (-1 the "
                     "gradient, else a saved slot), and its DirectForm or None.")

FLOAT_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.longdouble))


def compiled_module():
    """The C op call module (``retrograd._C._op_call``), or None where it is not built or not wanted."""
    return _C.op_call


def eligible(op) -> bool:
    """Ops the generated forward handles, and the direct formulas call: one output, no tensor lists, no device move."""
    return not op.multi_output and not op.lists and op.device_pos is None


def c_eligible(op) -> bool:
    """Ops the C call handles: those of ``eligible``, and those of several outputs (no tensor lists, no device
    move either), whose public function is otherwise ``call_op`` (Note [The compiled op call])."""
    return not op.lists and op.device_pos is None


def compiled_spec(op) -> OpSpec:
    """What the C call needs to know of ``op`` (made once per op)."""
    spec = op.__dict__.get("_compiled_spec")
    if spec is not None:
        return spec
    users = {}
    for k, (_, _, _, argnames) in enumerate(op.formulas):
        for a in argnames:
            if a not in ("grad", "grads"):
                users[a] = users.get(a, 0) | (1 << k)
    saves = []
    for name in op.save_slots:
        if name == "result":
            saves.append(SaveSpec(1, -1, users[name], None))
        elif name in op.index:
            saves.append(SaveSpec(3 if name in op.saved_lists else 0, op.index[name], users[name], None))
        else:
            base, _, suffix = name.rpartition("_")
            saves.append(SaveSpec(2, op.index[base], users[name], suffix))
    # A forward with keyword-only parameters is wrapped in a positional adapter (OpInfo); while
    # op.forward is that adapter, the C call calls the forward as written, by keyword.
    kernel = Kernel(op.forward, op.kernel, op.kwonly) if op.kwonly else None
    # A forward declared by ufunc(): while op.forward is what it was here, the C call calls the
    # NumPy ufunc on the arrays where the declaration's conditions hold.
    declared = getattr(op.kernel, "same_as_ufunc", None)
    ufunc = None if declared is None else UfuncForm(op.forward, getattr(np, declared[0]), declared[1], declared[2])
    spec = op._compiled_spec = OpSpec(
        op, tuple(op.tensor_pos), op.promote is not None, bool(op.differentiable),
        op.node_class if op.node_choices else op.node_cls,  # See Note [Node names per call]
        tuple(pidx for pidx, _, _, _ in op.formulas), tuple(saves), 0 in op.nondiff_outputs, bool(op.view), kernel,
        ufunc, dict(op.node_edges) if op.node_edges else None,
        tuple(sorted(op.nondiff_outputs)) if op.multi_output else None)
    return spec


def compiled_call(op, names, python_fn):
    """The public function of ``op`` through the C call (an ``OpFunction``), or None where it does not apply."""
    module = compiled_module()
    if module is None or not c_eligible(op):
        return None
    params = list(op.signature.parameters.values())
    fn = module.OpFunction(compiled_spec(op), python_fn, tuple(names), tuple(p.default for p in params),
                           inspect.Parameter.empty)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__signature__ = op.signature
    fn.python_call = python_fn  # the generated Python function, for tests and comparisons
    return fn


def link_direct_formulas(registry) -> None:
    """Fills in the direct form of each formula declared one op call in the apply plans.

    The compiled loop (Note [The compiled loop]) then runs that op's C call without the formula's
    frame where the declaration's conditions hold, and calls the formula wherever they do not or
    the C call declines. Without the C op call only the ``args[0]`` forms are filled in.
    """
    module = compiled_module()
    for op in registry.values():
        for apply in dict.fromkeys(getattr(cls, "apply", None) for cls in op.node_classes):
            _link_plan(registry, module, apply)


def _link_plan(registry, module, apply):
    """Fills in the direct forms of one apply's plan (see ``link_direct_formulas``)."""
    plan = getattr(apply, "plan", None)
    if plan is not None:
        entries = []
        for entry in plan:
            direct = None
            declared = getattr(entry.formula, "same_as_op", None)
            if declared is not None:
                name, nargs, when = declared
                if name is None:
                    direct = DirectForm(None, None, nargs, when)
                elif (module is not None and eligible(registry[name])
                      and nargs == len(registry[name].signature.parameters)):
                    # The C call reads every parameter of the op from the arguments it is given: a
                    # formula that leaves some to their defaults calls the op's public function.
                    direct = DirectForm(module.call, compiled_spec(registry[name]), nargs, when)
            entries.append(entry._replace(direct=direct))
        apply.plan = tuple(entries)
