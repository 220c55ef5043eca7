"""Forward-mode AD's machinery: the dual level, where tangents live, and the interposer that gives
every op call's result its tangent. The public API is autograd/forward_ad.py.

Note [Forward-mode tangents]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
While a dual level is active (one at a time, as in PyTorch), a tensor's tangent is found in the
level's side table, keyed weakly by the tensor itself: a Tensor has no slot for it, so tensors made
by the C op call and the generated fast calls carry nothing and pay nothing. Four ways lead to a
tangent:
- the tensor's own entry (``make_dual``, or an op's result, set by ``ForwardInterposer``);
- a view whose base has a tangent: the same view of the base's tangent, made by replaying the
  view's ``_view_fn`` on it (and kept), so that writing into a view's tangent writes the base's;
- a saved output that a node unpacks (a new Tensor around the output's array, reconnected to the
  node): the output's tangent, kept beside the array with the node that saved it, so that backward
  formulas run under the level (forward-over-reverse) see their saved results as duals;
- a batched tensor under vmap: its physical tensor's, batched as it is (Note [The order of
  transform levels]).
A tensor sharing an array without being a view (``detach()``, ``.data``) has no tangent, as in
PyTorch. Leaving the level drops the tables.

The interposer (Note [Op call interposition]) lets the op run, and, where a tensor argument has a
tangent, computes the result's from the op's forward derivative (``op.jvp``, Note [Forward
derivatives] in _declarations.py), with ordinary op calls, so tangents are themselves
differentiable. An in-place op writes the new tangent into the target's (into its base's for a
view), so views of the tangent follow. Where the op has no forward derivative it raises PyTorch's
NotImplementedError; ops with no derivative at all (comparisons, argmax) give no tangent.
"""
from __future__ import annotations

import inspect
import threading
import weakref

from .._tensor import Tensor, storage_array
from ..autograd import grad_mode
from . import _call
from ._call import describe, pop_interposer, push_interposer

__all__ = ["LINEAR", "FROM_BACKWARD", "MULTILINEAR", "REDUCED_FROM_BACKWARD", "DualLevel", "current_level",
           "enter_level", "exit_level", "tangent_of", "note_output", "use_batching", "batching",
           "set_tangent", "suspended", "not_implemented", "check_jvp_names", "same_layout", "with_layout",
           "push_inside"]

LINEAR = "linear"  # See Note [Forward derivatives]: the op itself applied to the tangents
FROM_BACKWARD = "from_backward"  # the backward formulas applied to the tangents (a diagonal Jacobian)
MULTILINEAR = "multilinear"  # the sum over inputs with a tangent of the op with that input replaced by it
REDUCED_FROM_BACKWARD = "reduced_from_backward"  # a reduction's partial derivatives times the tangent, reduced


class DualLevel:
    """One forward-AD level: its number, and the tangents of Note [Forward-mode tangents]."""

    def __init__(self, index):
        self.index = index
        self.tangents = {}  # id(tensor) -> (weakref to it, tangent)
        self.saved_outputs = {}  # id(array) -> (weakref to the array, the node that made it, tangent)
        self.interposer = ForwardInterposer(self)


_state = threading.local()  # .off: forward AD suspended on this thread (inside a custom Function's forward)
_levels: list = []  # the active level, or nothing
batching = None  # what forward mode asks of vmap, set by func/_batched.py (``use_batching``)


def use_batching(view) -> None:
    """Makes ``view`` how forward mode sees batched tensors. See Note [The order of transform levels].

    ``view`` has ``tensor_type`` (the type of a batched tensor), ``tangent(t, level)`` (a batched
    tensor's tangent: its physical tensor's, batched as it is), ``physical(t, tangent)`` (a batched
    tensor's physical tensor, and ``tangent`` batched as it is), ``lift(tensor, tangent)`` (both
    physical at the union of their batch levels, and those levels), ``rewrap(p, levels)`` and
    ``outer_interposers()`` (those of the active vmap levels a new dual level goes inside) and
    ``zeros(like, tangent)`` (zeros of ``like``'s logical shape, batched at every level ``tangent`` is).
    """
    global batching
    batching = view


def current_level():
    """The active DualLevel, or None."""
    return _levels[-1] if _levels else None


def enter_level():
    """Starts level 0 (see autograd/forward_ad.py for the errors); returns it."""
    level = DualLevel(len(_levels))
    _levels.append(level)
    outer = () if batching is None else batching.outer_interposers()
    if outer:
        push_inside(level.interposer, outer)
    else:
        push_interposer(level.interposer)
    return level


