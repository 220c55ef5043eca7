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

# -- fused products, distances, cross products -------------------------------------------------------------
add("addmm",
    Sample(lambda m, x, a, b: m.addmm(x, a, b), A(2, 3), A(2, 4), A(4, 3), ref=lambda x, a, b: x + a @ b),
    Sample(lambda m, x, a, b: x.addmm(a, b, beta=0.5, alpha=2), A(3), nc(A(2, 4)), A(4, 3),
           ref=lambda x, a, b: 0.5 * x + 2 * a @ b, note="broadcast input, scaled"),
    Sample(lambda m, x, a, b: m.addmm(x, a, b, beta=0), Const(np.full((2, 3), np.nan)), A(2, 4), A(4, 3),
           ref=lambda x, a, b: a @ b, note="beta=0 ignores NaN input"),
    Sample(lambda m, x, a, b: x.clone().addmm_(a, b, alpha=-1), A(2, 3), A(2, 4), A(4, 3),
           ref=lambda x, a, b: x - a @ b, note="in place"))
add("addmv",
    Sample(lambda m, x, a, v: m.addmv(x, a, v), A(2), A(2, 3), A(3), ref=lambda x, a, v: x + a @ v),
    Sample(lambda m, x, a, v: x.addmv(a, v, beta=2, alpha=0.5), A(), nc(A(2, 3)), A(3),
           ref=lambda x, a, v: 2 * x + 0.5 * a @ v))
add("baddbmm",
    Sample(lambda m, x, a, b: m.baddbmm(x, a, b), A(2, 2, 3), A(2, 2, 4), A(2, 4, 3), ref=lambda x, a, b: x + a @ b),
    Sample(lambda m, x, a, b: x.baddbmm(a, b, beta=0.5, alpha=2), A(2, 3), A(2, 2, 4), nc(A(2, 4, 3)),
           ref=lambda x, a, b: 0.5 * x + 2 * a @ b))
add("addbmm",
    Sample(lambda m, x, a, b: m.addbmm(x, a, b), A(2, 3), A(2, 2, 4), A(2, 4, 3),
           ref=lambda x, a, b: x + (a @ b).sum(0)),
    Sample(lambda m, x, a, b: x.addbmm(a, b, beta=2, alpha=0.5), A(3), A(3, 2, 2), A(3, 2, 3),
           ref=lambda x, a, b: 2 * x + 0.5 * (a @ b).sum(0)))
add("addr",
    Sample(lambda m, x, u, v: m.addr(x, u, v), A(2, 3), A(2), A(3), ref=lambda x, u, v: x + np.outer(u, v)),
    Sample(lambda m, x, u, v: x.addr(u, v, beta=0.5, alpha=3), A(3), A(2), nc(A(3)),
           ref=lambda x, u, v: 0.5 * x + 3 * np.outer(u, v)),
    Sample(lambda m, x, u, v: x.addr(u, v), I(3, 2, 2), I(3, 2), I(3, 2), ref=lambda x, u, v: x + np.outer(u, v)))


_CDIST_NOTE = "PyTorch's cdist has no second derivative (_cdist_backward)"


def _cdist_ref(x1, x2, p):
    d = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    return d.max(-1) if p == np.inf else (d ** p).sum(-1) ** (1 / p)


for _p in (2.0, 1.0, 3.0, float("inf")):
    add("cdist", Sample(lambda m, x, y, _p=_p: m.cdist(x, y, p=_p), A(3, 2), A(4, 2), gradgrad=False,
                        ref=lambda x, y, _p=_p: _cdist_ref(x, y, _p), note=f"p={_p}; {_CDIST_NOTE}"))
