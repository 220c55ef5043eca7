"""Samples of the linear-algebra ops (retrograd/ops/linalg.py); format in samples.py."""
import numpy as np

from samples import A, Const, I, Sample, add, nc

add("matmul",
    Sample(lambda m, x, y: m.matmul(x, y), A(2, 3), A(3, 2), ref=np.matmul),
    Sample(lambda m, x, y: x @ y, A(3), A(3), ref=np.matmul, note="1-D @ 1-D"),
    Sample(lambda m, x, y: x @ y, A(2, 3), A(3), ref=np.matmul, note="2-D @ 1-D"),
    Sample(lambda m, x, y: x @ y, A(3), A(2, 3, 2), ref=np.matmul, note="1-D @ batched"),
    Sample(lambda m, x, y: x.matmul(y), A(2, 1, 2, 3), nc(A(2, 3, 2)), ref=np.matmul, note="broadcast batch"),
    Sample(lambda m, x, y: x @ y, A(0, 3), A(3, 2), ref=np.matmul, note="empty"),
    Sample(lambda m, x, y: x @ y, A(2, 0), A(0, 2), ref=np.matmul, note="empty inner dim"),
    Sample(lambda m, x, y: x @ y, A(2, 3), Const(A(3, 2)), ref=np.matmul),
    Sample(lambda m, x, y: x @ y, I(3, 2, 3), I(3, 3), ref=np.matmul, note="integers"))
add("mm",
    Sample(lambda m, x, y: m.mm(x, y), A(2, 3), A(3, 2), ref=np.matmul),
    Sample(lambda m, x, y: x.mm(y), nc(A(3, 2)).T, A(3, 1), ref=np.matmul, note="transposed"),
    Sample(lambda m, x, y: x.mm(y), A(0, 2), A(2, 3), ref=np.matmul))
add("bmm",
    Sample(lambda m, x, y: m.bmm(x, y), A(2, 2, 3), A(2, 3, 2), ref=np.matmul),
    Sample(lambda m, x, y: x.bmm(y), nc(A(2, 2, 3)), A(2, 3, 1), ref=np.matmul))
add("mv",
    Sample(lambda m, x, y: m.mv(x, y), A(2, 3), A(3), ref=np.matmul),
    Sample(lambda m, x, y: x.mv(y), nc(A(2, 3)), nc(A(3)), ref=np.matmul))
add("dot",
    Sample(lambda m, x, y: m.dot(x, y), A(3), A(3), ref=np.dot),
    Sample(lambda m, x, y: x.dot(y), nc(A(3)), A(3), ref=np.dot),
    Sample(lambda m, x, y: x.dot(y), A(0), A(0), ref=np.dot))
add("outer",
    Sample(lambda m, x, y: m.outer(x, y), A(3), A(2), ref=np.outer),
    Sample(lambda m, x, y: x.outer(y), nc(A(2)), A(3), ref=np.outer),
    Sample(lambda m, x, y: m.ger(x, y), A(2), A(0), ref=np.outer))
add("trace",
    Sample(lambda m, x: m.trace(x), A(3, 3), ref=np.trace),
    Sample(lambda m, x: x.trace(), A(2, 3), ref=np.trace, note="not square"),
    Sample(lambda m, x: x.trace(), nc(A(3, 2)), ref=np.trace),
    Sample(lambda m, x: x.trace(), I(5, 3, 3), ref=np.trace))


def _e(equation, *arrays, note="", **kw):
    return Sample(lambda m, *xs: m.einsum(equation, *xs), *arrays, ref=lambda *xs: np.einsum(equation, *xs),
                  note=f"{equation} {note}", **kw)


add("einsum",
    _e("ij,jk->ik", A(2, 3), A(3, 2)),
    _e("ij,jk", A(2, 3), A(3, 2)),
    _e("i,i->", A(3), A(3)),
    _e("ij->", A(2, 3)),
    _e("ij->ji", nc(A(2, 3))),
    _e("bij,bjk->bik", A(2, 2, 3), A(2, 3, 2)),
    _e("ij,k->ijk", A(2, 2), A(3)),
    _e("ii->i", A(3, 3)),
    _e("ii->", A(3, 3)),
    _e("iij->j", A(2, 2, 3)),
    _e("ij,ii->j", A(2, 3), A(2, 2)),
    _e("...ij,...jk->...ik", A(2, 2, 3), A(3, 2)),
    _e("...i->...", A(2, 3)),
    _e("i...->...", A(2, 3, 2)),
    _e("ij...,j->i...", A(2, 3), A(3)),
    _e("i,j", A(2), A(3)),
    _e("", A()),
    _e("i,i->i", A(0), A(0)),
    Sample(lambda m, x, y: m.einsum("ij,jk->ik", [x, y]), A(2, 3), A(3, 2), ref=np.matmul, note="list operands"))
add("einsum",
    _e("ij,ij->ij", A(1, 3), A(2, 3), note="a size-1 dim broadcasts"),
    _e("...ij,...jk->...ik", A(2, 1, 2, 3), nc(A(3, 3, 2)), note="broadcast ellipsis"),
    _e("ii,i->i", A(2, 2), A(1), note="repeat and broadcast"))