def push_inside(interposer, outer):
    """Makes ``interposer`` active just inside the innermost of the active interposers ``outer`` (outermost
    where none of them is active).

    See Note [The order of transform levels]."""
    with _call._interposition_lock:
        stack = _call.interposition.stack
        k = next((i for i, e in enumerate(stack) if any(e is o for o in outer)), len(stack))
        _call.interposition.stack = stack[:k] + (interposer,) + stack[k:]
        _call._tell_c()


def exit_level():
    """Ends the active level, dropping every tangent it held."""
    level = _levels.pop()
    pop_interposer(level.interposer)
    level.tangents.clear()
    level.saved_outputs.clear()


class suspended:
    """``with suspended():`` runs ops on this thread without computing tangents."""

    def __enter__(self):
        self.before = getattr(_state, "off", False)
        _state.off = True

    def __exit__(self, *exc):
        _state.off = self.before
        return False


def _forget(table, key):
    def callback(ref):
        entry = table.get(key)
        if entry is not None and entry[0] is ref:
            del table[key]
    return callback


def tangent_of(t, level):
    """``t``'s tangent at ``level``, or None. See Note [Forward-mode tangents]."""
    entry = level.tangents.get(id(t))
    if entry is not None and entry[0]() is t:
        return entry[1]
    base = t._base
    if base is not None:
        tb = tangent_of(base, level)
        if tb is None:
            return None
        tangent = tb
        for op, rest, output in t._view_fn:  # See VIEW_LINK_FIELDS in _call.py
            tangent = op(tangent, *rest)
            if output is not None:
                tangent = tangent[output]
        set_tangent(t, tangent, level)
        return tangent
    if t._node is not None:
        saved = level.saved_outputs.get(id(t._data))
        if saved is not None and saved[0]() is t._data and saved[1]() is t._node:
            return saved[2]
    if batching is not None and type(t) is batching.tensor_type:  # See Note [The order of transform levels]
        return batching.tangent(t, level)
    return None


def set_tangent(t, tangent, level):
    """Makes ``tangent`` the tangent of ``t`` at ``level`` (None: removes it)."""
    if batching is not None and type(t) is batching.tensor_type:  # See Note [The order of transform levels]
        t, tangent = batching.physical(t, tangent)
    table = level.tangents
    key = id(t)
    if tangent is None:
        table.pop(key, None)
        return
    table[key] = (weakref.ref(t, _forget(table, key)), tangent)
    note_output(t, tangent, level)


def _forget_tangents(t):
    """Drops ``t``'s tangent at the active level (``detach_``)."""
    for level in _levels:
        set_tangent(t, None, level)
        level.saved_outputs.pop(id(t._data), None)


Tensor._forget_tangents = staticmethod(_forget_tangents)


def _refuse_tangents_of_out(name, op, args, out):
    """PyTorch's error for an out= call where ``out`` or an input has a tangent: forward mode has no out= form."""
    level = current_level()
    if level is None:
        return
    tensors = [out]
    for i in op.tensor_pos:
        a = args[i]
        tensors.extend(a if type(a) in (list, tuple) else (a,))
    if any(isinstance(t, Tensor) and tangent_of(t, level) is not None for t in tensors):
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not support it because it is "
                                  "an out= function")


_call.refuse_tangents_of_out = _refuse_tangents_of_out


def write_tangent_inplace(target, t, level):
    """Writes ``t``, the new tangent of ``target`` changed in place, into its old one (or its base's,
    which gets one of zeros where it had none)."""
    old = tangent_of(target, level)
    if old is None and target._base is not None:  # See Note [The layout of a tangent]
        base = target._base
        zeros = batched_zeros(base, t)
        if zeros is None and same_layout(t, base) and same_layout(t, target):
            set_tangent(base, t, level)
            set_tangent(target, t, level)
            note_output(target, t, level)
            return
        set_tangent(base, _zeros_like(base) if zeros is None else zeros, level)
        old = tangent_of(target, level)
    if old is None:
        set_tangent(target, t, level)
        return
    if old is not t:
        old.copy_(t)
    note_output(target, old, level)  # the target's node is the in-place op's now


