"""Batched tensors: what a function under ``vmap`` sees in place of a tensor mapped over.

Note [Batched tensors]
~~~~~~~~~~~~~~~~~~~~~~
A ``BatchedTensor`` of vmap level ``L`` stands for one sample of a batch: it shows the logical
shape (``shape``, ``dim()``, ``size()``) while it holds the whole batch as ``inner``, a tensor
whose first dim is the batch (the physical tensor; it is moved first when the tensor is made, so
every batching rule may assume it). ``inner`` is a plain tensor, or a BatchedTensor of a lower
level (vmap of vmap): the plain tensor at the bottom has one leading dim per level it is batched
at, the outermost vmap's first. Its own ``_data`` is a view of the first sample of the batch, so
that the fields read directly (dtype, device, the logical shape) are right; the values are never
read from it: every op call with a batched argument is taken by its level's interposer
(``_vmap.py``), which runs the op once on the physical tensors, following a batching rule
(``_rules.py``), and wraps the result at its level. The autograd graph is recorded on the
physical tensors at the bottom, so ``grad`` under ``vmap`` differentiates the batch at once, each
sample independently (``_eager.py``). What would need one sample's values (``item()``,
``tolist()``, ``numpy()``, a tensor in an ``if``) raises PyTorch's vmap errors.

Note [Escaped batched tensors]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A BatchedTensor kept past its vmap (in a closure, a global, a list) escaped it: its level has
ended (``Level.ended``) and no interposer takes its calls any more, so an op would compute on
its ``_data``, the first sample, and give a wrong result without a word. Its ``_data`` is
therefore a ``_SampleArray``: an ndarray view of the first sample that knows its level. Its
shape and dtype read as any array's (as PyTorch's, an escaped tensor's metadata still reads),
but once the level has ended every computation with it raises PyTorch's error: a ufunc, a NumPy
function, indexing, a view or a copy of it. The C op call declines any ``_data`` that is not
exactly an ndarray, so it never computes with one either; a later vmap's interposer raises the
same error for a batched argument of an ended level, and ``numpy()``, ``item()``, ``detach()``
check it too.

Note [The order of transform levels]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Each transform owns its level: a batch dim belongs to a vmap level, a tangent to the dual level
(one at a time, Note [Forward-mode tangents]), a graph to a reverse transform; and each unwraps
only its own. As the graph is recorded on the physical tensors at the bottom (Note [Batched
tensors]), forward-over-reverse needs the tangents there too, so the levels are ordered thus,
innermost first: a tangents-only vmap level (Note [Batched tangents]), the dual level, then every
other vmap level, whichever was entered first. A vmap entered under ``jvp`` pushes its interposer
outside the dual level's anyway; a dual level entered under vmaps (``vmap(jvp(f))``) puts its
interposer just inside theirs (``enter_level`` in ops/_forward.py). So forward mode sees only
physical calls: each vmap interposer turns a call into the physical one of its batching rule, and
forward mode differentiates that, on physical tangents. A batched tensor's tangent is its physical
tensor's, batched at the same levels (``tangent_of``); ``make_dual`` of a batched primal or
tangent lifts both to the union of their levels (an unbatched one broadcast) and pairs them
physically; ``unpack_dual`` gives the tangent batched as the primal. A reverse transform inside
(``vmap(jvp(grad(f)))``, ``jvp(vmap(grad(f)))``, ``vmap(hessian(f))``) marks physical leaves,
which keep their tangents (Note [Differentiating under vmap]); its pass skips the vmap levels but
runs under the dual level, whose formulas so see the physical saved tensors with their tangents,
and its results are wrapped back at the levels, their tangents with them. The tangents-only level
is the exception that keeps the primal computation of ``jacfwd`` unbatched: its interposer runs
inside the dual level's (and so inside every other vmap level's: ``push_inside``), on the tangent
arithmetic only, and no primal is ever batched at it, so forward mode never unwraps it.
"""
from __future__ import annotations

import threading

import numpy as np

from .._overrides import disabled_torch_function_impl
from .._tensor import Tensor
from ..ops._forward import tangent_of, use_batching

__all__ = ["ESCAPED", "BatchedTensor", "Level", "levels", "primal_levels", "push_level", "pop_level", "batched_at", "wrap",
           "unwrap_level", "to_full_physical", "from_full_physical"]


class Level:
    """One active vmap: its number (the outermost is 1), batch size and randomness mode.

    A level of ``tangents_only`` batches forward-mode tangents (``jacfwd``'s basis): the primal
    computation under it is never batched at it (See Note [Batched tangents]).
    """

    __slots__ = ("number", "size", "randomness", "interposer", "ended", "tangents_only", "thread")

    def __init__(self, number, size, randomness, tangents_only=False):
        self.thread = threading.get_ident()  # its vmap's thread: the only one whose draws it batches
        self.number = number
        self.size = size
        self.randomness = randomness
        self.interposer = None
        self.ended = False  # its vmap returned: a BatchedTensor of it that is still used escaped
        self.tangents_only = tangents_only


