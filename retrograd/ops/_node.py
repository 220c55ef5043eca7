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

import math

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import _NodeBase as Node, materialize_grads
from ..autograd.saved_variable import SECOND_TIME, SavedTensor
from ._codegen import define
from ._compiled import PlanEntry

__all__ = ["OpNode", "build_fast_apply"]


class OpNode(Node):
    """Backward node of a registered op: runs the op's formulas for the inputs that need grad."""

    __slots__ = ("_saved",)
    op = None  # the OpInfo of the op (each op's node class sets it)
    edge_formulas = None  # the indices in op.formulas of this class's edges, where not all (Note [Node names per call])

    def saved_values(self) -> dict:
        """What the node saved for backward, by formula name (SavedTensor objects for tensors)."""
        saved = self._saved or ()
        return {name: value for name, value in zip(self.op.save_slots, saved) if not name.startswith("#")}

    def __getattr__(self, name):
        # See Note [PyTorch's names of saved values]
        if name.startswith("_saved_"):
            where = _where_saved(self, name[7:])
            if where is not None:
                return _shown(self, *where)
        elif name.startswith("_raw_saved_"):
            where = _where_saved(self, name[11:])
            if where is not None and _has_raw(*where[:2]):
                return _raw(*where[:2])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        names = list(super().__dir__())
        for name in _shown_names(self):
            names.append(f"_saved_{name}")
            if _has_raw(*_where_saved(self, name)[:2]):
                names.append(f"_raw_saved_{name}")
        return names

    def apply(self, grads):
        saved = self._saved  # released SavedTensors raise on unpack
        op = self.op
        edges = self.next_edges
        if op.multi_output:
            if all(g is None for g in grads):
                return [None] * len(edges)
            nondiff = op.nondiff_outputs  # never differentiated: no zeros made for them (an RNN's workspace)
            grads = tuple(g if g is not None or j in nondiff else materialize_grads((None,), (m,))[0]
                          for j, (g, m) in enumerate(zip(grads, self.input_metadata, strict=True)))
            grad = grads[0]
        else:
            grad = grads[0]
            if grad is None:
                return [None] * len(edges)
        out = []
        k = 0
        unpacked = {}  # See Note [One unpack per saved tensor and apply]
        keep = self.edge_formulas
        for pidx, is_list, fn, argnames in op.formulas if keep is None else [op.formulas[i] for i in keep]:
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


# Note [PyTorch's names of saved values]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A node shows what it saved as ``grad_fn._saved_<name>``: a Tensor for a saved tensor, a tuple
# of them for a list (or for the outputs of a multi-output op), else the value itself; None where
# no formula that had to run needed it. A saved tensor itself is ``grad_fn._raw_saved_<name>``, a
# SavedTensor (PyTorch's ``torch._C._autograd.SavedTensor``, with ``register_hooks``). The names
# are PyTorch's, from its derivatives.yaml: retrograd's ``input`` is ``self``, ``<param>_shape`` is
# ``<param>_sym_sizes`` (``_strides`` is ``_sym_strides``), output ``k`` of a multi-output op is
# ``result<k>``, with the exceptions of _PYTORCH_PARAM_NAMES and _PYTORCH_OUTPUT_NAMES; retrograd's
# own formula names work too. Values
# are shown as PyTorch shows them where its types differ (_PYTORCH_VALUES: an ``int[]`` is a tuple,
# a Python number its op took as a tensor, ``x * 2``, is a 0-d tensor; lists are tuples).
_PYTORCH_PARAM_NAMES = {  # op: {retrograd's parameter: PyTorch's}, where the rule ("input" is "self") differs
    "layer_norm": {"input": "input"},
    "native_batch_norm": {"input": "input"},
    "norm": {"p": "ord"},
    "threshold_backward": {"output": "self"},
    "linalg_inv": {"result": "inverse"},
    "linalg_pinv": {"A": "self"}, "linalg_matrix_exp": {"A": "self"},
    "linalg_solve_triangular": {"A": "self"},
    "linalg_lstsq": {"A": "self", "B": "b"},
}
_PYTORCH_SAVED_NAMES = {  # (op, retrograd's saved name): PyTorch's, where the rule above does not give it
    (op, "bias_shape"): "bias_sym_sizes_opt" for op in ("convolution", "convolution_transpose")}
_PYTORCH_OUTPUT_NAMES = {op: {1: "indices"} for op in (  # op: {output: PyTorch's name}
    "max_dim", "min_dim", "sort", "topk", "kthvalue", "median_dim", "mode", "cummax", "cummin")}
