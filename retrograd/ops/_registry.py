"""defop(): declares an op once, with its forward and per-input derivative formulas.

From one declaration the registry builds the public function (PyTorch's signature, generated
so that argument handling costs no more than a plain call), the ``<Name>Backward0`` node class,
and what each node saves. ``_call`` is the one path every op takes: unwrap tensors, run the
forward on the device's array namespace, wrap the results, and record a node when grad mode
is on and some input requires grad.

Formula parameters, matched by name:
  ``grad``             the gradient of the (single) output
  ``grads``            the gradients of all outputs (undefined ones materialized as zeros)
  ``result``           the forward output (a tuple for several outputs), saved without a cycle
  ``<param>``          a forward argument (tensors are saved as ``SavedTensor``)
  ``<param>_shape``    only the shape of a forward tensor argument (likewise ``_dtype``, ``_device``)
"""
from __future__ import annotations

import inspect

import numpy as np

from .. import _dtype
from .._device import cpu as _cpu
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.anomaly_mode import _Anomaly, record_forward_trace
from ..autograd.graph import Node, _next_sequence_nr, input_metadata, materialize_grads
from ..autograd.saved_variable import SavedTensor
from ..autograd.variable import gradient_edge, move_retains_grad, replay_view
from ..backends import get_backend
from . import _codegen, _compiled

__all__ = ["defop", "OpInfo", "OpNode", "REGISTRY", "call_op", "formula_is_op", "forward_is_ufunc", "passthrough",
           "ufunc"]

REGISTRY: dict = {}
_grad_state = grad_mode.state
_ndarray = np.ndarray
_NOTHING_SAVED = ()
_PENDING = object()  # a saved slot for the result, filled once the outputs exist


class OpInfo:
    """Everything the registry knows about one op."""

    def __init__(self, name, forward, formulas, *, promote, view, tensors, lists, nondiff_outputs,
                 node_name, multi_output, device_param=None):
        self.name = name
        self.forward = forward
        sig = inspect.signature(forward)
        params = list(sig.parameters.values())
        if not params or params[0].name != "xp":
            raise TypeError(f"defop({name!r}): the forward's first parameter must be 'xp'")
        self.params = [p.name for p in params[1:]]
        for reserved in ("grads", "result"):  # in a formula these names mean the gradients, the output
            if reserved in self.params:
                raise TypeError(f"defop({name!r}): {reserved!r} is reserved for formulas; rename the parameter")
        kwonly = [p.name for p in params[1:] if p.kind is inspect.Parameter.KEYWORD_ONLY]
        self.kernel, self.kwonly = forward, tuple(kwonly)  # the forward as written, and its keyword-only names
        if kwonly:  # call_op passes every argument positionally: generate the keyword call once
            npos = len(self.params) - len(kwonly)
            args = [f"a{i}" for i in range(len(self.params))]
            call = ", ".join(args[:npos] + [f"{k}={a}" for k, a in zip(kwonly, args[npos:], strict=True)])
            env = {"_forward": forward}
            exec(f"def forward(xp, {', '.join(args)}):\n    return _forward(xp, {call})\n", env)  # noqa: S102
            self.forward = env["forward"]
        self.signature = sig.replace(parameters=params[1:])
        index = {p: i for i, p in enumerate(self.params)}
        self.index = index
        self.lists = frozenset(lists)
        if tensors is None:  # formula inputs, and required parameters, may hold tensors
            tensors = [p.name for p in params[1:] if p.name in formulas or p.default is inspect.Parameter.empty]
        self.tensor_pos = tuple(index[p] for p in tensors)
        self.promote = promote
        self.view = view
        self.multi_output = multi_output
        self.device_pos = None if device_param is None else index[device_param]
        self.nondiff_outputs = frozenset(nondiff_outputs)
        self.formulas = []  # (param index, is_list, fn, [arg names]) in forward parameter order
        for pname in self.params:
            if pname not in formulas:
                continue
            fn = formulas[pname]
            argnames = list(inspect.signature(fn).parameters)
            for a in argnames:
                if a in ("grad", "grads", "result") or a in index:
                    continue
                base, _, suffix = a.rpartition("_")
                if suffix in ("shape", "dtype", "device") and base in index:
                    continue
                raise TypeError(f"defop({name!r}): formula for {pname!r} asks for unknown name {a!r}")
            self.formulas.append((index[pname], pname in self.lists, fn, argnames))
        unknown = set(formulas) - set(self.params)
        if unknown:
            raise TypeError(f"defop({name!r}): formulas for unknown parameters {sorted(unknown)}")
        self.differentiable = bool(self.formulas)
        # What each formula needs saved: tensor arguments, shapes, other arguments, the result.
        self.saves = [[a for a in argnames if a not in ("grad", "grads")] for _, _, _, argnames in self.formulas]
        self.all_saves = tuple(dict.fromkeys(a for s in self.saves for a in s))
        # A node keeps what it saved in a tuple, one slot per name (a dict per node cost about
        # 200 bytes): the names, then the length of each list parameter ("#<index>").
        self.save_slots = self.all_saves + tuple(f"#{pidx}" for pidx, is_list, _, _ in self.formulas if is_list)
        self.save_index = {name: i for i, name in enumerate(self.save_slots)}
        camel = node_name or "".join(part.capitalize() for part in name.strip("_").split("_"))
        self.node_cls = type(f"{camel}Backward0", (OpNode,), {"__slots__": (), "op": self})

    def __call__(self, *args):
        """Runs the op on its arguments, positionally: ``call_op(self, args)`` (a view's history replays so)."""
        return call_op(self, args)

    def __repr__(self):
        return f"<op {self.name}{self.signature}>"


