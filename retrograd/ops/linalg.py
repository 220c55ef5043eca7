"""Linear algebra: matmul and its special cases, outer products, einsum and trace."""
from __future__ import annotations

import string

import numpy as np
import scipy.linalg

from .. import _dtype, return_types
from .._creation import eye, ones, zeros
from .._tensor import Tensor, _wrap_dim
from . import pointwise
from .pointwise import formula_arrays
from ._declarations import defop, tensor_method
from .joining import cat
from .shape import triu_indices
from ._grad_utils import matmul_backward
from ._rows import fast_rows, lead_sum


_cpp_name = _dtype.type_meta_name  # the C++ names of the dtypes, as PyTorch's mm spells them in its dtype error


def _same_dtype(kind, a, b):
    """Raises PyTorch's error where the two operands of a matrix product differ in dtype (it does not promote).

    ``kind`` names the kernel whose error PyTorch raises: ``mm``, ``bmm``, ``mv`` or ``dot``.
    """
    name = _dtype.scalar_type_name
    if kind == "bmm" and a.dtype == np.bool_:  # PyTorch's bmm kernel refuses bool before comparing the dtypes
        raise NotImplementedError(f'"bmm" not implemented for \'{name(a.dtype)}\'')
    if a.dtype == b.dtype:
        if kind == "mm" and a.dtype == np.bool_:
            raise NotImplementedError(f'"addmm_impl_cpu_" not implemented for \'{name(a.dtype)}\'')
        return
    if kind == "mm":
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp_name(a.dtype)} != "
                           f"{_cpp_name(b.dtype)}")
    if kind == "bmm":
        raise RuntimeError(f"expected scalar type {name(a.dtype)} but found {name(b.dtype)}")
    if kind == "mv":  # PyTorch's mv is an addmv into a tensor of the vector's dtype
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {name(b.dtype)}, {name(a.dtype)}, "
                           f"and {name(b.dtype)}")
    raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {name(a.dtype)} and {name(b.dtype)}")


def _matmul_kind(input, other):
    """The kernel PyTorch's matmul runs for operands of these dims (the one whose dtype error it raises)."""
    if input.ndim == 1 and other.ndim == 1:
        return "dot"
    if other.ndim == 1 and input.ndim >= 2:
        return "mv"
    if other.ndim == 2 and input.ndim != 2 and input.ndim >= 1 or input.ndim <= 2 and other.ndim == 2:
        return "mm"
    return "bmm"


# Note [Products on a few rows]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# OpenBLAS multiplies a few rows by a transposed matrix (``x @ w.T`` with ``w`` C-contiguous: the
# backward of ``h @ w``, a linear layer's forward) by a path about twice as slow as the same product
# computed the other way round, ``(w @ x.T).T``, on these shapes (measured on float32, 4 to 32 rows,
# inner and outer sizes of 128 to 512). ``_mm_arrays`` takes the faster order there and returns the
# product C-contiguous, as ``matmul`` would; elsewhere it is ``matmul``.
def _mm_arrays(xp, a, b):
    """``a @ b`` for two matrices on the arrays; see Note [Products on a few rows]."""
    if (xp is np and a.ndim == 2 and b.ndim == 2 and a.shape[0] <= 32 and b.shape[0] >= 128 and b.shape[1] >= 128
            and a.shape[0] * b.shape[1] >= 2048 and b.flags.f_contiguous and not b.flags.c_contiguous
            and a.dtype == b.dtype and a.dtype.kind == "f"):
        return np.ascontiguousarray(np.matmul(b.T, a.T).T)
    return xp.matmul(a, b)


def _matmul(xp, input, other):
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    if input.dtype != other.dtype:
        _same_dtype(_matmul_kind(input, other), input, other)
    try:
        if xp is np and input.ndim > 2 and other.ndim > 2 and input.shape[-1] == 1 and other.shape[-2] == 1:
            # batched outer products (per-sample weight gradients): one broadcast product, several times faster
            return np.multiply(input, other, order="C")
        if (xp is np and input.ndim > 2 and other.ndim == 2 and other.flags.f_contiguous and not other.flags.c_contiguous
                and other.dtype.kind == "f"):
            # a stack times a transposed matrix (linear without a bias: x @ weight.t()): NumPy's stacked product takes a
            # slow path for the transposed matrix (42 against 21 µs for (8, 32, 64) x (64, 65)); a row-major copy of
            # the matrix first costs 2 to 5 µs
            other = np.ascontiguousarray(other)
        return _mm_arrays(xp, input, other)
    except ValueError:
        a = input.shape if input.ndim > 1 else (1,) + input.shape
        b = other.shape if other.ndim > 1 else other.shape + (1,)
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[-2]}x{a[-1]} and {b[-2]}x{b[-1]})") from None


def _matmul_grad(grad, input, other, which):
    """``matmul_backward``, as one product on the arrays where both operands are matrices (or stacks of them)."""
    xp = formula_arrays(grad)
    if xp is None or input.dim() < 2 or other.dim() < 2 or not input.dtype == other.dtype == grad.dtype:
        return matmul_backward(grad, input, other, which)
    # See Note [Formulas on arrays]: no transpose or matmul op call; broadcast batch dims are summed by the engine
    g = grad._data
    if input.dim() > 2 and other.dim() == 2 and xp is np:  # a stack times a matrix: the other's gradient is one
        k, m = other.shape  # product over the rows, not a stack of products the engine then sums
        if which == 1:
            a, g = input._data.reshape(-1, k), g.reshape(-1, m)
            if other._data.flags.f_contiguous and not other._data.flags.c_contiguous:
                # See Note [The layout of a transposed operand's gradient]: a transposed other gets its gradient so
                return Tensor._make(np.matmul(g.T, a).T, grad._device)
            return Tensor._make(np.matmul(a.T, g), grad._device)
    if which == 0:
        return Tensor._make(_mm_arrays(xp, g, other._data.swapaxes(-1, -2)), grad._device)
    return Tensor._make(xp.matmul(input._data.swapaxes(-1, -2), g), grad._device)


# PyTorch's matmul is a composite: its node is that of the op it ends with (batched: a reshape).
matmul = defop("matmul", _matmul, method=True, promote="binary",
               node_names={"DotBackward0": lambda input, other: input.ndim == 1 and other.ndim == 1,
                           "MvBackward0": lambda input, other: input.ndim == 2 and other.ndim == 1,
                           "MmBackward0": lambda input, other: input.ndim == 2 and other.ndim == 2,
                           "SqueezeBackward4": lambda input, other: input.ndim == 1 and other.ndim == 2,
                           "CloneBackward0": lambda input, other: input.ndim == 2 and input.requires_grad,
                           "UnsafeViewBackward0": lambda: True},  # every batched case else
               input=lambda grad, input, other: _matmul_grad(grad, input, other, 0),
               other=lambda grad, input, other: _matmul_grad(grad, input, other, 1))