_PYTORCH_OUTPUT_NAMES.update({
    "aminmax": {0: "min", 1: "max"}, "linalg_slogdet": {0: "sign", 1: "logabsdet"}, "linalg_cholesky_ex": {0: "L"},
    "linalg_qr": {0: "Q", 1: "R"}, "linalg_svd": {0: "U", 1: "S", 2: "Vh"},
    "linalg_eigh": {0: "eigenvalues", 1: "eigenvectors"}, "linalg_lu": {0: "P", 1: "L", 2: "U"},
    "linalg_lu_factor_ex": {0: "LU", 1: "pivots"}})


def _int_list(value):
    """An ``int[]`` parameter as PyTorch shows it: a tuple, also when one int was given."""
    return (value,) if type(value) is int else value


def _wrapped_number(value):
    """A Python number that PyTorch's op took as a tensor, as it shows it: a 0-d tensor of the number's dtype."""
    dtype = _WRAPPED_DTYPES.get(type(value))
    return value if dtype is None else Tensor._make(np.asarray(value, dtype=dtype))


_WRAPPED_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64}


# Note [An explicit dim of None]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PyTorch resolves ``x.sum(dim=None)`` (and ``sum(x, None)``, ``mean(dim=None)``) to the dim overload, whose node
# is SumBackward1 (MeanBackward1); only a call that leaves dim out is SumBackward0. A Python default cannot tell
# the two apart, so sum's and mean's ``dim`` defaults to ``DIM_UNSET``, which reduces every dim as None does
# (``normalize_dims``, reduction's ``_axis``, ``_sum``'s shortcut), which their ``node_names`` tell from None
# by identity, and which their nodes show as None (``_PYTORCH_VALUES``); the public functions' signatures show
# None too (``make_public``). The generated public function and the C call pass an op's defaults as they are, so
# the plain call costs what it did. It is a plain ``object()``, of a type the collector does not track (an
# instance of a class of ours would be tracked), so a saved tuple that holds it is as atomic as one that holds
# None: the collector drops it from its tracking, and so does the C op call (its ``atomic``). div's (and div_'s)
# ``rounding_mode`` defaults to it for the same reason: ``div(a, b, rounding_mode=None)`` is PyTorch's rounding
# overload, DivBackward2 (the op ``div_mode_none``, which keeps the mode), while ``div(a, b)`` is DivBackward0.
DIM_UNSET = object()


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}  # PyTorch's at::Reduction, which its nodes save
_PYTORCH_VALUES = {  # (op, parameter): how PyTorch shows the saved value, where it differs from retrograd's
    **{(op, "dim"): _int_list for op in ("amax", "amin", "logsumexp", "norm", "nansum")},
    **{(op, "dim"): lambda value: None if value is DIM_UNSET else _int_list(value) for op in ("sum", "mean")},
    ("roll", "shifts"): _int_list, ("roll", "dims"): lambda value: () if value is None else _int_list(value),
    **{(op, name): _wrapped_number for op in ("mul", "div", "div_rounding", "div_mode_none")
       for name in ("input", "other")},
    ("nll_loss", "reduction"): _REDUCTIONS.get, ("nll_loss_backward", "reduction"): _REDUCTIONS.get,
    ("embedding", "padding_idx"): lambda value: -1 if value is None else value,
    ("pdist", "p"): float,  # PyTorch's ``float p``
    **{(op, "bias_shape"): lambda value: None if value is None else (tuple(value) or (0,))
       for op in ("convolution", "convolution_transpose")},  # () is no bias, which PyTorch shows as (0,)
    **{(op, "scales"): lambda value: value[0] if type(value) in (list, tuple) and len(value) == 1 else value
       for op in ("upsample_linear", "upsample_nearest")},  # 1-d: PyTorch's ``float? scales``
}


def _size_of(node, name):
    """The shape of what ``node`` took as ``name``: from ``<name>_shape`` or the saved tensor; None if neither."""
    values = node.saved_values()
    shape = values.get(f"{name}_shape")
    if shape is None:
        saved = values.get(name)
        if type(saved) is SavedTensor:
            shape = saved.array.shape if saved.array is not None else getattr(saved, "shape", None)
    return shape


def _size_at(name, dim):
    return lambda node: None if (shape := _size_of(node, name)) is None else shape[dim]


# Sizes PyTorch's nodes keep as ints of their own (``<param>_sym_argsize_<dim>``), which retrograd's read from a
# saved shape or tensor: op -> {PyTorch's name: function of the node}.
_DERIVED = {
    "addbmm": {"batch1_sym_argsize_0": _size_at("batch1", 0), "batch1_sym_argsize_1": _size_at("batch1", 1),
               "batch2_sym_argsize_2": _size_at("batch2", 2)},
    "im2col": {"self_sym_argsize_minus_2": _size_at("input", -2), "self_sym_argsize_minus_1": _size_at("input", -1)},
    "mean": {"self_sym_numel": lambda node: None if (shape := _size_of(node, "input")) is None
             else int(math.prod(shape))},
}
# What one op's node class of Note [Node names per call] does not show, as PyTorch's overload keeps no such value:
# node class name -> retrograd's saved names.
_NOT_KEPT = {"SumBackward0": frozenset({"dim", "keepdim"}), "MeanBackward0": frozenset({"dim", "keepdim"})}


