"""Samples of searching and counting (retrograd/ops/searching.py); format in samples.py."""
import numpy as np

from samples import A, B, Const, I, Sample, add

_Z = np.array([[0., 1.5, 0.], [2., 0., -1.]])

add("nonzero",
    Sample(lambda m, x: m.nonzero(x), _Z, ref=lambda x: np.argwhere(x)),
    Sample(lambda m, x: x.nonzero(as_tuple=True), _Z, ref=lambda x: np.nonzero(x)),
    Sample(lambda m, x: m.nonzero(x), B(2, 2, 2)),
    Sample(lambda m, x: m.nonzero(x), np.array(5.), note="0-d: one row of no columns"),
    Sample(lambda m, x: m.nonzero(x, as_tuple=True), np.array(0.)),
    Sample(lambda m, x: m.nonzero(x), A(0, 3)))
add("argwhere",
    Sample(lambda m, x: m.argwhere(x), _Z, ref=lambda x: np.argwhere(x)),
    Sample(lambda m, x: x.argwhere(), I(2, 3, 4)))
add("unique",
    Sample(lambda m, x: m.unique(x), np.array([3, 1, 3, 2]), ref=np.unique),
    Sample(lambda m, x: x.unique(sorted=False, return_inverse=True, return_counts=True), Const([3., 1., 3., 2.]),
           note="floats (constants: PyTorch's unique of a tensor that requires grad requires grad)"),
    Sample(lambda m, x: m.unique(x, return_counts=True), I(3, 2, 4)),
    Sample(lambda m, x: m.unique(x, dim=0, return_inverse=True, return_counts=True),
           np.array([[1, 2], [1, 2], [0, 5]])),
    Sample(lambda m, x: m.unique(x, dim=-1), np.array([[1, 0, 1], [2, 5, 2]])),
    Sample(lambda m, x: m.unique(x), Const([np.nan, np.nan, 1.]), note="NaNs stay apart"),
    Sample(lambda m, x: m.unique(x), Const(3.)))
add("unique_consecutive",
    Sample(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True), np.array([1, 1, 2, 2, 1])),
    Sample(lambda m, x: x.unique_consecutive(), Const([[1., 1.], [1., 3.]])),
    Sample(lambda m, x: m.unique_consecutive(x, dim=0, return_counts=True), np.array([[1, 1], [1, 1], [2, 1]])),
    Sample(lambda m, x: m.unique_consecutive(x, return_inverse=True, dim=1), np.array([[1, 1, 2], [0, 0, 0]])))
add("searchsorted",
    Sample(lambda m, s, x: m.searchsorted(s, x), np.array([1., 3., 5.]), np.array([[3., 6.], [0., 1.]]),
           ref=lambda s, x: np.searchsorted(s, x)),
    Sample(lambda m, s, x: m.searchsorted(s, x, right=True), np.array([1, 3, 5]), np.array([3, 6, 0])),
    Sample(lambda m, s, x: m.searchsorted(s, x, side="right", out_int32=True), np.array([1, 3, 5]),
           np.array([3, 5])),
    Sample(lambda m, s, x: m.searchsorted(s, x), np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3], [5]])),
    Sample(lambda m, s, p: m.searchsorted(s, 3, sorter=p), np.array([5, 3, 1]), np.array([2, 1, 0])),
    Sample(lambda m, s: m.searchsorted(s, 4), np.array([1, 3, 5])))
add("bucketize",
    Sample(lambda m, x, b: m.bucketize(x, b), np.array([1, 3, 6]), np.array([1, 3, 5]),
           ref=lambda x, b: np.searchsorted(b, x)),
    Sample(lambda m, x, b: m.bucketize(x, b, right=True, out_int32=True), np.array([[1., 3.], [6., 0.]]),
           np.array([1., 3., 5.])),
    Sample(lambda m, b: m.bucketize(3, b), np.array([1, 3, 5])))
add("isin",
    Sample(lambda m, x, t: m.isin(x, t), np.array([1, 2, 3]), np.array([2, 5]), ref=np.isin),
    Sample(lambda m, x, t: m.isin(x, t, invert=True), I(4, 2, 3), np.array([0, 1])),
    Sample(lambda m, x: m.isin(x, 2), np.array([1, 2, 3])),
    Sample(lambda m, t: m.isin(2, t), np.array([1, 2, 3])),
    Sample(lambda m, x, t: m.isin(x, t), np.array([0.5, 1.]), np.array([1.])))
add("histc",
    Sample(lambda m, x: m.histc(x, bins=4, min=0, max=3), np.array([1., 2., 1., 3., 5.])),
    Sample(lambda m, x: x.histc(4), np.array([1., 2., 1.]), note="the data's own range"),
    Sample(lambda m, x: m.histc(x, 3), np.array([2., 2.]), note="one value: the range widened by one"),
    Sample(lambda m, x: m.histc(x, 5, -1, 1), A(3, 4)))
add("bincount",
    Sample(lambda m, x: m.bincount(x), np.array([1, 1, 3]), ref=np.bincount),
    Sample(lambda m, x, w: x.bincount(w, minlength=6), np.array([1, 1, 3]), Const([0.5, 1., 2.])),
    Sample(lambda m, x: m.bincount(x), np.zeros(0, dtype=np.int64)))
add("count_nonzero",
    Sample(lambda m, x: m.count_nonzero(x), _Z, ref=np.count_nonzero),
    Sample(lambda m, x: x.count_nonzero(1), _Z, ref=lambda x: np.count_nonzero(x, 1)),
    Sample(lambda m, x: m.count_nonzero(x, dim=(0, 1)), I(2, 2, 3)))
for _name, _fn in (("all", np.all), ("any", np.any)):
    add(_name,
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), B(2, 3), ref=_fn),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(1), B(2, 3), ref=lambda x, _f=_fn: _f(x, 1)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, dim=0, keepdim=True), _Z),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, (0, 1)), I(2, 2, 3)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), np.array([1, 0], dtype=np.uint8), note="uint8 stays"),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), B(0)))
