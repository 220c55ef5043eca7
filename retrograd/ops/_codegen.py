"""Specialized code for the common case of an op call and of its backward node.

``call_op`` and ``OpNode.apply`` handle every op generically, looping over parameter tables.
For ops with one output and no tensor lists, this module writes, once per op at import time,
a Python function with those loops unrolled: it knows which parameters can be tensors, which
formulas exist and what each saves. The generated code does exactly what the generic path does
(tests run both); it only skips the table lookups, which dominate the cost of small-tensor ops.
"""
from __future__ import annotations

import numpy as np

from .._device import cpu as _cpu
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.anomaly_mode import _Anomaly, record_forward_trace
from ..autograd.graph import Edge, _next_sequence_nr, make_edge
from ..autograd.saved_variable import SavedTensor
from ..autograd.variable import gradient_edge
from ..backends import get_backend
from ._compiled import PlanEntry, eligible

__all__ = ["eligible", "build_fast_call", "build_fast_apply"]


def _xp_of(device):
    return get_backend(device.type).xp


def _promote(op, args, out):
    from ._registry import _result_dtype
    from .. import _dtype
    want = _result_dtype(op, args)
    if want is None or op.promote == "float" and not want.is_floating_point:
        want = _dtype.get_default_dtype()
    return out if out.dtype == want.np else out.astype(want.np)


def forward_wide(op, xp, vals):
    """Runs the forward with Python ints as int64 arrays.

    NumPy refuses a Python int that does not fit the array's dtype (``uint8 + 1000``);
    PyTorch computes in the wider type and wraps into the result dtype, which the promotion
    step after the forward then casts to.
    """
    vals = [xp.asarray(v, dtype=xp.int64) if type(v) is int else v for v in vals]
    return op.forward(xp, *vals)


def _save_users(op) -> dict:
    """For each saved value the formulas read, the indices of the formulas (edges) that read it."""
    users = {}
    for k, (_, _, _, argnames) in enumerate(op.formulas):
        for a in argnames:
            if a not in ("grad", "grads"):
                users.setdefault(a, []).append(k)
    return users