def _mm(xp, input, mat2):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _same_dtype("mm", input, mat2)
    return _matmul(xp, input, mat2)


mm = defop("mm", _mm, method=True, promote="binary",
           input=lambda grad, mat2: grad.mm(mat2.t()),
           mat2=lambda grad, input: input.t().mm(grad))


def _bmm(xp, input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _same_dtype("bmm", input, mat2)
    return _matmul(xp, input, mat2)


bmm = defop("bmm", _bmm, method=True, promote="binary",
            input=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
            mat2=lambda grad, input: input.transpose(1, 2).bmm(grad))


def _mv(xp, input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    _same_dtype("mv", input, vec)
    return _matmul(xp, input, vec)


mv = defop("mv", _mv, method=True, promote="binary",
           input=lambda grad, vec: grad.unsqueeze(1) * vec,
           vec=lambda grad, input: input.t().mv(grad))


def _dot(xp, input, tensor):
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    _same_dtype("dot", input, tensor)
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
    for o in operands[1:]:
        _same_dtype("bmm", operands[0], o)  # PyTorch contracts with bmm, which does not promote
    try:
        return xp.einsum(equation, *operands)
    except ValueError:
        err = _einsum_size_error(equation, [o.shape for o in operands])
        if err is None:
            raise
        raise err from None


def _einsum_size_error(equation, shapes):
    """PyTorch's error for operand sizes that ``equation``'s subscripts do not allow, or None."""
    ins, _, _ = _parse_einsum(equation, shapes)
    named = set(equation)  # the letters an ellipsis was spelt out with are not
    seen = {}
    for k, (sub, shape) in enumerate(zip(ins, shapes, strict=True)):
        mine = {}
        for c, n in zip(sub, shape):
            if c in mine and mine[c] != n and c in named:
                return RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't match, "
                                    f"{n} != {mine[c]}")
            mine[c] = n
        for c, n in mine.items():
            prev = seen.get(c)
            if prev is not None and prev != n and prev != 1 and n != 1 and c in named:
                return RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                                    f"with previously seen size {prev}")
            if prev is None or prev == 1:
                seen[c] = n
    return None


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
    if isinstance(equation, Tensor):  # the sublist form: einsum(op1, [0, 1], op2, [1, 2], [0, 2])
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return einsum_op(equation, list(operands))


def _sublist_equation(args):
    """(equation, operands) of einsum's sublist form: operands each followed by its subscripts (ints in
    [0, 52) or Ellipsis), then optionally the output's subscripts."""
    def letters(sub):
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += "..."
            elif isinstance(s, int) and 0 <= s < 52:
                out += string.ascii_letters[s]
            else:
                raise RuntimeError(f"einsum(): subscript in subscript list is not within the valid range [0, 52)")
        return out
    n = len(args) // 2
    operands, subs = list(args[0:2 * n:2]), [letters(s) for s in args[1:2 * n:2]]
    equation = ",".join(subs)
    if len(args) % 2:  # the output's subscripts
        equation += "->" + letters(args[-1])
    return equation, tuple(operands)


# -- products of PyTorch's list: kron, vander ---------------------------------------------------------------
@tensor_method
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


# -- fused products: beta * input + alpha * (a product), as PyTorch's addmm family ------------------------
def _scaled(x, factor):
    """``x * factor``, without an extra op where the factor is 1."""
    return x if factor == 1 else x * factor


def _check_shapes(name, ok, message):
    if not ok:
        raise RuntimeError(f"{name}: {message}" if name else message)


def _fused(xp, input, product, beta, alpha):
    """``beta * input + alpha * product``; a zero beta ignores input (its NaNs too), as PyTorch."""
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        return xp.broadcast_to(xp.zeros((), out.dtype), out.shape) + out
    term = input if beta == 1 else input * beta
    if term.dtype == out.dtype and term.ndim <= out.ndim and all(
            t in (1, o) for t, o in zip(term.shape[::-1], out.shape[::-1])):
        return xp.add(out, term, out=out)  # the product is a fresh array: the sum goes into it
    return out + term


def _same_dtype_addmm(input, mat1, mat2):
    """PyTorch's dtype errors of addmm (and addbmm): self, then mat1, against mat2."""
    for name, a in (("self", input), ("mat1", mat1)):
        if getattr(a, "dtype", mat2.dtype) != mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {_dtype.scalar_type_name(a.dtype)} "
                               f"and {_dtype.scalar_type_name(mat2.dtype)}")


def _addmm(xp, input, mat1, mat2, *, beta=1, alpha=1):
    if mat1.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got " + str(mat1.ndim) + "-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix, got " + str(mat2.ndim) + "-D tensor")
    _same_dtype_addmm(input, mat1, mat2)
    return _fused(xp, input, _matmul(xp, mat1, mat2), beta, alpha)


def _addmm_mat1(grad, mat2, alpha):
    xp = formula_arrays(grad)
    if xp is not None and alpha == 1:  # See Note [Formulas on arrays]: one product, no transpose node
        return Tensor._make(_mm_arrays(xp, grad._data, mat2._data.T), grad._device)
    return _scaled(grad.mm(mat2.t()), alpha)


# Note [The layout of a transposed operand's gradient]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``linear`` multiplies by ``weight.t()``, a transposed view. PyTorch's ``mm_mat2_backward`` computes the
# gradient of such an operand as ``grad.t().mm(mat1).t()``, the same products as ``mat1.t().mm(grad)`` in a
# transposed layout, so that ``TBackward0``'s transpose hands the weight a row-major gradient. Computed the other
# way, the weight's gradient arrives column-major and AccumulateGrad must copy it into the weight's layout (Note
# [The gradient layout contract]), a copy per weight and step. ``addmm``'s formula for ``mat2`` takes PyTorch's
# choice: a column-major ``mat2`` (the transpose of a row-major matrix) gets its gradient column-major.
def _addmm_mat2(grad, mat1, alpha, mat2_transposed):
    xp = formula_arrays(grad)
    if xp is not None and alpha == 1:
        if mat2_transposed:  # See Note [The layout of a transposed operand's gradient]
            return Tensor._make(xp.matmul(grad._data.T, mat1._data).T, grad._device)
        return Tensor._make(xp.matmul(mat1._data.T, grad._data), grad._device)
    if mat2_transposed:
        return _scaled(grad.t().mm(mat1).t(), alpha)
    return _scaled(mat1.t().mm(grad), alpha)


