"""vmap's batching rules: how each op of the table runs once on a batch, keyed by op name.

Note [Batching rules]
~~~~~~~~~~~~~~~~~~~~~
A rule is ``rule(c)`` for a ``Call`` ``c`` of an op with an argument batched at the interposing
vmap level (Note [Batched tensors]); it returns the op's result on the physical tensors, each
with the batch as its first dim (a tuple for a multi-output op; for an in-place call, the
physical target written). ``c.phys(a)`` is an argument's physical tensor (batch first), or None
where it is not batched at this level; ``c.lift(a)`` is the physical tensor of any tensor,
unbatched ones broadcast over the batch. The op itself runs through ``c.run(args)``, which goes on
to the interposers inside this level and last the op call. Most ops follow the rule of their
category, made by the constructors below:

  ``elementwise``       tensors broadcast: a batched argument of lower logical rank than the
                        highest gets size-1 dims after its batch dim, so NumPy's broadcasting
                        lines the logical dims up as they were (an unbatched one needs nothing);
  ``on_dims(...)``      one batched input (others lifted); the named dim arguments are shifted by
                        one past the batch dim, ``None`` meaning "all dims" becomes all but it;
  ``batch_first``       the op already treats leading dims as batch dims (linalg, last-dim ops);
  and the shape, matmul-family, loss and random-op rules below.

``RULES`` is the one table. An op of the table without a rule runs once per sample and its
results are stacked (``per_sample``, PyTorch's fallback): slower than a rule, and exact. A rule
may still refuse a case it cannot batch with PyTorch's error naming the op (``Batching rule not
implemented for aten::<name>``); ops whose output shape depends on the data raise PyTorch's
dynamic-shape error. Composite functions (``flatten``, ``narrow``, ``chunk``...)
need no rule: they read the logical shape and call ops that have one.
"""
from __future__ import annotations

import numpy as np

from .. import ops
from .._tensor import Tensor, _wrap_dim
from ..ops._inplace import apply_inplace
from ..ops._node import DIM_UNSET
from ._batched import BatchedTensor, wrap
from ._randomness import check_level

__all__ = ["per_sample", "Call", "RULES", "DYNAMIC_SHAPE", "RANDOM_OPS"]


class Call:
    """One op call with a batched argument at ``level`` (see Note [Batching rules])."""

    __slots__ = ("level", "op", "args", "inplace", "proceed", "size")

    def __init__(self, level, op, args, inplace, proceed):
        self.level = level
        self.op = op
        self.args = args
        self.inplace = inplace
        self.proceed = proceed
        self.size = level.size

    def phys(self, a):
        """The physical tensor of ``a`` at this level (batch first), or None."""
        if type(a) is BatchedTensor and a.level is self.level:
            return a.inner
        return None

    def lift(self, a):
        """The physical tensor of tensor ``a``, an unbatched one broadcast over the batch."""
        p = self.phys(a)
        if p is not None:
            return p
        return a.unsqueeze(0).expand((self.size,) + tuple(a.shape))

    def run(self, args):
        """The op on physical ``args``: through the inner interposers, in place where the call is."""
        if self.inplace is not None:
            target = self.phys(self.inplace)
            if target is None:
                shapes = [tuple(a.shape) for a in self.args if isinstance(a, Tensor)]
                try:
                    shape = np.broadcast_shapes(*shapes)
                except ValueError:  # not a broadcasting op: the batch of the target's shape
                    shape = tuple(self.inplace.shape)
                raise _into_unbatched(self.inplace, (self.size,) + tuple(shape))
            args = list(args)
            args[0] = target
            return apply_inplace(self.op, tuple(args))
        return self.proceed(self.op, tuple(args), None)