class _Levels(threading.local):
    def __init__(self):
        self.stack = []


_levels = _Levels()


def levels():
    """The active vmap levels of this thread, the outermost first."""
    return _levels.stack


def primal_levels():
    """The active vmap levels at which a primal value may be batched: all but the tangents-only ones."""
    return [lv for lv in _levels.stack if not lv.tangents_only]


def push_level(size, randomness, tangents_only=False) -> Level:
    """Enters a new vmap level over a batch of ``size``."""
    stack = _levels.stack
    level = Level((stack[-1].number + 1) if stack else 1, size, randomness, tangents_only)
    stack.append(level)
    return level


def pop_level(level) -> None:
    """Leaves ``level`` (the innermost)."""
    level.ended = True
    stack = _levels.stack
    if stack and stack[-1] is level:
        stack.pop()
    elif level in stack:
        stack.remove(level)


ESCAPED = ("Either your tensor may have escaped from inside a function being vmapped and this is a user error "
           "(see https://pytorch.org/functorch/stable/ux_limitations.html), or there is an internal functorch error "
           "in `gen_vmap_plumbing` Please file an issue if it looks like the latter")


def _check_alive(arrays):
    for a in arrays:
        if type(a) is _SampleArray and a.level is not None and a.level.ended:
            raise RuntimeError(ESCAPED)


def _plain(values):
    return tuple(v.view(np.ndarray) if type(v) is _SampleArray else v for v in values)


