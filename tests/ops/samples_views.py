"""Samples of tensor_split and its NumPy-style forms, ravel, diagflat (joining.py, composite.py), dist
(arithmetic.py) and the scatters of views (view_scatter.py); format in samples.py."""
import numpy as np

from samples import A, Const, I, Sample, add, nc

add("tensor_split",
    Sample(lambda m, x: m.tensor_split(x, 3, dim=1), A(2, 7), ref=lambda x: tuple(np.array_split(x, 3, axis=1))),
    Sample(lambda m, x: x.tensor_split([1, -1, 9]), nc(A(5, 2)), ref=lambda x: tuple(np.split(x, [1, -1, 9])),
           note="indices, past the end, negative; method, non-contiguous"),
    Sample(lambda m, x: m.tensor_split(x, m.tensor([2, 3]), -1), A(4), note="an index tensor"),
    Sample(lambda m, x: m.tensor_split(x, 5), A(3), note="more sections than elements: empty pieces"))
add("hsplit", Sample(lambda m, x: m.hsplit(x, 2), A(3, 4)), Sample(lambda m, x: x.hsplit([1]), A(4), note="1-d"))
add("vsplit", Sample(lambda m, x: m.vsplit(x, [1, 2]), A(3, 2)))
add("dsplit", Sample(lambda m, x: x.dsplit(2), A(2, 1, 4)))
add("ravel", Sample(lambda m, x: m.ravel(x), A(2, 3), ref=np.ravel),
    Sample(lambda m, x: x.t().ravel(), A(2, 3), ref=lambda x: x.T.ravel(), note="non-contiguous: a copy"))
add("diagflat", Sample(lambda m, x: m.diagflat(x), A(2, 2), ref=np.diagflat),
    Sample(lambda m, x: x.diagflat(-1), A(3), ref=lambda x: np.diagflat(x, -1), note="offset"))
add("dist",
    Sample(lambda m, x, y: m.dist(x, y), A(2, 3), A(3), ref=lambda x, y: np.linalg.norm((x - y).ravel())),
    Sample(lambda m, x, y: x.dist(y, 1), nc(A(2, 3)), A(2, 1), note="p = 1, method, non-contiguous"),
    Sample(lambda m, x, y: m.dist(x, y, 3.5), A(4), A(4), note="p = 3.5"),
    Sample(lambda m, x, y: m.dist(x, y, float("inf")), A(2, 2), Const(A(2, 2)), note="p = inf"),
    Sample(lambda m, x, y: m.dist(x, y, 0), A(3), Const(A(3)), grad=False, torch=False,
           note="p = 0 counts differences (PyTorch's backward of it fails on an undefined tensor)"),
    Sample(lambda m, x, y: m.dist(x, y), A(3).astype(np.float32), A(3), grad=False, note="float32 and float64"))
add("select_scatter",
    Sample(lambda m, x, s: m.select_scatter(x, s, 0, 1), A(3, 2), A(2)),
    Sample(lambda m, x, s: x.select_scatter(s, -1, -1), nc(A(2, 3)), A(2), note="negative dim and index, method"),
    Sample(lambda m, x, s: m.select_scatter(x, s, 1, 0), A(2, 3, 2), Const(A(2, 2)), note="constant src"))
add("slice_scatter",
    Sample(lambda m, x, s: m.slice_scatter(x, s, 1, 1, None, 2), A(2, 5), A(2, 2)),
    Sample(lambda m, x, s: x.slice_scatter(s, start=-2), nc(A(4, 2)), A(2, 2), note="negative start, method"),
    Sample(lambda m, x, s: m.slice_scatter(x, s), A(3), A(3), note="the whole of it"))
add("diagonal_scatter",
    Sample(lambda m, x, s: m.diagonal_scatter(x, s), A(3, 3), A(3)),
    Sample(lambda m, x, s: x.diagonal_scatter(s, 1), nc(A(2, 3)), A(2), note="offset, method, non-contiguous"),
    Sample(lambda m, x, s: m.diagonal_scatter(x, s, -1, 0, 2), A(2, 3, 4), A(3, 1), note="batched, other dims"))
add("diagonal_scatter", Sample(lambda m, x, s: m.diagonal_scatter(x, s), I(5, 2, 2), I(5, 2), note="integers"))