def per_sample(c, before_each=None):
    """The fallback for an op without a rule: the op once per sample, on each sample's slice, the results stacked.

    ``before_each()``, where given, runs before each sample's call."""
    target = None
    if c.inplace is not None:
        target = c.phys(c.inplace)
        if target is None:
            raise _into_unbatched(c.inplace, (c.size,) + tuple(c.inplace.shape))
    results = []
    for b in range(c.size):
        args = list(c.args)
        for i, a in enumerate(args):  # every argument: a tensor may sit where a number could (scatter's src)
            if type(a) in (list, tuple):
                args[i] = type(a)(t if c.phys(t) is None else c.phys(t)[b] for t in a)
            elif c.phys(a) is not None:
                args[i] = c.phys(a)[b]
        if before_each is not None:
            before_each()
        if target is not None:
            apply_inplace(c.op, tuple(args))
        else:
            results.append(c.proceed(c.op, tuple(args), None))
    if target is not None:
        return target
    try:
        if c.op.multi_output:
            return tuple(ops.stack(list(r), 0) for r in zip(*results, strict=True))
        return ops.stack(results, 0)
    except RuntimeError:  # the samples' results differ in shape: there is no batch of them
        raise _no_rule(c.op.name, "(its results differ in shape between samples)") from None


def _into_unbatched(target, shape):
    """PyTorch's error for an in-place write of a batch (of physical ``shape``) into an unbatched tensor."""
    return RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast shape {list(shape)}")


def _pad(p, k):
    """Physical ``p`` with ``k`` size-1 dims after its batch dim."""
    if not k:
        return p
    shape = tuple(p.shape)
    return p.reshape(shape[:1] + (1,) * k + shape[1:])


def elementwise(c):
    args = list(c.args)
    pos = [i for i in c.op.tensor_pos if isinstance(args[i], Tensor)]
    if len(pos) == 1:  # one tensor: nothing to line up
        args[pos[0]] = c.phys(args[pos[0]])
        return c.run(args)
    ranks = [args[i]._data.ndim for i in pos]  # the logical ranks (Note [Batched tensors])
    rank = max(ranks)
    for i, r in zip(pos, ranks, strict=True):
        p = c.phys(args[i])
        if p is not None:
            args[i] = _pad(p, rank - r)
    return c.run(args)


def elementwise_full(c):
    """An elementwise op whose kernel writes into a buffer of one argument's shape (``tanh_backward``): every
    tensor lifted and expanded to the batch of the broadcast shape (an unbatched one only as a view)."""
    args = list(c.args)
    pos = [i for i in c.op.tensor_pos if isinstance(args[i], Tensor)]
    shape = (c.size,) + tuple(np.broadcast_shapes(*[tuple(args[i].shape) for i in pos]))
    for i in pos:
        p = c.lift(args[i])
        p = _pad(p, len(shape) - p.dim())
        args[i] = p if tuple(p.shape) == shape else p.expand(shape)
    return c.run(args)


def elementwise_into_first(c):
    """An elementwise op whose result has the first argument's shape (``masked_fill``): the first is lifted."""
    args = list(c.args)
    if c.inplace is None and c.phys(args[0]) is None:
        args[0] = wrap(c.lift(args[0]), c.level)
    return elementwise(Call(c.level, c.op, tuple(args), c.inplace, c.proceed))


def batch_first(c):
    """Every tensor lifted, batch first; the op treats leading dims as batch dims."""
    args = list(c.args)
    for i in c.op.tensor_pos:
        if isinstance(args[i], Tensor):
            args[i] = c.lift(args[i])
    return c.run(args)


def batch_first_padded(c):
    """Every tensor lifted, batch first, and padded to the highest logical rank with size-1 dims after the batch:
    an op whose leading dims broadcast as batch dims (``cdist``, ``linalg_solve_triangular``)."""
    args = list(c.args)
    pos = [i for i in c.op.tensor_pos if isinstance(args[i], Tensor)]
    rank = max(args[i].dim() for i in pos)
    for i in pos:
        args[i] = _pad(c.lift(args[i]), rank - args[i].dim())
    return c.run(args)


def first_only(c):
    """Only the first argument may be batched; the op treats its leading dims as batch dims."""
    args = list(c.args)
    for i in c.op.tensor_pos[1:]:
        if c.phys(args[i]) is not None:
            raise _no_rule(c.op.name, f"with batched argument {c.op.params[i]!r}")
    args[0] = c.phys(args[0])
    return c.run(args)


def _shift(d, nd):
    return _wrap_dim(d, nd) + 1


