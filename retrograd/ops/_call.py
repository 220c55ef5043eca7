"""The op call: what every call of an op does, and the one definition of it.

``call_op(op, args)`` unwraps the tensor arguments, runs the forward on the device's array
namespace, applies PyTorch's dtype rules, wraps the results and, when grad mode is on and an
input requires grad, records the op's node with its edges and what its formulas need saved. The
public function of most ops is a generated, unrolled copy of this path (``build_fast_call`` in
_signature.py), or the C op call (Note [The compiled op call]); both do exactly what this does,
and the tests compare them. In-place writes and view links are here too, as every call can make
them.
"""
from __future__ import annotations

import threading
import warnings

import numpy as np

from .. import _dtype
from .._creation import factory_calls
from .._device import cpu as _cpu
from .._tensor import INFERENCE_COUNTER, InferenceVersionCounter, Tensor
from ..autograd import grad_mode
from ..autograd.anomaly_mode import _Anomaly, record_forward_trace
from ..autograd.graph import _next_sequence_nr, before_inplace_write, input_metadata
from ..autograd.saved_variable import SavedTensor
from ..autograd.variable import gradient_edge, move_retains_grad, new_view_creation
from ..backends import get_backend
from ..backends.numpy_backend import FP_QUIET, FP_STATE
from ._compiled import compiled_module

__all__ = ["call_op", "call_out", "run_op", "interposition", "interposed", "composite_call", "push_interposer",
           "pop_interposer", "set_factory_route", "promote", "forward_wide", "forward_error", "wide_values",
           "broadcast_error", "mark_views", "describe", "device_error",
           "NOTHING_SAVED", "VIEW_LINK_FIELDS", "save_list", "record_outputs"]

_grad_state = grad_mode.state
_census = grad_mode.census
_ndarray = np.ndarray
NOTHING_SAVED = ()  # the saved tuple of a node whose needed formulas save nothing
_PENDING = object()  # a saved slot for the result, filled once the outputs exist
_fp_quiet = FP_STATE.set  # See Note [NumPy's floating-point warnings]
_WIDE = _dtype.WIDE  # See Note [bfloat16 arrays] in _dtype.py
_FLOAT32 = np.dtype(np.float32)
_fp_reset = FP_STATE.reset


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
    raise device_error(op, device, d)


def device_error(op, a, b):
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                        f"{a} and {b}! (when checking arguments for {op.name})")


def promote(op, args, out):
    """``out`` cast to the dtype PyTorch's type promotion gives the op's arguments (``op.promote``)."""
    named = op.index.get("dtype")
    if named is not None and named < len(args) and args[named] is not None:
        return out  # the result's dtype is the one the call names (softmax(x, 0, dtype=float64))
    want = _result_dtype(op, args)
    if want is None or op.promote == "float" and not want.is_floating_point:
        want = _dtype.get_default_dtype()
    return out if out.dtype == want.np else out.astype(want.np)


def broadcast_error(shapes):
    """PyTorch's error for shapes that do not broadcast, taken pairwise in order (``infer_size``); None if they do."""
    out = ()
    for shape in shapes:
        n = max(len(out), len(shape))
        a = (1,) * (n - len(out)) + tuple(out)
        b = (1,) * (n - len(shape)) + tuple(shape)
        for d in range(n - 1, -1, -1):
            if a[d] != b[d] and a[d] != 1 and b[d] != 1:
                return RuntimeError(f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) at "
                                    f"non-singleton dimension {d}")
        out = tuple(y if x == 1 else x for x, y in zip(a, b))
    return None


def forward_error(op, vals, exc):
    """What to raise for the ValueError ``exc`` of ``op``'s forward on ``vals`` (its arrays): PyTorch's error where
    NumPy could not broadcast the tensor arguments, else ``exc`` itself."""
    if "could not be broadcast" in str(exc):
        err = broadcast_error([vals[i].shape for i in op.tensor_pos if i < len(vals) and hasattr(vals[i], "shape")])
        if err is not None:
            return err
    return exc