def _addmm_input(grad, input_shape, beta):
    xp = formula_arrays(grad)
    if xp is None or beta != 1 or len(input_shape) != 1 or input_shape[0] != grad.shape[1]:
        return _scaled(grad, beta)
    # See Note [Formulas on arrays]: a bias vector's gradient summed here, one reduction on the array, rather than
    # by the engine's sum_to_size op (PyTorch's AddmmBackward0 leaves it to the engine: the same sum); over many
    # rows as one vector-matrix product (Note [Row reductions as products])
    g = grad._data
    return Tensor._make(lead_sum(g) if fast_rows(g) else g.sum(axis=0), grad._device)


addmm = defop("addmm", _addmm, method=True, inplace=True, promote="binary",
              input=_addmm_input, mat1=_addmm_mat1,
              mat2=lambda grad, mat1, alpha, mat2_shape, mat2_strides:
              _addmm_mat2(grad, mat1, alpha, mat2_strides[0] == 1 and mat2_strides[1] == mat2_shape[0]))


def _addmv(xp, input, mat, vec, *, beta=1, alpha=1):
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    dts = [getattr(a, "dtype", mat.dtype) for a in (input, mat, vec)]
    if dts[0] != dts[1] or dts[1] != dts[2]:
        names = [_dtype.scalar_type_name(d) for d in dts]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names[0]}, {names[1]}, and "
                           f"{names[2]}")
    return _fused(xp, input, _matmul(xp, mat, vec), beta, alpha)


addmv = defop("addmv", _addmv, method=True, inplace=True, promote="binary",
              input=lambda grad, beta: _scaled(grad, beta),
              mat=lambda grad, vec, alpha: _scaled(grad.outer(vec), alpha),
              vec=lambda grad, mat, alpha: _scaled(mat.t().mv(grad), alpha))


def _baddbmm(xp, input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _same_dtype("bmm", batch1, batch2)
    if getattr(input, "dtype", batch1.dtype) != batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp_name(input.dtype)}, batch1: "
                           f"{_cpp_name(batch1.dtype)}, batch2: {_cpp_name(batch2.dtype)}")
    return _fused(xp, input, _matmul(xp, batch1, batch2), beta, alpha)


baddbmm = defop("baddbmm", _baddbmm, method=True, inplace=True, promote="binary",
                input=lambda grad, beta: _scaled(grad, beta),
                batch1=lambda grad, batch2, alpha: _scaled(grad.bmm(batch2.transpose(1, 2)), alpha),
                batch2=lambda grad, batch1, alpha: _scaled(batch1.transpose(1, 2).bmm(grad), alpha))


def _addbmm(xp, input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _same_dtype_addmm(input, batch1, batch2)
    return _fused(xp, input, _matmul(xp, batch1, batch2).sum(0), beta, alpha)


def _addbmm_batch_grad(grad, batches, batch1, batch2, alpha, which):
    wide = grad.unsqueeze(0).expand((batches,) + tuple(grad.shape))
    if which == 1:
        return _scaled(wide.bmm(batch2.transpose(1, 2)), alpha)
    return _scaled(batch1.transpose(1, 2).bmm(wide), alpha)


# The batches' formulas take their shapes, so that the node keeps the sizes PyTorch's AddbmmBackward0 keeps
# (``batch1_sym_argsize_0``, ``_1``, ``batch2_sym_argsize_2``), and each batch only where the other's gradient
# needs it.
addbmm = defop("addbmm", _addbmm, method=True, inplace=True, promote="binary",
               input=lambda grad, beta: _scaled(grad, beta),
               batch1=lambda grad, batch1_shape, batch2_shape, batch2, alpha: _addbmm_batch_grad(
                   grad, batch1_shape[0], None, batch2, alpha, 1),
               batch2=lambda grad, batch1_shape, batch2_shape, batch1, alpha: _addbmm_batch_grad(
                   grad, batch1_shape[0], batch1, None, alpha, 2))


def _addr(xp, input, vec1, vec2, *, beta=1, alpha=1):
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if vec1.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return _fused(xp, input, xp.outer(vec1, vec2), beta, alpha)


addr = defop("addr", _addr, method=True, inplace=True, promote="binary",
             input=lambda grad, beta: _scaled(grad, beta),
             vec1=lambda grad, vec2, alpha: _scaled(grad.mv(vec2), alpha),
             vec2=lambda grad, vec1, alpha: _scaled(grad.t().mv(vec1), alpha))


# -- distances, cross products and other products -------------------------------------------------------
def _cdist(xp, x1, x2, p=2.0, compute_mode=None):
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X{1 if x1.ndim < 2 else 2} got: "
                           f"{min(x1.ndim, x2.ndim)}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return _p_norms(xp, xp.abs(x1[..., :, None, :] - x2[..., None, :, :]), p)


def _p_norms(xp, diff, p):
    """The ``p``-norms of the last dim of ``diff`` (absolute values), for ``p`` >= 0."""
    if p == 0:
        return (diff != 0).sum(-1).astype(diff.dtype)
    if p == float("inf"):
        return diff.max(-1) if diff.shape[-1] else diff.sum(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return xp.sqrt((diff * diff).sum(-1))
    return (diff ** p).sum(-1) ** (1.0 / p)


def _cdist_terms(grad, x1, x2, p, result):
    """grad * d result / d (x1_i - x2_j), of shape (..., P, R, M): pdist's partials of each pair's difference."""
    return _pair_partials(grad, x1.unsqueeze(-2) - x2.unsqueeze(-3), p, result)


cdist = defop("cdist", _cdist, promote="binary",
              x1=lambda grad, x1, x2, p, result: _cdist_terms(grad, x1, x2, p, result).sum(-2),
              x2=lambda grad, x1, x2, p, result: -_cdist_terms(grad, x1, x2, p, result).sum(-3))


def _pdist(xp, input, p=2):
    """pdist(input, p=2) -> Tensor

    The ``p``-norm distance between every pair of rows of the 2-D ``input``: row ``i`` against each row
    ``j > i``, in that order, as a 1-D tensor of ``n * (n - 1) / 2`` distances (``n`` rows). ``p`` >= 0;
    ``p = 0`` counts the coordinates that differ, ``p = inf`` is the largest difference. The gradient of
    a distance of 0 (equal rows) is 0.
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input.dtype.kind != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    first, second = (xp.asarray(i) for i in np.triu_indices(input.shape[0], 1))
    return _p_norms(xp, xp.abs(input[first] - input[second]), p)


def _row_pairs(input):
    """The pairs of rows pdist compares, as index tensors (first, second) and their differences."""
    first, second = triu_indices(input.shape[0], input.shape[0], 1, device=input.device).unbind(0)
    return first, second, input.index_select(0, first) - input.index_select(0, second)


def _pair_partials(grad, diff, p, dist):
    """grad times the derivative of each pair's distance ``dist`` by its difference ``diff`` (rows of coordinates),
    0 where the distance is 0, as PyTorch's pdist backward; masked so that its own derivatives are finite too."""
    g, r = grad.unsqueeze(-1), dist.unsqueeze(-1)
    if p == 0:
        return diff * 0
    if p == 1:
        return g * diff.sign()
    if p == float("inf"):
        return g * diff.sign() * (diff.abs() == r)
    at_zero = r == 0
    if p == 2:
        return pointwise.where(at_zero, 0., g * diff / r.masked_fill(at_zero, 1.))
    zero = at_zero | (diff == 0)  # for p < 1, |diff| ** (p - 1) is infinite there: PyTorch's pdist gives 0
    scale = diff.abs().masked_fill(zero, 1.) ** (p - 1) / r.masked_fill(at_zero, 1.) ** (p - 1)
    return pointwise.where(zero, 0., g * diff.sign() * scale)


def _pdist_backward(grad, input, p, result):
    first, second, diff = _row_pairs(input)
    partials = _pair_partials(grad, diff, p, result)
    return input.new_zeros(input.shape).index_add(0, first, partials).index_add(0, second, -partials)


def _pdist_jvp(input_t, input, p, result):
    _, _, diff = _row_pairs(input)
    _, _, diff_t = _row_pairs(input_t)
    return (_pair_partials(result.new_ones(result.shape), diff, p, result) * diff_t).sum(-1)


pdist = defop("pdist", _pdist, input=_pdist_backward, jvp=_pdist_jvp)


def _linalg_cross(xp, input, other, dim=-1):
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd, a, b = input.ndim, input, other
    d = _wrap_dim(dim, nd)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    shape = np.broadcast_shapes(a.shape, b.shape)
    return xp.cross(xp.broadcast_to(a, shape), xp.broadcast_to(b, shape), axis=d)


linalg_cross = defop("linalg_cross", _linalg_cross, public=False, promote="binary",
                     input=lambda grad, other, dim: linalg_cross(other, grad, dim),
                     other=lambda grad, input, dim: linalg_cross(grad, input, dim))


@tensor_method
def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (default: the first dim of size 3), as ``torch.cross``.

    Example::
        >>> import retrograd as rg
        >>> rg.cross(rg.tensor([1., 0., 0.]), rg.tensor([0., 1., 0.]))
        tensor([0., 0., 1.])
    """
    if dim is None:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return linalg_cross(input, other, dim)


def tensordot(a, b, dims=2):
    """Sums the products of ``a`` and ``b`` over ``dims`` (the last ``dims`` of ``a`` and first of ``b``, or two
    lists of dims).

    Example::
        >>> import retrograd as rg
        >>> rg.tensordot(rg.ones(2, 3), rg.ones(3, 4), dims=1).shape
        retrograd.Size([2, 4])
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [_wrap_dim(d, a.dim()) for d in dims_a]
    dims_b = [_wrap_dim(d, b.dim()) for d in dims_b]
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = 1
    for da, db in zip(dims_a, dims_b, strict=True):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} "
                               f"and second has size {b.shape[db]} in dim {db}")
        k *= a.shape[da]
    out_shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    left = a.permute(tuple(free_a + dims_a)).reshape((-1, k))
    right = b.permute(tuple(dims_b + free_b)).reshape((k, -1))
    return mm(left, right).reshape(out_shape)


