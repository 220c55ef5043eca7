"""Linear algebra: matmul and its special cases, outer products, einsum and trace."""
from __future__ import annotations

import string

from .. import _dtype
from .._creation import eye, ones, zeros
from ._declarations import defop
from .joining import cat
from ._grad_utils import matmul_backward


def _matmul(xp, input, other):
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    try:
        return xp.matmul(input, other)
    except ValueError:
        a = input.shape if input.ndim > 1 else (1,) + input.shape
        b = other.shape if other.ndim > 1 else other.shape + (1,)
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[-2]}x{a[-1]} and {b[-2]}x{b[-1]})") from None


# PyTorch's matmul is a composite: its node is that of the op it ends with (batched: a reshape).
matmul = defop("matmul", _matmul, method=True, promote="binary",
               node_names={"DotBackward0": lambda input, other: input.ndim == 1 and other.ndim == 1,
                           "MvBackward0": lambda input, other: input.ndim == 2 and other.ndim == 1,
                           "MmBackward0": lambda input, other: input.ndim == 2 and other.ndim == 2,
                           "SqueezeBackward4": lambda input, other: input.ndim == 1 and other.ndim == 2,
                           "CloneBackward0": lambda input, other: input.ndim == 2 and input.requires_grad,
                           "UnsafeViewBackward0": lambda: True},  # every batched case else
               input=lambda grad, input, other: matmul_backward(grad, input, other, 0),
               other=lambda grad, input, other: matmul_backward(grad, input, other, 1))


def _mm(xp, input, mat2):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _matmul(xp, input, mat2)


mm = defop("mm", _mm, method=True, promote="binary",
           input=lambda grad, mat2: grad.mm(mat2.t()),
           mat2=lambda grad, input: input.t().mm(grad))


def _bmm(xp, input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    return _matmul(xp, input, mat2)


bmm = defop("bmm", _bmm, method=True, promote="binary",
            input=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
            mat2=lambda grad, input: input.transpose(1, 2).bmm(grad))


def _mv(xp, input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    return _matmul(xp, input, vec)


mv = defop("mv", _mv, method=True, promote="binary",
           input=lambda grad, vec: grad.unsqueeze(1) * vec,
           vec=lambda grad, input: input.t().mv(grad))


def _dot(xp, input, tensor):
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input.shape != tensor.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{tensor.shape[0]}] "
                           "to have the same number of elements, but got "
                           f"{input.shape[0]} and {tensor.shape[0]} elements respectively")
    return xp.asarray(xp.dot(input, tensor))


dot = defop("dot", _dot, method=True, promote="binary",
            input=lambda grad, tensor: grad * tensor,
            tensor=lambda grad, input: grad * input)


def _outer(xp, input, vec2):
    return xp.outer(input, vec2)


outer = defop("outer", _outer, method=True, promote="binary", node_name="Mul",  # PyTorch: a product of views
              input=lambda grad, vec2: grad.matmul(vec2),
              vec2=lambda grad, input: input.matmul(grad))
ger = outer


def _trace(xp, input):
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.ndim))
    return xp.asarray(xp.trace(input))


def _trace_backward(grad, input_shape):
    return grad * eye(input_shape[0], input_shape[1], dtype=grad.dtype, device=grad.device)


trace = defop("trace", _trace, method=True, input=_trace_backward)


def _einsum_forward(xp, equation, operands):
    return xp.einsum(equation, *operands)


def _parse_einsum(equation, shapes):
    """``equation`` with every ``...`` spelt out as letters: (input subscripts, output subscripts).

    Ellipsis dims are aligned from the right, as broadcasting does; the implicit output is the
    ellipsis dims, then the letters used once, in alphabetical order (NumPy's and PyTorch's rule).
    """
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(shapes) > len(ins) else
                           "einsum(): fewer operands were provided than specified in the equation")
    used = set(eq) - set(".,->")
    free = iter(c for c in string.ascii_letters if c not in used)
    n_ell = max((len(shape) - (len(sub) - 3) for sub, shape in zip(ins, shapes, strict=True) if "..." in sub),
                default=0)
    ell = "".join(next(free) for _ in range(n_ell))
    ins = [sub.replace("...", ell[n_ell - (len(shape) - (len(sub) - 3)):]) if "..." in sub else sub
           for sub, shape in zip(ins, shapes, strict=True)]
    if arrow:
        out = out.replace("...", ell)
    else:
        letters = "".join(ins)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    return ins, out, free