def forward_wide(op, xp, vals):
    """Runs the forward with Python ints as int64 arrays.

    NumPy refuses a Python int that does not fit the array's dtype (``uint8 + 1000``);
    PyTorch computes in the wider type and wraps into the result dtype, which the promotion
    step after the forward then casts to.
    """
    vals = [xp.asarray(v, dtype=xp.int64) if type(v) is int else v for v in vals]
    return op.forward(xp, *vals)


class Interposition:
    """The active interposers, innermost first (see Note [Op call interposition])."""

    __slots__ = ("stack",)

    def __init__(self):
        self.stack = ()


# Note [Op call interposition]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Some features must see every op call: a profiler records it, forward-mode AD computes the
# tangent of its result, vmap runs it on batched arrays, a non-finite check looks at its outputs.
# Each is an *interposer*: an object with ``interpose(op, args, inplace, proceed)`` that returns
# the call's result, usually by calling ``proceed(op, args, inplace)`` (the next interposer, and
# last the op call itself, ``run_op``) and doing its work around it. ``push_interposer`` and
# ``pop_interposer`` (or ``with interposed(obj):``) make one active for the whole process; the
# most recently pushed is the outermost. While any is active, every op call takes the Python
# path: the generated fast calls hand the call to ``call_op`` on their first line, and the C op
# call declines (``set_interposed``), so nothing is paid while none is active. A composite
# function that PyTorch dispatches as an op of its own (``nn.functional.linear``) shows its call,
# around the op calls it makes, to the interposers that record ranges (``composite_range(name,
# args)`` returning a range with ``close()``), through ``composite_call``. While an
# interposer's ``interpose`` runs, the op calls it makes itself (a tangent's arithmetic, say) go
# only through the interposers inside it, as PyTorch's dispatch modes do; the op's own call
# (``proceed`` down to ``run_op``) runs with the caller's view of the stack again, so a pack hook
# called while saving sees every interposer.
interposition = Interposition()
_interposition_lock = threading.Lock()
_local = threading.local()  # .depth: how many interposers (from the innermost) this thread's calls see


def push_interposer(interposer) -> None:
    """Makes ``interposer`` active, outermost (see Note [Op call interposition])."""
    with _interposition_lock:
        interposition.stack = interposition.stack + (interposer,)
        _tell_c()


def pop_interposer(interposer) -> None:
    """Makes ``interposer`` inactive; a no-op where it is not active."""
    with _interposition_lock:
        stack = list(interposition.stack)
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is interposer:
                del stack[i]
                break
        interposition.stack = tuple(stack)
        _tell_c()


class composite_call:
    """``with composite_call(name, args):`` shows a composite function's call to the active interposers that
    record ranges (a profiler's ``aten::<name>``), around the op calls it makes. See Note [Op call interposition].

    Callers enter it only while ``interposition.stack`` is not empty, so plain calls pay one check.
    """

    __slots__ = ("name", "args", "ranges")

    def __init__(self, name, args):
        self.name = name
        self.args = args
        self.ranges = ()

    def __enter__(self):
        self.ranges = [i.composite_range(self.name, self.args) for i in reversed(interposition.stack)
                       if hasattr(i, "composite_range")]  # outermost first
        return self

    def __exit__(self, *exc):
        for r in reversed(self.ranges):
            r.close()
        return False


class interposed:
    """``with interposed(obj):`` pushes ``obj`` as an interposer for the block."""

    def __init__(self, interposer):
        self.interposer = interposer

    def __enter__(self):
        push_interposer(self.interposer)
        return self.interposer

    def __exit__(self, *exc):
        pop_interposer(self.interposer)
        return False


def _tell_c():
    """Tells the C op call, and the factories (Note [Factories as op calls]), whether an interposer is active."""
    module = compiled_module()
    if module is not None:
        module.set_interposed(bool(interposition.stack))
    factory_calls.route = _factory_route if interposition.stack else None


_factory_route = None


