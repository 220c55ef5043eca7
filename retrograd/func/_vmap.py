"""``vmap``: a function of one sample run on a whole batch at once, by batched tensors and batching rules.

A call of the vmapped function enters a vmap level (Note [Batched tensors]), wraps the mapped
inputs as BatchedTensors of it (their mapped dim moved first), and pushes the level's interposer
(Note [Op call interposition]): each op call with an argument batched at the level runs once on
the physical tensors by its batching rule (Note [Batching rules]) and its result is wrapped. The
outputs are unwrapped with the batch moved to ``out_dims``.
"""
from __future__ import annotations

import functools
from threading import get_ident

from .. import ops
from .._tensor import Tensor
from ..ops._call import pop_interposer, push_interposer
from ..ops._forward import push_inside
from ._batched import ESCAPED, BatchedTensor, pop_level, primal_levels, push_level, wrap
from ._pytree import tree_flatten, tree_unflatten
from ._randomness import INPLACE_UNBATCHED, RANDOMNESS_ERROR, check_level, guard, rewound
from ._rules import DYNAMIC_SHAPE, RANDOM_OPS, RULES, Call, per_sample

__all__ = ["vmap", "vmap_tangents", "autograd_vmap"]

_RANDOMNESS = ("error", "different", "same")
def _name(func):
    return getattr(func, "__name__", repr(func))


class _VmapInterposer:
    """Runs the op calls with an argument batched at ``level`` by their batching rules."""

    __slots__ = ("level",)

    def __init__(self, level):
        self.level = level

    def interpose(self, op, args, inplace, proceed):
        level = self.level
        hit = False
        for i in op.tensor_pos:
            a = args[i]
            if type(a) is BatchedTensor:
                if a.level is level:
                    hit = True
                elif a.level.ended:
                    raise RuntimeError(ESCAPED)
            elif type(a) in (list, tuple) and i in op.index_lists:
                if any(type(t) is BatchedTensor and t.level is level for t in a):
                    hit = True
        if not hit:  # a tensor where the op takes no differentiable one (scatter's index, index_put's indices)
            hit = any(_batched_at(a, level) for i, a in enumerate(args) if i not in op.tensor_pos)
        if not hit:
            if op.name in RANDOM_OPS:
                return self._random(op, args, inplace, proceed)
            return proceed(op, args, inplace)
        if op.name in DYNAMIC_SHAPE:
            raise RuntimeError(f"vmap: We do not support batching operators that can output dynamic shape. Attempted "
                               f"to vmap over aten::{op.name}. Please file an issue at "
                               f"https://github.com/pytorch/pytorch/issues if you need this feature.")
        rule = RULES.get(op.name, per_sample)  # See Note [Batching rules]
        out = rule(Call(level, op, args, inplace, proceed))
        if inplace is not None:
            return inplace if type(inplace) is BatchedTensor and inplace.level is level else out
        if op.multi_output:
            return tuple(wrap(o, level) for o in out)
        return wrap(out, level)

    def _random(self, op, args, inplace, proceed):
        """A random op with no argument batched at the level: one draw for every sample, or one per sample."""
        level = self.level
        if level.thread != get_ident():  # a vmap of another thread: See Note [Randomness under vmap]
            return proceed(op, args, inplace)
        check_level(level, False)
        if level.randomness == "same" or level.tangents_only:
            return proceed(op, args, inplace)
        if inplace is not None:
            raise RuntimeError(INPLACE_UNBATCHED)
        return _lifted_random(level, op, args, proceed)


def _batched_at(a, level):
    """Whether ``a`` (or a tensor of list ``a``) is batched at ``level``; PyTorch's error for an escaped one."""
    for t in (a if type(a) in (list, tuple) else (a,)):
        if type(t) is BatchedTensor:
            if t.level is level:
                return True
            if t.level.ended:
                raise RuntimeError(ESCAPED)
    return False


def _lifted_random(level, op, args, proceed):
    """A random op of unbatched arguments drawn once per sample: the first tensor argument lifted."""
    args = list(args)
    first = op.tensor_pos[0]
    a = args[first]
    args[first] = a.unsqueeze(0).expand((level.size,) + tuple(a.shape))
    out = proceed(op, tuple(args), None)
    return tuple(wrap(o, level) for o in out) if op.multi_output else wrap(out, level)


