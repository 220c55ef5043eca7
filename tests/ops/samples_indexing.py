"""Samples of the indexing ops (retrograd/ops/indexing.py); format in samples.py."""
import numpy as np

from samples import A, B, Const, I, Sample, add, nc, perm_index

add("select_index",
    Sample(lambda m, x: x[1], A(3, 2), ref=lambda x: x[1]),
    Sample(lambda m, x: x[-1, 0], A(3, 2), ref=lambda x: x[-1, 0]),
    Sample(lambda m, x: x[:, -2], nc(A(3, 2)), ref=lambda x: x[:, -2]),
    Sample(lambda m, x: x[1, None, ..., 1:], A(2, 3, 3), ref=lambda x: x[1, None, ..., 1:]),
    Sample(lambda m, x: m.select(x, 1, -1), A(2, 3), ref=lambda x: x[:, -1]),
    Sample(lambda m, x: x[0], I(3, 2, 2), ref=lambda x: x[0]))
add("slice_index",
    Sample(lambda m, x: x[1:3], A(4, 2), ref=lambda x: x[1:3]),
    Sample(lambda m, x: x[:, ::2], A(2, 5), ref=lambda x: x[:, ::2]),
    Sample(lambda m, x: x[-2:, None], nc(A(3, 2)), ref=lambda x: x[-2:, None]),
    Sample(lambda m, x: x[...], A(), ref=lambda x: x),
    Sample(lambda m, x: x[None], A(), ref=lambda x: x[None]),
    Sample(lambda m, x: x[5:], A(3, 2), ref=lambda x: x[5:], note="empty"),
    Sample(lambda m, x: x[..., 1:], A(2, 3), ref=lambda x: x[..., 1:]),
    Sample(lambda m, x: m.narrow(x, 1, 1, 2), A(2, 4), ref=lambda x: x[:, 1:3]))
add("index",
    Sample(lambda m, x, i: x[i], A(4, 2), np.array([0, 2, 0]), ref=lambda x, i: x[i], note="repeated"),
    Sample(lambda m, x, i: x[i], A(4, 2), np.array([-1, 1]), ref=lambda x, i: x[i], note="negative"),
    Sample(lambda m, x, i: x[:, i], nc(A(2, 3)), np.array([[2, 0], [1, 1]]), ref=lambda x, i: x[:, i]),
    Sample(lambda m, x, i, j: x[i, j], A(3, 4), np.array([[0], [2]]), np.array([1, 3, 1]),
           ref=lambda x, i, j: x[i, j], note="broadcast index tensors"),
    Sample(lambda m, x, b: x[b], A(3, 2), np.array([True, False, True]), ref=lambda x, b: x[b], note="bool mask"),
    Sample(lambda m, x, b: x[b], A(2, 3), B(2, 3), ref=lambda x, b: x[b], note="full bool mask"),
    Sample(lambda m, x: x[[0, 2], 1:], A(3, 3), ref=lambda x: x[[0, 2], 1:], note="list index"),
    Sample(lambda m, x, i: x[i, ..., None], A(3, 2), np.array([2, 2]), ref=lambda x, i: x[i, ..., None]),
    Sample(lambda m, x, i: x[i], A(3, 2), np.zeros(0, dtype=np.int64), ref=lambda x, i: x[i], note="empty"),
    Sample(lambda m, x, i: x[1, i], A(2, 3), np.array([0, 2]), ref=lambda x, i: x[1, i], note="int and tensor"))


def _setitem(index):
    def call(m, x, v):
        y = x * 1
        y[index] = v
        return y
    return call


def _setitem_t(m, x, i, v):
    y = x * 1
    y[i] = v
    return y


add("index_put",
    Sample(lambda m, x, i, v: m.index_put(x, (i,), v), A(4, 2), np.array([0, 2]), A(2, 2),
           ref=lambda x, i, v: _put(x, (i,), v, False)),
    Sample(lambda m, x, i, v: x.index_put((i,), v, accumulate=True), A(4, 2), np.array([0, 2, 0]), A(3, 2),
           ref=lambda x, i, v: _put(x, (i,), v, True), note="accumulate with repeats"),
    Sample(lambda m, x, i, j, v: x.index_put((i, j), v), A(3, 3), np.array([0, 2]), np.array([1, 1]), A(),
           ref=lambda x, i, j, v: _put(x, (i, j), v, False), note="0-d values broadcast"),
    Sample(lambda m, x, b, v: x.index_put((b,), v), A(2, 3), np.array([[True, False, True], [False, True, False]]),
           A(3), ref=lambda x, b, v: _put(x, (b,), v, False), note="bool mask"),
    Sample(_setitem_t, A(4), np.array([0, 3]), A(2), ref=lambda x, i, v: _put(x, (i,), v, False),
           note="__setitem__ tensor index"),
    Sample(_setitem_t, A(2, 3), B(2, 3), Const(np.array(2.5)), ref=lambda x, b, v: np.where(b, v, x),
           note="__setitem__ bool mask"),
    Sample(lambda m, x, b: _setitem_t(m, x, b, 0.), A(3), np.array([True, False, True]),
           ref=lambda x, b: np.where(b, 0., x), note="__setitem__ python scalar"))