def set_factory_route(route) -> None:
    """Makes ``route`` the factories' route while an interposer is active (ops/factories.py declares it once)."""
    global _factory_route
    with _interposition_lock:
        _factory_route = route
        _tell_c()


def _interposed_call(op, args, inplace):
    stack = interposition.stack
    outer = getattr(_local, "depth", None)
    depth = len(stack) if outer is None else min(outer, len(stack))
    return _through(stack, depth, outer, op, args, inplace)


def _through(stack, depth, outer, op, args, inplace):
    """The call through ``stack[:depth]``, the outermost first; ``run_op`` under the caller's view ``outer``."""
    if depth == 0:
        saved = getattr(_local, "depth", None)
        _local.depth = outer
        try:
            return run_op(op, args, inplace)
        finally:
            _local.depth = saved

    def proceed(op, args, inplace=None):
        return _through(stack, depth - 1, outer, op, args, inplace)

    saved = getattr(_local, "depth", None)
    _local.depth = depth - 1  # the interposer's own op calls see only those inside it
    try:
        return stack[depth - 1].interpose(op, args, inplace, proceed)
    finally:
        _local.depth = saved


def call_op(op, args, inplace=None):
    """Runs ``op`` on ``args`` (one per forward parameter), through the active interposers.

    See the module docstring and Note [Op call interposition].

    ``inplace``: the tensor that receives the result in place (see ops/_inplace.py); its old
    value is saved by copy where a formula needs it.
    """
    if interposition.stack:
        return _interposed_call(op, args, inplace)
    return run_op(op, args, inplace)


def run_op(op, args, inplace=None):
    """The op call itself, past the interposers (Note [Op call interposition]): see ``call_op``."""
    vals = list(args)
    device = None
    requires_grad = False
    first_dt = None
    mixed = False
    for i in op.tensor_pos:
        a = vals[i]
        if isinstance(a, Tensor):
            device = _common_device(op, device, a)
            if a._requires_grad or (a._base is not None and a._base._requires_grad):
                requires_grad = True  # a view requires grad through its base (Note [The autograd state of views])
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
                    if t._requires_grad or (t._base is not None and t._base._requires_grad):
                        requires_grad = True
                    unwrapped.append(t._data)
                else:
                    unwrapped.append(t)
            vals[i] = unwrapped
    if device is None:
        device = _cpu
    xp = np if device is _cpu else get_backend(device.type).xp
    wide = op.wide and (first_dt is _WIDE.dtype or _WIDE.loaded and (mixed or op.index_lists)
                        or _names_bfloat16(op, args)) and wide_values(op, args, vals)  # See Note [bfloat16 arrays]
    if wide:
        vals, round_back = wide
    quiet = not op.view and _fp_quiet(FP_QUIET)  # See Note [NumPy's floating-point warnings]
    try:
        try:
            out = op.forward(xp, *vals)
        except OverflowError:  # a Python int too large for the array's dtype, see forward_wide
            out = forward_wide(op, xp, vals)
        except ValueError as exc:
            raise forward_error(op, vals, exc) from None

        # Wrap the results, applying PyTorch's dtype rules where NumPy's differ.
        outs = tuple(out) if op.multi_output else (out,)
        arrays = []
        for j, o in enumerate(outs):
            if type(o) is not _ndarray:
                o = xp.asarray(o)
            if op.promote is not None and j == 0 and (mixed or wide or o.dtype != first_dt):
                o = promote(op, args, o)
            if wide and round_back and o.dtype == _FLOAT32:
                o = o.astype(_WIDE.dtype)
            arrays.append(o)
    finally:
        if quiet:
            _fp_reset(quiet)

    record = requires_grad and op.differentiable and (inplace is not None or op.multi_output or not op.nondiff_outputs) \
        and _grad_state.grad_enabled and not (
        _census.threads and _grad_state.inference) and not (
        _census.made and all_inference(op, args))  # See Note [Inference tensors]
    node = saved_inputs = None
    if record:
        node, saved_inputs = _make_node(op, args, vals, inplace)
        if node is None:
            record = False
        elif inplace is not None and inplace._retains_grad:
            rebased = (inplace._node, inplace._output_nr)

    if inplace is not None:
        quiet = _fp_quiet(FP_QUIET)  # a cast of nan or inf into an integer tensor
        try:
            results = (_write_inplace(op, inplace, arrays[0]),)
        finally:
            _fp_reset(quiet)
    else:
        if op.device_pos is not None and args[op.device_pos] is not None:
            device = args[op.device_pos]  # the op moved its result to another device
        results = tuple(Tensor._make(o, device) for o in arrays)
        if op.view:
            mark_views(op, args, results)

    if record:
        _attach_outputs(op, node, saved_inputs, results, inplace is not None)
        if inplace is not None:
            inplace._view_version = inplace._version_counter.version
            if inplace._retains_grad:
                move_retains_grad(inplace, *rebased)
    return results if op.multi_output else results[0]