def on_dims(*names, all_dims="tuple", new=(), lists=False, only_first=False):
    """The rule of an op over one input's dims: the dim arguments ``names`` shifted past the batch dim.

    ``all_dims``: what a ``None`` dim means: "tuple" (all dims: all but the batch dim), "flatten"
    (the flattened input: the physical input becomes (batch, -1) with dim 1, the result reshaped
    back where ``keepdim``) or None (nothing: passed on). ``new``: dims of the result (ranked one
    more than the input, as ``unsqueeze``'s). ``lists``: the first argument is a list of tensors,
    all lifted. ``only_first``: the other tensor arguments stay unbatched (a batched one has no rule).
    """
    def rule(c):
        args = list(c.args)
        op = c.op
        if lists:
            tensors = args[0]
            nd = tensors[0].dim()
            args[0] = [c.lift(t) for t in tensors]
        else:
            nd = args[0].dim()
            for i in op.tensor_pos:
                if not isinstance(args[i], Tensor):
                    continue
                if only_first and i != op.tensor_pos[0]:
                    if c.phys(args[i]) is not None:
                        raise _no_rule(op.name, f"with batched argument {op.params[i]!r}")
                    continue
                args[i] = c.lift(args[i])
        scalar = nd == 0 and not lists and not new  # a 0-d input's dim 0 (or -1): the physical input gets a size-1 dim
        if scalar:
            for i in op.tensor_pos:
                if isinstance(args[i], Tensor) and args[i].dim() == 1:
                    args[i] = args[i].reshape(c.size, 1)
        flat_back = None
        for name in names:
            i = op.index[name]
            d = args[i]
            rank = nd + 1 if name in new else nd
            if isinstance(d, (tuple, list)) and not d and all_dims == "tuple" or d is DIM_UNSET:
                d = None  # PyTorch's empty dim list reduces every dim; so does sum's unset dim (Note [An explicit
                # dim of None] in ops/_node.py)
            if d is None:
                if all_dims == "tuple":
                    args[i] = tuple(range(1, max(nd, 1) + 1))
                elif all_dims == "flatten":
                    args[0] = args[0].reshape(c.size, -1)
                    args[i] = 1
                    if "keepdim" in op.index and args[op.index["keepdim"]]:
                        flat_back = (c.size,) + (1,) * nd
            elif isinstance(d, (tuple, list)):
                args[i] = tuple(_shift(x, rank) for x in d)
            else:
                args[i] = _shift(d, rank)
        out = c.run(args)
        if scalar:
            flat_back = (c.size,)
        if flat_back is not None and c.inplace is None:
            out = tuple(o.reshape(flat_back) for o in out) if op.multi_output else out.reshape(flat_back)
        return out
    return rule


def _all_reduction(function, multi=False):
    """An op over all elements (``max_all``...) as ``function(flat, 1)`` on the (batch, -1) physical input."""
    def rule(c):
        flat = c.phys(c.args[0]).reshape(c.size, -1)
        out = function(flat, 1)
        return out[0] if multi else out
    return rule


def _shape_arg_rule(name, pad_to_new=False):
    """view/reshape/expand/repeat: the shape argument gets the batch in front."""
    def rule(c):
        args = list(c.args)
        p = c.phys(args[0])
        shape = tuple(args[1])
        nd = args[0].dim()
        if name == "repeat":
            if len(shape) > nd:
                p = _pad(p, len(shape) - nd)
            args[1] = (1,) + shape
        elif name == "expand":
            if len(shape) > nd:
                p = _pad(p, len(shape) - nd)
            args[1] = (c.size,) + shape
        else:
            args[1] = (c.size,) + shape
        args[0] = p
        return c.run(args)
    return rule


def _as_strided(c):
    """as_strided: the batch's own stride in front; each sample's offset is the given one plus its place in the
    batch, as PyTorch's rule."""
    input, size, stride, offset, _ = c.args
    p = c.phys(input)
    offset = p.storage_offset() if offset is None else offset
    return c.run([p, (c.size,) + tuple(size), (p.stride(0),) + tuple(stride), offset, (p.stride(), p.storage_offset())])