def _einsum_backward(grad, equation, operands):
    """Gradient of each operand: an einsum of the output's gradient with the other operands.

    Letters of an operand found nowhere else were summed: the gradient is broadcast along them.
    A dim of size 1 that broadcast against a larger one counts as such a letter of its own.
    A letter repeated within one operand (a diagonal) puts the gradient back on that diagonal.
    """
    shapes = [tuple(t.shape) for t in operands]
    ins, out, free = _parse_einsum(equation, shapes)
    sizes = {}
    for sub, shape in zip(ins, shapes, strict=True):
        for c, n in zip(sub, shape, strict=True):
            sizes[c] = max(sizes.get(c, 1), n)
    # Broadcast size-1 dims get a letter of their own (summed away in the forward).
    ins = ["".join(c if n == sizes[c] else next(free) for c, n in zip(sub, shape, strict=True))
           for sub, shape in zip(ins, shapes, strict=True)]
    grads = []
    for k, (sub, x) in enumerate(zip(ins, operands, strict=True)):
        if not x.requires_grad:
            grads.append(None)
            continue
        others = [(s, t) for j, (s, t) in enumerate(zip(ins, operands, strict=True)) if j != k]
        present = set(out).union(*[set(s) for s, _ in others])
        unique = "".join(dict.fromkeys(sub))
        kept = "".join(c for c in unique if c in present)
        g = einsum(",".join([out] + [s for s, _ in others]) + "->" + kept, grad, *[t for _, t in others])
        if kept != unique:  # letters only this operand had: the gradient is the same along them
            g = g.reshape(tuple(sizes[c] if c in present else 1 for c in unique)).expand(
                tuple(x.shape[sub.index(c)] for c in unique))
        if unique != sub:  # repeated letters: back onto the diagonal, through identity matrices
            spelt, eyes, seen = "", [], set()
            for c in sub:
                if c in seen:
                    fresh = next(free)
                    eyes.append(c + fresh)
                    spelt += fresh
                else:
                    seen.add(c)
                    spelt += c
            ids = [eye(sizes[e[0]], dtype=g.dtype, device=g.device) for e in eyes]
            g = einsum(",".join([unique] + eyes) + "->" + spelt, g, *ids)
        grads.append(g)
    return grads


einsum_op = defop("einsum", _einsum_forward, public=False, lists=("operands",), tensor_args=("operands",),
                  operands=_einsum_backward)


def einsum(equation, *operands):
    """Sums products of the operands' elements over the subscripts of ``equation`` (Einstein notation).

    Args:
        equation: the subscripts, such as ``'ij,jk->ik'``.
        *operands: the tensors, one per subscript group.

    Returns:
        The contracted tensor.

    Example::
        >>> import retrograd as rg
        >>> rg.einsum("ij,j->i", rg.ones(2, 3), rg.ones(3))
        tensor([3., 3.])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return einsum_op(equation, list(operands))


# -- products of PyTorch's list: kron, vander ---------------------------------------------------------------
def kron(input, other):
    """The Kronecker product of ``input`` and ``other``: every element of ``input`` times all of ``other``.

    Example::
        >>> import retrograd as rg
        >>> rg.kron(rg.tensor([1., 2.]), rg.tensor([1., 10.]))
        tensor([ 1., 10.,  2., 20.])
    """
    nd = max(input.dim(), other.dim())
    a = input.reshape((1,) * (nd - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.dim()) + tuple(other.shape))
    a_wide = a.reshape(tuple(d for s in a.shape for d in (s, 1)))
    b_wide = b.reshape(tuple(d for s in b.shape for d in (1, s)))
    return (a_wide * b_wide).reshape(tuple(p * q for p, q in zip(a.shape, b.shape, strict=True)))


def vander(x, N=None, increasing=False):  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1)`` down to ``x ** 0`` (up, ``increasing``).

    Example::
        >>> import retrograd as rg
        >>> rg.vander(rg.tensor([1, 2, 3]), N=3)
        tensor([[1, 1, 1],
                [4, 2, 1],
                [9, 3, 1]])
    """
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _dtype.promote_types(x.dtype, _dtype.int64)
    if n == 0:
        return zeros((x.shape[0], 0), dtype=dtype, device=x.device)
    columns = ones((x.shape[0], 1), dtype=dtype, device=x.device)
    if n > 1:
        powers = x.to(dtype).unsqueeze(1).expand((x.shape[0], n - 1)).cumprod(1)
        columns = cat([columns, powers], 1)
    return columns if increasing else columns.flip(1)