def _put(x, index, v, accumulate):
    out = x.copy()
    if accumulate:
        np.add.at(out, index, v)
    else:
        out[index] = v
    return out


def _gather_ref(x, dim, index):
    sl = tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(index.shape))
    return np.take_along_axis(x[sl], index, dim)


add("gather",
    Sample(lambda m, x, i: m.gather(x, 1, i), A(2, 3), np.array([[0, 2, 2], [1, 0, 1]]),
           ref=lambda x, i: _gather_ref(x, 1, i)),
    Sample(lambda m, x, i: x.gather(0, i), nc(A(3, 2)), np.array([[2, 1], [0, 0], [2, 2], [1, 0]]),
           ref=lambda x, i: _gather_ref(x, 0, i), note="index longer than input"),
    Sample(lambda m, x, i: x.gather(-1, i), A(3, 4), np.array([[3], [0]]), ref=lambda x, i: _gather_ref(x, 1, i),
           note="index smaller than input in the other dims"),
    Sample(lambda m, x, i: x.gather(0, i), A(), np.array(0), ref=lambda x, i: x),
    Sample(lambda m, x, i: x.gather(1, i), A(2, 3), np.zeros((2, 0), dtype=np.int64),
           ref=lambda x, i: np.zeros((2, 0))))


def _scatter_add_ref(x, dim, index, src):
    out = x.copy()
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        out[tuple(tgt)] += src[pos]
    return out


def _scatter_ref(x, dim, index, src):
    out = x.copy()
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        out[tuple(tgt)] = src[pos] if np.ndim(src) else src
    return out


add("scatter_add",
    Sample(lambda m, x, i, s: m.scatter_add(x, 0, i, s), A(3, 2), I(3, 4, 2), A(4, 2),
           ref=lambda x, i, s: _scatter_add_ref(x, 0, i, s)),
    Sample(lambda m, x, i, s: x.scatter_add(-1, i, s), nc(A(2, 3)), I(3, 2, 2), A(2, 4),
           ref=lambda x, i, s: _scatter_add_ref(x, 1, i, s), torch=False,
           note="src larger than index: PyTorch's own backward rejects its src gradient's shape"),
    Sample(lambda m, x, i, s: x.scatter_add(1, i, s), A(3, 3), I(3, 1, 2), A(2, 2),
           ref=lambda x, i, s: _scatter_add_ref(x, 1, i, s), torch=False,
           note="index smaller than src: PyTorch's own backward rejects its src gradient's shape"),
    Sample(lambda m, x, i, s: x.scatter_add(0, i, s), A(2), np.zeros(0, dtype=np.int64), A(0),
           ref=lambda x, i, s: x, note="empty index"))
add("scatter",
    Sample(lambda m, x, i, s: m.scatter(x, 0, i, s), A(3, 2), perm_index(3, (2, 2), 0), A(2, 2),
           ref=lambda x, i, s: _scatter_ref(x, 0, i, s)),
    Sample(lambda m, x, i, s: x.scatter(1, i, s), nc(A(2, 4)), perm_index(4, (2, 3), 1), A(2, 3),
           ref=lambda x, i, s: _scatter_ref(x, 1, i, s)),
    Sample(lambda m, x, i: x.scatter(1, i, value=1.5), A(2, 3), perm_index(3, (2, 2), 1),
           ref=lambda x, i: _scatter_ref(x, 1, i, 1.5)),
    Sample(lambda m, x, i: m.scatter(x, 0, i, 0.5), A(3), perm_index(3, (2,), 0),
           ref=lambda x, i: _scatter_ref(x, 0, i, 0.5), note="positional value"),
    Sample(lambda m, x, i, s: m.scatter(x, 0, i, s), A(3), np.array([1]), A(1),
           ref=lambda x, i, s: _scatter_ref(x, 0, i, s), note="one index: an array, not a sequence"))