def _permute(c):
    args = list(c.args)
    nd = args[0].dim()
    args[0] = c.phys(args[0])
    args[1] = (0,) + tuple(_shift(d, nd) for d in args[1])
    return c.run(args)


def _t(c):
    p = c.phys(c.args[0])
    if c.args[0].dim() < 2:
        return p.view(tuple(p.shape))
    return ops.transpose(p, 1, 2)


def _squeeze(c):
    args = list(c.args)
    x = args[0]
    nd = x.dim()
    d = args[1]
    if d is None:
        d = tuple(i for i, n in enumerate(x.shape) if n == 1)
        if not d:
            p = c.phys(x)
            return p.view(tuple(p.shape))
    args[0] = c.phys(x)
    args[1] = tuple(_shift(i, nd) for i in d) if isinstance(d, (tuple, list)) else _shift(d, nd)
    return c.run(args)


def _roll(c):
    args = list(c.args)
    x = args[0]
    nd = x.dim()
    p = c.phys(x)
    if args[2] is None or args[2] == ():
        shape = tuple(p.shape)
        out = ops.roll(p.reshape(c.size, -1), args[1], 1)
        return out.reshape(shape)
    dims = args[2]
    args[0] = p
    args[2] = tuple(_shift(d, nd) for d in dims) if isinstance(dims, (tuple, list)) else _shift(dims, nd)
    return c.run(args)


def _matmul_phys(a, ra, b, rb):
    """The batched matmul of physical ``a`` (logical rank ``ra``) and ``b`` (``rb``); unbatched ones have rank r."""
    if ra == 1 and rb == 1:
        return (a * b).sum(-1)
    if rb == 2 and b.dim() == 2:  # an unbatched matrix on the right: NumPy's matmul lines the batch up itself
        return ops.matmul(a, b)
    if ra == 2 and a.dim() == 2 and rb > 2:
        return ops.matmul(a, b)
    squeeze = None
    if ra == 1:
        a = a.unsqueeze(-2)
        squeeze = -2
        ra = 2
    if rb == 1:
        b = b.unsqueeze(-1)
        squeeze = -1
        rb = 2
    # Line the batch dims up: every batched operand has its batch dim first, at the same place.
    a_b = a.dim() > ra
    b_b = b.dim() > rb
    rank = max(ra, rb)
    if a_b:
        a = _pad(a, rank - ra)
    if b_b:
        b = _pad(b, rank - rb)
    out = ops.matmul(a, b)
    return out if squeeze is None else out.squeeze(squeeze)


def _operand(c, a):
    """The physical tensor (batched: batch first) of a matmul operand, and its logical rank."""
    p = c.phys(a)
    return (a if p is None else p), a.dim()


def _matmul(c):
    (a, ra), (b, rb) = _operand(c, c.args[0]), _operand(c, c.args[1])
    return _matmul_phys(a, ra, b, rb)


def _dot(c):
    a, b = c.lift(c.args[0]), c.lift(c.args[1])
    return (a * b).sum(-1)


def _outer(c):
    (a, _), (b, _) = _operand(c, c.args[0]), _operand(c, c.args[1])
    return a.unsqueeze(-1) * b.unsqueeze(-2)


_PRODUCT_RANK = {"addmm": 2, "addmv": 1, "baddbmm": 3, "addbmm": 2, "addr": 2}


def _add_matmul(first, second):
    """``beta * input + alpha * (first @ second)`` for addmm, addmv, baddbmm, addbmm (and addr's outer product)."""
    def rule(c):
        op = c.op
        inp = c.args[op.index["input"]]
        beta = c.args[op.index["beta"]]
        alpha = c.args[op.index["alpha"]]
        (a, ra), (b, rb) = _operand(c, c.args[op.index[first]]), _operand(c, c.args[op.index[second]])
        if op.name == "addr":
            prod = a.unsqueeze(-1) * b.unsqueeze(-2)
        else:
            prod = _matmul_phys(a, ra, b, rb)
            if op.name == "addbmm":
                prod = prod.sum(-3)
        rank = _PRODUCT_RANK[op.name]
        if prod.dim() == rank:  # neither factor batched: the batch comes from the input
            prod = prod.unsqueeze(0).expand((c.size,) + tuple(prod.shape))
        out = prod if alpha == 1 else prod * alpha
        if beta != 0:
            p = c.phys(inp)
            pi = inp if p is None else _pad(p, rank - inp.dim())
            out = out + (pi if beta == 1 else pi * beta)
        if c.inplace is not None:
            target = c.phys(c.inplace)
            if target is None:
                raise _into_unbatched(c.inplace, out.shape)
            return target.copy_(out)
        return out
    return rule


