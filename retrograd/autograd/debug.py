"""Debugging aids: why a tensor got no gradient (``explain``), and where it was cut (``explain_mode``).

``explain(output, input)`` reads the graph: whether the input requires grad, whether the
output's graph reaches it, whether that graph was freed, whether ``.grad`` is where backward
would put it. Why a path is *missing* cannot be read from the graph, which records nothing of
what was not differentiated; ``explain_mode()`` records, for every op call in its scope (through
the op call's interposition, Note [Op call interposition]), the op, the user's source line, the
grad mode and the inputs of each result. With that record ``explain`` names the op and the line
where the path was cut: under ``no_grad``, under ``inference_mode``, by a non-differentiable op
(argmax, comparisons, integer casts), by ``detach()`` or ``.data`` (a tensor sharing the input's
array but no history), by a value round trip (``.item()``, ``.numpy()``, ``.tolist()`` into a new
tensor: knowable only as "a new tensor with no history enters here", since the values carry no
trace of where they came from), or by an in-place overwrite (``zero_``, ``fill_``, ``copy_``).
The record costs nothing outside the mode, and holds each recorded result's inputs as long as
the result lives (as a graph would).
"""
from __future__ import annotations

import gc
import os
import sys
import threading
import types
import weakref

import numpy as np

from .. import autograd as _autograd_package
from .._tensor import Tensor
from ..nn.modules import module as _nn_module
from ..ops._call import interposed
from . import grad_mode, graph as _graph_module
from .accumulate_grad import AccumulateGrad
from .saved_variable import SavedTensor
from .variable import gradient_edge