class _SampleArray(np.ndarray):
    """A BatchedTensor's own ``_data`` (Note [Escaped batched tensors]): its shape and dtype are read; once
    its vmap has returned, computing with it raises PyTorch's error."""

    level = None

    def __array_finalize__(self, obj):
        level = getattr(obj, "level", None)
        if level is not None:
            if level.ended:
                raise RuntimeError(ESCAPED)
            self.level = level

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _check_alive(inputs)
        if "out" in kwargs:
            _check_alive(kwargs["out"])
            kwargs["out"] = _plain(kwargs["out"])
        return getattr(ufunc, method)(*_plain(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        _check_alive([self])
        return super().__array_function__(func, types, args, kwargs)

    def __getitem__(self, index):
        _check_alive([self])
        return super().__getitem__(index)

    def __setitem__(self, index, value):
        _check_alive([self])
        super().__setitem__(index, value)

    def __array__(self, dtype=None, copy=None):
        _check_alive([self])
        plain = self.view(np.ndarray)
        return plain if dtype is None else plain.astype(dtype, copy=False)


def _logical_view(inner_data, size, level):
    """The first sample of a batch-first array: the logical shape and dtype, sharing memory where it can
    (on NumPy a ``_SampleArray`` of ``level``: See Note [Escaped batched tensors])."""
    if not isinstance(inner_data, np.ndarray):
        return inner_data[:1][0]
    view = (inner_data[0, ...] if size else np.empty(inner_data.shape[1:], inner_data.dtype)).view(_SampleArray)
    view.level = level
    return view


_DATA_ERROR = ("vmap: It looks like you're calling {} on a Tensor. We don't support vmap over calling {} on a "
               "Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
               "somewhere inside PyTorch internals, please file a bug report.")
_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
                 "don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"


class BatchedTensor(Tensor):
    """One sample of a batch under ``vmap``: the logical view of ``inner`` (batch first) at vmap ``level``.

    See Note [Batched tensors].
    """

    __slots__ = ("inner", "level")
    # vmap's batching is an interposer (Note [Op call interposition]), not a __torch_function__
    __torch_function__ = disabled_torch_function_impl

    def __repr__(self):
        return f"BatchedTensor(lvl={self.level.number}, bdim=0, value=\n{self.inner!r}\n)"

    __str__ = __repr__

    @property
    def requires_grad(self) -> bool:
        return self.inner.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.inner.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True):
        self.inner.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.inner.is_leaf

    @property
    def grad_fn(self):
        return self.inner.grad_fn

    def detach(self):
        _check_alive([self._data])
        return wrap(self.inner.detach(), self.level)

    def item(self):
        raise RuntimeError(_DATA_ERROR.format(".item()", ".item()"))

    def tolist(self):
        raise RuntimeError(_NO_STORAGE)

    def numpy(self, *, force: bool = False):
        _check_alive([self._data])
        raise RuntimeError(_NO_STORAGE)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(_NO_STORAGE)

    def __bool__(self):
        raise RuntimeError(_CONTROL_FLOW)

    def __float__(self):
        raise RuntimeError(_DATA_ERROR.format(".item()", ".item()"))

    __int__ = __float__

    def __index__(self):
        raise RuntimeError(_DATA_ERROR.format(".item()", ".item()"))

    def __getitem__(self, index):
        items = index if isinstance(index, tuple) else (index,)
        if any(type(i) is BatchedTensor for i in items):  # the op would see only the index's first sample
            raise RuntimeError("Batching rule not implemented for aten::index with batched indices. We could not "
                               "generate a fallback.")
        return Tensor.__getitem__(self, index)

    def __deepcopy__(self, memo):
        raise RuntimeError("vmap: We don't support deepcopy of a Tensor inside of vmap.")

    def __reduce_ex__(self, protocol):
        raise RuntimeError(_NO_STORAGE)


def wrap(inner, level):
    """``inner`` (its first dim the batch of ``level``, a Level) as a BatchedTensor."""
    t = object.__new__(BatchedTensor)
    data = inner._data
    t._data = _logical_view(data, data.shape[0], level)
    t._device = inner._device
    t._requires_grad = False
    t._node = None
    t._output_nr = 0
    t._vc = None
    t._base = None
    t._grad = None
    t._grad_accumulator = None
    t._hooks = None
    t._retains_grad = False
    t.inner = inner
    t.level = level
    return t


def batched_at(t, level) -> bool:
    """Whether ``t`` is a BatchedTensor of ``level``."""
    return type(t) is BatchedTensor and t.level is level


def unwrap_level(t, level):
    """The physical tensor of ``t`` at ``level``, or None where ``t`` is not batched there."""
    return t.inner if type(t) is BatchedTensor and t.level is level else None


def to_full_physical(t, active):
    """``t`` as a plain tensor batched at every level of ``active`` (the outermost first), dims in that order.

    Missing batch dims are broadcast (an expand, no copy). A tangents-only level is no batch of a
    primal: a tangent batched at one stays batched there (Note [The order of transform levels]).
    """
    bottom, present = _primal_chain(t)  # the bottom's leading dims, outermost level first
    if not active:
        return bottom
    if len(present) == len(active) and all(a is b for a, b in zip(present, active)):
        return bottom
    logical = tuple(t.shape)
    if not present:  # unbatched: one expand adds the leading dims
        return bottom.expand(tuple(lv.size for lv in active) + logical)
    if any(lv not in active for lv in present):
        raise RuntimeError(ESCAPED)
    order = [lv for lv in active if lv in present]
    if len(order) != len(present) or any(a is not b for a, b in zip(order, present)):
        raise RuntimeError("vmap: a tensor's vmap levels are out of order.")
    shape = [lv.size if lv in present else 1 for lv in active]
    view = bottom.reshape(tuple(shape) + logical)
    return view.expand(tuple(lv.size for lv in active) + logical)


def from_full_physical(p, active):
    """The plain tensor ``p`` (one leading dim per level of ``active``) wrapped at each level, the innermost outside."""
    t = p
    for lv in active:
        t = wrap(t, lv)
    return t


def _primal_chain(t):
    """``t``'s physical tensor below its vmap levels (not tangents-only ones), and those levels, the outermost first."""
    chain = []
    while type(t) is BatchedTensor and not t.level.tangents_only:
        chain.append(t.level)
        t = t.inner
    chain.reverse()
    return t, chain


class _ForwardView:
    """How forward mode sees batched tensors: by their physical tensors. See Note [The order of transform levels]."""

    tensor_type = BatchedTensor

    @staticmethod
    def outer_interposers():
        return [lv.interposer for lv in _levels.stack if not lv.tangents_only and lv.interposer is not None]

    @staticmethod
    def tangent(t, level):
        bottom, chain = _primal_chain(t)
        if not chain:
            return None
        tangent = tangent_of(bottom, level)
        return None if tangent is None else from_full_physical(tangent, chain)

    @staticmethod
    def physical(t, tangent):
        bottom, chain = _primal_chain(t)
        if tangent is None or not chain:
            return bottom, tangent
        lifted = to_full_physical(tangent, chain)
        _, theirs = _primal_chain(tangent)
        if len(theirs) != len(chain) or any(a is not b for a, b in zip(theirs, chain)):
            lifted = lifted.clone()  # a broadcast is no tangent to write into
        return bottom, lifted

    @staticmethod
    def lift(tensor, tangent):
        _, mine = _primal_chain(tensor)
        _, theirs = _primal_chain(tangent)
        present = mine + [lv for lv in theirs if not any(lv is m for m in mine)]
        order = [lv for lv in _levels.stack if any(lv is p for p in present)]
        if not order:
            return tensor, tangent, order
        return to_full_physical(tensor, order), to_full_physical(tangent, order), order

    rewrap = staticmethod(from_full_physical)

    @staticmethod
    def zeros(like, tangent):
        chain = []  # tangent's levels, the innermost first, down to its plain tensor
        while type(tangent) is BatchedTensor:
            chain.append(tangent.level)
            tangent = tangent.inner
        chain.reverse()
        return from_full_physical(tangent.new_zeros(tuple(lv.size for lv in chain) + tuple(like.shape)), chain)


use_batching(_ForwardView())
