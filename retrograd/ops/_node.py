"""OpNode: the backward node of a declared op, which runs the op's formulas for the inputs that need grad.

Each op gets its own subclass, ``<Name>Backward0`` (made by its declaration). ``OpNode.apply``
handles every op by looping over its formula table; for ops with one output, ``build_fast_apply``
generates an ``apply`` with that loop unrolled, and the ``plan`` the compiled loop reads (Note
[The compiled loop]).

Note [One unpack per saved tensor and apply]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A node's apply unpacks each saved tensor it needs once, however many of its formulas read it,
as PyTorch's generated backward functions do. With saved-tensor hooks the unpack is visible (the
unpack hook runs once per unpack), and non-reentrant checkpointing hands out each recomputed
tensor once per backward pass, so a second unpack there would raise. Both applies here keep the
unpacked values for the rest of the call; the compiled loop, which unpacks per formula argument,
leaves nodes whose saved tensors have an unpack hook to this apply (``plan_is_plain`` in
_engine_loop.c).
"""
from __future__ import annotations

from ..autograd.graph import Node, materialize_grads
from ..autograd.saved_variable import SavedTensor
from ._codegen import define
from ._compiled import PlanEntry

__all__ = ["OpNode", "build_fast_apply"]


class OpNode(Node):
    """Backward node of a registered op: runs the op's formulas for the inputs that need grad."""

    __slots__ = ("_saved",)
    op = None  # the OpInfo of the op (each op's node class sets it)

    def saved_values(self) -> dict:
        """What the node saved for backward, by formula name (SavedTensor objects for tensors)."""
        saved = self._saved or ()
        return {name: value for name, value in zip(self.op.save_slots, saved) if not name.startswith("#")}

    def __getattr__(self, name):
        # PyTorch's introspection of saved values: grad_fn._saved_self, _saved_other, _saved_result
        if name.startswith("_saved_"):
            key = name[7:]
            key = {"self": "input"}.get(key, key)
            index = self.op.save_index.get(key)
            if index is not None and self._saved:
                value = self._saved[index]
                return value.unpack(self) if type(value) is SavedTensor else value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def apply(self, grads):
        saved = self._saved  # released SavedTensors raise on unpack
        op = self.op
        edges = self.next_edges
        if op.multi_output:
            if all(g is None for g in grads):
                return [None] * len(edges)
            grads = tuple(materialize_grads(grads, self.input_metadata))
            grad = grads[0]
        else:
            grad = grads[0]
            if grad is None:
                return [None] * len(edges)
        out = []
        k = 0
        unpacked = {}  # See Note [One unpack per saved tensor and apply]
        for pidx, is_list, fn, argnames in op.formulas:
            n = saved[op.save_index[f"#{pidx}"]] if is_list else 1
            if all(e is None for e in edges[k:k + n]):
                out.extend([None] * n)
            else:
                args = [_resolve(self, saved, op.save_index, a, grad, grads, unpacked) for a in argnames]
                g = fn(*args)
                if is_list:
                    out.extend(g)
                else:
                    out.append(g)
            k += n
        return out

    def release_variables(self):
        """Frees the saved tensors; saved shapes and scalars stay, so a node that saved no
        tensor can run again (as in PyTorch, where only SavedVariables are released)."""
        saved = self._saved
        if not saved:
            return
        for value in saved:
            if type(value) is SavedTensor:
                value.release()
            elif type(value) in (list, tuple):
                for v in value:
                    if type(v) is SavedTensor:
                        v.release()


def _resolve(node, saved, index, name, grad, grads, unpacked):
    """The value of formula argument ``name``; saved tensors are unpacked once into ``unpacked``."""
    if name == "grad":
        return grad
    if name == "grads":
        return grads
    if name in unpacked:
        return unpacked[name]
    value = saved[index[name]]
    if type(value) is SavedTensor:
        value = value.unpack(node)
    elif type(value) is list and value and type(value[0]) is SavedTensor:
        value = [v.unpack(node) for v in value]
    elif type(value) is tuple and name == "result":
        value = tuple(v.unpack(node) if type(v) is SavedTensor else v for v in value)
    else:
        return value
    unpacked[name] = value
    return value


def build_fast_apply(op):
    """Returns an ``apply`` for the node class of a single-output op, with the formula loop unrolled."""
    if op.multi_output or op.lists or any("grads" in argnames for *_, argnames in op.formulas):
        return None
    env = {"_ST": SavedTensor}
    n = len(op.formulas)
    lines = ["def apply(self, grads):",
             "    saved = self._saved  # released SavedTensors raise on unpack",
             "    grad = grads[0]",
             "    if grad is None:",
             f"        return {[None] * n!r}",
             "    edges = self.next_edges"]
    results = []
    uses = {}  # saved name -> the formulas reading it, once per reading
    for k, (_, _, _, argnames) in enumerate(op.formulas):
        for a in argnames:
            if a != "grad":
                uses.setdefault(a, []).append(k)
    shared = {a: sorted(set(ks)) for a, ks in uses.items() if len(ks) > 1}
    for a, ks in shared.items():  # See Note [One unpack per saved tensor and apply]
        lines += [f"    if {' or '.join(f'edges[{k}] is not None' for k in ks)}:",
                  f"        v_{a} = saved[{op.save_index[a]}]",
                  f"        if type(v_{a}) is _ST:",
                  f"            v_{a} = v_{a}.unpack(self)"]
    for k, (_, _, fn, argnames) in enumerate(op.formulas):
        env[f"_f{k}"] = fn
        r = f"r{k}"
        results.append(r)
        lines.append(f"    if edges[{k}] is not None:")
        call_args = []
        for a in argnames:
            if a == "grad":
                call_args.append("grad")
                continue
            v = f"v_{a}"
            call_args.append(v)
            if a in shared:
                continue
            lines += [f"        {v} = saved[{op.save_index[a]}]",
                      f"        if type({v}) is _ST:",
                      f"            {v} = {v}.unpack(self)"]
        lines += [f"        {r} = _f{k}({', '.join(call_args)})",
                  "    else:",
                  f"        {r} = None"]
    lines.append(f"    return [{', '.join(results)}]")
    apply = define("\n".join(lines) + "\n", f"{op.name}.apply", env, "apply")
    # The same table for the compiled engine loop (Note [The compiled loop]): per formula, the
    # function, where each argument comes from (-1: the gradient, else a saved slot), and its
    # direct form (see formula_is_op), which link_direct_formulas fills in once every op exists.
    apply.plan = tuple(PlanEntry(fn, tuple(-1 if a == "grad" else op.save_index[a] for a in argnames), None)
                       for _, _, fn, argnames in op.formulas)
    return apply