def _check_out_dims(out_dims, fname):
    leaves, _ = tree_flatten(out_dims)
    if not all(d is None or type(d) is int for d in leaves):
        raise ValueError(f"vmap({fname}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                         f"collection of ints representing where in the outputs the vmapped dimension should appear.")


def _broadcast_prefix(prefix, spec, what, fname, dims_text, tree_spec):
    """The leaves of the pytree ``prefix`` (in_dims or out_dims) broadcast over ``spec``'s leaves."""
    out = []

    def walk(p, s):
        if not isinstance(p, (tuple, list, dict)):
            out.extend([p] * s.num_leaves)
            return
        if s.kind is None or (isinstance(p, dict) != (s.kind is dict)) or len(p) != len(s.children) or (
                s.kind is dict and set(p) != set(s.keys)):
            raise ValueError(
                f"vmap({fname}, {dims_text}): {what} is not compatible with the structure of `{tree_spec}`. "
                f"{what} has structure {tree_flatten(prefix)[1]} but {tree_spec} has structure {spec}.")
        if s.kind is dict:
            for k, c in zip(s.keys, s.children, strict=True):
                walk(p[k], c)
        else:
            for x, c in zip(p, s.children, strict=True):
                walk(x, c)

    walk(prefix, spec)
    return out


def _batch_size(flat_args, flat_dims, fname, in_dims):
    sizes = []
    for a, d in zip(flat_args, flat_dims, strict=True):
        if d is None:
            continue
        if type(d) is not int:
            raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             f"in_dim must be either an integer dimension or None.")
        if not isinstance(a, Tensor):
            raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                             f"input is of type {type(a)}. We cannot vmap over non-Tensor arguments, please use None "
                             f"as the respective in_dim")
        nd = a.dim()
        if not -nd <= d < nd:
            raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                             f"that input is a Tensor of dimensionality {nd} so expected in_dim to satisfy "
                             f"-{nd} <= in_dim < {nd}.")
        sizes.append(a.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _flat_in(func, in_dims, args):
    fname = _name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({fname})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         f"to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast_prefix(in_dims, spec, "in_dims", fname, f"in_dims={in_dims}, ...)(<inputs>", "inputs")
    size = _batch_size(flat_args, flat_dims, fname, in_dims)
    return flat_args, flat_dims, spec, size


def _run_level(func, flat_args, flat_dims, spec, size, out_dims, randomness, kwargs, tangents_only=False):
    """One vmap level over ``flat_args`` (batch ``size``): the outputs, their batch at ``out_dims``."""
    fname = _name(func)
    moved = [a if d is None else a.movedim(d, 0) if d % a.dim() else a for a, d in zip(flat_args, flat_dims,
                                                                                      strict=True)]
    outer = [lv.interposer for lv in primal_levels() if lv.interposer is not None]
    level = push_level(size, randomness, tangents_only)
    interposer = _VmapInterposer(level)
    level.interposer = interposer
    try:
        batched = [a if d is None else wrap(a, level) for a, d in zip(moved, flat_dims, strict=True)]
        if tangents_only:  # inside the dual level to come, as the primal levels put it: See Note [Batched tangents]
            push_inside(interposer, outer)
        else:
            push_interposer(interposer)
        try:
            with guard():
                out = func(*tree_unflatten(batched, spec), **kwargs)
        finally:
            pop_interposer(interposer)
    finally:
        pop_level(level)
    flat_out, out_spec = tree_flatten(out)
    flat_od = _broadcast_prefix(out_dims, out_spec, "out_dims", fname, f"..., out_dims={out_dims})(<inputs>",
                                "outputs")
    results = []
    for o, d in zip(flat_out, flat_od, strict=True):
        results.append(_unwrap_output(o, d, level, fname))
    return results, out_spec


def _unwrap_output(o, d, level, fname):
    if d is None:
        if type(o) is BatchedTensor and o.level is level:
            raise ValueError(f"vmap({fname}, ...): `{fname}` can not return a BatchedTensor when out_dim is None")
        return o
    if not isinstance(o, Tensor):
        raise ValueError(f"vmap({fname}, ...): `{fname}` must only return Tensors, got type {type(o)}. Did you mean "
                         f"to set out_dims= to None for output?")
    if type(o) is BatchedTensor and o.level is level:
        p = o.inner
    else:
        p = o.unsqueeze(0).expand((level.size,) + tuple(o.shape))
    nd = p.dim()
    if not -nd <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
    return p.movedim(0, d) if d % nd else p


def vmap_tangents(func, tangents, randomness="error"):
    """``vmap(func, randomness=randomness)(*tangents)`` at a tangents-only level: ``func`` makes the
    tangents (batched over their first dim) those of dual tensors, and returns tangents only.

    See Note [Batched tangents].
    """
    flat_args, flat_dims, spec, size = _flat_in(func, 0, tangents)
    results, out_spec = _run_level(func, flat_args, flat_dims, spec, size, 0, randomness, {}, tangents_only=True)
    return tree_unflatten(results, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorizes ``func`` over a dim of its inputs: one call computes it for every entry of a batch.

    ``func`` is written for one sample; the vmapped function takes the batch and runs each op once
    on all of it (no Python loop), through the batching rules of the op table (Note [Batching
    rules]). Composes with ``grad``, ``vjp`` and ``jacrev``, and with itself.

    Args:
        func: the function; its inputs and outputs are pytrees (tuples, lists, dicts) of tensors.
        in_dims (int, None or pytree): the mapped dim of each input (a prefix of the inputs' tree;
            None: not mapped, passed as is).
        out_dims (int, None or pytree): where the batch dim goes in each output.
        randomness (str): 'error' (random functions raise), 'different' (each sample its own
            draw) or 'same' (one draw for all samples).
        chunk_size (int, optional): map at most this many samples at once (in chunks), to bound memory.

    Returns:
        The vmapped function.

    Raises:
        ValueError: bad ``in_dims``/``out_dims``, mismatched batch sizes, or no tensor to map over.
        RuntimeError: an op without a batching rule, ``item()``, data-dependent control flow, or
            a random function under ``randomness='error'``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import vmap
        >>> vmap(rg.dot)(rg.ones(3, 2), rg.ones(3, 2))
        tensor([2., 2., 2.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (type(chunk_size) is not int or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    fname = _name(func)
    _check_out_dims(out_dims, fname)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_args, flat_dims, spec, size = _flat_in(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            results, out_spec = _run_level(func, flat_args, flat_dims, spec, size, out_dims, randomness, kwargs)
            return tree_unflatten(results, out_spec)
        chunks = []
        with rewound() as rewind:  # See Note [Randomness under vmap]
            for start in range(0, size, chunk_size):
                if randomness == "same":
                    rewind()
                n = min(chunk_size, size - start)
                part = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_dims, strict=True)]
                chunks.append(_run_level(func, part, flat_dims, spec, n, out_dims, randomness, kwargs))
        out_spec = chunks[0][1]
        flat_od = _broadcast_prefix(out_dims, out_spec, "out_dims", fname, f"..., out_dims={out_dims})(<inputs>",
                                    "outputs")
        results = []
        for k, d in enumerate(flat_od):
            parts = [r[k] for r, _ in chunks]
            results.append(parts[0] if d is None else ops.cat(parts, d))
        return tree_unflatten(results, out_spec)

    return wrapped



# The words of the older vmap (``torch._vmap_internals``) that PyTorch's autograd still uses for
# batched gradients (``autograd.grad(..., is_grads_batched=True)``, gradcheck's batched forward grad).
_AUTOGRAD_RANDOMNESS_ERROR = ("vmap: We do not yet support calling random operations inside of vmap. Please perform "
                              "random operations outside of vmap as a workaround")


def autograd_vmap(func):
    """``vmap(func)`` as autograd's batched gradients use it: a random function raises the error
    of the vmap PyTorch's autograd uses for them."""
    vmapped = vmap(func)

    @functools.wraps(func)
    def run(*args):
        try:
            return vmapped(*args)
        except RuntimeError as e:
            if e.args != (RANDOMNESS_ERROR,):
                raise
            raise RuntimeError(_AUTOGRAD_RANDOMNESS_ERROR).with_traceback(e.__traceback__) from None
    return run
