"""Samples of sorting and selection (retrograd/ops/sorting.py); format in samples.py."""
import numpy as np

from samples import A, I, Sample, add, nc


def _sorted(x, axis=-1, descending=False):
    idx = np.argsort(-x if descending else x, axis=axis, kind="stable")
    return np.take_along_axis(x, idx, axis), idx


add("sort",
    Sample(lambda m, x: m.sort(x), A(2, 3), ref=_sorted),
    Sample(lambda m, x: x.sort(0, True), A(3, 2), ref=lambda x: _sorted(x, 0, True)),
    Sample(lambda m, x: m.sort(x, dim=-2, descending=False, stable=True), nc(A(3, 2)), ref=lambda x: _sorted(x, 0)),
    Sample(lambda m, x: m.sort(x), A(), ref=lambda x: (x, np.array(0))),
    Sample(lambda m, x: m.sort(x, 1), A(2, 0), ref=lambda x: _sorted(x, 1)),
    Sample(lambda m, x: m.sort(x, descending=True, stable=True), np.array([1., 2., 1., 2.]), grad=False,
           note="ties keep their order"),
    Sample(lambda m, x: m.sort(x, descending=True), np.array([1., np.nan, 0.]), grad=False,
           note="NaN sorts as the largest"),
    Sample(lambda m, x: m.sort(x, 0), I(5, 4, 2), ref=lambda x: _sorted(x, 0)),
    Sample(lambda m, x: m.sort(x).values, A(4), note="values"))
add("msort",
    Sample(lambda m, x: m.msort(x), A(3, 2), ref=lambda x: np.sort(x, 0)),
    Sample(lambda m, x: x.msort(), A(4), ref=np.sort))
add("argsort",
    Sample(lambda m, x: m.argsort(x), A(2, 3), ref=lambda x: np.argsort(x, -1)),
    Sample(lambda m, x: x.argsort(0, True), A(3, 2), ref=lambda x: np.argsort(-x, 0)),
    Sample(lambda m, x: m.argsort(x, stable=True), np.array([2, 1, 2, 1]), ref=lambda x: np.array([1, 3, 0, 2])),
    Sample(lambda m, x: m.argsort(x), A(), ref=lambda x: np.array(0)))
add("topk",
    Sample(lambda m, x: m.topk(x, 2), A(2, 4), ref=lambda x: tuple(a[:, :2] for a in _sorted(x, -1, True))),
    Sample(lambda m, x: x.topk(1, 0, largest=False), A(3, 2), ref=lambda x: tuple(a[:1] for a in _sorted(x, 0))),
    Sample(lambda m, x: m.topk(x, 3, dim=-1, largest=True, sorted=True), nc(A(2, 3))),
    Sample(lambda m, x: m.topk(x, 0), A(2, 3)),
    Sample(lambda m, x: m.topk(x, 1), A()),
    Sample(lambda m, x: m.topk(x, 2).values, I(9, 5), note="integers"))
add("kthvalue",
    Sample(lambda m, x: m.kthvalue(x, 2), A(2, 4), ref=lambda x: tuple(a[:, 1] for a in _sorted(x, -1))),
    Sample(lambda m, x: x.kthvalue(3, 0, keepdim=True), A(3, 2)),
    Sample(lambda m, x: m.kthvalue(x, 1, dim=-1), nc(A(2, 3))),
    Sample(lambda m, x: m.kthvalue(x, 1), A()),
    Sample(lambda m, x: m.kthvalue(x, 2)[0], I(9, 5), note="integers"))
add("median_all",
    Sample(lambda m, x: m.median(x), A(2, 3), ref=lambda x: np.sort(x.ravel())[2]),
    Sample(lambda m, x: x.median(), A(4), ref=lambda x: np.sort(x)[1], note="even: the lower median"),
    Sample(lambda m, x: m.median(x), A()),
    Sample(lambda m, x: m.median(x), np.array([1., np.nan, 3.]), grad=False, note="NaN propagates"),
    Sample(lambda m, x: m.median(x), np.array([1., 2., 2., 3., 2.]), grad=False, note="ties share the gradient"),
    Sample(lambda m, x: m.median(x), I(9, 5), note="integers"))
add("median_dim",
    Sample(lambda m, x: m.median(x, 1), A(2, 3)),
    Sample(lambda m, x: x.median(0, keepdim=True), A(4, 2)),
    Sample(lambda m, x: m.median(x, dim=-1), nc(A(3, 2))),
    Sample(lambda m, x: m.median(x, 0), A()),
    Sample(lambda m, x: m.median(x, 1), np.array([[1., np.nan, 3., np.nan], [2., 0., 1., 5.]]), grad=False,
           note="a NaN is the median, at the first NaN"),
    Sample(lambda m, x: m.median(x, 0), I(9, 5, 2), note="integers"))
add("mode",
    Sample(lambda m, x: m.mode(x), np.array([[3., 1., 2., 1.], [0., 5., 5., 4.]]), grad=False,
           note="the last index of the most frequent value"),
    Sample(lambda m, x: x.mode(0, keepdim=True), np.array([[1., 2.], [2., 1.], [1., 2.]]), grad=False),
    Sample(lambda m, x: m.mode(x), np.array([1., 2., 2., 1.]), grad=False, note="ties: the smallest value"),
    Sample(lambda m, x: m.mode(x, -1), A(2, 3)),
    Sample(lambda m, x: m.mode(x), A()),
    Sample(lambda m, x: m.mode(x, 0), np.array([[1, 2], [1, 3], [4, 3]])))
add("nanmedian_all",
    Sample(lambda m, x: m.nanmedian(x), A(2, 3), ref=lambda x: np.sort(x.ravel())[2]),
    Sample(lambda m, x: x.nanmedian(), np.array([1., np.nan, 3., 2.]), grad=False, ref=lambda x: np.array(2.),
           note="NaNs left out"),
    Sample(lambda m, x: m.nanmedian(x), np.array([np.nan, np.nan]), grad=False, note="all NaN"),
    Sample(lambda m, x: m.nanmedian(x), I(9, 4), note="integers"))
add("nanmedian_dim",
    Sample(lambda m, x: m.nanmedian(x, 1), A(2, 3)),
    Sample(lambda m, x: x.nanmedian(0, keepdim=True), nc(A(3, 2))),
    Sample(lambda m, x: m.nanmedian(x, -1), np.array([[1., np.nan, 3., 2.], [np.nan, 5., np.nan, 4.]]),
           note="NaNs left out"),
    Sample(lambda m, x: m.nanmedian(x, 0), A()))