__all__ = ["explain", "explain_mode", "Explanation", "memory_summary", "MemorySummary", "record_module_paths",
           "ModulePaths"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# The causes explain names, as Explanation.cause.
DOES_NOT_REQUIRE_GRAD = "does_not_require_grad"
NO_GRAD = "no_grad"
INFERENCE_MODE = "inference_mode"
DETACHED = "detached"
NEW_TENSOR = "new_tensor"
NON_DIFFERENTIABLE = "non_differentiable"
OVERWRITTEN = "overwritten"
GRAPH_FREED = "graph_freed"
GRAD_IS_NONE = "grad_is_none"
NON_LEAF = "non_leaf_without_retain_grad"
NOT_REACHED = "not_reached"
HAS_GRADIENT = "has_gradient"
_OVERWRITING = ("zero", "fill", "copy")  # in-place ops whose result does not depend on the old value


class Explanation:
    """Why ``input`` got the gradient it got from ``output``: ``cause`` (one of this module's names),
    ``message`` (in words), ``op`` and ``where`` (the op and source line of the cut, where known),
    ``input`` (the tensor explained) and ``node`` (the node of the output's graph where the cut path
    enters it, or the overwriting node itself; None where not known): what ``retrograd.viz`` draws."""

    def __init__(self, cause, message, op=None, where=None, node=None):
        self.cause = cause
        self.message = message
        self.op = op
        self.where = where
        self.input = None
        self.node = node

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"Explanation(cause={self.cause!r}, op={self.op!r}, where={self.where!r})"


class _Record:
    """What ``explain_mode`` knows of one result: the op that made it, where, in which mode, from what."""

    __slots__ = ("op", "inplace", "where", "grad_enabled", "inference", "inputs", "prev", "got_graph")

    def __init__(self, op, inplace, where, inputs, prev, got_graph):
        self.op = op
        self.inplace = inplace
        self.where = where
        self.grad_enabled = grad_mode.state.grad_enabled
        self.inference = grad_mode.state.inference
        self.inputs = inputs
        self.prev = prev
        self.got_graph = got_graph


_records = {}  # id(tensor) -> _Record, while the tensor lives
_lock = threading.RLock()  # a record may be dropped (its tensor collected) while the lock is held
_watch = {}  # id(tensor) -> weakref that removes its record


def _forget(key):
    def callback(_):
        with _lock:
            _records.pop(key, None)
            _watch.pop(key, None)
    return callback


def _where() -> str | None:
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return None if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


class _Recorder:
    """The interposer of ``explain_mode``: records each op call's results."""

    def interpose(self, op, args, inplace, proceed):
        out = proceed(op, args, inplace)
        where = _where()
        tensors = tuple(a for a in args if isinstance(a, Tensor) and a is not inplace)
        wanted = any(t.requires_grad for t in tensors) or (inplace is not None and inplace.requires_grad)
        with _lock:
            for r in out if isinstance(out, tuple) else (out,):
                if not isinstance(r, Tensor):
                    continue
                key = id(r)
                prev = _records.get(key) if r is inplace else None
                _records[key] = _Record(op.name, r is inplace, where, tensors, prev,
                                        not wanted or r.grad_fn is not None)
                if key not in _watch:
                    _watch[key] = weakref.ref(r, _forget(key))
        return out


class explain_mode:
    """Records, in its scope, what ``explain`` needs to name the op and line where a gradient path was cut.

    Example::
        >>> import retrograd as rg
        >>> x = rg.ones(2, requires_grad=True)
        >>> with rg.autograd.explain_mode():
        ...     with rg.no_grad():
        ...         y = x * 2
        ...     loss = (y + 1).sum()
        >>> rg.autograd.explain(loss, x).cause
        'no_grad'
    """

    def __enter__(self):
        self._interposed = interposed(_Recorder())
        self._interposed.__enter__()
        return self

    def __exit__(self, *exc):
        self._interposed.__exit__(*exc)
        return False


def _reaches(output, target):
    """Whether ``target`` (a node) is reachable from ``output``'s grad_fn, and the nodes seen."""
    root = output.grad_fn
    seen = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node is target:
            return True, seen
        for edge in node.next_edges:
            if edge is not None:
                stack.append(edge[0])
    return False, seen


def _freed(nodes) -> bool:
    for node in nodes:
        saved = getattr(node, "_saved", None)
        for value in saved or ():
            values = value if type(value) in (list, tuple) else (value,)
            if any(getattr(v, "released", False) for v in values):
                return True
    return False


def _shares(a, b) -> bool:
    return a is b or np.may_share_memory(a, b)


def _path(output, input):
    """The recorded forward path from ``input`` to ``output``: a list of (tensor, record), output last,
    and how it starts: "same" (from ``input`` itself) or "alias" (from a history-less tensor sharing its
    array), or None where no recorded path exists."""
    start = (output, None)
    parents = {id(output): start}
    stack = [output]
    found = None
    while stack and found is None:
        t = stack.pop()
        rec = _records.get(id(t))
        while rec is not None and found is None:  # the record, then what an in-place write replaced
            for a in rec.inputs + ((t,) if rec.inplace and rec.prev is not None else ()):
                if a is input:
                    found = ("same", t, rec)
                    break
                if a.grad_fn is None and not a.requires_grad and id(a) not in _records and _shares(a._data,
                                                                                                  input._data):
                    found = ("alias", t, rec, a)
                    break
                if id(a) not in parents:
                    parents[id(a)] = (t, rec)
                    stack.append(a)
            rec = rec.prev
    if found is None:
        return None
    path = [(found[1], found[2])]
    t = found[1]
    while t is not output:
        parent, rec = parents[id(t)]
        path.append((parent, rec))
        t = parent
    return found[0], path, found[3] if found[0] == "alias" else None


def _entry(path, start):
    """The node of the first tensor of ``path`` (from ``start`` on, towards the output) that has one."""
    return next((t.grad_fn for t, _ in path[start:] if t.grad_fn is not None), None)


def _first_new_tensor(output):
    """The first recorded op (in forward order, roughly) that took a history-less tensor that no record made,
    as (its result, its record)."""
    seen, stack = set(), [output]
    last = None
    while stack:
        t = stack.pop()
        rec = _records.get(id(t))
        if rec is None or id(t) in seen:
            continue
        seen.add(id(t))
        for a in rec.inputs:
            if id(a) not in _records and a.grad_fn is None and not a.requires_grad:
                last = (t, rec)
            stack.append(a)
    return last


def explain(output, input) -> Explanation:
    """Explains why ``input`` has no gradient (or a zero one) from ``output``, in words and as data.

    The graph alone tells whether the input requires grad, whether ``output``'s graph reaches it and
    whether that graph was freed; under ``explain_mode()`` during the forward pass it also names the
    op and the source line where a path was cut (see the module docstring for what is knowable).

    Args:
        output (Tensor): what backward was (or would be) called on.
        input (Tensor): the tensor expected to receive a gradient.

    Returns:
        An ``Explanation``: ``cause``, ``message``, ``op``, ``where``.

    Example::
        >>> import retrograd as rg
        >>> x = rg.ones(2)
        >>> print(rg.autograd.explain((x * 2).sum(), x))
        The input does not require grad: it is a leaf made with requires_grad=False; call requires_grad_() on it.
    """
    if not isinstance(output, Tensor) or not isinstance(input, Tensor):
        raise TypeError("explain(): output and input must be Tensors")
    with _lock:
        found = _explain(output, input)
    found.input = input
    return found


def _explain(output, input):
    if not input.requires_grad:
        rec = _records.get(id(input))
        if rec is not None and (rec.inference or not rec.grad_enabled):
            cause = INFERENCE_MODE if rec.inference else NO_GRAD
            mode = "inference_mode" if rec.inference else "no_grad"
            return Explanation(cause, f"The input does not require grad: it was made by {rec.op} under {mode} "
                                      f"at {rec.where}.", rec.op, rec.where)
        if input.is_inference():
            return Explanation(INFERENCE_MODE, "The input does not require grad: it is an inference tensor, made "
                                               "under inference_mode.")
        return Explanation(DOES_NOT_REQUIRE_GRAD, "The input does not require grad: it is a leaf made with "
                                                  "requires_grad=False; call requires_grad_() on it.")
    target = gradient_edge(input)[0]
    reached, nodes = _reaches(output, target)
    if reached:
        nodes.discard(target)
        if input.grad_fn is not None and not input._retains_grad:
            return Explanation(NON_LEAF, f"The input is not a leaf (its grad_fn is {input.grad_fn.name()}): "
                                         "backward fills .grad only of leaves; call retain_grad() on it before "
                                         "backward, or use autograd.grad.")
        if input._grad is None and _freed(nodes):
            return Explanation(GRAPH_FREED, "The output's graph reaches the input, but its saved tensors were "
                                            "freed by a backward pass; pass retain_graph=True to the first "
                                            "backward to run another.")
        overwrite = _overwrite_on_path(output, input)
        if overwrite is not None:
            t, overwrite = overwrite
            return Explanation(OVERWRITTEN, f"The path from the input was overwritten in place by {overwrite.op}_ "
                                            f"at {overwrite.where}: the gradient through it is zero.",
                               overwrite.op + "_", overwrite.where, t.grad_fn)
        if input._grad is None:
            return Explanation(GRAD_IS_NONE, "The output's graph reaches the input, but its .grad is None: no "
                                             "backward has reached it since .grad was last reset (zero_grad("
                                             "set_to_none=True) sets it to None).")
        return Explanation(HAS_GRADIENT, "The output's graph reaches the input; its gradient is in .grad.")
    found = _path(output, input)
    if found is not None:
        kind, path, alias = found
        if kind == "alias":
            t, rec = path[0]
            return Explanation(DETACHED, f"The path was cut by detach() or .data: a tensor sharing the input's "
                                         f"data but none of its history enters {rec.op} at {rec.where}.",
                               rec.op, rec.where, _entry(path, 0))
        for i, (_, rec) in enumerate(path):  # from the input's side
            if rec.inference:
                return Explanation(INFERENCE_MODE, f"The path was cut by inference_mode: {rec.op} at {rec.where} "
                                                   "ran under it.", rec.op, rec.where, _entry(path, i + 1))
            if not rec.grad_enabled:
                return Explanation(NO_GRAD, f"The path was cut by no_grad: {rec.op} at {rec.where} ran under it.",
                                   rec.op, rec.where, _entry(path, i + 1))
            if not rec.got_graph:
                return Explanation(NON_DIFFERENTIABLE, f"The path was cut by a non-differentiable op: {rec.op} at "
                                                       f"{rec.where} (its result has no gradient).",
                                   rec.op, rec.where, _entry(path, i + 1))
    found = _first_new_tensor(output) if _records else None
    if found is not None:
        t, rec = found
        return Explanation(NEW_TENSOR, f"The output does not depend on the input through recorded op calls; a new "
                                       f"tensor with no history enters {rec.op} at {rec.where} (made from values, "
                                       "e.g. tensor(x.item()), from_numpy(x.numpy()), tensor(x.tolist())? Values "
                                       "carry no gradient).", rec.op, rec.where, t.grad_fn)
    if output.grad_fn is None:
        return Explanation(NOT_REACHED, "The output has no graph (no grad_fn): it was computed under no_grad or "
                                        "inference_mode, by a non-differentiable op, or from tensors that do not "
                                        "require grad. Run the forward pass under autograd.explain_mode() to name "
                                        "the op and line.")
    return Explanation(NOT_REACHED, "The output's graph does not reach the input. Run the forward pass under "
                                    "autograd.explain_mode() to name the op and line where the path was cut.")


def _overwrite_on_path(output, input):
    """An in-place write of a value that does not depend on the old one, on a recorded path from input to output,
    as (the tensor written, its record)."""
    stack, seen = [output], set()
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        rec = _records.get(id(t))
        while rec is not None:
            if rec.inplace and rec.op in _OVERWRITING and rec.prev is not None and _depends(t, rec.prev, input):
                return t, rec
            stack.extend(rec.inputs)
            rec = rec.prev
    return None


def _depends(t, rec, input):
    stack, seen = list(rec.inputs), set()
    while stack:
        a = stack.pop()
        if a is input:
            return True
        if id(a) in seen:
            continue
        seen.add(id(a))
        r = _records.get(id(a))
        while r is not None:
            stack.extend(r.inputs)
            r = r.prev
    return False


_autograd_package.explain = explain
_autograd_package.explain_mode = explain_mode
_autograd_package.Explanation = Explanation
_autograd_package.__all__ += ["explain", "explain_mode", "Explanation"]


def _saved_arrays(node):
    """The arrays ``node`` holds for its backward: its saved tensors' (packed ones' too, where tensors)."""
    found = []
    stack = [getattr(node, "_saved", None), getattr(node, "_saved_variables", None)]
    while stack:
        value = stack.pop()
        if type(value) in (list, tuple):
            stack.extend(value)
        elif type(value) is SavedTensor:
            if value.array is not None:
                found.append(value.array)
            elif isinstance(value.packed, Tensor):
                found.append(value.packed._data)
    return found


def _grad_bytes(node) -> int:
    """The bytes of the gradient buffer (``.grad``) of the leaf that ``node`` accumulates into; 0 for other nodes."""
    if type(node) is AccumulateGrad:
        var = node.variable
        if var is not None and var._grad is not None:
            return var._grad._data.nbytes
    return 0


def node_bytes(node) -> tuple:
    """``(saved bytes, gradient bytes)`` that ``node`` holds, as ``memory_summary`` counts them per node."""
    return sum(a.nbytes for a in _saved_arrays(node)), _grad_bytes(node)


class MemorySummary:
    """What a graph holds: per node (``nodes``: name, saved bytes, gradient bytes), per node type
    (``by_type``: name -> [count, saved bytes, gradient bytes]), totals, and the largest holders."""

    def __init__(self, nodes, unique_saved, cycles=()):
        self.nodes = nodes
        self.by_type, self.by_module = {}, {}
        for n in nodes:
            for table, key in ((self.by_type, n["name"]), (self.by_module, n["module"])):
                if key is None:
                    continue
                row = table.setdefault(key, [0, 0, 0])
                row[0] += 1
                row[1] += n["saved_bytes"]
                row[2] += n["grad_bytes"]
        self.cycles = list(cycles)
        self.total_saved_bytes = sum(n["saved_bytes"] for n in nodes)
        self.unique_saved_bytes = unique_saved
        self.total_grad_bytes = sum(n["grad_bytes"] for n in nodes)
        held = [n for n in nodes if n["saved_bytes"] + n["grad_bytes"]]
        self.largest = sorted(held, key=lambda n: n["saved_bytes"] + n["grad_bytes"], reverse=True)[:5]

    def __str__(self):
        lines = [f"{len(self.nodes)} nodes; saved tensors {self.total_saved_bytes} B ({self.unique_saved_bytes} B in "
                 f"distinct arrays); gradient buffers {self.total_grad_bytes} B",
                 f"{'node type':<40}{'count':>8}{'saved B':>12}{'grad B':>12}"]
        for name, (count, saved, grad) in sorted(self.by_type.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
            lines.append(f"{name:<40}{count:>8}{saved:>12}{grad:>12}")
        lines.append("largest holders: " + ", ".join(f"{n['name']} (seq {n['sequence_nr']}): "
                                                      f"{n['saved_bytes'] + n['grad_bytes']} B" for n in self.largest))
        if self.by_module:
            lines.append(f"{'module':<40}{'nodes':>8}{'saved B':>12}{'grad B':>12}")
            for name, (count, saved, grad) in sorted(self.by_module.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
                lines.append(f"{name:<40}{count:>8}{saved:>12}{grad:>12}")
        for cycle in self.cycles:
            lines.append(f"held by a reference cycle: {', '.join(cycle['nodes'])} (the cycle: "
                         f"{' -> '.join(cycle['objects'])})")
        return "\n".join(lines)


# Objects whose references memory_summary's cycle search does not follow: a graph's cycles run through
# nodes, tensors, saved values, containers and the objects users hang on a ctx, never through these.
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.CodeType, types.FrameType, np.ndarray, str, bytes, int, float, bool, type(None))


def _cycles(roots, nodes) -> list:
    """The reference cycles through the graph's nodes: each strongly connected component of the objects
    reachable from ``roots`` (Tarjan's algorithm with an explicit stack) that holds a node, as
    ``{"nodes": names, "objects": type names}``. Those objects outlive their last outside reference until
    the garbage collector runs."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    objects = {}
    for root in roots:
        if id(root) in index:
            continue
        work = [(root, None)]
        while work:
            obj, it = work.pop()
            key = id(obj)
            if it is None:
                objects[key] = obj
                index[key] = low[key] = len(index)
                stack.append(obj)
                on_stack.add(key)
                it = iter([r for r in gc.get_referents(obj) if not isinstance(r, _OPAQUE)])
            advanced = False
            for child in it:
                ckey = id(child)
                if ckey not in index:
                    work.append((obj, it))
                    work.append((child, None))
                    advanced = True
                    break
                if ckey in on_stack:
                    low[key] = min(low[key], index[ckey])
            if advanced:
                continue
            if work:
                parent = id(work[-1][0])
                low[parent] = min(low[parent], low[key])
            if low[key] == index[key]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(id(member))
                    component.append(member)
                    if member is obj:
                        break
                held = [m for m in component if id(m) in nodes]
                if held and (len(component) > 1 or any(r is obj for r in gc.get_referents(obj))):
                    found.append({"nodes": [m.name() for m in held],
                                  "objects": [type(m).__name__ for m in reversed(component)]})
    return found


def memory_summary(output, find_cycles: bool = True) -> MemorySummary:
    """Bytes the graph of ``output`` holds: saved tensors per node, per node type and in total (each array
    once in ``unique_saved_bytes``), the gradient buffers of its leaves (``.grad``), and the largest holders;
    per module (``by_module``) for the nodes recorded under ``record_module_paths()``; and the reference cycles
    through its nodes (``cycles``), which keep them alive after the last outside reference until the garbage
    collector runs. The cycle search walks every object the graph holds: ``find_cycles=False`` skips it on a
    large graph (it costs about 0.1 ms per node).

    Example::
        >>> import retrograd as rg
        >>> x = rg.ones(4, requires_grad=True)
        >>> s = rg.autograd.graph.memory_summary((x * x).sum())
        >>> s.by_type["MulBackward0"]
        [1, 32, 0]
    """
    root = output.grad_fn if isinstance(output, Tensor) else output
    nodes, seen, arrays = [], set(), {}
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        saved = _saved_arrays(node)
        for a in saved:
            arrays[id(a)] = a.nbytes
        seq = node.sequence_nr if node.sequence_nr < _graph_module.MAX_SEQUENCE_NR else -1
        nodes.append({"name": node.name(), "sequence_nr": seq, "saved_bytes": sum(a.nbytes for a in saved),
                      "grad_bytes": _grad_bytes(node), "module": (node._metadata or {}).get(MODULE_KEY)})
        stack.extend(edge[0] for edge in node.next_edges if edge is not None)
    roots = [output] if isinstance(output, Tensor) else [root] if root is not None else []
    cycles = _cycles(roots, {id(n) for n in seen}) if find_cycles else []
    return MemorySummary(nodes, sum(arrays.values()), cycles)


MODULE_KEY = "module_path_"


class ModulePaths:
    """The path of the ``nn.Module`` forwards running on each thread (``"Net/encoder:Linear"``), kept by global
    module hooks while entered."""

    def __init__(self):
        self._local = threading.local()
        self._handles = []

    def _enter(self, module, args):
        stack = getattr(self._local, "modules", None)
        if stack is None:
            stack = self._local.modules = []
        name = type(module).__name__
        if stack:
            attr = next((k for k, m in stack[-1][0]._modules.items() if m is module), None)
            if attr is not None:
                name = f"{attr}:{name}"
        stack.append((module, name))

    def _leave(self, module, args, output):
        stack = getattr(self._local, "modules", None)
        if stack:
            stack.pop()

    def path(self):
        """This thread's module path, or None outside every module."""
        stack = getattr(self._local, "modules", None)
        return "/".join(name for _, name in stack) if stack else None

    def __enter__(self):
        self._handles = [_nn_module.register_module_forward_pre_hook(self._enter),
                         _nn_module.register_module_forward_hook(self._leave, always_call=True)]
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles = []
        return False


class _ModuleRecorder:
    """An interposer that writes the running module path on the node each op call records."""

    def __init__(self, paths):
        self.paths = paths

    def interpose(self, op, args, inplace, proceed):
        out = proceed(op, args, inplace)
        path = self.paths.path()
        if path is not None:
            for r in out if isinstance(out, tuple) else (out,):
                if isinstance(r, Tensor) and r._node is not None:
                    r._node.metadata.setdefault(MODULE_KEY, path)
        return out


class record_module_paths:
    """Within it, each node the forward records carries the path of the ``nn.Module`` whose forward made it, so
    that ``memory_summary`` counts bytes per module (``by_module``) too.

    Example::
        >>> import retrograd as rg
        >>> net = rg.nn.Sequential(rg.nn.Linear(3, 2), rg.nn.Tanh())
        >>> with rg.autograd.graph.record_module_paths():
        ...     out = net(rg.ones(4, 3)).sum()
        >>> sorted(rg.autograd.graph.memory_summary(out).by_module)
        ['Sequential/0:Linear', 'Sequential/1:Tanh']
    """

    def __enter__(self):
        self._paths = ModulePaths().__enter__()
        self._interposed = interposed(_ModuleRecorder(self._paths))
        self._interposed.__enter__()
        return self

    def __exit__(self, *exc):
        self._interposed.__exit__(*exc)
        self._paths.__exit__(*exc)
        return False


_graph_module.memory_summary = memory_summary
_graph_module.record_module_paths = record_module_paths