add("index_select",
    Sample(lambda m, x, i: m.index_select(x, 0, i), A(3, 2), np.array([2, 0, 2]), ref=lambda x, i: x[i]),
    Sample(lambda m, x, i: x.index_select(-1, i), nc(A(2, 3)), np.array([1]), ref=lambda x, i: x[:, i]),
    Sample(lambda m, x, i: x.index_select(0, i), A(), np.array([0]), ref=lambda x, i: x),
    Sample(lambda m, x, i: x.index_select(0, i), A(), np.array(0), ref=lambda x, i: x),
    Sample(lambda m, x, i: x.index_select(1, i), A(2, 3), np.zeros(0, dtype=np.int64), ref=lambda x, i: x[:, i]))


def _index_add_ref(x, dim, i, s, alpha=1):
    out = x.copy()
    np.add.at(np.moveaxis(out, dim, 0), i, np.moveaxis(s, dim, 0) * alpha)
    return out


add("index_add",
    Sample(lambda m, x, i, s: m.index_add(x, 0, i, s), A(3, 2), np.array([2, 0, 2]), A(3, 2),
           ref=lambda x, i, s: _index_add_ref(x, 0, i, s)),
    Sample(lambda m, x, i, s: x.index_add(-1, i, s, alpha=2), nc(A(2, 3)), np.array([1, 1]), A(2, 2),
           ref=lambda x, i, s: _index_add_ref(x, 1, i, s, 2)))
add("masked_fill",
    Sample(lambda m, x, b: m.masked_fill(x, b, 2.5), A(2, 3), B(2, 3), ref=lambda x, b: np.where(b, 2.5, x)),
    Sample(lambda m, x, b: x.masked_fill(b, -1.), nc(A(2, 3)), B(3), ref=lambda x, b: np.where(b, -1., x),
           note="broadcast mask"),
    Sample(lambda m, x, b, v: x.masked_fill(b, v), A(2, 3), B(2, 1), A(), ref=lambda x, b, v: np.where(b, v, x),
           note="0-d tensor value"),
    Sample(lambda m, x, b: x.masked_fill(b, 0.), A(), np.array(True), ref=lambda x, b: np.zeros_like(x)),
    Sample(lambda m, x, b: x.masked_fill(b, 1.), A(0, 3), B(3), ref=lambda x, b: x),
    Sample(lambda m, x, b: x.masked_fill(b, 7), I(5, 2, 3), B(2, 3), ref=lambda x, b: np.where(b, 7, x)))
add("masked_select",
    Sample(lambda m, x, b: m.masked_select(x, b), A(2, 3), B(2, 3), ref=lambda x, b: x[b]),
    Sample(lambda m, x, b: x.masked_select(b), nc(A(2, 3)), B(3),
           ref=lambda x, b: np.broadcast_to(x, (2, 3))[np.broadcast_to(b, (2, 3))], note="broadcast mask"),
    Sample(lambda m, x, b: x.masked_select(b), A(3), B(2, 3),
           ref=lambda x, b: np.broadcast_to(x, (2, 3))[b], note="broadcast input"))
add("index_put",
    Sample(lambda m, x, i, v: x.index_put([i], v, accumulate=False), A(3), np.array([2]), A(1), note="list indices"))

# -- take_along_dim, index_copy/index_fill, masked_scatter, scatter_reduce ----------------------------------
add("take_along_dim",
    Sample(lambda m, x, i: m.take_along_dim(x, i, dim=1), A(2, 3), np.array([[2], [0]]),
           ref=lambda x, i: np.take_along_axis(x, i, 1)),
    Sample(lambda m, x, i: m.take_along_dim(x, i), A(2, 3), np.array([5, 0, 0]), ref=lambda x, i: x.reshape(-1)[i],
           note="flattened"),
    Sample(lambda m, x, i: x.take_along_dim(i, -1), A(2, 1, 3), np.array([[[0, 2], [1, 1]]]), note="broadcast",
           ref=lambda x, i: np.take_along_axis(np.broadcast_to(x, (2, 2, 3)), np.broadcast_to(i, (2, 2, 2)), 2)))


def _index_copy_ref(x, d, i, s):
    out = x.copy()
    out[(slice(None),) * d + (i,)] = s
    return out


add("index_copy",
    Sample(lambda m, x, i, s: m.index_copy(x, 0, i, s), A(3, 2), np.array([2, 0]), A(2, 2),
           ref=lambda x, i, s: _index_copy_ref(x, 0, i, s)),
    Sample(lambda m, x, i, s: x.index_copy(-1, i, s), nc(A(2, 3)), np.array([1]), A(2, 1),
           ref=lambda x, i, s: _index_copy_ref(x, 1, i, s)),
    Sample(lambda m, x, i, s: x.clone().index_copy_(0, i, s), A(3), np.array([1, 2]), A(2),
           ref=lambda x, i, s: _index_copy_ref(x, 0, i, s), note="in place"))
