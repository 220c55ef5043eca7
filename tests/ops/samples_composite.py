"""Samples of var, std and their _mean forms (retrograd/ops/reduction.py), and of public composite functions
(retrograd/ops/composite.py), swept like the registered ops."""
import numpy as np

from samples import A, Const, I, Sample, add, nc

add("var",
    Sample(lambda m, x: m.var(x), A(2, 3), ref=lambda x: np.var(x, ddof=1)),
    Sample(lambda m, x: x.var(1), A(2, 3), ref=lambda x: np.var(x, 1, ddof=1)),
    Sample(lambda m, x: x.var((0, 2), keepdim=True), A(2, 3, 2), ref=lambda x: np.var(x, (0, 2), ddof=1,
                                                                                        keepdims=True)),
    Sample(lambda m, x: x.var(-1, unbiased=False), nc(A(2, 3)), ref=lambda x: np.var(x, -1)),
    Sample(lambda m, x: m.var(x, 1, correction=0), A(2, 3), ref=lambda x: np.var(x, 1)),
    Sample(lambda m, x: m.var(x, False), A(4), ref=lambda x: np.var(x), note="var(input, unbiased)"),
    Sample(lambda m, x: m.var(x, 0, correction=2), A(4, 2), ref=lambda x: np.var(x, 0, ddof=2)))
add("std",
    Sample(lambda m, x: m.std(x), A(2, 3), ref=lambda x: np.std(x, ddof=1)),
    Sample(lambda m, x: x.std((0, 1), keepdim=True), A(2, 3), ref=lambda x: np.std(x, (0, 1), ddof=1,
                                                                                     keepdims=True)),
    Sample(lambda m, x: x.std(0, correction=0), nc(A(3, 2)), ref=lambda x: np.std(x, 0)))
add("var",
    Sample(lambda m, x: x.var(0), A(1, 3), ref=lambda x: np.full(3, np.nan), grad=False, note="no degrees of freedom"),
    Sample(lambda m, x: x.var(1), A(2, 0), ref=lambda x: np.full(2, np.nan), grad=False, note="empty"),
    Sample(lambda m, x: x.var(), A(2, 3).astype(np.float32), grad=False, ref=lambda x: np.var(x, ddof=1),
           note="float32"))
add("std",
    Sample(lambda m, x: m.std(x, 1, True, True), A(3, 2), ref=lambda x: np.std(x, 1, ddof=1, keepdims=True)))
add("var_mean",
    Sample(lambda m, x: m.var_mean(x, 1), A(2, 3), ref=lambda x: (np.var(x, 1, ddof=1), np.mean(x, 1))),
    Sample(lambda m, x: m.var_mean(x, (0, -1), keepdim=True, correction=0), nc(A(2, 3, 2)),
           ref=lambda x: (np.var(x, (0, 2), keepdims=True), np.mean(x, (0, 2), keepdims=True))),
    Sample(lambda m, x: m.var_mean(x), A(), ref=lambda x: (np.nan, x), grad=False, note="0-d"),
    Sample(lambda m, x: m.var_mean(x)[1], A(4), ref=np.mean, note="only the mean used"))
add("std_mean",
    Sample(lambda m, x: m.std_mean(x, (0, 1), keepdim=True), A(2, 3),
           ref=lambda x: (np.std(x, (0, 1), ddof=1, keepdims=True), np.mean(x, (0, 1), keepdims=True))),
    Sample(lambda m, x: m.std_mean(x, 0, unbiased=False), A(3, 2), ref=lambda x: (np.std(x, 0), np.mean(x, 0))),
    Sample(lambda m, x: m.std_mean(x)[0], A(4), ref=lambda x: np.std(x, ddof=1), note="only the std used"))
add("diag",
    Sample(lambda m, x: m.diag(x), A(3), ref=np.diag),
    Sample(lambda m, x: x.diag(-2), A(2), ref=lambda x: np.diag(x, -2)),
    Sample(lambda m, x: m.diag(x, 1), A(3, 4), ref=lambda x: np.diag(x, 1)),
    Sample(lambda m, x: x.diag(-1), nc(A(4, 3)), ref=lambda x: np.diag(x, -1)))
add("square", Sample(lambda m, x: m.square(x), A(2, 3), ref=np.square))
add("chunk",
    Sample(lambda m, x: m.chunk(x, 3, 1), A(2, 5), ref=lambda x: (x[:, :2], x[:, 2:4], x[:, 4:])),
    Sample(lambda m, x: x.chunk(4), A(6), ref=lambda x: (x[:2], x[2:4], x[4:]), note="fewer chunks than asked"))

# -- stacking by dims, and broadcasting several tensors at once -------------------------------------------
add("atleast_1d",
    Sample(lambda m, x: m.atleast_1d(x), A(), ref=lambda x: x.reshape(1)),
    Sample(lambda m, x, y: m.atleast_1d(x, y), A(2), A(), ref=lambda x, y: (x, y.reshape(1)), note="several"))
