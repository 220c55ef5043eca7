"""Helpers that derivative formulas call. Everything here works on Tensors with retrograd ops,
so that formulas stay differentiable (``create_graph=True`` gives higher derivatives)."""
from __future__ import annotations

from ._declarations import op_call, shortcut
from ._node import DIM_UNSET
from .joining import cat
from .shape import expand


def normalize_dims(dim, ndim):
    """``dim`` (None, an int or a sequence) as a sorted tuple of non-negative dims."""
    if dim is None or dim is DIM_UNSET or (not isinstance(dim, int) and len(dim) == 0):  # dim=() too, as PyTorch
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    n = max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        out.append(d % n)
    return tuple(sorted(set(out)))


def _expand_reduced(grad, input_shape, dim, keepdim):
    """Broadcasts the gradient of a reduction over ``dim`` back to ``input_shape``."""
    ndim = len(input_shape)
    if dim is None and not keepdim:  # an explicit dim=None: a full reduction, as the shortcut below
        return expand(grad, input_shape)
    if not keepdim and ndim:
        shape = list(input_shape)
        for d in normalize_dims(dim, ndim):
            shape[d] = 1
        grad = grad.reshape(tuple(shape))
    return expand(grad, input_shape)


# A full reduction (dim left out, no keepdim): the scalar gradient expands directly. An explicit dim=None takes the
# general way, to the same result (Note [An explicit dim of None] in _node.py).
expand_reduced = shortcut(_expand_reduced, when={"dim": DIM_UNSET, "keepdim": False},
                          then=op_call("expand", "grad", "input_shape"))


def reduced_numel(input_shape, dim):
    """How many elements each output of a reduction over ``dim`` averages."""
    n = 1
    for d in normalize_dims(dim, len(input_shape)):
        n *= input_shape[d] if input_shape else 1
    return n


def unsqueeze_reduced(t, input_shape, dim, keepdim):
    """``t`` (a reduction's output) with the reduced dims put back as size 1, for broadcasting."""
    if keepdim or not input_shape:
        return t
    shape = list(input_shape)
    for d in normalize_dims(dim, len(input_shape)):
        shape[d] = 1
    return t.reshape(tuple(shape))


def matmul_backward(grad, input, other, which):
    """Gradient of ``matmul(input, other)`` for ``input`` (which=0) or ``other`` (which=1).

    1-D operands are promoted to matrices as matmul does; broadcast batch dimensions are summed
    away by the engine's ``validate_outputs``.
    """
    if input.dim() == 1 and other.dim() == 1:  # a dot product
        return grad * (other if which == 0 else input)
    # Matrix @ vector, vector @ matrix and vector @ vector: one or two ops instead of the general
    # promotion below (which records four under create_graph), as PyTorch's MvBackward0 does.
    if input.dim() == 2 and other.dim() == 1:
        return grad.outer(other) if which == 0 else input.mT.matmul(grad)
    if input.dim() == 1 and other.dim() == 2:
        return other.matmul(grad) if which == 0 else input.outer(grad)
    if input.dim() == 1 and other.dim() == 1:
        return grad * other if which == 0 else grad * input
    a = input.unsqueeze(0) if input.dim() == 1 else input
    b = other.unsqueeze(-1) if other.dim() == 1 else other
    g = grad
    if input.dim() == 1:
        g = g.unsqueeze(-2)
    if other.dim() == 1:
        g = g.unsqueeze(-1)
    if which == 0:
        ga = g.matmul(b.mT)
        if input.dim() == 1:
            ga = ga.squeeze(-2)
        return ga
    if input.dim() > 2 and other.dim() == 2:  # one product over the rows; a transposed other gets its gradient so,
        a, g = a.reshape(-1, a.shape[-1]), g.reshape(-1, g.shape[-1])  # as PyTorch's mm_mat2_backward
        d = other._data
        return g.mT.matmul(a).mT if d.flags.f_contiguous and not d.flags.c_contiguous else a.mT.matmul(g)
    gb = a.mT.matmul(g)
    if other.dim() == 1:
        gb = gb.squeeze(-1)
    return gb


def split_sizes_backward(grads, dim):
    """Gradient of the outputs of split/chunk: concatenated back along ``dim``."""
    return cat(list(grads), dim)