def _names_bfloat16(op, args) -> bool:
    """Whether a call names the result's dtype bfloat16 (``sum(x, dtype=bfloat16)``) before any bfloat16 tensor exists:
    then it loads bfloat16 (Note [bfloat16 arrays] in _dtype.py)."""
    pos = op.index.get("dtype")
    if pos is None or pos >= len(args) or args[pos] is not _dtype.bfloat16:
        return False
    _dtype.load_bfloat16()
    return True


def wide_values(op, args, vals):
    """Where a call of ``op`` on ``args`` computes in float32 for bfloat16 (Note [bfloat16 arrays] in _dtype.py):
    ``vals`` (the forward's arguments) with each bfloat16 array, and a bfloat16 dtype argument, in float32, and
    whether the forward's float32 results are to be rounded to bfloat16 (not where the call names another dtype).
    Else None: no bfloat16 in the call, or bfloat16 tensors mixed with another floating dtype, which the forward
    sees as they are: its checks of equal dtypes see both, and ml_dtypes computes bfloat16 with float32 in
    float32 (the type promotion after the forward rounds a bfloat16 result once)."""
    bf16 = _WIDE.dtype
    in_array = in_arg = other_float = named = False
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            kind = a._data.dtype
            if kind is bf16:
                in_array = True
            elif kind.kind == "f":
                other_float = True
        elif type(a) in (list, tuple) and i in op.index_lists:
            for t in a:
                if isinstance(t, Tensor):
                    if t._data.dtype is bf16:
                        in_array = True
                    elif t._data.dtype.kind == "f":
                        other_float = True
        elif a is _dtype.bfloat16:
            in_arg = True
        elif isinstance(a, _dtype.dtype):
            named = True
    if (in_array or in_arg) and op.wide is not True:
        raise op.wide(*args)  # PyTorch's CPU has no bfloat16 kernel for it (ops/bfloat16.py)
    if in_arg:  # the result's dtype is named: bfloat16
        round_back = True
    elif not in_array:
        return None
    elif other_float:  # a 0-d float32 with a bfloat16 tensor: PyTorch casts it to their bfloat16 result first
        if op.promote is None or _result_dtype(op, args) is not _dtype.bfloat16:
            return None
        in_arg = round_back = True
    else:
        round_back = not named
    vals = list(vals)
    for i, v in enumerate(vals):
        if type(v) is _ndarray:
            if v.dtype is bf16:
                vals[i] = v.astype(_FLOAT32)
            elif in_arg and v.dtype.kind == "f":  # as PyTorch's, cast to the bfloat16 of the result first
                vals[i] = v.astype(bf16).astype(_FLOAT32)
        elif type(v) is list and i in op.index_lists:
            vals[i] = [w.astype(_FLOAT32) if type(w) is _ndarray and w.dtype is bf16 else w for w in v]
        elif v is _dtype.bfloat16:
            vals[i] = _dtype.float32
        elif type(v) is float and op.bfloat16_scalars:  # PyTorch casts it to bfloat16 first (ops/bfloat16.py)
            vals[i] = float(np.float32(v).astype(bf16))
    return vals, round_back