class OpNode(Node):
    """Backward node of a registered op: runs the op's formulas for the inputs that need grad."""

    __slots__ = ("_saved",)
    op: OpInfo = None

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
        for pidx, is_list, fn, argnames in op.formulas:
            n = saved[op.save_index[f"#{pidx}"]] if is_list else 1
            if all(e is None for e in edges[k:k + n]):
                out.extend([None] * n)
            else:
                args = [_resolve(self, saved, op.save_index, a, grad, grads) for a in argnames]
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


def formula_is_op(fn, op_name, nargs, when=()):
    """Declares that formula ``fn`` returns what op ``op_name``'s public function returns for the
    formula's first ``nargs`` arguments (``op_name`` None: the first argument itself), whenever
    each ``(position, value)`` of ``when`` holds: the argument at ``position`` is ``value``
    (compared by identity, so use None, True, False or a small int). Returns ``fn``.

    A node's ``apply`` calls ``fn`` regardless. The compiled loop (Note [The compiled loop]) uses
    the declaration to call the op's C call directly, without ``fn``'s frame and the operator
    dispatch inside it; it calls ``fn`` wherever a condition fails or the C call declines.
    tests/autograd/test_compiled_loop.py checks every declared formula against its op.
    """
    fn.same_as_op = (op_name, nargs, tuple(when))
    return fn


def forward_is_ufunc(fn, ufunc_name, nargs, when=()):
    """Declares that forward ``fn(xp, *args)`` returns ``getattr(xp, ufunc_name)(*args[:nargs])``
    whenever each ``(position, value)`` of ``when`` holds (``args[position] is value``, as in
    formula_is_op). Returns ``fn``, which stays the definition: the C op call (Note [The
    compiled op call]) calls the NumPy ufunc itself, without ``fn``'s frame, while ``op.forward``
    is ``fn``. tests/ops/test_codegen.py checks every declaration.
    """
    fn.same_as_ufunc = (ufunc_name, nargs, tuple(when))
    return fn


def ufunc(name, *params):
    """The forward ``forward(xp, *params)`` that returns ``getattr(xp, name)(*params)``, declared
    by forward_is_ufunc (its parameter names are the op's public ones)."""
    if not all(p.isidentifier() for p in (name, *params)):
        raise ValueError(f"ufunc({name!r}, ...): names must be identifiers")
    env = {}
    args = ", ".join(params)
    exec(f"def {name}(xp, {args}):\n    return xp.{name}({args})\n", env)  # noqa: S102 - identifiers only
    return forward_is_ufunc(env[name], name, len(params))


def passthrough(grad):
    """The formula of an input whose gradient is the output's own (``input`` of ``add``)."""
    return grad


formula_is_op(passthrough, None, 1)


def _resolve(node, saved, index, name, grad, grads):
    if name == "grad":
        return grad
    if name == "grads":
        return grads
    value = saved[index[name]]
    if type(value) is SavedTensor:
        return value.unpack(node)
    if type(value) is list and value and type(value[0]) is SavedTensor:
        return [v.unpack(node) for v in value]
    if type(value) is tuple and name == "result":
        return tuple(v.unpack(node) if type(v) is SavedTensor else v for v in value)
    return value