add("cdist",
    Sample(lambda m, x, y: m.cdist(x, y), A(2, 3, 2), nc(A(2, 2, 2)), ref=lambda x, y: _cdist_ref(x, y, 2.),
           gradgrad=False, note=f"batched; {_CDIST_NOTE}"),
    Sample(lambda m, x, y: m.cdist(x, y, p=0.), A(3, 2), A(2, 2), ref=lambda x, y: (x[:, None] != y[None]).sum(-1) * 1.,
           gradgrad=False, note=f"p=0; {_CDIST_NOTE}"))
add("cdist", Sample(lambda m, x, y: m.cdist(x, y, p=3.), A(2, 2), A(3, 2), torch=False,
                    note="second derivatives, which PyTorch's cdist does not have"))


def _pdist_ref(x, p):
    first, second = np.triu_indices(x.shape[0], 1)
    d = np.abs(x[first] - x[second])
    if p == 0:
        return (d != 0).sum(-1) * 1.
    return d.max(-1) if p == np.inf else (d ** p).sum(-1) ** (1 / p)


_PDIST_NOTE = "PyTorch's pdist has no second derivative (_pdist_backward)"
for _p in (2.0, 1.0, 0.5, 3.0, float("inf"), 0.0):
    add("pdist", Sample(lambda m, x, _p=_p: m.pdist(x, p=_p), A(4, 3), ref=lambda x, _p=_p: _pdist_ref(x, _p),
                        gradgrad=False, note=f"p={_p}; {_PDIST_NOTE}"))
add("pdist",
    Sample(lambda m, x: m.nn.functional.pdist(x), nc(A(3, 2)), ref=lambda x: _pdist_ref(x, 2.), gradgrad=False,
           note=f"not contiguous; {_PDIST_NOTE}"),
    Sample(lambda m, x: m.pdist(x), A(1, 3), ref=lambda x: _pdist_ref(x, 2.), gradgrad=False, note="one row"),
    Sample(lambda m, x: m.pdist(x, 1.5), A(3, 0), ref=lambda x: _pdist_ref(x, 1.5), gradgrad=False,
           note="no columns"),
    Sample(lambda m, x: m.pdist(x, p=1.5), A(3, 2), torch=False,
           note="second derivatives, which PyTorch's pdist does not have"),
    Sample(lambda m, x: m.pdist(x, p=2.0), A(3, 2), torch=False, note="second derivatives"))
add("linalg_cross",
    Sample(lambda m, x, y: m.cross(x, y, dim=1), A(2, 3), A(2, 3), ref=lambda x, y: np.cross(x, y)),
    Sample(lambda m, x, y: m.linalg.cross(x, y), A(2, 3), A(1, 3), ref=lambda x, y: np.cross(x, y), note="broadcast"),
    Sample(lambda m, x, y: x.cross(y, -2), nc(A(3, 2)), A(3, 2), ref=lambda x, y: np.cross(x, y, axis=0)),
    Sample(lambda m, x, y: m.linalg.cross(x, y, dim=0), I(5, 3, 2), I(5, 3, 2),
           ref=lambda x, y: np.cross(x, y, axis=0)))
add("vdot",
    Sample(lambda m, x, y: m.vdot(x, y), A(3), A(3), ref=np.vdot),
    Sample(lambda m, x, y: x.vdot(y), nc(A(3)), Const(A(3)), ref=np.vdot),
    Sample(lambda m, x, y: m.linalg.vecdot(x, y), A(3), A(3), ref=np.vdot, note="linalg.vecdot of vectors"))
add("tensordot",
    Sample(lambda m, x, y: m.tensordot(x, y), A(2, 3, 2), A(3, 2, 2), ref=lambda x, y: np.tensordot(x, y)),
    Sample(lambda m, x, y: m.tensordot(x, y, dims=([0, 2], [1, 0])), A(2, 3, 2), nc(A(2, 2, 3)),
           ref=lambda x, y: np.tensordot(x, y, ([0, 2], [1, 0]))),
    Sample(lambda m, x, y: m.tensordot(x, y, 0), A(2), A(3), ref=lambda x, y: np.tensordot(x, y, 0)))