def all_inference(op, args) -> bool:
    """Whether every tensor argument of a call of ``op`` is an inference tensor: then nothing is recorded outside
    inference mode, as in PyTorch (Note [Inference tensors])."""
    seen = False
    for i in op.tensor_pos:
        a = args[i]
        if isinstance(a, Tensor):
            if not isinstance(a._vc, InferenceVersionCounter):
                return False
            seen = True
        elif type(a) in (list, tuple) and i in op.index_lists:
            for t in a:
                if isinstance(t, Tensor):
                    if not isinstance(t._vc, InferenceVersionCounter):
                        return False
                    seen = True
    return seen


def _requires_grad(a) -> bool:
    """``a.requires_grad`` for a formula argument that may be a tensor: a view's through its base."""
    return isinstance(a, Tensor) and (a._requires_grad or (a._base is not None and a._base._requires_grad))


def _make_node(op, args, vals, inplace):
    """Builds the node for a recorded call: its edges, and what its needed formulas save.

    A formula input that requires grad only through its base, with no history of its own (a view
    made where nothing was recorded), gets a dead edge (None): the node is recorded, as in PyTorch,
    and nothing is saved for it. See Note [The autograd state of views].
    """
    edges = []
    needed = []
    wanted = False
    for pidx, is_list, _, _ in op.formulas:
        a = args[pidx]
        if is_list:
            es = []
            for t in a:
                if _requires_grad(t):
                    wanted = True
                    es.append(gradient_edge(t))
                else:
                    es.append(None)
            edges.extend(es)
            needed.append(any(e is not None for e in es))
        else:
            e = None
            if _requires_grad(a):
                wanted = True
                e = gradient_edge(a)
            edges.append(e)
            needed.append(e is not None)
    if not wanted:
        return None, None
    if inplace is not None and op.inplace_node_cls is not None:  # See Note [Node names per call]
        cls = op.inplace_node_cls
    else:
        cls = op.node_class(*args) if op.node_choices else op.node_cls
    node = cls.__new__(cls)
    keep = cls.edge_formulas
    node.next_edges = tuple(edges) if keep is None else tuple(edges[k] for k in keep)
    node.sequence_nr = _next_sequence_nr()
    node._extras = None  # See Note [A node's hooks and metadata] in autograd/graph.py
    if _Anomaly.enabled:
        record_forward_trace(node)
    names = op.all_saves if all(needed) else dict.fromkeys(
        a for s, n in zip(op.saves, needed) if n for a in s)
    if not names and not op.lists:  # an op of tensor lists saves their lengths
        node._saved = NOTHING_SAVED
        return node, NOTHING_SAVED
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
            elif name in op.saved_lists:
                value = save_list(a)
            else:
                value = a
        else:  # <param>_shape, <param>_dtype or <param>_device
            base, _, suffix = name.rpartition("_")
            value = describe(suffix, args[index[base]], vals[index[base]], base in op.lists)
        saved[slots[name]] = value
    for pidx, is_list, _, _ in op.formulas:
        if is_list:
            saved[slots[f"#{pidx}"]] = len(args[pidx])
    node._saved = saved
    return node, saved


def record_outputs(op, args, vals, results):
    """Records ``op``'s node for ``results``, outputs of a call of ``op`` on ``args`` computed elsewhere (``vals``:
    the arguments with each tensor's array in its place): what ``run_op`` records after its forward, for an op of
    several outputs. Returns the node, or None where no formula input requires grad. See Note [Foreach ops].
    """
    node, saved_inputs = _make_node(op, args, vals, None)
    if node is None:
        return None
    _attach_outputs(op, node, saved_inputs, results, False)
    return node


