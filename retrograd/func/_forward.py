"""``torch.func``'s forward-mode transforms: ``jvp``, ``jacfwd``, ``linearize`` and ``hessian``.

Built on autograd/forward_ad.py: each Jacobian-vector product is one forward pass under a dual
level. Inputs and outputs are Tensors or tuples of them.

Note [Batched tangents]
~~~~~~~~~~~~~~~~~~~~~~~
``jacfwd`` (and ``autograd.functional``'s forward-mode ``jacobian`` with ``vectorize=True``)
computes all the columns of an input's Jacobian in one forward pass, as PyTorch does: the basis
tangents are batched by a vmap level (``vmap_tangents``) and each is paired with the unbatched
primal inside a dual level, so the primal computation runs once, unbatched, and only the tangent
arithmetic of the forward interposer runs batched (the vmap interposer sits inside it, Note [Op
call interposition]). The level is *tangents-only*: no primal value is ever batched at it, so a
reverse transform inside (``hessian = jacfwd(jacrev(f))``) lifts its inputs only to the other
levels (``primal_levels``), and its backward pass, whose formulas compute batched tangents, still
goes through that level's interposer (``_past_vmap`` skips only the vmap levels outside the
forward one). Under vmap (``vmap(jacfwd(f))``, ``vmap(hessian(f))``) the level's interposer goes
inside the dual level's, as it does alone, and so inside the outer vmap levels' too (Note [The
order of transform levels]): the outer levels turn each call into its physical one, forward mode
differentiates that on physical tangents, themselves batched at the tangents-only level. Each
output's tangent is returned physical at the outer levels (a tensor batched at the tangents-only
level only), and the columns, batched there first, get the basis dim moved under the outer
levels' dims and are wrapped at them again. Where an op refuses to batch (``Batching rule not
implemented``), and under a dual level already active, the columns are computed one by one
instead (``forward_columns``): the same numbers.
"""
from __future__ import annotations

from .._creation import eye, zeros_like
from .._tensor import Tensor
from ..autograd import forward_ad as _fwad
from ..autograd import functional as _functional
from ..autograd.functional import forward_columns
from ..autograd.grad_mode import enable_grad
from ..ops._forward import current_level
from ._batched import from_full_physical, primal_levels, to_full_physical
from ._eager import _check_argnums, jacrev
from ._vmap import vmap_tangents

_NO_RULE = "Batching rule not implemented for aten::"


def _batched_jvp(func, inputs, j, randomness, check):
    """``forward_columns``'s ``(outputs, columns)`` by one forward pass with the basis tangents of
    ``inputs[j]`` batched, or None where it cannot batch them (Note [Batched tangents])."""
    inp = inputs[j]
    n = inp.numel()
    if not n or current_level() is not None:
        return None
    outer = primal_levels()
    basis = eye(n, dtype=inp.dtype, device=inp.device).reshape((n,) + tuple(inp.shape))
    primal = []

    def push(tangent):
        with _fwad.dual_level():
            duals = tuple(_fwad.make_dual(x, tangent) if k == j else x for k, x in enumerate(inputs))
            outs = func(*duals)
            outs = outs if isinstance(outs, tuple) else (outs,)
            if check is not None:
                check(outs)
            primal[:] = outs
            tangents = [_fwad.unpack_dual(o).tangent for o in outs]
        # physical at the outer levels, batched at the tangents' only
        return tuple(to_full_physical(zeros_like(o) if t is None else t, outer)
                     for o, t in zip(outs, tangents, strict=True))
    try:
        columns = vmap_tangents(push, (basis,), randomness)
    except RuntimeError as exc:
        if str(exc).startswith(_NO_RULE):
            return None
        raise
    if outer:  # the basis dim first under the outer levels' dims, then wrapped at them
        columns = [from_full_physical(c.movedim(0, len(outer)), outer) for c in columns]
    return tuple(primal), list(columns)


_functional.batched_jvp = _batched_jvp

__all__ = ["jvp", "jacfwd", "linearize", "hessian"]