add("inner",
    Sample(lambda m, x, y: m.inner(x, y), A(2, 3), A(4, 3), ref=np.inner),
    Sample(lambda m, x, y: x.inner(y), A(3), A(3), ref=np.inner),
    Sample(lambda m, x, y: m.inner(x, y), A(), A(2), ref=np.inner, note="0-d"))
add("matrix_power",
    Sample(lambda m, x: m.matrix_power(x, 3), A(3, 3), ref=lambda x: np.linalg.matrix_power(x, 3)),
    Sample(lambda m, x: m.linalg.matrix_power(x, 2), A(2, 2, 2), ref=lambda x: np.linalg.matrix_power(x, 2)),
    Sample(lambda m, x: x.matrix_power(-2), A(2, 2) + 3 * np.eye(2), ref=lambda x: np.linalg.matrix_power(x, -2)),
    Sample(lambda m, x: x.matrix_power(1), A(2, 2), ref=lambda x: x),
    Sample(lambda m, x: x.matrix_power(0), A(2, 2), ref=lambda x: np.eye(2)),
    Sample(lambda m, x: x.matrix_power(5), I(3, 2, 2), ref=lambda x: np.linalg.matrix_power(x, 5)))
add("logdet",
    Sample(lambda m, x: m.logdet(x @ x.mT + m.eye(3, dtype=m.float64)), A(3, 3),
           ref=lambda x: np.linalg.slogdet(x @ x.T + np.eye(3))[1]),
    Sample(lambda m, x: x.logdet(), np.array([[-1., 0.], [0., 2.]]), ref=lambda x: np.nan, grad=False,
           note="negative det: NaN"))
add("slogdet", Sample(lambda m, x: m.slogdet(x), A(3, 3), ref=np.linalg.slogdet))

# -- retrograd.linalg: decompositions, inverses and solvers -------------------------------------------------
# Functions of singular vectors and eigenvectors that do not depend on their signs (U Vh, V * V).
_WELL = A(3, 3) + 3 * np.eye(3)
add("linalg_inv",
    Sample(lambda m, x: m.linalg.inv(x), _WELL, ref=np.linalg.inv),
    Sample(lambda m, x: m.linalg.inv(x), A(2, 2, 2) + 3 * np.eye(2), ref=np.linalg.inv, note="batched"),
    Sample(lambda m, x: m.linalg.inv_ex(x).inverse, nc(_WELL), ref=np.linalg.inv, note="inv_ex"))
add("linalg_det",
    Sample(lambda m, x: m.linalg.det(x), A(3, 3), ref=np.linalg.det),
    Sample(lambda m, x: m.linalg.det(x), A(2, 2, 2), ref=np.linalg.det, note="batched"))
add("linalg_slogdet",
    Sample(lambda m, x: m.linalg.slogdet(x), A(3, 3), ref=np.linalg.slogdet),
    Sample(lambda m, x: m.linalg.slogdet(x).logabsdet, nc(A(2, 2, 2)), ref=lambda x: np.linalg.slogdet(x)[1]))
add("linalg_solve",
    Sample(lambda m, a, b: m.linalg.solve(a, b), _WELL, A(3, 2), ref=np.linalg.solve),
    Sample(lambda m, a, b: m.linalg.solve(a, b), _WELL, A(3), ref=np.linalg.solve, note="a vector"),
    Sample(lambda m, a, b: m.linalg.solve(a, b, left=False), _WELL, A(2, 3),
           ref=lambda a, b: np.linalg.solve(a.T, b.T).T, note="X A = B"),
    Sample(lambda m, a, b: m.linalg.solve(a, b), A(2, 2, 2) + 3 * np.eye(2), A(2, 1), note="batch broadcast",
           ref=lambda a, b: np.linalg.solve(a, np.broadcast_to(b, (2, 2, 1)))))