@tensor_method
def inner(input, other):
    """The sums of products over the last dims of ``input`` and ``other`` (a product where one is 0-d).

    Example::
        >>> import retrograd as rg
        >>> rg.inner(rg.tensor([1., 2.]), rg.tensor([3., 4.]))
        tensor(11.)
    """
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


# Real tensors: the dot product, with a node of its own.
vdot = defop("vdot", lambda xp, input, other: _dot(xp, input, other), method=True, promote="binary",
             input=lambda grad, other: grad * other,
             other=lambda grad, input: grad * input)


@tensor_method
def matrix_power(input, n):
    """The ``n``-th power of the square matrix (or batch) ``input``; ``n < 0`` powers its inverse.

    Example::
        >>> import retrograd as rg
        >>> rg.matrix_power(rg.tensor([[1., 1.], [0., 1.]]), 3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{input.shape[-2] if input.dim() > 1 else input.shape[-1]} by {input.shape[-1]} matrices")
    if n == 0:  # as PyTorch: the identity copied into a clone of input (a zero gradient)
        return input.clone().copy_(eye(input.shape[-1], dtype=input.dtype, device=input.device).expand(
            tuple(input.shape)))
    if n < 0:
        input, n = linalg_inv(input), -n
    if n == 1:
        return input.clone()
    result, power = None, input
    while n:  # binary powering: the squares, multiplied in where n has a 1 bit
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result


# -- decompositions, inverses and solvers: the ops behind retrograd.linalg -------------------------------------
class LinAlgError(RuntimeError):
    """A linear-algebra routine met an input it cannot handle (singular, not positive-definite), as
    ``torch.linalg.LinAlgError``."""


def _batch_prefix(batch_shape, index):
    """PyTorch's ``(Batch element k): `` before a message about one matrix of a batch."""
    return f"(Batch element {int(np.ravel_multi_index(index, batch_shape))}): " if batch_shape else ""


def _square(name, a, what="A"):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are "
                           f"{a.shape[-2] if a.ndim > 1 else a.shape[-1]} by {a.shape[-1]} matrices")