def _check_tensors(outs, where):
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J tangents)``: the output and its Jacobian-vector product, as ``torch.func.jvp``.

    Args:
        func (callable): takes Tensors, returns a Tensor or a tuple of Tensors (with ``has_aux``,
            a pair ``(output, aux)``).
        primals (tuple of Tensor): the point.
        tangents (tuple of Tensor): one per primal, of its shape.
        strict (bool): unused, as in PyTorch's.
        has_aux (bool): ``func`` also returns an auxiliary object, returned third.

    Returns:
        tuple: ``(output, jvp_out)``, or ``(output, jvp_out, aux)``.

    Raises:
        RuntimeError: for primals that are not a tuple, tangents of another structure, or an
            output that is not made of tensors.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import jvp
        >>> jvp(lambda x: x * x, (rg.tensor([1., 2.]),), (rg.tensor([1., 1.]),))[1]
        tensor([2., 4.])
    """
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be.")
    with _fwad.dual_level():
        duals = tuple(_fwad.make_dual(p, t) for p, t in zip(primals, tangents, strict=True))
        result = func(*duals)
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            result, aux = result
        is_tuple = isinstance(result, tuple)
        outs = result if is_tuple else (result,)
        _check_tensors(outs, "jvp(f, primals, tangents)")
        pairs = [_fwad.unpack_dual(o) for o in outs]
        primal_out = tuple(p.primal for p in pairs)
        tangent_out = tuple(zeros_like(p.primal) if p.tangent is None else p.tangent for p in pairs)
    if not is_tuple:
        primal_out, tangent_out = primal_out[0], tangent_out[0]
    return (primal_out, tangent_out, aux) if has_aux else (primal_out, tangent_out)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The function computing ``func``'s Jacobian with respect to ``argnums`` by forward mode, as ``torch.func.jacfwd``.

    Entry ``[i][j]`` has shape ``outputs[i].shape + inputs[argnums[j]].shape``; an int ``argnums``
    or a bare Tensor output drops its level of tuple.

    Args:
        func (callable): takes Tensors, returns a Tensor or a tuple of Tensors (with ``has_aux``,
            ``(output, aux)``).
        argnums (int or tuple of int): which positional arguments to differentiate.
        has_aux (bool): ``func`` also returns an auxiliary object, returned second.
        randomness (str): the randomness of the vmap over the basis tangents: 'error', 'different' or
            'same' (see ``vmap``).

    Returns:
        callable: ``jac_fn(*args)``, giving the Jacobian (and ``aux``).

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import jacfwd
        >>> jacfwd(lambda x: x ** 2)(rg.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    def jac_fn(*args):
        nums = _check_argnums(argnums, len(args))
        inputs = tuple(args[a] for a in nums)
        aux = []

        def wrt(*xs):
            full = list(args)
            for a, x in zip(nums, xs, strict=True):
                full[a] = x
            out = func(*full)
            if has_aux:
                out, extra = out
                if not aux:
                    aux.append(extra)
            return out
        is_tuple = []

        def check(outs):
            _check_tensors(outs, "jacfwd(f, ...)(*args)")

        def wrt_tuple(*xs):  # the outputs as a tuple; whether func gave one
            out = wrt(*xs)
            is_tuple[:] = [isinstance(out, tuple)]
            return out
        entries = None
        for j, inp in enumerate(inputs):
            with enable_grad():
                outs, cols = forward_columns(wrt_tuple, inputs, j, vectorize=True, randomness=randomness, check=check)
            if entries is None:
                entries = [[] for _ in outs]
            for i, (out, col) in enumerate(zip(outs, cols, strict=True)):
                entries[i].append(col.movedim(0, -1).reshape(tuple(out.shape) + tuple(inp.shape)))
        is_tuple = is_tuple[0]
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):  # nothing to differentiate further
            entries = [[e.detach() for e in row] for row in entries]
        result = tuple(e[0] if isinstance(argnums, int) else tuple(e) for e in entries)
        result = result if is_tuple else result[0]
        return (result, aux[0]) if has_aux else result
    return jac_fn


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: the output and a function of tangents giving ``J tangents``, as
    ``torch.func.linearize`` (each call of ``jvp_fn`` is one forward-mode pass at ``primals``).

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import linearize
        >>> out, jvp_fn = linearize(lambda x: x * x, rg.tensor([3.]))
        >>> jvp_fn(rg.tensor([1.]))
        tensor([6.])
    """
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def hessian(func, argnums=0):
    """The function computing ``func``'s Hessian, ``jacfwd(jacrev(func))``, as ``torch.func.hessian``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.func import hessian
        >>> hessian(lambda x: (x ** 3).sum())(rg.tensor([1., 2.]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