add("linalg_solve_triangular",
    Sample(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True), _WELL, A(3, 2),
           ref=lambda a, b: np.linalg.solve(np.triu(a), b)),
    Sample(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, left=False), _WELL, A(2, 3),
           ref=lambda a, b: np.linalg.solve(np.tril(a).T, b.T).T),
    Sample(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True, unitriangular=True), A(3, 3), A(3, 1),
           ref=lambda a, b: np.linalg.solve(np.triu(a, 1) + np.eye(3), b)))
add("linalg_cholesky_ex",
    Sample(lambda m, x: m.linalg.cholesky(x @ x.mT + m.eye(3, dtype=m.float64)), A(3, 3),
           ref=lambda x: np.linalg.cholesky(x @ x.T + np.eye(3))),
    Sample(lambda m, x: m.linalg.cholesky(x @ x.mT + m.eye(2, dtype=m.float64), upper=True), A(2, 2, 2),
           ref=lambda x: np.swapaxes(np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + np.eye(2)), -1, -2)),
    Sample(lambda m, x: m.linalg.cholesky_ex(x @ x.mT + m.eye(2, dtype=m.float64)), A(2, 2),
           ref=lambda x: (np.linalg.cholesky(x @ x.T + np.eye(2)), np.array(0, np.int32)), note="cholesky_ex"))
add("linalg_qr",
    Sample(lambda m, x: m.linalg.qr(x), A(4, 3), ref=lambda x: np.linalg.qr(x)),
    Sample(lambda m, x: m.linalg.qr(x), A(2, 3, 3), ref=lambda x: np.linalg.qr(x), note="batched"),
    Sample(lambda m, x: m.linalg.qr(x, mode="r").R, A(3, 2), ref=lambda x: np.linalg.qr(x)[1], grad=False,
           torch=False, note="mode='r' has no derivative (tests/ops/test_linalg.py pins PyTorch's error)"))
add("linalg_svd",
    Sample(lambda m, x: (lambda r: (r.U @ r.Vh, r.S))(m.linalg.svd(x, full_matrices=False)), A(4, 3),
           ref=lambda x: (lambda u, s, vh: (u @ vh, s))(*np.linalg.svd(x, full_matrices=False))),
    Sample(lambda m, x: (lambda r: (r.U @ r.Vh[..., :2, :], r.S))(m.linalg.svd(x)), A(2, 3),
           ref=lambda x: (lambda u, s, vh: (u @ vh[..., :2, :], s))(*np.linalg.svd(x, full_matrices=True)),
           note="full matrices, wide"),
    Sample(lambda m, x: m.linalg.svdvals(x), A(2, 3, 2), ref=lambda x: np.linalg.svd(x, compute_uv=False)),
    Sample(lambda m, x: m.linalg.matrix_norm(x, "nuc"), A(3, 3), ref=lambda x: np.linalg.norm(x, "nuc")),
    Sample(lambda m, x: m.linalg.matrix_norm(x, -2, keepdim=True), A(3, 2),
           ref=lambda x: np.linalg.norm(x, -2, keepdims=True)),
    Sample(lambda m, x: m.linalg.cond(x), _WELL, ref=np.linalg.cond))
add("linalg_eigh",
    Sample(lambda m, x: (lambda r: (r.eigenvalues, r.eigenvectors * r.eigenvectors))(m.linalg.eigh(x + x.mT)),
           A(3, 3), ref=lambda x: (lambda w, v: (w, v * v))(*np.linalg.eigh(x + x.T))),
    Sample(lambda m, x: m.linalg.eigvalsh(x + x.mT, UPLO="U"), A(2, 3, 3), ref=lambda x: np.linalg.eigvalsh(
        x + np.swapaxes(x, -1, -2), UPLO="U")))
add("linalg_pinv",
    Sample(lambda m, x: m.linalg.pinv(x), A(4, 3), ref=np.linalg.pinv),
    Sample(lambda m, x: m.linalg.pinv(x), A(2, 3), ref=np.linalg.pinv, note="wide"),
    Sample(lambda m, x: m.linalg.pinv(x), nc(A(2, 3, 3)), ref=np.linalg.pinv, note="batched"))