def _trace(c):
    return ops.diagonal(c.phys(c.args[0]), 0, 1, 2).sum(-1)


def _einsum(c):
    equation = c.args[0].replace(" ", "")
    operands = list(c.args[1])
    if "->" not in equation or "..." in equation:
        raise _no_rule("einsum", "for an equation without '->' or with '...'")
    lhs, rhs = equation.split("->")
    specs = lhs.split(",")
    letter = next(ch for ch in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if ch not in equation)
    new_ops = []
    for spec, t in zip(specs, operands, strict=True):
        p = c.phys(t)
        if p is None:
            new_ops.append((spec, t))
        else:
            new_ops.append((letter + spec, p))
    eq = ",".join(s for s, _ in new_ops) + "->" + letter + rhs
    return ops.einsum(eq, *[t for _, t in new_ops])


def _index(c):
    """Basic and advanced indexing with unbatched indices: a full slice for the batch dim."""
    args = list(c.args)
    if c.op.name == "index_put" or any(type(i) is BatchedTensor for i in _flat(args[1])):
        raise _no_rule(c.op.name, "with batched indices")
    idx = tuple(args[1]) if isinstance(args[1], (tuple, list)) else (args[1],)
    adv = [k for k, i in enumerate(idx) if not (i is None or i is Ellipsis or isinstance(i, (slice, int)))]
    if adv and adv[-1] - adv[0] + 1 != len(adv):
        raise _no_rule(c.op.name, "with advanced indices apart")
    args[0] = c.phys(args[0])
    args[1] = (slice(None),) + idx
    return c.run(args)


def _flat(x):
    if isinstance(x, (tuple, list)):
        for y in x:
            yield from _flat(y)
    else:
        yield x


def _stack(c):
    args = list(c.args)
    tensors = args[0]
    nd = tensors[0].dim()
    args[0] = [c.lift(t) for t in tensors]
    args[1] = _shift(args[1], nd + 1)
    return c.run(args)


def _cat(c):
    args = list(c.args)
    tensors = args[0]
    ref = next((t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)), tensors[0])
    nd = ref.dim()
    args[0] = [c.lift(t) for t in tensors if not (t.dim() == 1 and t.shape[0] == 0) or t is ref]
    args[1] = _shift(args[1], nd)
    return c.run(args)


def _embedding(c):
    if c.phys(c.args[0]) is not None:
        raise _no_rule("embedding", "with a batched weight")
    args = list(c.args)
    args[1] = c.phys(args[1])
    return c.run(args)


def _reduced(c, out, reduction, denom=None):
    """A per-element loss (reduction 'none', batch first) reduced per sample as ``reduction``."""
    if reduction == "none":
        return out
    dims = tuple(range(1, out.dim()))
    if not dims:
        return out
    total = out.sum(dims)
    if reduction == "sum":
        return total
    return total / (denom if denom is not None else out[0].numel())


def _loss_elementwise(c):
    op = c.op
    args = list(c.args)
    reduction = args[op.index["reduction"]]
    args[op.index["reduction"]] = "none"
    pos = [i for i in op.tensor_pos if isinstance(args[i], Tensor)]
    rank = max(args[i].dim() for i in pos)
    for i in pos:
        args[i] = _pad(c.lift(args[i]), rank - args[i].dim())
    return _reduced(c, c.run(args), reduction)