def _attach_outputs(op, node, saved_inputs, results, inplace):
    """Makes ``node`` the history of each differentiable tensor of ``results`` (all of them after an in-place op),
    records their metadata on it, and saves them where its formulas take ``result``."""
    metadata = []
    for j, t in enumerate(results):
        arr = t._data
        metadata.append(input_metadata(arr, t._device))
        if arr.dtype.kind in "fV" and (inplace or j not in op.nondiff_outputs):  # Note [bfloat16 arrays]
            t._node = node
            t._output_nr = j
            t._requires_grad = True
    node.input_metadata = tuple(metadata)
    if saved_inputs:
        slot = op.save_index.get("result")
        if slot is not None and saved_inputs[slot] is _PENDING:
            saved_inputs[slot] = (
                tuple(SavedTensor(t, is_output=t._node is node) for t in results) if op.multi_output
                else SavedTensor(results[0], is_output=True))
        node._saved = tuple(saved_inputs)


def save_list(seq):
    """What a node saves of a ``saved_lists`` argument: a list with a SavedTensor for each tensor of a sequence."""
    if type(seq) not in (list, tuple):
        return seq
    return [SavedTensor(t) if isinstance(t, Tensor) else t for t in seq]


def describe(suffix, arg, val, is_list):
    """What a ``<param>_shape/_dtype/_device/_strides`` formula argument receives."""
    if is_list:
        return [describe(suffix, a, v, False) for a, v in zip(arg, val, strict=True)]
    if suffix == "shape":
        return val.shape if isinstance(arg, Tensor) else ()
    if suffix == "dtype":
        return _dtype._BY_NP[val.dtype] if isinstance(arg, Tensor) else None
    if suffix == "strides":
        return arg.stride() if isinstance(arg, Tensor) else ()
    return arg._device if isinstance(arg, Tensor) else _cpu


def _write_inplace(op, target, array):
    """Copies ``array`` into ``target``'s memory (PyTorch's casting rule) and bumps its version."""
    dst = target._data
    if array.dtype != dst.dtype:
        src_cat = _dtype._BY_NP[array.dtype]._category
        dst_cat = _dtype._BY_NP[dst.dtype]._category
        if src_cat > dst_cat:
            raise RuntimeError(f"result type {_dtype.scalar_type_name(array.dtype)} can't be cast to the "
                               f"desired output type {_dtype.scalar_type_name(dst.dtype)}")
    if array.shape != dst.shape:
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                           f"{list(array.shape)}")
    before_inplace_write(target)  # See Note [Mutation of saved tensors]
    if array is not dst:
        if not dst.flags.writeable:  # an expanded (broadcast) view
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        dst[...] = array
    target._version_counter.bump()  # an inference tensor's counts as PyTorch's (Note [Inference tensors])
    return target


# Note [The out= argument]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# The public functions of the ops that take ``out=`` in PyTorch (``OUT_OPS`` in _signature.py) accept
# it as a keyword, as PyTorch's (Tensor's methods, the same functions, take it too, where PyTorch's
# refuse it); their signature shows the op's own parameters only. A call that
# names ``out`` (not None) goes to ``call_out``, from the first line of the generated function; the C
# op call binds only the op's parameters, so it hands every such call to that function. As in
# PyTorch, such a call records nothing: with grad mode on it refuses an ``out`` or an input that
# requires grad; otherwise it runs the op, writes the result into ``out`` as an in-place op would
# (PyTorch's casting rule, the version counter bumped) and returns ``out``. An ``out`` of another
# shape is resized first, with PyTorch's warning unless it is empty: within its storage where that
# is large enough (a view stays a view), else in a new one. An ``out`` that is not a tensor raises
# TypeError, except a number given to the functions whose binding takes numbers for tensors
# (``NUMBERS_AS_TENSORS``): as PyTorch's, it becomes a new 0-d tensor (``out=3``: int64, which a
# float result cannot be cast into). Where PyTorch's binding has several overloads the call could be,
# its TypeError says "received an invalid combination of arguments" instead of naming ``out``.
# The functions whose Python binding takes a number wherever a tensor goes (PyTorch's
# should_allow_numbers_as_tensors), as a 0-d tensor of the number's dtype: ``out=3`` is an int64 tensor.
NUMBERS_AS_TENSORS = frozenset({"add", "sub", "mul", "div", "floor_divide"})
_WRAPPED_NUMBER_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64}
refuse_tangents_of_out = None  # raises where an out= call meets a forward-mode tangent: set by ops/_forward.py