def note_output(t, tangent, level):
    """Keeps ``tangent`` beside ``t``'s array for the node that made ``t``, which may save it as its output
    (see Note [Forward-mode tangents])."""
    fn = t._node
    if fn is not None:
        arr = t._data
        outputs = level.saved_outputs
        k = id(arr)
        outputs[k] = (weakref.ref(arr, _forget(outputs, k)), weakref.ref(fn), tangent)


def not_implemented(name):
    return NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not been implemented yet.\n"
        "Please declare its forward derivative beside its backward formulas (Note [Forward derivatives]).")


def check_jvp_names(op, fn):
    """The parameter names of an explicit forward derivative of ``op``; TypeError for one it cannot have."""
    names = tuple(inspect.signature(fn).parameters)
    for a in names:
        if a == "result" or a in op.index:
            continue
        if a.endswith("_t") and a[:-2] in op.index:
            continue
        base, _, suffix = a.rpartition("_")
        if suffix in ("shape", "dtype", "device") and base in op.index:
            continue
        raise TypeError(f"defop({op.name!r}): forward derivative asks for unknown name {a!r}")
    return names


def _zeros_like(t):
    """The tangent of an argument without one: zeros of a tensor's shape, 0 for a number, else itself (None)."""
    if isinstance(t, Tensor):
        return t.new_zeros(t.shape)
    return 0 if isinstance(t, (int, float)) and not isinstance(t, bool) else t


def same_layout(tangent, primal):
    """Whether ``tangent`` may serve as ``primal``'s tangent as it is: the same shape and the same geometry of a
    storage of the same size (a dim of size 0 or 1 may have any stride; a tensor without elements any offset).

    See Note [The layout of a tangent]."""
    a, b = tangent._data, primal._data
    if a.shape != b.shape or storage_array(a).size != storage_array(b).size:
        return False
    if a.size == 0:
        return True
    if tangent.storage_offset() != primal.storage_offset():
        return False
    return all(x == y or n in (0, 1) for x, y, n in zip(tangent.stride(), primal.stride(), a.shape, strict=True))


def with_layout(tangent, primal):
    """A copy of ``tangent`` laid out as ``primal``: the same geometry of a zeroed storage of the same size."""
    storage = storage_array(primal._data)
    with suspended():
        out = tangent.new_zeros((storage.size,)).as_strided(tuple(primal.shape), primal.stride(),
                                                           primal.storage_offset())
        return out.copy_(tangent)


def batched_zeros(like, tangent):
    """Zeros of ``like``'s shape, batched as ``tangent`` is where it is batched (``jacfwd``'s basis): the tangent
    of a plain tensor that a batch of tangents is written into in place; None where ``tangent`` is not batched."""
    if batching is None or type(tangent) is not batching.tensor_type:
        return None
    return batching.zeros(like, tangent)