def _nll_loss(c):
    op = c.op
    args = list(c.args)
    inp, target, weight = args[0], args[1], args[2]
    reduction, ignore = args[op.index["reduction"]], args[op.index["ignore_index"]]
    if c.phys(weight) is not None if isinstance(weight, Tensor) else False:
        raise _no_rule("nll_loss", "with a batched weight")
    pi, pt = c.lift(inp), c.lift(target)
    nd = inp.dim()
    if nd == 1:
        flat_i, flat_t = pi, pt
    else:
        flat_i = pi.reshape((-1,) + tuple(inp.shape[1:]))
        flat_t = pt.reshape((-1,) + tuple(target.shape[1:]))
    args[0], args[1] = flat_i, flat_t
    args[op.index["reduction"]] = "none"
    losses = c.run(args)
    one = nd == 1 or target.numel() == 1  # one element per sample
    if reduction == "mean" and weight is None and one and not (pt._data == ignore).any():
        return losses if tuple(losses.shape) == (c.size,) else losses.reshape(c.size)  # every weight 1
    shape = (c.size,) + tuple(target.shape) if nd > 1 else (c.size,)
    if tuple(losses.shape) != shape:
        losses = losses.reshape(shape)
    if reduction == "none" or reduction == "sum" and nd == 1:
        return losses
    if reduction == "sum":
        return losses.sum(tuple(range(1, losses.dim())))
    kept = pt != ignore
    keep = kept.to(losses.dtype)
    w = keep if weight is None else weight[ops.where(kept, pt, 0)] * keep
    if one:  # its loss over its weight
        return (losses / w).reshape(c.size)
    dims = tuple(range(1, losses.dim()))
    return losses.sum(dims) / w.sum(dims)


def fold(n=1):
    """Ops over a leading dim of independent samples (N, ...): the batch is folded into it and split back out.

    The first ``n`` tensor arguments are lifted and folded; the others must be unbatched.
    """
    def rule(c):
        op = c.op
        args = list(c.args)
        pos = [i for i in op.tensor_pos if isinstance(args[i], Tensor)]
        lead = None
        for k, i in enumerate(pos):
            a = args[i]
            if k < n:
                if a.dim() == 0:
                    raise _no_rule(op.name, "with a 0-d input")
                p = c.lift(a)
                if lead is None:
                    lead = a.shape[0]
                args[i] = p.reshape((-1,) + tuple(p.shape[2:]))
            elif c.phys(a) is not None:
                raise _no_rule(op.name, f"with batched argument {op.params[i]!r}")
        out = c.run(args)
        outs = out if op.multi_output else (out,)
        outs = tuple(o.reshape((c.size, -1) + tuple(o.shape[1:])) for o in outs)
        return outs if op.multi_output else outs[0]
    return rule


def _convolution(c):
    """The product of the weight with the input's columns; a batched weight (per-sample weights) by a batched matmul."""
    columns, weight, bias, output_size, groups = c.args
    if c.phys(weight) is None and (bias is None or c.phys(bias) is None):
        return _fold1(c)
    if groups != 1:
        raise _no_rule("convolution", "with a batched weight and groups")
    cols = c.lift(columns)  # (batch, N, K, L)
    o = weight.shape[0]
    out = ops.matmul(c.lift(weight).reshape(c.size, 1, o, -1), cols)
    out = out.reshape((c.size, columns.shape[0], o) + tuple(output_size))
    if bias is not None:
        out = out + c.lift(bias).reshape((c.size, 1, o) + (1,) * len(output_size))
    return out


def _layer_norm(c):
    op = c.op
    args = list(c.args)
    for name in ("weight", "bias"):
        a = args[op.index[name]]
        if isinstance(a, Tensor) and c.phys(a) is not None:
            raise _no_rule("layer_norm", f"with a batched {name}")
    args[0] = c.phys(args[0])
    return c.run(args)


def _gather_like(dim_name="dim"):
    return on_dims(dim_name, all_dims=None)


def _along_index(c):
    """``index_add``/``index_copy``/``index_fill``: the input and source lifted, the dim shifted past the batch;
    a batched index (or fill value), or a 0-d input, runs once per sample."""
    args = list(c.args)
    op = c.op
    lifted = [op.index[n] for n in ("input", "source") if n in op.index]
    if args[0].dim() == 0 or any(c.phys(args[i]) is not None for i in op.tensor_pos if i not in lifted):
        return per_sample(c)
    for i in lifted:
        args[i] = c.lift(args[i])
    d = op.index["dim"]
    args[d] = _shift(args[d], c.args[0].dim())
    return c.run(args)