def _index_entries(node, entries):
    """Advanced indexing's saved indices as PyTorch's IndexBackward0 shows them: one entry per dim of the tensor it
    indexes (its ints select their dims away first, a None adds one), None where no tensor indexes the dim, up to
    the last tensor."""
    ndim = len(node.saved_values()["input_shape"])
    taken = sum(e._data.ndim if isinstance(e, Tensor) and e._data.dtype.kind == "b" else 1 for e in entries
                if e is not None and e is not Ellipsis)
    out = []
    for e in entries:
        if e is Ellipsis:
            out.extend([None] * (ndim - taken))
        elif e is None or isinstance(e, slice):
            out.append(None)
        elif isinstance(e, Tensor):
            out.append(e)
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


_PYTORCH_VALUES[("index", "indices")] = _index_entries
_OF_NODE = frozenset({_index_entries})  # shown as a function of the node and the value
_NAMES: dict = {}  # op -> ({name: (slot, output or None, tensor-like, shown as)}, [PyTorch's names])


def _names_of(op):
    """The names a node of ``op`` answers to under ``_saved_``, and the ones ``dir()`` shows."""
    known = _NAMES.get(op)
    if known is not None:
        return known
    rename = {"input": "self", **_PYTORCH_PARAM_NAMES.get(op.name, {})}
    differentiable = {op.params[pidx] for pidx, *_ in op.formulas}
    names, shown = {}, []
    only = op.shown_saves
    for slot, name in enumerate(op.save_slots):
        if name.startswith("#") or only is not None and name not in only:
            continue
        if name == "result":
            pytorch = None if op.multi_output else rename.get("result", "result")
        elif name in op.index:
            pytorch = rename.get(name, name)
        else:  # <param>_shape, _dtype or _device
            base, _, suffix = name.rpartition("_")
            pytorch = (f"{rename.get(base, base)}_sym_sizes" if suffix == "shape" else
                       f"{rename.get(base, base)}_sym_strides" if suffix == "strides" else name)
        pytorch = _PYTORCH_SAVED_NAMES.get((op.name, name), pytorch)
        entry = (slot, None, name == "result" or name in differentiable, _PYTORCH_VALUES.get((op.name, name)))
        names[name] = entry
        if pytorch is not None:
            names.setdefault(pytorch, entry)
            shown.append(pytorch)
        if name == "result" and op.multi_output:
            for k, alias in _PYTORCH_OUTPUT_NAMES.get(op.name, {}).items():
                names[alias] = (slot, k, True, None)
                shown.append(alias)
    known = _NAMES[op] = (names, shown)
    return known


def _where_saved(node, name):
    """``(value, tensor-like, shown as)`` of what ``node`` saved under ``name``, or None if no such name."""
    op = node.op
    names, _ = _names_of(op)
    entry = names.get(name)
    if entry is not None and type(node).__name__ in _NOT_KEPT and name in _NOT_KEPT[type(node).__name__]:
        return None
    if entry is None:
        derived = _DERIVED.get(op.name)
        if derived is not None and name in derived:
            return derived[name](node), False, None
        result = names.get("result")
        if result is None or not op.multi_output or not name.startswith("result") or not name[6:].isdigit():
            return None
        entry = (result[0], int(name[6:]), True, False)
    slot, output, tensor_like, shown_as = entry
    saved = node._saved
    value = saved[slot] if saved else None  # NOTHING_SAVED: no formula that ran needed anything
    if output is not None and value is not None:
        if output >= len(value):
            return None
        value = value[output]
    return value, tensor_like, shown_as


def _shown(node, value, tensor_like, shown_as):
    """``grad_fn._saved_<name>``: see Note [PyTorch's names of saved values]."""
    if type(value) is SavedTensor:  # a saved input is given back as itself, subclass and all, as PyTorch's
        return value.unpack(node, keep_subclass=True)
    if type(value) in (list, tuple) and any(type(v) is SavedTensor for v in value):
        value = tuple(v.unpack(node, keep_subclass=True) if type(v) is SavedTensor else v for v in value)
        if shown_as in _OF_NODE:
            return shown_as(node, value)
        return value
    if shown_as is not None:
        value = shown_as(node, value) if shown_as in _OF_NODE else shown_as(value)
    return tuple(value) if type(value) is list else value


