"""Linear algebra: matmul and its special cases, outer products, einsum and trace."""
from __future__ import annotations

from ._grad_utils import matmul_backward
from ._registry import defop


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


matmul = defop("matmul", _matmul, method=True, promote="binary",
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


outer = defop("outer", _outer, method=True, promote="binary",
              input=lambda grad, vec2: grad.matmul(vec2),
              vec2=lambda grad, input: input.matmul(grad))
ger = outer


def _trace(xp, input):
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.ndim))
    return xp.asarray(xp.trace(input))


def _trace_backward(grad, input_shape):
    from .._creation import eye
    return grad * eye(input_shape[0], input_shape[1], dtype=grad.dtype, device=grad.device)


trace = defop("trace", _trace, method=True, input=_trace_backward)


def _einsum_forward(xp, equation, operands):
    return xp.einsum(equation, *operands)


def _parse_einsum(equation, n):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "").replace("...", "")
        out = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = lhs.split(",")
    if len(ins) != n:
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation" if n > len(ins)
                           else "einsum(): fewer operands were provided than specified in the equation")
    return ins, out


def _einsum_backward(grad, equation, operands):
    """Gradient of each operand: an einsum of the output gradient with the other operands.

    Letters of an operand that appear nowhere else are summed dims: the gradient is broadcast
    along them. A letter repeated within one operand (a diagonal) is written back on the diagonal.
    """
    ins, out = _parse_einsum(equation, len(operands))
    grads = []
    for k, sub in enumerate(ins):
        if "..." in sub or "..." in out or len(set(sub)) != len(sub):
            grads.append(_einsum_backward_general(grad, ins, out, operands, k))
            continue
        others = [(s, t) for j, (s, t) in enumerate(zip(ins, operands, strict=True)) if j != k]
        present = set(out) | {c for s, _ in others for c in s}
        kept = "".join(c for c in sub if c in present)
        eq = ",".join([out] + [s for s, _ in others]) + "->" + kept
        g = einsum(eq, [grad] + [t for _, t in others])
        if kept != sub:
            shape = []
            j = 0
            for c in sub:
                if c in present:
                    shape.append(g.shape[j])
                    j += 1
                else:
                    shape.append(1)
            g = g.reshape(tuple(shape)).expand(operands[k].shape)
        grads.append(g)
    return grads


def _einsum_backward_general(grad, ins, out, operands, k):
    # Ellipses and repeated letters: differentiate through a one-hot embedding of the operand.
    raise NotImplementedError("einsum backward with '...' or repeated subscripts in one operand is not supported yet")


einsum_op = defop("einsum", _einsum_forward, public=False, lists=("operands",), tensor_args=("operands",),
                  operands=_einsum_backward)


def einsum(equation, *operands):
    """Sums products of the operands' elements over the subscripts of ``equation`` (NumPy's notation).

    Example::
        >>> import retrograd as rg
        >>> rg.einsum("ij,j->i", rg.ones(2, 3), rg.ones(3))
        tensor([3., 3.])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return einsum_op(equation, list(operands))