add("linalg_lstsq",
    Sample(lambda m, a, b: m.linalg.lstsq(a, b).solution, A(4, 3), A(4, 2), ref=lambda a, b: np.linalg.lstsq(a, b)[0]),
    Sample(lambda m, a, b: m.linalg.lstsq(a, b, driver="gelsd").solution, A(3, 3) + 3 * np.eye(3), A(3, 1),
           ref=lambda a, b: np.linalg.lstsq(a, b)[0]))
add("norm",
    Sample(lambda m, x: m.linalg.norm(x), A(2, 3), ref=np.linalg.norm, note="linalg.norm"),
    Sample(lambda m, x: m.linalg.vector_norm(x, 3, dim=1), A(2, 3), ref=lambda x: np.linalg.norm(x, 3, axis=1)),
    Sample(lambda m, x: m.linalg.vector_norm(x, float("inf"), dim=(0, 1), keepdim=True), A(2, 3),
           ref=lambda x: np.abs(x).max(keepdims=True)),
    Sample(lambda m, x: m.linalg.matrix_norm(x), nc(A(2, 3)), ref=np.linalg.norm, note="Frobenius"))
add("amax",
    Sample(lambda m, x: m.linalg.matrix_norm(x, 1), A(2, 3), ref=lambda x: np.linalg.norm(x, 1)),
    Sample(lambda m, x: m.linalg.matrix_norm(x, float("inf"), dim=(0, 1)), A(2, 3),
           ref=lambda x: np.linalg.norm(x, np.inf)))
add("amin", Sample(lambda m, x: m.linalg.norm(x, -1), A(3, 3), ref=lambda x: np.linalg.norm(x, -1)))
add("mm",
    Sample(lambda m, x, y, z: m.linalg.multi_dot([x, y, z]), A(3), A(3, 2), A(2, 4), ref=lambda x, y, z: x @ y @ z,
           note="multi_dot"),
    Sample(lambda m, x, y, z: m.chain_matmul(x, y, z), A(2, 3), A(3, 2), A(2, 2), ref=lambda x, y, z: x @ y @ z,
           note="chain_matmul"))
add("sum", Sample(lambda m, x, y: m.linalg.vecdot(x, y, dim=0), A(3, 2), A(3, 1),
                  ref=lambda x, y: (x * y).sum(0), note="linalg.vecdot"))
add("einsum",
    Sample(lambda m, x, y: m.einsum(x, [0, 1], y, [1, 2], [0, 2]), A(2, 3), A(3, 2), ref=np.matmul,
           note="sublist form"),
    Sample(lambda m, x, y: m.einsum(x, [0, 1], y, [1, 2]), A(2, 3), nc(A(3, 2)), ref=np.matmul,
           note="sublist form, implicit output"),
    Sample(lambda m, x: m.einsum(x, [Ellipsis, 0, 0], [Ellipsis, 0]), A(2, 3, 3),
           ref=lambda x: np.einsum("...ii->...i", x), note="sublist form, ellipsis and a diagonal"))
add("linalg_matrix_exp",
    Sample(lambda m, x: m.linalg.matrix_exp(x), A(3, 3) / 2,
           ref=lambda x: __import__("scipy.linalg").linalg.expm(x)),
    Sample(lambda m, x: m.linalg.matrix_exp(x), nc(A(2, 2, 2)) / 2,
           ref=lambda x: __import__("scipy.linalg").linalg.expm(x), note="batched"))
add("vander",
    Sample(lambda m, x: m.linalg.vander(x), A(2, 3),
           ref=lambda x: np.stack([np.vander(r, increasing=True) for r in x]),
           note="linalg.vander, batched"),
    Sample(lambda m, x: m.linalg.vander(x, N=2), I(4, 3), ref=lambda x: np.vander(x, 2, increasing=True)))