def _has_raw(value, tensor_like):
    """Whether a saved value has a ``_raw_saved_<name>``: it is a saved tensor (or undefined), or holds some."""
    if type(value) is SavedTensor or (value is None and tensor_like):
        return True
    return type(value) in (list, tuple) and any(type(v) is SavedTensor for v in value)


def _raw(value, tensor_like):
    """``grad_fn._raw_saved_<name>`` where ``_has_raw``: the SavedTensor (a tuple of them for a list)."""
    if type(value) is SavedTensor:
        return value
    if value is None:
        return SavedTensor(None)
    if any(type(v) is SavedTensor and v.released for v in value):
        raise RuntimeError(SECOND_TIME)
    return tuple(v if type(v) is SavedTensor else SavedTensor(None) for v in value)


def _shown_names(node):
    """PyTorch's names of what ``node`` saved, as ``dir()`` lists them (``_saved_<name>``)."""
    names, shown = _names_of(node.op)
    shown = shown + list(_DERIVED.get(node.op.name, ()))
    hidden = _NOT_KEPT.get(type(node).__name__)
    if hidden:
        shown = [name for name in shown if name not in hidden]
    result = names.get("result")
    if result is None or not node.op.multi_output or node.op.name in _PYTORCH_OUTPUT_NAMES:
        return shown
    value = node._saved[result[0]] if node._saved else None
    return shown + [f"result{k}" for k in range(len(value) if value is not None else 0)]


def _resolve(node, saved, index, name, grad, grads, unpacked):
    """The value of formula argument ``name``; saved tensors are unpacked once into ``unpacked``."""
    if name == "grad":
        return grad
    if name == "grads":
        return grads
    if name in unpacked:
        return unpacked[name]
    value = saved[index[name]]  # a saved input unpacks without naming the node (Note [Saved tensors and their hooks])
    if type(value) is SavedTensor:
        value = value.unpack(node if name == "result" else None)
    elif type(value) is list and any(type(v) is SavedTensor for v in value):  # a list may hold None, numbers
        value = [v.unpack() if type(v) is SavedTensor else v for v in value]
    elif type(value) is tuple and name == "result":
        value = tuple(v.unpack(node) if type(v) is SavedTensor else v for v in value)
    else:
        return value
    unpacked[name] = value
    return value


def build_fast_apply(op, keep=None):
    """Returns an ``apply`` for the node class of a single-output op, with the formula loop unrolled.

    ``keep``: the indices in ``op.formulas`` of the class's edges, where not all (Note [Node names per call]).
    """
    if op.multi_output or op.lists or op.saved_lists or any("grads" in argnames for *_, argnames in op.formulas):
        return None  # OpNode.apply: it unpacks saved lists
    formulas = op.formulas if keep is None else [op.formulas[k] for k in keep]
    env = {"_ST": SavedTensor}
    n = len(formulas)
    lines = ["def apply(self, grads):",
             "    saved = self._saved  # released SavedTensors raise on unpack",
             "    grad = grads[0]",
             "    if grad is None:",
             f"        return {[None] * n!r}",
             "    edges = self.next_edges"]
    results = []
    uses = {}  # saved name -> the formulas reading it, once per reading
    for k, (_, _, _, argnames) in enumerate(formulas):
        for a in argnames:
            if a != "grad":
                uses.setdefault(a, []).append(k)
    shared = {a: sorted(set(ks)) for a, ks in uses.items() if len(ks) > 1}
    for a, ks in shared.items():  # See Note [One unpack per saved tensor and apply]
        lines += [f"    if {' or '.join(f'edges[{k}] is not None' for k in ks)}:",
                  f"        v_{a} = saved[{op.save_index[a]}]",
                  f"        if type(v_{a}) is _ST:",
                  f"            v_{a} = v_{a}.unpack({'self' if a == 'result' else ''})"]
    for k, (_, _, fn, argnames) in enumerate(formulas):
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
                      f"            {v} = {v}.unpack({'self' if a == 'result' else ''})"]
        lines += [f"        {r} = _f{k}({', '.join(call_args)})",
                  "    else:",
                  f"        {r} = None"]
    lines.append(f"    return [{', '.join(results)}]")
    where = "" if keep is None else "." + "_".join(op.params[formulas[k][0]] for k in range(n))
    apply = define("\n".join(lines) + "\n", f"{op.name}.apply{where}", env, "apply")
    # The same table for the compiled engine loop (Note [The compiled loop]): per formula, the
    # function, where each argument comes from (-1: the gradient, else a saved slot), and its
    # direct form (see formula_is_op), which link_direct_formulas fills in once every op exists.
    apply.plan = tuple(PlanEntry(fn, tuple(-1 if a == "grad" else op.save_index[a] for a in argnames), None)
                       for _, _, fn, argnames in formulas)
    return apply
