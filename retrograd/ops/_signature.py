"""An op's public function, generated from its signature: PyTorch's parameters and defaults, at the cost of a plain call.

``make_public`` gives each op one of three, each doing what ``call_op`` does: the C call where it
is built (an ``OpFunction``, Note [The compiled op call]), else ``build_fast_call``'s function,
``call_op`` unrolled for the op (single-output ops without tensor lists), else a function that
forwards its arguments to ``call_op``.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._device import cpu as _cpu
from .._overrides import PLAIN_TYPES, disabled_torch_function_impl, dispatch_list, dispatch_op, mode_listeners, \
    state as _tf_state, wants_dispatch
from .._tensor import INFERENCE_COUNTER, Tensor
from ..autograd import grad_mode
from ..autograd.anomaly_mode import _Anomaly, record_forward_trace
from ..autograd.graph import Edge, _next_sequence_nr, make_edge
from ..autograd.saved_variable import SavedTensor
from ..autograd.variable import gradient_edge
from ..backends import get_backend
from ..backends.numpy_backend import FP_QUIET, FP_STATE
from ._call import (NOTHING_SAVED, all_inference, call_op, call_out, describe, device_error, forward_error,
                    forward_wide, interposition, mark_views, pop_interposer, promote, push_interposer, save_list)
from ._codegen import define, parameter_source
from ._compiled import c_eligible, compiled_call, eligible
from ._node import DIM_UNSET

__all__ = ["make_public", "forwarding_function", "signature_source", "build_fast_call", "OUT_OPS"]

# The ops whose public function takes ``out=``, as PyTorch's: see Note [The out= argument] in _call.py.
OUT_OPS = frozenset("""
    abs add addbmm addmm addmv addr all amax amin any argmax argmin atan2 baddbmm bitwise_and bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ceil clamp clamp_max clamp_min copysign
    cos cumprod cumsum digamma dot eq erf erfc erfinv exp expm1 floor floor_divide fmax fmin fmod frac gather gcd
    ge gt heaviside hypot i0 index_select isneginf isposinf lcm le lerp lgamma log log1p logaddexp logaddexp2
    logcumsumexp logical_and logical_not logical_or logical_xor logit logsumexp lt masked_select matmul maximum mean
    minimum mm mul mv nan_to_num nansum ne neg outer polygamma pow prod reciprocal remainder round rsqrt
    searchsorted sgn sigmoid sign signbit sin sinc sqrt stack sub sum tan tanh tril triu trunc vdot where xlogy
    acos acosh addcdiv addcmul asin asinh atan atanh cosh deg2rad exp2 ldexp log10 log2 nextafter rad2deg sinh