add("index_fill",
    Sample(lambda m, x, i: m.index_fill(x, 1, i, -1.5), A(2, 3), np.array([0, 2]),
           ref=lambda x, i: _index_copy_ref(x, 1, i, -1.5)),
    Sample(lambda m, x, i, v: x.index_fill(0, i, v), A(3, 2), np.array([1, 1]), A(),
           ref=lambda x, i, v: _index_copy_ref(x, 0, i, v), note="tensor value"),
    Sample(lambda m, x, i: x.clone().index_fill_(-1, i, 2.), nc(A(2, 3)), np.array([1]),
           ref=lambda x, i: _index_copy_ref(x, 1, i, 2.), note="in place"),
    Sample(lambda m, x, i: x.index_fill(0, i, 3), I(5, 3), np.array([0]), ref=lambda x, i: _index_copy_ref(x, 0, i, 3)))


def _masked_scatter_ref(x, mask, s):
    out = np.broadcast_to(x, np.broadcast_shapes(x.shape, mask.shape)).copy()
    where = np.broadcast_to(mask, out.shape)
    out[where] = s.reshape(-1)[:where.sum()]
    return out


add("masked_scatter",
    Sample(lambda m, x, k, s: m.masked_scatter(x, k, s), A(2, 3), B(2, 3), A(6), ref=_masked_scatter_ref),
    Sample(lambda m, x, k, s: x.masked_scatter(k, s), A(2, 3), B(3), A(3, 3), ref=_masked_scatter_ref,
           note="mask broadcasts, more source than needed"),
    Sample(lambda m, x, k, s: x.clone().masked_scatter_(k, s), nc(A(2, 2)), B(2, 2), A(4), ref=_masked_scatter_ref,
           note="in place"))


def _scatter_reduce_ref(x, d, i, s, reduce, include_self=True):
    fn = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}[reduce]
    out = x.copy()
    count = np.ones(x.shape) if include_self else np.zeros(x.shape)
    first = np.ones(x.shape, bool)
    for pos in np.ndindex(*i.shape):
        target = pos[:d] + (i[pos],) + pos[d + 1:]
        if not include_self and first[target]:
            out[target], first[target] = s[pos], False
        else:
            out[target] = fn(out[target], s[pos])
        count[target] += 1
    return out / np.maximum(count, 1) if reduce == "mean" else out


for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    add("scatter_reduce",
        Sample(lambda m, x, i, s, _r=_reduce: m.scatter_reduce(x, 0, i, s, _r), A(3, 2), I(3, 4, 2), A(4, 2),
               ref=lambda x, i, s, _r=_reduce: _scatter_reduce_ref(x, 0, i, s, _r), note=_reduce),
        Sample(lambda m, x, i, s, _r=_reduce: x.scatter_reduce(1, i, s, _r, include_self=False), A(2, 3),
               I(3, 2, 4), nc(A(2, 4)), ref=lambda x, i, s, _r=_reduce: _scatter_reduce_ref(x, 1, i, s, _r, False),
               note=f"{_reduce}, without self"))
add("scatter_reduce",
    Sample(lambda m, x, i, s: x.scatter_reduce(0, i, s, "prod"), np.array([0., 2., 3.]), np.array([0, 1, 1, 2]),
           np.array([4., 0., 5., 0.]), ref=lambda x, i, s: _scatter_reduce_ref(x, 0, i, s, "prod"),
           note="prod with zeros: one and two per position"),
    Sample(lambda m, x, i, s: x.clone().scatter_reduce_(0, i, s, "amax"), np.array([1., 5.]), np.array([0, 1, 1]),
           np.array([3., 5., 2.]), ref=lambda x, i, s: _scatter_reduce_ref(x, 0, i, s, "amax"), grad=False,
           note="in place, a tie (no derivative there; PyTorch's choice is compared)"),
    Sample(lambda m, x, i, s: x.scatter_reduce(0, i, s, "max"), I(9, 3), np.array([0, 0, 2]), I(9, 3),
           ref=lambda x, i, s: _scatter_reduce_ref(x, 0, i, s, "amax"), note="'max' is 'amax'"),
    Sample(lambda m, x, i, s: x.scatter_reduce(0, i, s, "sum"), I(5, 3), np.array([0, 0, 2]), I(5, 3),
           ref=lambda x, i, s: _scatter_reduce_ref(x, 0, i, s, "sum"), note="integers"))