def _scatter(c):
    """``scatter``: the input, index and source lifted, the dim shifted past the batch (a 0-d input per sample)."""
    args = list(c.args)
    op = c.op
    nd = args[0].dim()
    if nd == 0:
        return per_sample(c)
    for name in ("input", "index", "src"):
        i = op.index[name]
        if isinstance(args[i], Tensor):
            args[i] = c.lift(args[i])
    d = op.index["dim"]
    args[d] = _shift(args[d], nd)
    return c.run(args)


def _bucketize(c):
    """``bucketize``: elementwise in its input over unbatched boundaries."""
    if c.phys(c.args[1]) is not None:
        return per_sample(c)
    args = list(c.args)
    args[0] = c.phys(args[0])
    return c.run(args)


def _searchsorted(c):
    """``searchsorted``: every tensor lifted; over a 1-d sequence the input is flattened to one row per sample,
    as an N-d sequence's leading dims must be the input's."""
    args = list(c.args)
    seq, values = args[0], args[1]
    if not isinstance(values, Tensor) or values.dim() == 0:
        return per_sample(c)
    for i in c.op.tensor_pos:
        if isinstance(args[i], Tensor):
            args[i] = c.lift(args[i])
    if seq.dim() > 1:
        return c.run(args)
    args[1] = args[1].reshape(c.size, -1)
    return c.run(args).reshape((c.size,) + tuple(values.shape))


def _no_rule(name, detail=""):
    return RuntimeError(f"Batching rule not implemented for aten::{name}{' ' + detail if detail else ''}. "
                        f"We could not generate a fallback.")


def _random_batched(c):
    """A random op with an argument batched at the level: under 'different', the physical input (lifted)
    draws per sample; 'error' and 'same' refuse it (Note [Randomness under vmap])."""
    check_level(c.level, True)
    return batch_first(c)


_fold1 = fold()

RANDOM_OPS = frozenset({"bernoulli", "dropout_bernoulli", "normal", "poisson", "multinomial"})
DYNAMIC_SHAPE = frozenset({"nonzero", "masked_select", "unique", "unique_consecutive", "bincount", "histc"})

_ELEMENTWISE = (
    "abs add add_scalar atan2 bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor "
    "clamp_max clamp_min copysign cos div eq exp expm1 fmax fmin gcd ge gt hypot isfinite isinf isnan lcm le log "
    "log1p logaddexp logaddexp2 logical_and logical_not logical_or logical_xor lt maximum minimum mul mul_scalar ne "
    "neg sgn sign sin sqrt tan tanh ceil clamp div_rounding floor floor_divide fmod frac heaviside isclose isneginf "
    "isposinf isreal lerp nan_to_num pow reciprocal relu remainder round rsqrt sigmoid sigmoid_backward signbit sub "
    "tanh_backward threshold_backward trunc where digamma erf erfc erfinv i0 lgamma logit polygamma sinc "
    "special_entr special_erfcx special_i0e special_i1 special_i1e special_log_ndtr special_ndtri special_xlog1py "
    "xlogy celu elu gelu gelu_backward hardshrink hardsigmoid hardswish hardtanh leaky_relu mish rrelu_with_noise silu "
    "softplus softshrink threshold clone _to_copy copy fill zero "
    "acos asin atan sinh cosh acosh asinh atanh acosh_ asinh_ atanh_ deg2rad rad2deg log10 log2 exp2 ldexp nextafter "
    "addcmul addcdiv").split()