# Note [The layout of a tangent]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As in PyTorch, a tangent has its primal's layout: the same strides and storage offset in a storage
# of the same size, so that a composite op that reads a primal's strides, or an ``as_strided`` of
# both, treats the tangent alike. ``make_dual`` keeps a tangent that has it as it is, and lays out a
# copy of any other (``with_layout``). An in-place op that gives a view without a tangent one, its
# base having none, gives the base zeros of the base's shape, of which the view's tangent is the view
# that the view is of its base, and copies the new tangent there; where the new tangent has the
# layout of both the base and the view (a view of the whole base), it becomes the base's tangent and
# the view's as it is.
class ForwardInterposer:
    """Computes the tangent of each op call's result at its level (Note [Forward-mode tangents])."""

    def __init__(self, level):
        self.level = level

    def interpose(self, op, args, inplace, proceed):
        if getattr(_state, "off", False) or grad_mode.inference_now():  # inference mode computes no tangent
            return proceed(op, args, inplace)
        level = self.level
        tangents = {}
        for i in op.tensor_pos:
            a = args[i]
            if isinstance(a, Tensor):
                t = tangent_of(a, level)
                if t is not None:
                    tangents[i] = t
            elif type(a) in (list, tuple) and i in op.index_lists:
                ts = [tangent_of(x, level) if isinstance(x, Tensor) else None for x in a]
                if any(x is not None for x in ts):
                    tangents[i] = ts
        if tangents and op.jvp_names is not None and inplace is None:  # an explicit rule: the inputs it takes
            asked = op.jvp_names  # no tangent of are not differentiable (a loss's weight), as in PyTorch
            tangents = {i: t for i, t in tangents.items() if op.params[i] + "_t" in asked}
        if not tangents:
            return proceed(op, args, inplace)
        if not op.differentiable:
            out = proceed(op, args, inplace)
            if inplace is not None and tangent_of(inplace, level) is not None:
                tangent_of(inplace, level).zero_()  # a piecewise-constant write (fill_, zero_)
            return out
        rule = op.jvp
        if rule is None:
            raise not_implemented(op.name)
        primal_args = args
        if inplace is not None and rule is not LINEAR:  # the rule may read the old value
            primal_args = tuple(a.clone() if a is inplace else a for a in args)
        out = proceed(op, args, inplace)
        results = out if op.multi_output else (out,)
        new = self._tangents(op, rule, primal_args, tangents, results)
        for j, (r, t) in enumerate(zip(results, new, strict=True)):
            if t is None or not isinstance(r, Tensor) or r._data.dtype.kind not in "fV" or (
                    j in op.nondiff_outputs and r is not inplace):
                continue
            if tuple(t.shape) != tuple(r.shape):
                t = t.expand(tuple(r.shape)).clone()
            if inplace is not None and r is inplace:
                self._write_inplace(r, t)
            else:
                set_tangent(r, t, level)
        return out

    def _write_inplace(self, target, t):
        """Writes the new tangent of an in-place op's target into its old one (or its base's)."""
        write_tangent_inplace(target, t, self.level)

    def _tangents(self, op, rule, args, tangents, results):
        """The tangent of each result (None where it has none)."""
        if rule is LINEAR:
            targs = list(args)
            for pidx, is_list, _, _ in op.formulas:
                a = args[pidx]
                t = tangents.get(pidx)
                if is_list:
                    t = t or [None] * len(a)
                    targs[pidx] = [ti if ti is not None else _zeros_like(x) for x, ti in zip(a, t, strict=True)]
                else:
                    targs[pidx] = t if t is not None else _zeros_like(a)
            out = op(*targs)
        elif rule is FROM_BACKWARD:
            out = None
            shape = tuple(results[0].shape)
            for pidx, _, fn, argnames in op.formulas:
                t = tangents.get(pidx)
                if t is None:
                    continue
                if tuple(t.shape) != shape:
                    t = t.expand(shape)
                term = fn(*[t if a == "grad" else self._value(op, a, args, results) for a in argnames])
                out = term if out is None else out + term
        elif rule is MULTILINEAR:
            out = None
            for pidx, is_list, _, _ in op.formulas:
                t = tangents.get(pidx)
                if t is None:
                    continue
                for k, tk in (enumerate(t) if is_list else ((None, t),)):
                    if tk is None:
                        continue
                    targs = list(args)
                    if is_list:
                        targs[pidx] = list(args[pidx])
                        targs[pidx][k] = tk
                    else:
                        targs[pidx] = tk
                    term = op(*targs)
                    out = term if out is None else out + term
        elif rule is REDUCED_FROM_BACKWARD:
            pidx, _, fn, argnames = op.formulas[0]
            ones = results[0].new_ones(tuple(results[0].shape))
            partials = fn(*[ones if a == "grad" else self._value(op, a, args, results) for a in argnames])
            dim = args[op.index["dim"]] if "dim" in op.index else None
            keepdim = args[op.index["keepdim"]] if "keepdim" in op.index else False
            out = (partials * tangents[pidx]).sum(dim, keepdim)
        else:
            values = []
            for a in op.jvp_names:
                if a.endswith("_t") and a[:-2] in op.index:
                    pidx = op.index[a[:-2]]
                    t = tangents.get(pidx)
                    if pidx in op.index_lists:
                        lst = args[pidx]
                        t = t or [None] * len(lst)
                        t = [ti if ti is not None else _zeros_like(x) for x, ti in zip(lst, t, strict=True)]
                    elif t is None:
                        t = _zeros_like(args[pidx])
                    values.append(t)
                else:
                    values.append(self._value(op, a, args, results))
            out = rule(*values)
        return tuple(out) if op.multi_output else (out,)

    @staticmethod
    def _value(op, name, args, results):
        """A formula argument other than the gradient: the result, a forward argument, or its shape/dtype/device."""
        if name == "result":
            return results if op.multi_output else results[0]
        if name in op.index:
            return args[op.index[name]]
        base, _, suffix = name.rpartition("_")
        a = args[op.index[base]]
        if base in op.lists:
            return [describe(suffix, x, x._data if isinstance(x, Tensor) else x, False) for x in a]
        return describe(suffix, a, a._data if isinstance(a, Tensor) else a, False)