def _result_dtype(op, args):
    """PyTorch's type promotion over the op's tensor and scalar arguments (``torch.result_type``)."""
    dim_dt = zero_dt = None
    scalar_cat = -1
    for i in op.tensor_pos:
        a = args[i]
        if isinstance(a, Tensor):
            dt = _dtype._BY_NP[a._data.dtype]
            if a._data.ndim:
                dim_dt = dt if dim_dt is None else _dtype.promote_types(dim_dt, dt)
            else:
                zero_dt = dt if zero_dt is None else _dtype.promote_types(zero_dt, dt)
        elif isinstance(a, (bool, np.bool_)):
            scalar_cat = max(scalar_cat, 0)
        elif isinstance(a, (int, np.integer)):
            scalar_cat = max(scalar_cat, 1)
        elif isinstance(a, (float, np.floating)):
            scalar_cat = max(scalar_cat, 2)
    result = dim_dt
    if zero_dt is not None and (result is None or zero_dt._category > result._category):
        result = zero_dt
    if scalar_cat >= 0 and (result is None or scalar_cat > result._category):
        result = (_dtype.bool, _dtype.int64, _dtype.get_default_dtype())[scalar_cat]
    return result


def _common_device(op, device, tensor):
    """The device shared so far by ``op``'s tensor arguments, after ``tensor``; raises on a mismatch."""
    d = tensor._device
    if device is None or d is device:
        return d
    raise _device_error(op, device, d)


def _device_error(op, a, b):
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                        f"{a} and {b}! (when checking arguments for {op.name})")


def call_op(op: OpInfo, args, inplace=None):
    """Runs ``op`` on ``args`` (one per forward parameter); see the module docstring.

    ``inplace``: the tensor that receives the result in place (see ops/_inplace.py); its old
    value is saved by copy where a formula needs it.
    """
    vals = list(args)
    device = None
    requires_grad = False
    first_dt = None
    mixed = False
    for i in op.tensor_pos:
        a = vals[i]
        if isinstance(a, Tensor):
            if a._base is not None and a._view_version != a._version_counter.version:
                a.grad_fn  # noqa: B018 - a view whose base changed in place: refresh its history
            device = _common_device(op, device, a)
            if a._requires_grad:
                requires_grad = True
            arr = a._data
            if first_dt is None:
                first_dt = arr.dtype
            elif arr.dtype is not first_dt and arr.dtype != first_dt:
                mixed = True
            vals[i] = arr
        elif type(a) in (list, tuple) and i in op.index_lists:
            unwrapped = []
            for t in a:
                if isinstance(t, Tensor):
                    device = _common_device(op, device, t)
                    if t._requires_grad:
                        requires_grad = True
                    unwrapped.append(t._data)
                else:
                    unwrapped.append(t)
            vals[i] = unwrapped
    if device is None:
        device = _cpu
    xp = np if device is _cpu else get_backend(device.type).xp
    try:
        out = op.forward(xp, *vals)
    except OverflowError:  # a Python int too large for the array's dtype, see forward_wide
        out = _codegen.forward_wide(op, xp, vals)

    # Wrap the results, applying PyTorch's dtype rules where NumPy's differ.
    outs = tuple(out) if op.multi_output else (out,)
    arrays = []
    for j, o in enumerate(outs):
        if type(o) is not _ndarray:
            o = xp.asarray(o)
        if op.promote is not None and j == 0 and (mixed or o.dtype != first_dt):
            want = _result_dtype(op, args)
            if want is None or op.promote == "float" and not want.is_floating_point:
                want = _dtype.get_default_dtype()
            if o.dtype != want.np:
                o = o.astype(want.np)
        arrays.append(o)

    record = requires_grad and op.differentiable and _grad_state.grad_enabled
    node = saved_inputs = None
    if record:
        node, saved_inputs = _make_node(op, args, vals, inplace)
        if node is None:
            record = False
        elif inplace is not None and inplace._retains_grad:
            rebased = (inplace._grad_fn, inplace._output_nr)

    if inplace is not None:
        results = (_write_inplace(op, inplace, arrays[0]),)
    else:
        if op.device_pos is not None and args[op.device_pos] is not None:
            device = args[op.device_pos]  # the op moved its result to another device
        results = tuple(Tensor._make(o, device) for o in arrays)
        if op.view:
            _mark_views(op, args, results)

    if record:
        metadata = []
        for j, t in enumerate(results):
            arr = t._data
            metadata.append(input_metadata(arr, device))
            if arr.dtype.kind == "f" and j not in op.nondiff_outputs:
                t._grad_fn = node
                t._output_nr = j
                t._requires_grad = True
        node.input_metadata = tuple(metadata)
        if saved_inputs:
            slot = op.save_index.get("result")
            if slot is not None and saved_inputs[slot] is _PENDING:
                saved_inputs[slot] = (
                    tuple(SavedTensor(t, is_output=t._grad_fn is node) for t in results) if op.multi_output
                    else SavedTensor(results[0], is_output=True))
            node._saved = tuple(saved_inputs)
        if inplace is not None:
            inplace._view_version = inplace._version_counter.version
            if inplace._retains_grad:
                move_retains_grad(inplace, *rebased)
    return results if op.multi_output else results[0]