RULES = dict.fromkeys(_ELEMENTWISE, elementwise)
RULES["masked_fill"] = RULES["copy"] = elementwise_into_first  # copy: the result has its destination's shape
RULES.update(dict.fromkeys(("tanh_backward", "sigmoid_backward", "gelu_backward"), elementwise_full))
RULES.update({
    # reductions: a None dim is all of the logical dims
    **dict.fromkeys("sum mean nansum amax amin all any count_nonzero std var std_mean var_mean logsumexp "
                    "norm".split(), on_dims("dim")),
    "prod": on_dims("dim", all_dims="flatten"),
    "aminmax": on_dims("dim", all_dims="flatten"),
    "argmax": on_dims("dim", all_dims="flatten"),
    "argmin": on_dims("dim", all_dims="flatten"),
    "max_all": _all_reduction(ops.amax),
    "min_all": _all_reduction(ops.amin),
    "median_all": _all_reduction(ops.median, multi=True),
    "nanmedian_all": _all_reduction(ops.nanmedian, multi=True),
    # one dim argument
    **dict.fromkeys("cumsum cumprod cummax cummin logcumsumexp softmax log_softmax glu sort argsort topk kthvalue "
                    "median_dim nanmedian_dim mode max_dim min_dim unbind split split_with_sizes unsafe_split "
                    "unsafe_split_with_sizes linalg_cross".split(), on_dims("dim", all_dims=None)),
    "transpose": on_dims("dim0", "dim1"),
    "diagonal": on_dims("dim1", "dim2"),
    "diag_embed": on_dims("dim1", "dim2", new=("dim1", "dim2")),
    "flip": on_dims("dims", all_dims=None),
    "rot90": on_dims("dims", all_dims=None),
    "unfold": on_dims("dimension"),
    "unsqueeze": on_dims("dim", new=("dim",)),
    "gather": _gather_like(),
    "scatter_add": _gather_like(),
    "scatter_reduce": _gather_like(),
    "index_select": on_dims("dim", all_dims=None, only_first=True),
    "stack": _stack,
    "cat": _cat,
    # shapes
    "view": _shape_arg_rule("view"),
    "reshape": _shape_arg_rule("reshape"),
    "expand": _shape_arg_rule("expand"),
    "repeat": _shape_arg_rule("repeat"),
    "permute": _permute,
    "as_strided": _as_strided,
    "t": _t,
    "squeeze": _squeeze,
    "roll": _roll,
    "tril": batch_first,
    "triu": batch_first,
    "one_hot": first_only,
    "index": _index,
    "select_index": _index,
    "slice_index": _index,
    # linear algebra
    "matmul": _matmul,
    "mm": _matmul,
    "bmm": _matmul,
    "mv": _matmul,
    "dot": _dot,
    "vdot": _dot,
    "outer": _outer,
    "addmm": _add_matmul("mat1", "mat2"),
    "addmv": _add_matmul("mat", "vec"),
    "baddbmm": _add_matmul("batch1", "batch2"),
    "addbmm": _add_matmul("batch1", "batch2"),
    "addr": _add_matmul("vec1", "vec2"),
    "trace": _trace,
    "einsum": _einsum,
    **dict.fromkeys("linalg_det linalg_inv linalg_slogdet linalg_cholesky_ex linalg_eigh linalg_qr linalg_svd "
                    "linalg_matrix_exp linalg_pinv".split(), first_only),
    # neural-network primitives
    "embedding": _embedding,
    "nll_loss": _nll_loss,
    "binary_cross_entropy": _loss_elementwise,
    "binary_cross_entropy_with_logits": _loss_elementwise,
    "layer_norm": _layer_norm,
    "convolution": _convolution,
    **dict.fromkeys("im2col col2im convolution_transpose max_pool2d_with_indices adaptive_max_pool2d avg_pool2d "
                    "adaptive_avg_pool2d "
                    "upsample_linear upsample_nearest pixel_shuffle pixel_unshuffle reflection_pad replication_pad "
                    "group_norm".split(), fold()),
    "constant_pad_nd": batch_first,
    "cdist": batch_first_padded,
    "linalg_solve_triangular": batch_first_padded,
    **dict.fromkeys(("index_add", "index_copy", "index_fill"), _along_index),
    "bucketize": _bucketize,
    "scatter": _scatter,
    "searchsorted": _searchsorted,
    "max_unpool2d": fold(2),
    # random ops
    **dict.fromkeys(RANDOM_OPS, _random_batched),
})