def _lu_zero_pivot(a):
    """(batch index, 1-based position) of the first exactly zero pivot of LU with partial pivoting, or None."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for k, m in enumerate(flat):
        lu, _ = scipy.linalg.lu_factor(m, check_finite=False) if m.size else (m, None)
        zero = np.flatnonzero(np.diagonal(lu) == 0)
        if zero.size:
            return np.unravel_index(k, a.shape[:-2]) if a.ndim > 2 else (), int(zero[0]) + 1
    return None


def _inverse(name, a, xp):
    _square(name, a)
    pivot = _lu_zero_pivot(np.asarray(a)) if a.size else None
    if pivot is not None:
        index, position = pivot
        raise LinAlgError(f"{name}: {_batch_prefix(a.shape[:-2], index)}The diagonal element {position} is zero, the "
                          f"inversion could not be completed because the input matrix is singular.")
    return xp.linalg.inv(a) if a.size else a.copy()


def _inv_backward(grad, result):
    return -(result.mT.matmul(grad).matmul(result.mT))


linalg_inv = defop("linalg_inv", lambda xp, A: _inverse("linalg.inv", A, xp), public=False,
                   node_name="LinalgInvEx", A=_inv_backward)


def _det(xp, A):
    _square("linalg.det", A)
    return xp.linalg.det(A) if A.size else xp.ones(A.shape[:-2], A.dtype)


def _det_backward(grad, A, result):
    # d det(A) = det(A) tr(A^-1 dA): the gradient det(A) * A^-T (A invertible).
    return (grad * result).unsqueeze(-1).unsqueeze(-1) * linalg_inv(A).mT


linalg_det = defop("linalg_det", _det, public=False, node_name="LinalgDet", A=_det_backward)


def _slogdet(xp, A):
    _square("linalg.slogdet", A)
    sign, logabsdet = xp.linalg.slogdet(A)
    return sign.astype(A.dtype), logabsdet.astype(A.dtype)


def _slogdet_backward(grads, A, result):
    # Only log|det A| has a gradient (the sign is piecewise constant): A^-T. PyTorch's node keeps the sign too.
    if grads[1] is None:
        return None
    return grads[1].unsqueeze(-1).unsqueeze(-1) * linalg_inv(A).mT


linalg_slogdet = defop("linalg_slogdet", _slogdet, public=False, multi_output=True, node_name="LinalgSlogdet",
                       A=_slogdet_backward)


@tensor_method
def slogdet(input):
    """The sign and the log of the absolute value of the determinant of ``input`` (a batch of square matrices).

    Example::
        >>> import retrograd as rg
        >>> rg.slogdet(rg.tensor([[2., 0.], [0., -3.]]))
        slogdet(sign=tensor(-1.), logabsdet=tensor(1.7918))
    """
    return return_types.slogdet(*linalg_slogdet(input))


@tensor_method
def logdet(input):
    """The log of the determinant of ``input``: NaN where the determinant is negative, -inf where it is 0.

    Example::
        >>> import retrograd as rg
        >>> rg.logdet(rg.tensor([[2., 0.], [0., 3.]]))
        tensor(1.7918)
    """
    sign, logabsdet = linalg_slogdet(input)
    return pointwise.where(sign < 0, float("nan"), logabsdet)


def _solve(xp, A, B, *, left=True):
    _square("linalg.solve", A)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    a = A if left else xp.swapaxes(A, -1, -2)
    b = B if left or vector else xp.swapaxes(B, -1, -2)
    if _lu_zero_pivot(np.asarray(a)) is not None:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    x = xp.linalg.solve(a, b[..., None])[..., 0] if vector else xp.linalg.solve(a, b)
    return x if left or vector else xp.swapaxes(x, -1, -2)


def _solve_grads(grad, A, B, left, result):
    """(gradient of A, gradient of B) of ``X = solve(A, B)``: ``gB = solve(A^T, gX)``, ``gA = -gB X^T``."""
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        g_b = linalg_solve(A.mT, grad, left=True)
        return -(g_b.unsqueeze(-1) * result.unsqueeze(-2)), g_b
    if left:
        g_b = linalg_solve(A.mT, grad, left=True)
        return -g_b.matmul(result.mT), g_b
    g_b = linalg_solve(A.mT, grad, left=False)  # X A = B
    return -result.mT.matmul(g_b), g_b


linalg_solve = defop("linalg_solve", _solve, public=False, promote="binary", node_name="LinalgSolveEx",
                     A=lambda grad, A, B, left, result: _solve_grads(grad, A, B, left, result)[0],
                     B=lambda grad, A, B, left, result: _solve_grads(grad, A, B, left, result)[1])


def _triangle(xp, A, upper, unitriangular):
    t = xp.triu(A) if upper else xp.tril(A)
    if unitriangular:
        t = t - xp.triu(xp.tril(t)) + xp.eye(A.shape[-1], dtype=A.dtype)
    return t


def _solve_triangular(xp, A, B, *, upper, left=True, unitriangular=False):
    _square("linalg.solve_triangular", A)
    t = _triangle(xp, A, upper, unitriangular)
    shape = np.broadcast_shapes(t.shape[:-2], B.shape[:-2])
    t = xp.broadcast_to(t, shape + t.shape[-2:])
    b = xp.broadcast_to(B, shape + B.shape[-2:])
    with np.errstate(divide="ignore", invalid="ignore"):
        if left:
            return _triangular_solve(xp, t, b, upper)
        return xp.swapaxes(_triangular_solve(xp, xp.swapaxes(t, -1, -2), xp.swapaxes(b, -1, -2), not upper), -1, -2)


def _triangular_solve(xp, t, b, upper):
    """``t^-1 b`` by substitution, row by row (no pivoting: a zero diagonal gives inf/NaN, as LAPACK's trsm)."""
    n = t.shape[-1]
    x = xp.zeros(b.shape, dtype=np.result_type(t.dtype, b.dtype))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        rest = (t[..., i, :, None] * x).sum(-2)
        x[..., i, :] = (b[..., i, :] - rest) / t[..., i, i, None]
    return x


def _solve_triangular_grads(grad, A, upper, left, unitriangular, result):
    g_b = linalg_solve_triangular(A.mT, grad, upper=not upper, left=left, unitriangular=unitriangular)
    g_a = -g_b.matmul(result.mT) if left else -result.mT.matmul(g_b)
    g_a = g_a.triu(1 if unitriangular else 0) if upper else g_a.tril(-1 if unitriangular else 0)
    return g_a, g_b


linalg_solve_triangular = defop(
    "linalg_solve_triangular", _solve_triangular, public=False, promote="binary",
    A=lambda grad, A, upper, left, unitriangular, result:
    _solve_triangular_grads(grad, A, upper, left, unitriangular, result)[0],
    B=lambda grad, A, upper, left, unitriangular, result:
    _solve_triangular_grads(grad, A, upper, left, unitriangular, result)[1])


def _cholesky(xp, A, *, upper=False, check_errors=False):
    _square("linalg.cholesky", A)
    L = xp.zeros(A.shape, A.dtype)
    info = xp.zeros(A.shape[:-2], np.int32)
    flat, out, infos = A.reshape((-1,) + A.shape[-2:]), L.reshape((-1,) + A.shape[-2:]), info.reshape(-1)
    for k, m in enumerate(flat):
        try:
            out[k] = np.linalg.cholesky(m) if m.size else m
        except np.linalg.LinAlgError:
            infos[k] = _first_bad_minor(m)
            if check_errors:
                index = np.unravel_index(k, A.shape[:-2]) if A.ndim > 2 else ()
                raise LinAlgError(f"linalg.cholesky: {_batch_prefix(A.shape[:-2], index)}The factorization could "
                                  f"not be completed because the input is not positive-definite (the leading minor "
                                  f"of order {infos[k]} is not positive-definite).") from None
    return (xp.swapaxes(L, -1, -2) if upper else L), info


def _first_bad_minor(m):
    """The order of the first leading minor of ``m`` that is not positive-definite."""
    for k in range(1, m.shape[0] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return m.shape[0]


def _cholesky_backward(grads, result, upper):
    """PyTorch's cholesky_backward: ``gA = L^-T Phi(L^T gL) L^-1``, Phi the lower triangle with half its diagonal."""
    L, gL = result[0], grads[0]
    if upper:
        L, gL = L.mT, gL.mT
    phi = L.mT.matmul(gL).tril()
    phi = (phi + phi.tril(-1).mT) * 0.5
    g = linalg_solve_triangular(L.mT, phi, upper=True, left=True)
    return linalg_solve_triangular(L, g, upper=False, left=False)


linalg_cholesky_ex = defop("linalg_cholesky_ex", _cholesky, public=False, multi_output=True, nondiff_outputs=(1,),
                           node_name="LinalgCholeskyEx", A=_cholesky_backward)


def _qr(xp, A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.qr: The input tensor A must have at least 2 dimensions.")
    q, r = xp.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = xp.zeros((0,), A.dtype)
    return q, r


def _check_qr_differentiable(mode, m, n):
    """PyTorch's errors where linalg.qr of an m x n matrix in ``mode`` has no derivative (backward or forward)."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")


def _qr_backward(grads, A, mode, result):
    """The gradient of A = QR (rows >= columns): ``(gQ + Q copyltu(M)) R^-T`` with ``M = R gR^T - gQ^T Q``."""
    m, n = A.shape[-2], A.shape[-1]
    _check_qr_differentiable(mode, m, n)
    if m < n:
        raise NotImplementedError("the derivative of linalg.qr of a matrix with more columns than rows is not "
                                  "implemented")
    Q, R = result
    gQ = grads[0] if grads[0] is not None else Q * 0
    gR = grads[1] if grads[1] is not None else R * 0
    M = R.matmul(gR.mT) - gQ.mT.matmul(Q)
    lower = M.tril(-1)
    copied = lower + lower.mT + M.diagonal(0, -2, -1).diag_embed()
    return linalg_solve_triangular(R.mT, gQ + Q.matmul(copied), upper=False, left=False)


linalg_qr = defop("linalg_qr", _qr, public=False, multi_output=True, node_name="LinalgQr", A=_qr_backward)


def _svd(xp, A, full_matrices=True):
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    u, s, vh = xp.linalg.svd(A, full_matrices=full_matrices)
    return u, s.astype(A.dtype), vh


def _svd_backward(grads, A, full_matrices, result):
    """The gradient of A = U diag(S) Vh (Townsend's formula), on the first k = min(m, n) singular vectors.

    The singular vectors are defined up to sign: only functions that do not depend on the signs
    have a gradient, and there it is this one.
    """
    U, S, Vh = result
    gU, gS, gVh = grads
    m, n = A.shape[-2], A.shape[-1]
    k = S.shape[-1]
    if full_matrices and m != n:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = None if gU is None else gU.narrow(-1, 0, k)
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)
    V = Vh.mT
    Sm = S.diag_embed()
    out = None
    if gS is not None:
        out = U.matmul(gS.diag_embed()).matmul(Vh)
    if gU is None and gVh is None:
        return out if out is not None else A * 0
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1)  # E[i, j] = s_j^2 - s_i^2
    off = ones((k, k), dtype=_dtype.bool, device=A.device).triu(1) | ones((k, k), dtype=_dtype.bool,
                                                                          device=A.device).tril(-1)
    F = pointwise.where(off, 1. / E.masked_fill(off.logical_not(), 1.), 0.)
    inner = Sm * 0
    if gU is not None:
        UtgU = U.mT.matmul(gU)
        inner = inner + (F * (UtgU - UtgU.mT)).matmul(Sm)
    if gVh is not None:
        gV = gVh.mT
        VtgV = V.mT.matmul(gV)
        inner = inner + Sm.matmul(F * (VtgV - VtgV.mT))
    g = U.matmul(inner).matmul(Vh)
    if gU is not None and m > k:
        g = g + (gU - U.matmul(U.mT.matmul(gU))).matmul((1. / S).diag_embed()).matmul(Vh)
    if gVh is not None and n > k:
        g = g + U.matmul((1. / S).diag_embed()).matmul(gV.mT - gV.mT.matmul(V).matmul(Vh))
    return g if out is None else out + g


linalg_svd = defop("linalg_svd", _svd, public=False, multi_output=True, node_name="LinalgSvd", A=_svd_backward)


def _eigh(xp, A, UPLO="L"):  # noqa: N803 - PyTorch's name
    _square("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, v = xp.linalg.eigh(A, UPLO=UPLO)
    return w.astype(A.dtype), v


def _eigh_backward(grads, result):
    """The gradient of A = V diag(L) V^T: ``V (diag(gL) + sym(V^T gV) / (L_j - L_i)) V^T``."""
    L, V = result
    gL, gV = grads
    k = L.shape[-1]
    g = gL.diag_embed() if gL is not None else (L * 0).diag_embed()
    if gV is not None:
        VtgV = V.mT.matmul(gV)
        E = L.unsqueeze(-2) - L.unsqueeze(-1)  # E[i, j] = L_j - L_i
        off = ones((k, k), dtype=_dtype.bool, device=L.device).triu(1) | ones((k, k), dtype=_dtype.bool,
                                                                              device=L.device).tril(-1)
        g = g + pointwise.where(off, (VtgV - VtgV.mT) * 0.5 / E.masked_fill(off.logical_not(), 1.), 0.)
    return V.matmul(g).matmul(V.mT)


linalg_eigh = defop("linalg_eigh", _eigh, public=False, multi_output=True, node_name="LinalgEigh",
                    A=lambda grads, result: _eigh_backward(grads, result))


def _pinv(xp, A, *, atol=None, rtol=None, hermitian=False):
    if A.ndim < 2:
        raise RuntimeError("linalg.pinv(" + "{" + f"{A.ndim}" + "}" + "): expected a tensor with 2 or more dimensions "
                           "of float, double, cfloat or cdouble types")
    if A.size == 0:
        return xp.zeros(A.shape[:-2] + (A.shape[-1], A.shape[-2]), A.dtype)
    u, s, vh = xp.linalg.svd(A, full_matrices=False)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else s
    if atol is None and rtol is None:
        rtol = np.finfo(A.dtype).eps * max(A.shape[-2:])
    tol = xp.maximum(atol or 0., (rtol or 0.) * smax)
    keep = s > tol
    inv_s = xp.where(keep, 1 / xp.where(keep, s, 1), 0)
    return (xp.swapaxes(vh, -1, -2) * inv_s[..., None, :]) @ xp.swapaxes(u, -1, -2)


def _pinv_backward(grad, A, result):
    """PyTorch's pinv_backward: the gradient of A+ = pinv(A) where the rank does not change."""
    P = result
    Pt, gt = P.mT, grad.mT
    if A.shape[-2] <= A.shape[-1]:
        K = gt.matmul(P)
        KPt = K.matmul(Pt)
        return -(P.matmul(K)).mT + KPt - A.matmul(P).matmul(KPt) + Pt.matmul(P).matmul(gt - K.matmul(A))
    K = P.matmul(gt)
    PtK = Pt.matmul(K)
    return -(K.matmul(P)).mT + (gt - A.matmul(K)).matmul(P).matmul(Pt) + PtK - PtK.matmul(P).matmul(A)


linalg_pinv = defop("linalg_pinv", _pinv, public=False, node_name="LinalgPinv", A=_pinv_backward)


def _lstsq(xp, A, B, rcond):
    return _pinv(xp, A, rtol=rcond) @ B


def _lstsq_grads(grad, A, B, rcond):
    """The gradients of ``X = pinv(A) B``: ``gB = pinv(A)^T gX``, and gA through pinv's derivative."""
    P = linalg_pinv(A, rtol=rcond)
    return _pinv_backward(grad.matmul(B.mT), A, P), P.mT.matmul(grad)


linalg_lstsq = defop("linalg_lstsq", _lstsq, public=False, promote="binary", node_name="LinalgLstsq",
                     A=lambda grad, A, B, rcond: _lstsq_grads(grad, A, B, rcond)[0],
                     B=lambda grad, A, B, rcond: _lstsq_grads(grad, A, B, rcond)[1])


def chain_matmul(*matrices):
    """The product of the matrices, as ``retrograd.linalg.multi_dot`` (PyTorch's deprecated spelling).

    Example::
        >>> import retrograd as rg
        >>> rg.chain_matmul(rg.ones(2, 3), rg.ones(3, 2)).shape
        retrograd.Size([2, 2])
    """
    if len(matrices) == 1:
        return matrices[0].clone()
    result = matrices[0]
    for m in matrices[1:]:
        result = result.mm(m)
    return result.view(tuple(result.shape))


def _matrix_exp(xp, A):
    _square("linalg.matrix_exp", A)
    return scipy.linalg.expm(A) if A.size else A.copy()


def _matrix_exp_backward(grad, A):
    """The adjoint of the Frechet derivative: the top-right block of exp([[A^T, G], [0, A^T]]) (Mathias, 1996);
    written with matrix_exp itself, so it differentiates again."""
    n = A.shape[-1]
    At = A.mT
    top = cat([At, grad], -1)
    bottom = cat([At * 0, At], -1)
    return linalg_matrix_exp(cat([top, bottom], -2))[..., :n, n:]


linalg_matrix_exp = defop("linalg_matrix_exp", _matrix_exp, public=False, node_name="LinalgMatrixExp",
                          A=_matrix_exp_backward)

# -- forward derivatives (Note [Forward derivatives]) ---------------------------------------------------
from ._declarations import LINEAR, MULTILINEAR, REGISTRY, defjvp  # noqa: E402
from ._forward import not_implemented  # noqa: E402


def _solve_jvp(A_t, B_t, A, B, left, result):
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        return linalg_solve(A, B_t - A_t.matmul(result.unsqueeze(-1)).squeeze(-1), left=True)
    if left:
        return linalg_solve(A, B_t - A_t.matmul(result), left=True)
    return linalg_solve(A, B_t - result.matmul(A_t), left=False)


def _inv_trace(A, A_t):
    """``trace(A^-1 A_t)`` over the batch: the tangent of ``log |det A|``."""
    return (linalg_inv(A).mT * A_t).sum((-2, -1))


defjvp(MULTILINEAR, "matmul", "mm", "bmm", "mv", "dot", "outer", "einsum", "linalg_cross", "vdot")
defjvp(LINEAR, "trace")
defjvp(lambda input_t, mat1_t, mat2_t, mat1, mat2, beta, alpha:
       input_t * beta + (mat1_t.mm(mat2) + mat1.mm(mat2_t)) * alpha, "addmm")
defjvp(lambda input_t, mat_t, vec_t, mat, vec, beta, alpha:
       input_t * beta + (mat_t.mv(vec) + mat.mv(vec_t)) * alpha, "addmv")
defjvp(lambda input_t, batch1_t, batch2_t, batch1, batch2, beta, alpha:
       input_t * beta + (batch1_t.bmm(batch2) + batch1.bmm(batch2_t)) * alpha, "baddbmm")
defjvp(lambda input_t, batch1_t, batch2_t, batch1, batch2, beta, alpha:
       input_t * beta + (batch1_t.bmm(batch2) + batch1.bmm(batch2_t)).sum(0) * alpha, "addbmm")
defjvp(lambda input_t, vec1_t, vec2_t, vec1, vec2, beta, alpha:
       input_t * beta + (vec1_t.outer(vec2) + vec1.outer(vec2_t)) * alpha, "addr")
defjvp(lambda A_t, result: -result.matmul(A_t).matmul(result), "linalg_inv")
defjvp(lambda A_t, A, result: result * _inv_trace(A, A_t), "linalg_det")
defjvp(lambda A_t, A: (None, _inv_trace(A, A_t)), "linalg_slogdet")
defjvp(_solve_jvp, "linalg_solve")


def _matrix_exp_jvp(A_t, A):
    """The upper-right block of ``exp([[A, A_t], [0, A]])``, which is the derivative of exp at A along A_t."""
    n = A.shape[-1]
    top = cat([A, A_t], -1)
    bottom = cat([A * 0, A], -1)
    return REGISTRY["linalg_matrix_exp"].function(cat([top, bottom], -2))[..., :n, n:]


def _triangle_of(t, upper, unitriangular):
    part = t.triu() if upper else t.tril()
    return part - part.diagonal(0, -2, -1).diag_embed() if unitriangular else part


def _solve_triangular_jvp(A_t, B_t, A, upper, left, unitriangular, result):
    solve = REGISTRY["linalg_solve_triangular"].function
    A_t = _triangle_of(A_t, upper, unitriangular)
    if left:
        return solve(A, B_t - A_t.matmul(result), upper=upper, left=True, unitriangular=unitriangular)
    return solve(A, B_t - result.matmul(A_t), upper=upper, left=False, unitriangular=unitriangular)


def _cholesky_jvp(A_t, upper, result):
    """``L_t = L phi(L^-1 A_t L^-T)``, phi keeping the lower triangle with half the diagonal."""
    solve = REGISTRY["linalg_solve_triangular"].function
    L = result[0].mT if upper else result[0]
    inner = solve(L, solve(L, A_t, upper=False).mT, upper=False).mT
    L_t = L.matmul(inner.tril(-1) + inner.diagonal(0, -2, -1).diag_embed() * 0.5)
    return (L_t.mT if upper else L_t), None


def _eigh_jvp(A_t, result):
    """``lambda_t = diag(V^T A_t V)``, ``V_t = V (F * V^T A_t V)``, ``F_ij = 1 / (lambda_j - lambda_i)`` off the
    diagonal."""
    values, vectors = result
    inner = vectors.mT.matmul(A_t).matmul(vectors)
    gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
    off = eye(values.shape[-1], dtype=_dtype.bool).logical_not()
    factor = pointwise.where(off, 1 / pointwise.where(off, gaps, gaps * 0 + 1), gaps * 0)
    return inner.diagonal(0, -2, -1), vectors.matmul(factor * inner)


def _cdist_jvp(x1_t, x2_t, x1, x2, p):
    if not 0 < p < float("inf"):
        raise not_implemented(f"cdist with p={p}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    diff_t = x1_t.unsqueeze(-2) - x2_t.unsqueeze(-3)
    dist = cdist(x1, x2, p)
    scale = pointwise.where(dist == 0, dist * 0, dist ** (1 - p))
    return scale * (diff.abs() ** (p - 1) * diff.sign() * diff_t).sum(-1)


defjvp(_matrix_exp_jvp, "linalg_matrix_exp")
defjvp(_solve_triangular_jvp, "linalg_solve_triangular")
defjvp(_cholesky_jvp, "linalg_cholesky_ex")
defjvp(_eigh_jvp, "linalg_eigh")
defjvp(_cdist_jvp, "cdist")


def _pinv_jvp(A_t, A, hermitian, result):
    """The derivative of the pseudo-inverse at constant rank (Golub and Pereyra):
    ``-P A_t P + P P^T A_t^T (I - A P) + (I - P A) A_t^T P^T P``."""
    P = result
    m, n = A.shape[-2], A.shape[-1]
    A_tT = A_t.mT
    left = eye(m, dtype=A.dtype) - A.matmul(P)
    right = eye(n, dtype=A.dtype) - P.matmul(A)
    return (-P.matmul(A_t).matmul(P) + P.matmul(P.mT).matmul(A_tT).matmul(left)
            + right.matmul(A_tT).matmul(P.mT).matmul(P))


defjvp(_pinv_jvp, "linalg_pinv")


def _qr_tall_jvp(A_t, Q, R):
    """``(Q_t, R_t)`` of A = QR where A has no more columns than rows: with ``X = Q^T A_t R^-1`` and ``W`` its
    strictly lower triangle, ``Q^T Q_t`` is the skew ``W - W^T`` and ``R_t R^-1 = X - W + W^T`` is upper triangular."""
    A_t_Rinv = linalg_solve_triangular(R, A_t, upper=True, left=False)
    X = Q.mT.matmul(A_t_Rinv)
    lower = X.tril(-1)
    upper = X - lower + lower.mT
    return A_t_Rinv - Q.matmul(upper), upper.matmul(R)


def _qr_jvp(A_t, mode, result):
    """The tangents of ``linalg.qr``; a wide A = [X | Y] takes X = Q R_X as square and ``R_Y = Q^T Y``."""
    m, n = A_t.shape[-2], A_t.shape[-1]
    _check_qr_differentiable(mode, m, n)
    Q, R = result
    if m >= n:
        return _qr_tall_jvp(A_t, Q, R)
    Q_t, R_X_t = _qr_tall_jvp(A_t[..., :m], Q, R[..., :m])
    R_Y_t = Q.mT.matmul(A_t[..., m:] - Q_t.matmul(R[..., m:]))
    return Q_t, cat([R_X_t, R_Y_t], -1)


def _svd_jvp(A_t, full_matrices, result):
    """The tangents of A = U diag(S) Vh on its first k = min(m, n) singular vectors (PyTorch's convention): with
    ``P = U^T A_t V`` and ``E_ij = S_j^2 - S_i^2``, ``S_t = diag(P)``, ``U_t = U (sym(P_0 S) / E) + (I - U U^T) A_t V
    S^-1`` and ``Vh_t = -(sym(S P_0) / E) Vh + S^-1 U^T A_t (I - V Vh)``, ``P_0`` being P off its diagonal; the
    columns (rows) beyond k of a full U (Vh) get zeros."""
    U, S, Vh = result
    m, n = A_t.shape[-2], A_t.shape[-1]
    k = S.shape[-1]
    if full_matrices and m != n:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
    V = Vh.mT
    P = U.mT.matmul(A_t).matmul(V)
    S_t = P.diagonal(0, -2, -1)
    P0 = P - S_t.diag_embed()
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye(k, dtype=S.dtype, device=S.device)  # any nonzero diagonal: P0's is zero
    PS = P0 * S.unsqueeze(-2)
    U_t = U.matmul((PS + PS.mT) / E)
    SP = P0 * S.unsqueeze(-1)
    Vh_t = -((SP + SP.mT) / E).matmul(Vh)
    if m > n:
        A_t_V = A_t.matmul(V / S.unsqueeze(-2))
        U_t = U_t + A_t_V - U.matmul(U.mT.matmul(A_t_V))
        if full_matrices:
            U_t = cat([U_t, U_t.new_zeros(tuple(U_t.shape[:-1]) + (m - n,))], -1)
    if m < n:
        Ut_A_t = (U.mT / S.unsqueeze(-1)).matmul(A_t)
        Vh_t = Vh_t + Ut_A_t - Ut_A_t.matmul(V).matmul(Vh)
        if full_matrices:
            Vh_t = cat([Vh_t, Vh_t.new_zeros(tuple(Vh_t.shape[:-2]) + (n - m, n))], -2)
    return U_t, S_t, Vh_t


def _lstsq_jvp(A_t, B_t, A, B, rcond):
    """``X = pinv(A) B``: ``X_t = pinv_t B + pinv(A) B_t``, pinv's tangent as ``linalg_pinv``'s."""
    P = linalg_pinv(A, rtol=rcond)
    return _pinv_jvp(A_t, A, False, P).matmul(B) + P.matmul(B_t)


defjvp(_qr_jvp, "linalg_qr")
defjvp(_svd_jvp, "linalg_svd")
defjvp(_lstsq_jvp, "linalg_lstsq")