def _make_node(op, args, vals, inplace):
    """Builds the node for a recorded call: its edges, and what its needed formulas save."""
    edges = []
    needed = []
    for pidx, is_list, _, _ in op.formulas:
        a = args[pidx]
        if is_list:
            es = [gradient_edge(t) if isinstance(t, Tensor) and t._requires_grad else None for t in a]
            edges.extend(es)
            needed.append(any(e is not None for e in es))
        else:
            e = gradient_edge(a) if isinstance(a, Tensor) and a._requires_grad else None
            edges.append(e)
            needed.append(e is not None)
    if not any(needed):
        return None, None
    cls = op.node_cls
    node = cls.__new__(cls)
    node.next_edges = tuple(edges)
    node.sequence_nr = _next_sequence_nr()
    node._pre_hooks = node._post_hooks = node._tensor_pre_hooks = node._retains_grad_hooks = None
    node._metadata = None
    if _Anomaly.enabled:
        record_forward_trace(node)
    names = op.all_saves if all(needed) else dict.fromkeys(
        a for s, n in zip(op.saves, needed) if n for a in s)
    if not names:
        node._saved = _NOTHING_SAVED
        return node, _NOTHING_SAVED
    saved = [None] * len(op.save_slots)  # a list while the result is pending; call_op makes it a tuple
    slots = op.save_index
    index = op.index
    for name in names:
        if name == "result":
            saved[slots[name]] = _PENDING
            continue
        if name in index:
            a = args[index[name]]
            if isinstance(a, Tensor):
                value = SavedTensor(a, copy=a is inplace)
            elif name in op.lists and isinstance(a, (list, tuple)):
                value = [SavedTensor(t, copy=t is inplace) if isinstance(t, Tensor) else t for t in a]
            else:
                value = a
        else:  # <param>_shape, <param>_dtype or <param>_device
            base, _, suffix = name.rpartition("_")
            value = _describe(suffix, args[index[base]], vals[index[base]], base in op.lists)
        saved[slots[name]] = value
    for pidx, is_list, _, _ in op.formulas:
        if is_list:
            saved[slots[f"#{pidx}"]] = len(args[pidx])
    node._saved = saved
    return node, saved


def _describe(suffix, arg, val, is_list):
    """What a ``<param>_shape/_dtype/_device`` formula argument receives."""
    if is_list:
        return [_describe(suffix, a, v, False) for a, v in zip(arg, val, strict=True)]
    if suffix == "shape":
        return val.shape if isinstance(arg, Tensor) else ()
    if suffix == "dtype":
        return _dtype._BY_NP[val.dtype] if isinstance(arg, Tensor) else None
    return arg._device if isinstance(arg, Tensor) else _cpu


def _write_inplace(op, target, array):
    """Copies ``array`` into ``target``'s memory (PyTorch's casting rule) and bumps its version."""
    dst = target._data
    if array.dtype != dst.dtype:
        src_cat = _dtype._BY_NP[array.dtype]._category
        dst_cat = _dtype._BY_NP[dst.dtype]._category
        if src_cat > dst_cat:
            raise RuntimeError(f"result type {_dtype._BY_NP[array.dtype].name.capitalize()} can't be cast to the "
                               f"desired output type {_dtype._BY_NP[dst.dtype].name.capitalize()}")
    if array.shape != dst.shape:
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                           f"{list(array.shape)}")
    if array is not dst:
        if not dst.flags.writeable:  # an expanded (broadcast) view
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        dst[...] = array
    target._version_counter.version += 1
    return target


VIEW_LINK_FIELDS = ("op", "rest", "output")  # one step of a view's _view_fn chain


