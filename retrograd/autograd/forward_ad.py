"""Forward-mode automatic differentiation, as ``torch.autograd.forward_ad``.

Inside ``dual_level()``, ``make_dual(x, v)`` pairs a tensor with a tangent; every op on a dual
tensor gives its result the tangent ``J v`` (Note [Forward-mode tangents] in ops/_forward.py), and
``unpack_dual`` reads it back. One level at a time, as in PyTorch.

Example::
    >>> import retrograd as rg
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(rg.tensor([1., 2.]), rg.tensor([1., 0.]))
    ...     fwAD.unpack_dual(x * x).tangent
    tensor([2., 0.])
"""
from __future__ import annotations

from typing import NamedTuple

from .._tensor import Tensor
from ..ops._call import call_op
from ..ops._declarations import REGISTRY
from ..ops import _forward
from ..ops._forward import (current_level, enter_level, exit_level, same_layout, set_tangent, suspended,
                            tangent_of, with_layout, write_tangent_inplace)
from . import function as _function
from . import grad_mode
from .gradcheck import ForwardMode, use_forward_mode
from .grad_mode import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

# The number of the level this module's functions entered last and have not exited (-1: none), as
# PyTorch's module keeps it; code reads it to tell whether it runs inside a dual level.
_current_level = -1


def enter_dual_level():
    """Enters a new forward-grad level, the default one of this module's functions; returns its number.

    Raises:
        RuntimeError: where a level is active already (nested forward-mode AD is not supported).
    """
    global _current_level
    if current_level() is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = enter_level().index
    return _current_level


def exit_dual_level(*, level=None):
    """Exits the forward-grad level ``level`` (default: the current one), deleting its tangents.

    Raises:
        RuntimeError: where ``level`` is not the current one, or no level is active.
    """
    global _current_level
    current = current_level()
    index = -1 if current is None else current.index
    if level is None:
        level = index
    if level != index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    exit_level()
    _current_level = -1


def _level(level, what):
    """The DualLevel named ``level`` (None: the current one), or None where there is none."""
    current = current_level()
    if level is None:
        return current
    if current is None or level != current.index:
        if what == "make":
            raise RuntimeError("Invalid level given to _make_dual")
        return None
    return current


def _alias(tensor):
    """A view of ``tensor`` that no level sees as dual (PyTorch's ``ViewBackward0`` under grad); the other
    interposers see it (a vmap level views a batched tensor's whole batch)."""
    with suspended():
        return call_op(REGISTRY["view"], (tensor, tuple(tensor.shape)))


def make_dual(tensor, tangent, *, level=None):
    """Returns a view of ``tensor`` whose tangent at ``level`` is ``tangent``: kept as it is where it has the
    primal's layout (strides and storage offset in a storage of the same size), else a copy laid out so.

    Backward-differentiable: gradients flow to ``tensor`` through the view.

    Args:
        tensor (Tensor): the primal, floating point.
        tangent (Tensor): the tangent, floating point, of ``tensor``'s shape.
        level (int, optional): the level (default: the current one).

    Returns:
        Tensor: the dual tensor.

    Raises:
        RuntimeError: outside a level, for another level, a tangent of another shape, or a
            ``tensor`` or ``tangent`` that has a tangent at this level already.
        ValueError: a primal or tangent that is not floating point.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(rg.tensor([3.]), rg.tensor([1.]))
        ...     fwAD.unpack_dual(d.exp()).tangent.allclose(rg.tensor([3.]).exp())
        True
    """
    if level is None and current_level() is None or level is not None and level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not tensor.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    lvl = _level(level, "make")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if tangent_of(tensor, lvl) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {lvl.index} is not supported.")
    if tangent_of(tangent, lvl) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{lvl.index} "
                           f"is not supported.")
    view = _forward.batching
    if view is not None and (type(tensor) is view.tensor_type or type(tangent) is view.tensor_type):
        # See Note [The order of transform levels]
        physical, physical_tangent, levels = view.lift(tensor, tangent)
        if levels:
            dual = _alias(physical)
            set_tangent(dual, physical_tangent, lvl)
            return view.rewrap(dual, levels)
    dual = _alias(tensor)
    if grad_mode.inference_now():  # inference mode computes no tangent, as PyTorch's
        return dual
    batched = view is not None and type(tangent) is view.tensor_type  # a batch of tangents is kept as it is
    if not batched and not same_layout(tangent, tensor):  # See Note [The layout of a tangent] in ops/_forward.py
        tangent = with_layout(tangent, tensor)
    set_tangent(dual, tangent, lvl)
    return dual


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the ``primal`` (a view) and the ``tangent`` (None where it has none)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor, *, level=None):
    """Splits a dual tensor into a view of its primal and its tangent at ``level`` (as it is).

    Outside any level, returns ``(tensor, None)``. Backward-differentiable.

    Args:
        tensor (Tensor): a tensor, dual or not.
        level (int, optional): the level (default: the current one).

    Returns:
        UnpackedDualTensor: ``(primal, tangent)``.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> fwAD.unpack_dual(rg.ones(1)).tangent is None
        True
    """
    if level is None and current_level() is None or level is not None and level < 0:
        return UnpackedDualTensor(tensor, None)
    lvl = _level(level, "unpack")
    tangent = None if lvl is None else tangent_of(tensor, lvl)
    return UnpackedDualTensor(_alias(tensor), tangent)


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) of a forward-AD level: enters it, and exits it at the end,
    deleting its tangents. ``with dual_level() as level:`` gives the level's number.

    Example::
        >>> import retrograd as rg
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(rg.ones(2), rg.ones(2))
        >>> fwAD.unpack_dual(d).tangent is None
        True
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _fw_primal(self, level):
    """A view of this tensor without its tangent at ``level`` (PyTorch's ``Tensor._fw_primal``)."""
    return _alias(self)