def build_fast_call(op, public_params, names, env):
    """Returns the source of the public function of ``op`` with the generic loops unrolled.

    ``public_params`` is the parameter list text, ``names`` the parameter names in order, and
    ``env`` the namespace the source will be executed in (this function adds what it needs).
    """
    from ._registry import _NOTHING_SAVED, _describe, _device_error, _mark_views
    env.update(_Tensor=Tensor, _cpu=_cpu, _np=np, _ndarray=np.ndarray, _xp_of=_xp_of,
               _grad_state=grad_mode.state, _Anomaly=_Anomaly, _record_trace=record_forward_trace,
               _new=object.__new__, _Node=op.node_cls, _seq=_next_sequence_nr,
               _ST=SavedTensor, _edge=gradient_edge, _mkedge=make_edge, _Edge=Edge, _promote=_promote,
               _device_error=_device_error, _mark_views=_mark_views, _NOTHING=_NOTHING_SAVED,
               _describe=_describe, _forward_wide=forward_wide)
    tensor_names = [names[i] for i in op.tensor_pos]
    lines = [f"def {op.name}({public_params}):",
             "    device = None",
             "    requires_grad = False",
             "    dt = None",
             "    mixed = False"]
    arr = {}
    for n in names:
        arr[n] = n
    for n in tensor_names:
        a = f"a_{n}"
        arr[n] = a
        lines += [
            f"    if isinstance({n}, _Tensor):",
            f"        if {n}._base is not None and {n}._view_version != {n}._version_counter.version:",
            f"            {n}.grad_fn  # a view whose base changed in place: refresh its history",
            f"        {a} = {n}._data",
            "        if device is None:",
            f"            device = {n}._device",
            f"        elif {n}._device is not device:",
            f"            raise _device_error(_op, device, {n}._device)",
            f"        if {n}._requires_grad:",
            "            requires_grad = True",
            "        if dt is None:",
            f"            dt = {a}.dtype",
            f"        elif {a}.dtype is not dt and {a}.dtype != dt:",
            "            mixed = True",
            "    else:",
            f"        {a} = {n}",
        ]
    lines += [
        "    if device is None or device is _cpu:",
        "        device = _cpu",
        "        xp = _np",
        "    else:",
        "        xp = _xp_of(device)",
        "    try:",
        f"        out = _op.forward(xp, {', '.join(arr[n] for n in names)})",
        "    except OverflowError:",
        f"        out = _forward_wide(_op, xp, ({', '.join(arr[n] for n in names)},))",
        "    if type(out) is not _ndarray:",
        "        out = xp.asarray(out)",
    ]
    args_tuple = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
    if op.promote is not None:
        lines += ["    if mixed or out.dtype is not dt:",
                  f"        out = _promote(_op, {args_tuple}, out)"]
    lines += [
        "    res = _new(_Tensor)",
        "    res._data = out",
        "    res._device = device",
        "    res._requires_grad = False",
        "    res._grad_fn = None",
        "    res._output_nr = 0",
        "    res._vc = None",
        "    res._base = None",
        "    res._grad = None",
        "    res._grad_accumulator = None",
        "    res._backward_hooks = None",
        "    res._retains_grad = False",
    ]
    if op.view:
        lines.append(f"    _mark_views(_op, {args_tuple}, (res,))")
    if not op.differentiable:
        lines.append("    return res")
        return "\n".join(lines) + "\n"
    lines += ["    if not requires_grad or not _grad_state.grad_enabled:",
              "        return res"]
    edge_names = []
    for pidx, _, _, _ in op.formulas:
        n = names[pidx]
        e = f"e_{n}"
        edge_names.append(e)
        lines += [f"    if isinstance({n}, _Tensor) and {n}._requires_grad:",
                  f"        fn = {n}._grad_fn",
                  f"        {e} = _mkedge(_Edge, (fn, {n}._output_nr)) if fn is not None and {n}._base is None "
                  f"else _edge({n})",
                  "    else:",
                  f"        {e} = None"]
    lines += [f"    if {' and '.join(f'{e} is None' for e in edge_names)}:",
              "        return res",
              "    node = _new(_Node)",
              f"    node.next_edges = ({', '.join(edge_names)}{',' if len(edge_names) == 1 else ''})",
              "    node.sequence_nr = _seq()",
              "    node._pre_hooks = node._post_hooks = node._tensor_pre_hooks = node._retains_grad_hooks = None",
              "    node._metadata = None",
              "    if _Anomaly.enabled:",
              "        _record_trace(node)",
              "    node.input_metadata = ((out.shape, out.dtype, None if device is _cpu else device),)"]
    float_out = "out.dtype.kind == 'f'" + (" and False" if 0 in op.nondiff_outputs else "")
    lines += [f"    if {float_out}:",
              "        res._grad_fn = node",
              "        res._requires_grad = True"]
    # Saves, each guarded by the formulas that need it.
    users = {name: [edge_names[k] for k in ks] for name, ks in _save_users(op).items()}
    if not users:
        lines += ["    node._saved = _NOTHING", "    return res"]
        return "\n".join(lines) + "\n"
    values = []
    for name in op.save_slots:
        es = users[name]
        cond = " or ".join(f"{e} is not None" for e in dict.fromkeys(es))
        if name == "result":
            expr = "_ST(res, is_output=True)"
        elif name in op.index:
            expr = f"(_ST({name}) if isinstance({name}, _Tensor) else {name})"
        else:
            base, _, suffix = name.rpartition("_")
            expr = f"_describe({suffix!r}, {base}, {arr[base]}, False)"
        values.append(expr if len(edge_names) == 1 else f"({expr} if {cond} else None)")
    lines += [f"    node._saved = ({', '.join(values)},)", "    return res"]
    return "\n".join(lines) + "\n"


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
            lines += [f"        {v} = saved[{op.save_index[a]}]",
                      f"        if type({v}) is _ST:",
                      f"            {v} = {v}.unpack(self)"]
            call_args.append(v)
        lines += [f"        {r} = _f{k}({', '.join(call_args)})",
                  "    else:",
                  f"        {r} = None"]
    lines.append(f"    return [{', '.join(results)}]")
    src = "\n".join(lines) + "\n"
    exec(src, env)  # noqa: S102 - generated from the op's own formula table
    apply = env["apply"]
    # The same table for the compiled engine loop (Note [The compiled loop]): per formula, the
    # function, where each argument comes from (-1: the gradient, else a saved slot), and its
    # direct form (see formula_is_op), which link_direct_formulas fills in once every op exists.
    apply.plan = tuple(PlanEntry(fn, tuple(-1 if a == "grad" else op.save_index[a] for a in argnames), None)
                       for _, _, fn, argnames in op.formulas)
    return apply