def _mark_views(op, args, results):
    """Links view outputs to their base: shared version counter and a replayable view function.

    A view's ``_view_fn`` is a tuple of steps of ``VIEW_LINK_FIELDS``: the view op, its arguments
    after the first, and which output (None for a single-output op)."""
    src = args[0]
    base = src._base if src._base is not None else src
    chain = src._view_fn if src._base is not None else ()
    rest = tuple(args[1:])
    src_data = src._data
    for j, t in enumerate(results):
        arr = t._data
        owner = arr.base
        if owner is None or (owner is not src_data and owner is not src_data.base
                             and not np.may_share_memory(arr, src_data)):
            continue  # NumPy had to copy (e.g. reshape of a non-contiguous array): not a view
        t._base = base
        t._version_counter = src._version_counter
        t._view_fn = chain + ((op, rest, j if op.multi_output else None),)
        t._view_version = src._version_counter.version
        t._view_no_grad = not _grad_state.grad_enabled  # see apply_inplace in ops/_inplace.py


def defop(name, forward, *, method=None, promote=None, view=False, tensor_args=None, lists=(),
          nondiff_outputs=(), node_name=None, multi_output=False, public=True, device_param=None, doc=None,
          **formulas):
    """Declares op ``name``: its forward ``forward(xp, ...)`` and a formula per differentiable input.

    Args:
        name: the public name (``retrograd.<name>``), and the node's name (``<Name>Backward0``).
        forward: ``forward(xp, <params>)`` on backend arrays; its parameters after ``xp`` define
            the public signature, with PyTorch's names and defaults.
        method: also attach as ``Tensor.<method>`` (True: same name).
        promote: None; ``"binary"`` (PyTorch's type promotion over the arguments); or
            ``"float"`` (promotion, then integers become the default float dtype).
        view: the outputs share memory with the first argument (views share its version counter).
        tensor_args: names of parameters that may hold tensors (default: formula inputs and
            required parameters).
        lists: parameters holding sequences of tensors (their formula returns a list).
        nondiff_outputs: output indices that never require grad.
        multi_output: the forward returns a tuple of arrays.
        device_param: a parameter naming the device the forward moved its result to.
        public: export from ``retrograd``.
        doc: the public function's docstring (default: the forward's, else its signature).
        **formulas: ``input=lambda grad, other: ...``, see the module docstring.

    Returns:
        The public function.
    """
    op = OpInfo(name, forward, formulas, promote=promote, view=view, tensors=tensor_args, lists=lists,
                nondiff_outputs=nondiff_outputs, node_name=node_name, multi_output=multi_output,
                device_param=device_param)
    op.index_lists = frozenset(op.index[p] for p in lists)
    REGISTRY[name] = op
    fast_apply = _codegen.build_fast_apply(op) if op.differentiable else None
    if fast_apply is not None:
        op.node_cls.apply = fast_apply
    fn = _make_public(op)
    if doc is not None:
        fn.__doc__ = doc
    op.function = fn
    if method:
        setattr(Tensor, name if method is True else method, fn)
    op.public = public
    return fn


def signature_source(op, env):
    """The parameter list of ``op``'s public signature as source text, and the parameter names.

    Defaults are bound through ``env`` (``_d0``, ``_d1``, ...), so any value works as a default.
    """
    params = []
    names = []
    kwonly_started = False
    for i, p in enumerate(op.signature.parameters.values()):
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not kwonly_started:
            params.append("*")
            kwonly_started = True
        if p.default is inspect.Parameter.empty:
            params.append(p.name)
        else:
            env[f"_d{i}"] = p.default
            params.append(f"{p.name}=_d{i}")
        names.append(p.name)
    return ", ".join(params), names


def forwarding_function(op, fname, target, env):
    """Generates ``def fname(<op's params>): return target(_op, (<params>,))`` in ``env``."""
    params, names = signature_source(op, env)
    env["_op"] = op
    src = (f"def {fname}({params}):\n"
           f"    return {target}(_op, ({', '.join(names)}{',' if len(names) == 1 else ''}))\n")
    exec(src, env)  # noqa: S102 - generated from the op's own signature
    return env[fname]


def _make_public(op):
    """The public function of ``op``: its specialized fast path, or a call of ``call_op``."""
    if _codegen.eligible(op):
        env = {"_op": op}
        params, names = signature_source(op, env)
        exec(_codegen.build_fast_call(op, params, names, env), env)  # noqa: S102 - generated, see _codegen
        fn = env[op.name]
        compiled = _compiled.compiled_call(op, names, fn)
        if compiled is not None:  # See Note [The compiled op call]
            fn = compiled
    else:
        fn = forwarding_function(op, op.name, "_call", {"_call": call_op})
    fn.__doc__ = getattr(op.forward, "__doc__", None) or f"retrograd.{op.name}{op.signature}"
    fn.__qualname__ = op.name
    fn.__module__ = "retrograd"
    fn.op = op
    return fn