Tensor._fw_primal = _fw_primal


# -- custom Functions ----------------------------------------------------------------------------------
class _CustomFunctionForward:
    """What ``Function.apply`` asks of forward mode (Note [Forward-mode tangents]): whether a call has
    dual inputs, and the tangents of its outputs from the Function's ``jvp``."""

    @staticmethod
    def has_tangents(inputs):
        level = current_level()
        return level is not None and any(isinstance(a, Tensor) and tangent_of(a, level) is not None for a in inputs)

    suspended = suspended

    @staticmethod
    def jvp(cls, ctx, inputs, outputs):
        level = current_level()
        given = [tangent_of(a, level) if isinstance(a, Tensor) else None for a in inputs]
        in_tangents = [a.new_zeros(a.shape) if t is None and isinstance(a, Tensor) and a.is_floating_point() else t
                       for a, t in zip(inputs, given, strict=True)]
        versions = [None if t is None else t._version for t in in_tangents]  # a dirty input's must change
        ctx._jvp_saved = getattr(ctx, "saved_for_forward", None) or ()  # in jvp, saved_tensors is only these
        try:
            with suspended():
                res = cls.jvp(ctx, *in_tangents)
        finally:
            ctx._jvp_saved = None
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        res = res if isinstance(res, tuple) else (res,)
        if len(res) != len(outs):
            raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                               f"{len(outs)} but got {len(res)})")
        dirty = {id(t) for t in ctx.dirty_tensors}
        nondiff = {id(t) for t in ctx.non_differentiable}
        bases = {}  # each input's base (itself where it is not a view): the first input on it
        for k, a in enumerate(inputs):
            if isinstance(a, Tensor):
                bases.setdefault(id(a if a._base is None else a._base), k)
        for i, (o, t) in enumerate(zip(outs, res, strict=True)):
            if t is not None and not isinstance(t, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(t).__name__}) for grad output {i}.")
            differentiable = isinstance(o, Tensor) and o.is_floating_point() and id(o) not in nondiff
            if t is None:
                continue
            if not differentiable:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the corresponding "
                                   f"forward output is not a differentiable Tensor.You should return None at that "
                                   f"position instead.")
            if tuple(t.shape) != tuple(o.shape):
                raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the "
                                   f"original Tensor, this is not supported. Tensor is of size {list(o.shape)} "
                                   f"while the given forward gradient is of size {list(t.shape)}.")
            if id(o) in dirty:
                k = next(k for k, a in enumerate(inputs) if a is o)
                if t is not in_tangents[k] or t._version == versions[k]:
                    raise RuntimeError("An inplace custom Function is not modifying the forward mode gradients "
                                       "inplace. If the forward is modifying an input inplace, then the jvp function "
                                       "must modify the corresponding gradient inplace.")
            elif o._base is not None and id(o._base) in bases:
                _set_view_tangent(o, t, given[bases[id(o._base)]], level)
                continue
            set_tangent(o, t, level)
        return outputs


def _set_view_tangent(o, t, given, level):
    """Gives ``o``, an output of a custom Function that views an input (or is one returned as-is), the tangent
    ``t`` its jvp returned: a view of the input's tangent ``given``, as PyTorch checks; where the input has
    none, ``t`` is written as by an in-place op, so that the input's base gets a tangent too."""
    if given is None:
        write_tangent_inplace(o, t, level)
        return
    if t._base is None:
        raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the jvp is not "
                           "returning a view.")
    if given._base is not None:
        if t._base is not given._base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the same "
                               "base as the given grad input.")
    elif t._base is not given:
        raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the given "
                           "grad input.")
    set_tangent(o, t, level)


_function.forward_mode_hook = _CustomFunctionForward
use_forward_mode(ForwardMode(dual_level, make_dual, unpack_dual))