add("scatter",
    Sample(lambda m, x, i, s: x.scatter(0, i, s, reduce="add"), Const(A(3, 2)), I(3, 4, 2), Const(A(4, 2)),
           ref=lambda x, i, s: _scatter_reduce_ref(x, 0, i, s, "sum"), note="reduce='add'"),
    Sample(lambda m, x, i: x.scatter(1, i, 2., reduce="multiply"), I(5, 2, 3), I(3, 2, 2),
           ref=lambda x, i: _scatter_reduce_ref(x, 1, i, np.full(i.shape, 2), "prod"), note="reduce='multiply'"))


# -- put and take: positions into the flattened input --------------------------------------------------------
def _put_ref(x, i, s, accumulate=False):
    out = x.copy().reshape(-1)
    if accumulate:
        np.add.at(out, i.reshape(-1), s.reshape(-1))
    else:
        out[i.reshape(-1)] = s.reshape(-1)
    return out.reshape(x.shape)


add("put",
    Sample(lambda m, x, i, s: m.put(x, i, s), A(2, 3), np.array([1, -1, 4]), A(3), ref=_put_ref,
           note="negative positions count from the end"),
    Sample(lambda m, x, i, s: x.put(i, s, accumulate=True), nc(A(2, 3)), np.array([[0, 0], [5, 0]]), A(2, 2),
           ref=lambda x, i, s: _put_ref(x, i, s, True), note="repeated positions add up"),
    Sample(lambda m, x, i, s: x.clone().put_(i, s), A(4), np.array([3, 0]), A(2), ref=_put_ref, note="in place"),
    Sample(lambda m, x, i, s: m.put(x, i, s), A(), np.array([0]), A(1), ref=_put_ref, note="0-d input"))
add("take",
    Sample(lambda m, x, i: m.take(x, i), A(2, 3), np.array([[5, 0], [-1, 0]]), ref=lambda x, i: x.reshape(-1)[i],
           note="positions repeat; the result has the index's shape"),
    Sample(lambda m, x, i: x.take(i), nc(A(3, 2)), np.array(1), ref=lambda x, i: x.reshape(-1)[i], note="0-d index"))


def _index_reduce_ref(x, d, i, s, reduce, include_self=True):
    index = np.zeros(s.shape, dtype=np.int64) + np.expand_dims(i, tuple(k for k in range(s.ndim) if k != d))
    return _scatter_reduce_ref(x, d, index, s, reduce, include_self)


add("index_reduce",  # the first: the mean, which alone has a forward derivative (as in PyTorch)
    Sample(lambda m, x, s: m.index_reduce(x, 0, m.tensor([0, 2, 0]), s, "mean"), A(3, 2), A(3, 2),
           ref=lambda x, s: _index_reduce_ref(x, 0, np.array([0, 2, 0]), s, "mean")),
    Sample(lambda m, x, s: x.index_reduce(1, m.tensor([1, 1]), s, "mean", include_self=False), A(2, 3), nc(A(2, 2)),
           ref=lambda x, s: _index_reduce_ref(x, 1, np.array([1, 1]), s, "mean", False)),
    Sample(lambda m, x, s: m.index_reduce(x, 0, m.tensor([0, 2, 0]), s, "prod"), A(3, 2), A(3, 2),
           ref=lambda x, s: _index_reduce_ref(x, 0, np.array([0, 2, 0]), s, "prod")),
    Sample(lambda m, x, s: x.index_reduce(-1, m.tensor([0, 0]), s, "prod", include_self=False), A(2, 2), A(2, 2),
           ref=lambda x, s: _index_reduce_ref(x, 1, np.array([0, 0]), s, "prod", False)),
    Sample(lambda m, x, s: m.index_reduce(x, 0, m.tensor([0, 1, 1]), s, "prod"), np.array([0., 2.]),
           np.array([3., 0., 5.]), gradgrad=False, note="prod with a zero in input and in source"),
    Sample(lambda m, x, s: m.index_reduce(x, 0, m.tensor([0, 2]), s, "amax"), A(3, 2), A(2, 2)),
    Sample(lambda m, x, s: x.index_reduce(0, m.tensor([1, 1]), s, "amin", include_self=False), A(2, 2), A(2, 2)),
    Sample(lambda m, x, s: x.clone().index_reduce_(0, m.tensor([0, 0]), s, "amax"), np.array([1., 5.]),
           np.array([3., 1.]), note="in place"),
    Sample(lambda m, x, s: m.index_reduce(x, 0, m.tensor([0]), s, "amin"), A(), A(), note="0-d"))