""".split())


def _xp_of(device):
    return get_backend(device.type).xp


def signature_source(op, env):
    """The parameter list of ``op``'s public signature as source text, and the parameter names.

    Defaults are bound through ``env`` (``_d0``, ``_d1``, ...), so any value works as a default.
    """
    params = list(op.signature.parameters.values())
    return parameter_source(params, env)[0], [p.name for p in params]


def _with_out(params):
    """The parameter list text ``params`` with a keyword-only ``out=None`` at its end (Note [The out= argument])."""
    return f"{params}, out=None" if "*" in params.split(", ") else f"{params}, *, out=None" if params else "*, out=None"


def _out_line(names):
    """The first line of a public function that takes ``out=``: such a call goes to ``call_out``."""
    args = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
    return (f"    if out is not None:  # See Note [The out= argument]\n"
            f"        if _needs_dispatch(_op, {args}):  # See Note [Where __torch_function__ is checked]\n"
            f"            return _dispatch(_public, _op, {args})\n"
            f"        return _call_out(_op, {args}, out)\n")


def _needs_dispatch(op, args) -> bool:
    """Whether a call of ``op`` on ``args`` goes through ``__torch_function__``: an argument in a tensor position
    overrides it, or a TorchFunctionMode is active (Note [Where __torch_function__ is checked])."""
    if _tf_state.all_disabled:
        return False
    if _tf_state.modes:
        return True
    for i in op.tensor_pos:
        if i < len(args):
            a = args[i]
            if type(a) is not Tensor and (wants_dispatch(a) or i in op.index_lists and dispatch_list(a)):
                return True
    return False


class _ModeInterposer:
    """Active while a TorchFunctionMode is in some thread: it sends every call down the Python path, where the public
    functions hand it to the mode (Note [Where __torch_function__ is checked]); it does nothing itself."""

    def interpose(self, op, args, inplace, proceed):
        return proceed(op, args, inplace)


_MODE_INTERPOSER = _ModeInterposer()
mode_listeners.append(lambda on: (push_interposer if on else pop_interposer)(_MODE_INTERPOSER))


def _dispatch_env(env, op):
    env.update(_op=op, _call_out=call_out, _needs_dispatch=_needs_dispatch, _dispatch=dispatch_op, _Tensor=Tensor,
               _PLAIN=PLAIN_TYPES, _wants=wants_dispatch, _disabled_tf=disabled_torch_function_impl,
               _interposition=interposition)


def forwarding_function(op, fname, target, env, out=False):
    """Generates ``def fname(<op's params>): return target(_op, (<params>,))`` in ``env`` (with ``out=``
    going to ``call_out`` where ``out``), after the check of Note [Where __torch_function__ is checked]:
    the call goes through ``__torch_function__`` with ``func`` the generated function itself."""
    params, names = signature_source(op, env)
    _dispatch_env(env, op)
    args = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
    checks = ["_interposition.stack"] + [
        f"type({names[i]}) is not _Tensor" for i in op.tensor_pos if i < len(names)]
    src = (f"def {fname}({_with_out(params) if out else params}):\n"
           f"    if ({' or '.join(checks)}) and _needs_dispatch(_op, {args}):"
           f"  # See Note [Where __torch_function__ is checked]\n"
           f"        return _dispatch(_public, _op, {args})\n"
           + (_out_line(names) if out else "")
           + f"    return {target}(_op, {args})\n")
    fn = define(src, f"{op.name}.{fname}", env, fname)
    env["_public"] = fn
    return fn


def make_public(op):
    """The public function of ``op``: the C call, its generated fast path, or a call of ``call_op``."""
    out = op.name in OUT_OPS
    if eligible(op):
        env = {"_op": op}
        params, names = signature_source(op, env)
        fn = define(build_fast_call(op, params, names, env, out), f"{op.name}.call", env, op.name)
        env["_public"] = fn
        compiled = compiled_call(op, names, fn)  # it binds no `out`: it hands those calls to fn
        if compiled is not None:  # See Note [The compiled op call]
            fn = env["_public"] = compiled  # the func a __torch_function__ receives
    else:
        env = {"_call": call_op}
        fn = forwarding_function(op, op.name, "_call", env, out)
        if c_eligible(op):  # an op of several outputs: the C call, else call_op (Note [The compiled op call])
            compiled = compiled_call(op, tuple(op.signature.parameters), fn)
            if compiled is not None:
                fn = env["_public"] = compiled
    signature = op.signature
    if any(p.default is DIM_UNSET for p in signature.parameters.values()):  # See Note [An explicit dim of None]
        signature = signature.replace(parameters=[p.replace(default=None) if p.default is DIM_UNSET else p
                                                  for p in signature.parameters.values()])
    if out or signature is not op.signature:
        fn.__signature__ = signature  # the op's own parameters (Note [The out= argument])
    fn.__doc__ = getattr(op.forward, "__doc__", None) or f"retrograd.{op.name}{op.signature}"
    fn.__qualname__ = op.name
    fn.__module__ = "retrograd"
    fn.op = op
    return fn


def _save_users(op) -> dict:
    """For each saved value the formulas read, the indices of the formulas (edges) that read it."""
    users = {}
    for k, (_, _, _, argnames) in enumerate(op.formulas):
        for a in argnames:
            if a not in ("grad", "grads"):
                users.setdefault(a, []).append(k)
    return users


def build_fast_call(op, public_params, names, env, out=False):
    """Returns the source of the public function of ``op`` with the generic loops unrolled.

    ``public_params`` is the parameter list text, ``names`` the parameter names in order, and
    ``env`` the namespace the source will be executed in (this function adds what it needs);
    with ``out``, the function also takes ``out=`` (Note [The out= argument]).
    """
    env.update(_Tensor=Tensor, _cpu=_cpu, _np=np, _ndarray=np.ndarray, _xp_of=_xp_of, _call=call_op,
               _grad_state=grad_mode.state, _census=grad_mode.census, _NO_VERSION=INFERENCE_COUNTER,
               _Anomaly=_Anomaly, _record_trace=record_forward_trace,
               _new=object.__new__, _Node=op.node_cls, _seq=_next_sequence_nr,
               _ST=SavedTensor, _edge=gradient_edge, _mkedge=make_edge, _Edge=Edge, _promote=promote,
               _device_error=device_error, _mark_views=mark_views, _NOTHING=NOTHING_SAVED,
               _describe=describe, _save_list=save_list, _all_inference=all_inference, _forward_wide=forward_wide, _forward_error=forward_error,
               _fp_quiet=FP_STATE.set, _fp_reset=FP_STATE.reset, _FP_QUIET=FP_QUIET, _interposition=interposition,
               _WIDE=_dtype.WIDE, _bfloat16=_dtype.bfloat16)
    tensor_names = [names[i] for i in op.tensor_pos]
    args_tuple = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
    _dispatch_env(env, op)
    lines = [f"def {op.name}({_with_out(public_params) if out else public_params}):"]
    if out:
        lines.append(_out_line(names).rstrip("\n"))
    lines += ["    if _interposition.stack:",
             f"        if _needs_dispatch(_op, {args_tuple}):  # See Note [Where __torch_function__ is checked]",
             f"            return _dispatch(_public, _op, {args_tuple})",
             f"        return _call(_op, {args_tuple})  # See Note [Op call interposition]",
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
        body = [
            f"if {n}._base is not None and ({n}._view_version != {n}._version_counter.version or",
            f"                              not {n}._requires_grad and {n}._base._requires_grad):",
            f"    return _call(_op, {args_tuple})  # a view whose base changed in place, or a dead view",
            f"{a} = {n}._data",
            "if device is None:",
            f"    device = {n}._device",
            f"elif {n}._device is not device:",
            f"    raise _device_error(_op, device, {n}._device)",
            f"if {n}._requires_grad:",
            "    requires_grad = True",
            "if dt is None:",
            f"    dt = {a}.dtype",
            f"elif {a}.dtype is not dt and {a}.dtype != dt:",
            "    mixed = True",
        ]
        # A Tensor, then a subclass (which may override the call), then anything else (a tensor-like may): the
        # plain case pays one type check, as before. See Note [Where __torch_function__ is checked].
        lines += [f"    t_{n} = type({n})", f"    if t_{n} is _Tensor:"] + [f"        {b}" for b in body] + [
            f"    elif t_{n} in _PLAIN:  # a number, None",
            f"        {a} = {n}",
            f"    elif isinstance({n}, _Tensor):",
            f"        if t_{n}.__torch_function__ is not _disabled_tf and _wants({n}):",
            f"            return _dispatch(_public, _op, {args_tuple})"] + [f"        {b}" for b in body] + [
            "    else:",
            f"        if _wants({n}):  # a tensor-like",
            f"            return _dispatch(_public, _op, {args_tuple})",
            f"        {a} = {n}",
        ]
    arrays = f"{', '.join(arr[n] for n in names)}{',' if len(names) == 1 else ''}"
    # See Note [bfloat16 arrays] in _dtype.py: a call with bfloat16 computes in float32, in call_op
    wide = " or dtype is _bfloat16" if "dtype" in names else ""
    if op.wide:
        lines += [f"    if mixed and _WIDE.loaded or dt is _WIDE.dtype{wide}:",
                  f"        return _call(_op, {args_tuple})"]
    lines += [
        "    if device is None or device is _cpu:",
        "        device = _cpu",
        "        xp = _np",
        "    else:",
        "        xp = _xp_of(device)",
    ]
    # See Note [NumPy's floating-point warnings]; a view op computes nothing.
    pad = "    " if op.view else "        "
    if not op.view:
        lines += ["    quiet = _fp_quiet(_FP_QUIET)",
                  "    try:"]
    lines += [
        f"{pad}try:",
        f"{pad}    out = _op.forward(xp, {arrays})",
        f"{pad}except OverflowError:",
        f"{pad}    out = _forward_wide(_op, xp, ({arrays}))",
        f"{pad}except ValueError as exc:",
        f"{pad}    raise _forward_error(_op, ({arrays}), exc) from None",
        f"{pad}if type(out) is not _ndarray:",
        f"{pad}    out = xp.asarray(out)",
    ]
    if op.promote is not None:
        lines += [f"{pad}if mixed or out.dtype is not dt:",
                  f"{pad}    out = _promote(_op, {args_tuple}, out)"]
    if not op.view:
        lines += ["    finally:",
                  "        _fp_reset(quiet)"]
    lines += [
        "    res = _new(_Tensor)",
        "    res._data = out",
        "    res._device = device",
        "    res._requires_grad = False",
        "    res._node = None",
        "    res._output_nr = 0",
        "    inference = _census.threads and _grad_state.inference  # See Note [Inference tensors]",
        "    res._vc = _NO_VERSION if inference else None",
        "    res._base = None",
        "    res._grad = None",
        "    res._grad_accumulator = None",
        "    res._hooks = None",
        "    res._retains_grad = False",
    ]
    if op.view:
        lines.append(f"    _mark_views(_op, {args_tuple}, (res,))")
    if not op.differentiable or 0 in op.nondiff_outputs:  # See defop's nondiff_outputs
        lines.append("    return res")
        return "\n".join(lines) + "\n"
    lines += ["    if not requires_grad or inference or not _grad_state.grad_enabled:",
              "        return res",
              f"    if _census.made and _all_inference(_op, {args_tuple}):  # See Note [Inference tensors]",
              "        return res"]
    edge_names = []
    for pidx, _, _, _ in op.formulas:
        n = names[pidx]
        e = f"e_{n}"
        edge_names.append(e)
        lines += [f"    if isinstance({n}, _Tensor) and {n}._requires_grad:",
                  f"        fn = {n}._node",
                  f"        {e} = _mkedge(_Edge, (fn, {n}._output_nr)) if fn is not None and {n}._base is None "
                  f"else _edge({n})",
                  "    else:",
                  f"        {e} = None"]
    lines += [f"    if {' and '.join(f'{e} is None' for e in edge_names)}:",
              "        return res"]
    # See Note [Node names per call]
    all_edges = f"({', '.join(edge_names)}{',' if len(edge_names) == 1 else ''})"
    if not op.node_choices:
        lines += ["    node = _new(_Node)", f"    node.next_edges = {all_edges}"]
    elif not op.node_edges:
        lines += [f"    node = _new(_op.node_class({', '.join(names)}))", f"    node.next_edges = {all_edges}"]
    else:
        lines += [f"    cls = _op.node_class({', '.join(names)})", "    node = _new(cls)"]
        for j, (cls, keep) in enumerate(op.node_edges.items()):
            env[f"_Cls{j}"] = cls
            kept = ", ".join(edge_names[k] for k in keep)
            lines += [f"    {'if' if j == 0 else 'elif'} cls is _Cls{j}:",
                      f"        node.next_edges = ({kept}{',' if len(keep) == 1 else ''})"]
        lines += ["    else:", f"        node.next_edges = {all_edges}"]
    lines += ["    node.sequence_nr = _seq()",
              "    node._extras = None",
              "    if _Anomaly.enabled:",
              "        _record_trace(node)",
              "    node.input_metadata = ((out.shape, out.dtype, None if device is _cpu else device),)"]
    # bfloat16's kind is "V" (Note [bfloat16 arrays] in _dtype.py)
    lines += ["    if out.dtype.kind in 'fV':",
              "        res._node = node",
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
        elif name in op.saved_lists:
            expr = f"_save_list({name})"
        elif name in op.index:
            expr = f"(_ST({name}) if isinstance({name}, _Tensor) else {name})"
        else:
            base, _, suffix = name.rpartition("_")
            expr = f"_describe({suffix!r}, {base}, {arr[base]}, False)"
        values.append(expr if len(edge_names) == 1 else f"({expr} if {cond} else None)")
    lines += [f"    node._saved = ({', '.join(values)},)", "    return res"]
    return "\n".join(lines) + "\n"