add("atleast_2d",
    Sample(lambda m, x, y: m.atleast_2d([x, y]), A(3), A(), ref=lambda x, y: (x[None], y.reshape(1, 1))))
add("atleast_3d",
    Sample(lambda m, x, y, z: m.atleast_3d(x, y, z), A(3), A(2, 2), A(2, 1, 2),
           ref=lambda x, y, z: (x[None, :, None], y[:, :, None], z)))
add("hstack",
    Sample(lambda m, x, y: m.hstack([x, y]), A(2, 3), nc(A(2, 2)), ref=lambda x, y: np.hstack([x, y])),
    Sample(lambda m, x, y: m.hstack((x, y)), A(3), A(), ref=lambda x, y: np.hstack([x, y]), note="1-D and 0-D"))
add("vstack",
    Sample(lambda m, x, y: m.vstack([x, y]), A(3), A(2, 3), ref=lambda x, y: np.vstack([x, y])))
add("row_stack",
    Sample(lambda m, x, y: m.row_stack([x, y]), A(2, 2), A(1, 2), ref=lambda x, y: np.vstack([x, y])))
add("dstack",
    Sample(lambda m, x, y: m.dstack([x, y]), A(3), A(1, 3), ref=lambda x, y: np.dstack([x, y])),
    Sample(lambda m, x, y: m.dstack([x, y]), A(2, 2), I(2, 2, 2), ref=lambda x, y: np.dstack([x, y]),
           note="mixed dtypes promote"))
add("broadcast_tensors",
    Sample(lambda m, x, y, z: m.broadcast_tensors(x, y, z), A(3), A(2, 1), A(), ref=lambda x, y, z: np.broadcast_arrays(
        x, y, z)),
    Sample(lambda m, x, y: m.broadcast_tensors(x, y), nc(A(2, 3)), A(2, 3), ref=lambda x, y: (x, y),
           note="shapes that agree already"))

# -- grids, block matrices, products of sets, Kronecker and Vandermonde -------------------------------------
add("meshgrid",
    Sample(lambda m, x, y: m.meshgrid(x, y, indexing="ij"), A(2), A(3),
           ref=lambda x, y: np.meshgrid(x, y, indexing="ij")),
    Sample(lambda m, x, y, z: m.meshgrid(x, y, z, indexing="xy"), A(2), A(3), A(), note="xy, a 0-d input",
           ref=lambda x, y, z: np.meshgrid(x, y, z.reshape(1), indexing="xy")),
    Sample(lambda m, x, y: m.meshgrid([x, y], indexing="ij"), A(2), Const(A(3)), note="a list"))
add("block_diag",
    Sample(lambda m, x, y, z: m.block_diag(x, y, z), A(2, 3), A(2), A(), note="2-D, 1-D and 0-D blocks"),
    Sample(lambda m, x, y: m.block_diag(x, y), nc(A(2, 2)), I(3, 1, 2), note="mixed dtypes"),
    Sample(lambda m, x: m.block_diag(x), A(0, 2), note="an empty block"))
add("cartesian_prod",
    Sample(lambda m, x, y: m.cartesian_prod(x, y), A(2), A(3)),
    Sample(lambda m, x, y, z: m.cartesian_prod(x, y, z), I(3, 2), I(3, 2), I(3, 1), note="integers"))
add("combinations",
    Sample(lambda m, x: m.combinations(x), A(4)),
    Sample(lambda m, x: m.combinations(x, 3, with_replacement=True), A(3)),
    Sample(lambda m, x: m.combinations(x, 3), A(2), note="none"),
    Sample(lambda m, x: m.combinations(x, 1), I(5, 3)))
add("kron",
    Sample(lambda m, x, y: m.kron(x, y), A(2, 3), A(2, 2), ref=np.kron),
    Sample(lambda m, x, y: m.kron(x, y), A(3), A(2, 2), ref=np.kron, note="ranks differ"),
    Sample(lambda m, x, y: m.kron(x, y), I(4, 2), nc(A(3)), ref=np.kron, note="integer by float"))
_VANDER_NOTE = "PyTorch's vander writes the powers in place into its result, and its backward then fails"
add("vander",
    Sample(lambda m, x: m.vander(x), A(3), ref=np.vander, torch=False, note=_VANDER_NOTE),
    Sample(lambda m, x: m.vander(x, 4, increasing=True), A(3), ref=lambda x: np.vander(x, 4, increasing=True),
           torch=False, note=_VANDER_NOTE),
    Sample(lambda m, x: m.vander(x, N=0), A(3), ref=lambda x: np.vander(x, 0)),
    Sample(lambda m, x: m.vander(x, N=2), I(4, 3), ref=lambda x: np.vander(x, 2)))
add("kron", Sample(lambda m, x, y: x.kron(y), A(2), A(2), ref=np.kron, note="method"))