def call_out(op, args, out, name=None):
    """The call ``op(*args, out=out)``: see Note [The out= argument]. ``name``: the public function's, where not the
    op's (the messages name it).

    Raises:
        TypeError: ``out`` is not a tensor (nor, for the ops of ``NUMBERS_AS_TENSORS``, a number).
        RuntimeError: PyTorch's error where grad mode is on and ``out`` or an input requires grad, and those of
            an in-place write (a result dtype ``out`` cannot hold, an expanded ``out``).
        NotImplementedError: ``out`` or an input has a forward-mode tangent.
    """
    name = op.name if name is None else name
    if not isinstance(out, Tensor):
        if name not in NUMBERS_AS_TENSORS or not isinstance(out, (bool, int, float)):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        # PyTorch's binding takes a number for any tensor argument of these, ``out`` too: a new 0-d tensor
        out = Tensor._make(np.asarray(out, dtype=_WRAPPED_NUMBER_DTYPES[type(out)]))
    if refuse_tangents_of_out is not None:
        refuse_tangents_of_out(name, op, args, out)
    if grad_mode.recording() and (_requires_grad(out) or any(
            _requires_grad(a) or (type(a) in (list, tuple) and any(_requires_grad(t) for t in a))
            for a in (args[i] for i in op.tensor_pos))):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    array = call_op(op, args)._data
    if array.shape != out._data.shape:
        _resize_out(out, array.shape)
    quiet = _fp_quiet(FP_QUIET)  # a cast of nan or inf into an integer tensor
    try:
        return _write_inplace(op, out, array)
    finally:
        _fp_reset(quiet)


def _resize_out(out, shape):
    """Gives ``out`` the contiguous ``shape``, in its own storage where it fits. See Note [The out= argument]."""
    if out._data.size:
        warnings.warn(f"An output with one or more elements was resized since it had shape {list(out._data.shape)}, "
                      f"which does not match the required output shape {list(shape)}. This behavior is deprecated, "
                      "and in a future PyTorch release outputs will not be resized unless they have zero elements. "
                      "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                      "t.resize_(0).", UserWarning, stacklevel=4)
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    try:
        with grad_mode.no_grad():
            out._data = out.as_strided(shape, tuple(reversed(strides)), out.storage_offset())._data
    except RuntimeError:  # the storage is too small
        if out._base is not None:
            raise
        out._data = out._device.backend.xp.empty(shape, dtype=out._data.dtype)


VIEW_LINK_FIELDS = ("op", "rest", "output")  # one step of a view's _view_fn chain


def mark_views(op, args, results):
    """Links view outputs to their base: shared version counter, a replayable view function, how it was made.

    A view's ``_view_fn`` is a tuple of steps of ``VIEW_LINK_FIELDS``: the view op, its arguments
    after the first, and which output (None for a single-output op); ``_view_creation`` is a
    ``CreationMeta`` (Note [The autograd state of views]). A view of an inference tensor is an
    inference tensor and is not linked (Note [Inference tensors])."""
    src = args[0]
    src_data = src._data
    inference = isinstance(src._vc, InferenceVersionCounter)
    if not inference:
        base = src._base if src._base is not None else src
        chain = src._view_fn if src._base is not None else ()
        rest = tuple(args[1:])
        creation = new_view_creation(src, op.multi_output)
    for j, t in enumerate(results):
        arr = t._data
        owner = arr.base
        if owner is None or (owner is not src_data and owner is not src_data.base
                             and not np.may_share_memory(arr, src_data)):
            continue  # NumPy had to copy (e.g. reshape of a non-contiguous array): not a view
        if inference:
            t._vc = INFERENCE_COUNTER
            continue
        t._base = base
        t._version_counter = src._version_counter
        t._view_fn = chain + ((op, rest, j if op.multi_output else None),)
        t._view_version = src._version_counter.version
        t._view_creation = creation
