"""Samples of the reductions (retrograd/ops/reduction.py); format in samples.py."""
import numpy as np

from samples import A, B, Const, I, P, Sample, add, nc

add("sum",
    Sample(lambda m, x: m.sum(x), A(2, 3), ref=np.sum),
    Sample(lambda m, x: x.sum(1), A(2, 3), ref=lambda x: x.sum(1)),
    Sample(lambda m, x: x.sum(-1, keepdim=True), A(2, 3), ref=lambda x: x.sum(-1, keepdims=True)),
    Sample(lambda m, x: m.sum(x, dim=(0, 2)), A(2, 3, 2), ref=lambda x: x.sum((0, 2))),
    Sample(lambda m, x: m.sum(x, (-1, 0), keepdim=True), nc(A(2, 3)), ref=lambda x: x.sum((0, 1), keepdims=True)),
    Sample(lambda m, x: m.sum(x), A(), ref=np.sum),
    Sample(lambda m, x: x.sum(0), A(), ref=np.sum, note="dim 0 of a 0-d tensor"),
    Sample(lambda m, x: m.sum(x, 1), A(0, 3), ref=lambda x: x.sum(1)),
    Sample(lambda m, x: m.sum(x, 0), A(0, 3), ref=lambda x: x.sum(0), note="over an empty dim"),
    Sample(lambda m, x: x.sum(), I(5, 2, 3), ref=np.sum, note="int64"),
    Sample(lambda m, x: x.sum(0), B(4, 3), ref=lambda x: x.sum(0), note="bool counts as int64"),
    Sample(lambda m, x: x.sum(dtype=m.float64), I(5, 3), ref=lambda x: x.sum().astype(np.float64)))
add("sum_to_size",  # a composite of sums; the engine reduces broadcast gradients with it
    Sample(lambda m, x: x.sum_to_size(4), A(3, 4), ref=lambda x: x.sum(0)),
    Sample(lambda m, x: x.sum_to_size(3, 1), nc(A(3, 4)), ref=lambda x: x.sum(1, keepdims=True)),
    Sample(lambda m, x: x.sum_to_size((1, 3, 1)), A(2, 3, 4), ref=lambda x: x.sum((0, 2), keepdims=True)),
    Sample(lambda m, x: x.sum_to_size(3, 1), A(2, 3, 4), ref=lambda x: x.sum((0, 2), keepdims=True)[0]),
    Sample(lambda m, x: x.sum_to_size(()), A(2, 3), ref=lambda x: x.sum()),
    Sample(lambda m, x: x.sum_to_size(2, 3), A(2, 3), ref=lambda x: x))
add("mean",
    Sample(lambda m, x: m.mean(x), A(2, 3), ref=np.mean),
    Sample(lambda m, x: x.mean(0), A(2, 3), ref=lambda x: x.mean(0)),
    Sample(lambda m, x: x.mean((0, -1), keepdim=True), A(2, 3, 2), ref=lambda x: x.mean((0, 2), keepdims=True)),
    Sample(lambda m, x: x.mean(), A(), ref=np.mean),
    Sample(lambda m, x: x.mean(1), nc(A(3, 2)), ref=lambda x: x.mean(1)),
    Sample(lambda m, x: x.mean(1), A(0, 2), ref=lambda x: x.mean(1)),
    Sample(lambda m, x: x.mean(dtype=m.float64), I(5, 4), ref=lambda x: x.mean()))
for _name, _fn in (("amax", np.amax), ("amin", np.amin)):
    add(_name,
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), A(2, 3), ref=_fn),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(1), A(2, 3), ref=lambda x, _f=_fn: _f(x, 1)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, (0, 2), keepdim=True), A(2, 3, 2),
               ref=lambda x, _f=_fn: _f(x, (0, 2), keepdims=True)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, -1), nc(A(2, 3)), ref=lambda x, _f=_fn: _f(x, -1)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), A(), ref=_fn),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 1), A(0, 3), ref=lambda x, _f=_fn: _f(x, 1)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 1), np.array([[1., 3., 3.], [2., 2., 2.]]), grad=False,
               note="ties share the gradient"),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 0), I(5, 3, 2), ref=lambda x, _f=_fn: _f(x, 0)))
for _name, _fn in (("max_all", np.amax), ("min_all", np.amin)):
    _pub = _name[:3]
    add(_name,
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x), A(2, 3), ref=_fn),
        Sample(lambda m, x, _p=_pub: getattr(x, _p)(), A(), ref=_fn),
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x), nc(A(2, 2)), ref=_fn),
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x), np.array([1., 3., 3., 0.]), grad=False,
               note="ties share the gradient"),
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x), I(5, 4), ref=_fn))
for _name, _fn in (("max_dim", (np.amax, np.argmax)), ("min_dim", (np.amin, np.argmin))):
    _pub = _name[:3]
    add(_name,
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x, 1), A(2, 3),
               ref=lambda x, _f=_fn: (_f[0](x, 1), _f[1](x, 1))),
        Sample(lambda m, x, _p=_pub: getattr(x, _p)(0, keepdim=True), A(2, 3),
               ref=lambda x, _f=_fn: (_f[0](x, 0, keepdims=True), _f[1](x, 0, keepdims=True))),
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x, dim=-1), nc(A(3, 2)),
               ref=lambda x, _f=_fn: (_f[0](x, -1), _f[1](x, -1))),
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x, 0), A(),
               ref=lambda x, _f=_fn: (x, np.array(0))),
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x, 1).values, A(2, 3), note="values"),
        Sample(lambda m, x, _p=_pub: getattr(m, _p)(x, 0)[1], I(5, 3, 2), note="indices of integers"))
for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    add(_name,
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), A(2, 3), ref=_fn),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(1), A(2, 3), ref=lambda x, _f=_fn: _f(x, 1)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, -1, keepdim=True), nc(A(2, 3)),
               ref=lambda x, _f=_fn: _f(x, -1, keepdims=True)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, keepdim=True), A(2, 3)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x), A(), ref=_fn),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 0), I(5, 4, 2), ref=lambda x, _f=_fn: _f(x, 0)))


def _lse(x, dim, keepdims=False):
    mx = np.amax(x, axis=dim, keepdims=True)
    out = np.log(np.sum(np.exp(x - mx), axis=dim, keepdims=True)) + mx
    return out if keepdims else np.squeeze(out, axis=dim)


add("logsumexp",
    Sample(lambda m, x: m.logsumexp(x, 1), A(2, 3), ref=lambda x: _lse(x, 1)),
    Sample(lambda m, x: x.logsumexp((0, 2), keepdim=True), A(2, 3, 2), ref=lambda x: _lse(x, (0, 2), True)),
    Sample(lambda m, x: m.logsumexp(x, -1), nc(A(2, 3)), ref=lambda x: _lse(x, -1)),
    Sample(lambda m, x: m.logsumexp(x, 0), A(), ref=lambda x: x),
    Sample(lambda m, x: m.logsumexp(x, 1), A(0, 3), ref=lambda x: _lse(x, 1)),
    Sample(lambda m, x: m.logsumexp(x, 0), np.array([1000., 1000.5, -2.]), ref=lambda x: _lse(x, 0),
           note="large values stay finite"),
    Sample(lambda m, x: m.logsumexp(x, 0), I(5, 3), note="integers become float"))


def _softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


add("softmax",
    Sample(lambda m, x: m.softmax(x, 1), A(2, 3), ref=lambda x: _softmax(x, 1)),
    Sample(lambda m, x: x.softmax(-1), nc(A(2, 3)), ref=lambda x: _softmax(x, -1)),
    Sample(lambda m, x: m.softmax(x, 0), A(3, 2, 2), ref=lambda x: _softmax(x, 0)),
    Sample(lambda m, x: m.softmax(x, 0), A(), ref=lambda x: np.ones_like(x)),
    Sample(lambda m, x: m.softmax(x, -1), A(2, 4, 3), ref=lambda x: _softmax(x, -1),
           note="8 rows: the row kernels of Note [Row reductions as products]"),
    Sample(lambda m, x: m.softmax(x, 1), A(0, 3), ref=lambda x: x),
    Sample(lambda m, x: m.softmax(x, 0), np.array([800., 0., -800.]), ref=lambda x: _softmax(x, 0), grad=False,
           note="large values stay finite"))
add("log_softmax",
    Sample(lambda m, x: m.log_softmax(x, 1), A(2, 3), ref=lambda x: np.log(_softmax(x, 1))),
    Sample(lambda m, x: x.log_softmax(-1), nc(A(2, 3)), ref=lambda x: np.log(_softmax(x, -1))),
    Sample(lambda m, x: m.log_softmax(x, 0), A(), ref=lambda x: np.zeros_like(x)),
    Sample(lambda m, x: m.log_softmax(x, 2), A(2, 4, 3), ref=lambda x: np.log(_softmax(x, 2)), note="8 rows"),
    Sample(lambda m, x: m.log_softmax(x, 1), A(0, 3), ref=lambda x: x),
    Sample(lambda m, x: m.log_softmax(x, 0), np.array([800., 0., -800.]), grad=False,
           ref=lambda x: x - 800., note="large values stay finite"))
add("cumsum",
    Sample(lambda m, x: m.cumsum(x, 1), A(2, 3), ref=lambda x: np.cumsum(x, 1)),
    Sample(lambda m, x: x.cumsum(-2), nc(A(3, 2)), ref=lambda x: np.cumsum(x, 0)),
    Sample(lambda m, x: m.cumsum(x, 0), A(), ref=lambda x: x),
    Sample(lambda m, x: m.cumsum(x, 0), A(0, 3), ref=lambda x: np.cumsum(x, 0)),
    Sample(lambda m, x: m.cumsum(x, 0), I(5, 4), ref=lambda x: np.cumsum(x, 0)),
    Sample(lambda m, x: m.cumsum(x, 0), B(4), ref=lambda x: np.cumsum(x, 0), note="bool accumulates as int64"))
_zero1 = np.array([[1.5, 0., -2.], [0.5, 2., 1.2]])
_zero2 = np.array([[0., 0., -2.], [0.5, 2., 1.2]])
add("cumprod",
    Sample(lambda m, x: m.cumprod(x, 1), A(2, 3), ref=lambda x: np.cumprod(x, 1)),
    Sample(lambda m, x: x.cumprod(-2), nc(A(3, 2)), ref=lambda x: np.cumprod(x, 0)),
    Sample(lambda m, x: m.cumprod(x, 0), A(), ref=lambda x: x),
    Sample(lambda m, x: m.cumprod(x, 0), A(0, 3), ref=lambda x: np.cumprod(x, 0)),
    Sample(lambda m, x: m.cumprod(x, 1), _zero1, ref=lambda x: np.cumprod(x, 1), note="a zero"),
    Sample(lambda m, x: m.cumprod(x, 1), _zero2, ref=lambda x: np.cumprod(x, 1), note="two zeros"),
    Sample(lambda m, x: m.cumprod(x, 0), I(4, 4), ref=lambda x: np.cumprod(x, 0)))
add("prod",
    Sample(lambda m, x: m.prod(x), A(2, 3), ref=np.prod),
    Sample(lambda m, x: x.prod(1), A(2, 3), ref=lambda x: x.prod(1)),
    Sample(lambda m, x: x.prod(0, keepdim=True), nc(A(2, 3)), ref=lambda x: x.prod(0, keepdims=True)),
    Sample(lambda m, x: x.prod(), A(), ref=np.prod),
    Sample(lambda m, x: x.prod(1), A(0, 3), ref=lambda x: x.prod(1)),
    Sample(lambda m, x: x.prod(1), _zero1, ref=lambda x: x.prod(1), note="a zero"),
    Sample(lambda m, x: x.prod(), _zero1, ref=np.prod, note="a zero, full"),
    Sample(lambda m, x: x.prod(1), _zero2, ref=lambda x: x.prod(1), note="two zeros"),
    Sample(lambda m, x: x.prod(), _zero2, ref=np.prod, note="two zeros, full"),
    Sample(lambda m, x: x.prod(0), I(4, 3, 2), ref=lambda x: x.prod(0)))


def _pnorm(p, dim=None, keepdims=False):
    def ref(x):
        a = np.abs(x)
        if p == "fro":
            return np.sqrt((a * a).sum(dim, keepdims=keepdims))
        if p == np.inf:
            return a.max(dim, keepdims=keepdims)
        if p == -np.inf:
            return a.min(dim, keepdims=keepdims)
        if p == 0:
            return (a != 0).sum(dim, keepdims=keepdims).astype(x.dtype)
        return (a ** p).sum(dim, keepdims=keepdims) ** (1 / p)
    return ref


add("norm",
    Sample(lambda m, x: m.norm(x), _away := A(2, 3), ref=_pnorm("fro")),
    Sample(lambda m, x: x.norm(2, 1), A(2, 3), ref=_pnorm(2, 1)),
    Sample(lambda m, x: x.norm(1, -1, keepdim=True), np.where(np.abs(_away) < .1, .5, _away),
           ref=_pnorm(1, -1, True)),
    Sample(lambda m, x: m.norm(x, 3, (0, 1)), nc(A(2, 3)), ref=_pnorm(3, (0, 1))),
    Sample(lambda m, x: m.norm(x, 0.5), P(3), ref=_pnorm(0.5)),
    Sample(lambda m, x: m.norm(x, float("inf"), 1), A(2, 3), ref=_pnorm(np.inf, 1)),
    Sample(lambda m, x: m.norm(x, float("-inf")), A(4), ref=_pnorm(-np.inf)),
    Sample(lambda m, x: m.norm(x, 0, 0), np.array([[0., 1.], [2., 0.]]), ref=_pnorm(0, 0)),
    Sample(lambda m, x: m.norm(x), A(), ref=_pnorm("fro")),
    Sample(lambda m, x: m.norm(x, dim=1), A(0, 3), ref=_pnorm(2, 1)),
    Sample(lambda m, x: m.norm(x), np.zeros(3), ref=_pnorm(2), gradgrad=False, note="zero subgradient at 0"),
    Sample(lambda m, x: m.norm(x, 3), np.zeros(3), ref=_pnorm(3), gradgrad=False, note="zero subgradient at 0"))
add("sum", Sample(lambda m, x: x.sum(dim=()), A(2, 3), ref=np.sum, note="dim=() reduces everything"))
add("mean", Sample(lambda m, x: x.mean(dim=[], keepdim=True), A(2, 3), ref=lambda x: x.mean(keepdims=True),
                   note="dim=[] reduces everything"))


# -- running extremes, log-space scans, NaN-ignoring reductions, differences and integrals ------------------
def _cum_extreme_ref(fn):
    def ref(x, dim):
        x = np.moveaxis(x, dim, -1)
        values = fn.accumulate(x, axis=-1)
        idx = np.zeros(x.shape, np.int64)
        for pos in np.ndindex(*x.shape[:-1]):
            best = 0
            for j in range(x.shape[-1]):
                if fn(x[pos + (j,)], x[pos + (best,)]) == x[pos + (j,)]:
                    best = j
                idx[pos + (j,)] = best
        return np.moveaxis(values, -1, dim), np.moveaxis(idx, -1, dim)
    return ref


for _name, _fn in (("cummax", np.maximum), ("cummin", np.minimum)):
    _r = _cum_extreme_ref(_fn)
    add(_name,
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 1), A(2, 4), ref=lambda x, _r=_r: _r(x, 1)),
        Sample(lambda m, x, _n=_name: getattr(x, _n)(-2), nc(A(3, 2)), ref=lambda x, _r=_r: _r(x, 0)),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 0), np.array([1., 3., 3., 2., 5.]),
               ref=lambda x, _r=_r: _r(x, 0),
               grad=False, note="ties: the later index (no derivative there; PyTorch's choice is compared)"),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 0), A(), ref=lambda x: (x, np.array(0))),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 0), I(5, 4), ref=lambda x, _r=_r: _r(x, 0), note="integers"),
        Sample(lambda m, x, _n=_name: getattr(m, _n)(x, 0), A(0, 2), ref=lambda x: (x, np.zeros((0, 2), np.int64))))
add("logcumsumexp",
    Sample(lambda m, x: m.logcumsumexp(x, 1), A(2, 3), ref=lambda x: np.logaddexp.accumulate(x, 1)),
    Sample(lambda m, x: x.logcumsumexp(-2), nc(A(3, 2)), ref=lambda x: np.logaddexp.accumulate(x, 0)),
    Sample(lambda m, x: x.logcumsumexp(0), A(), ref=lambda x: x),
    Sample(lambda m, x: x.logcumsumexp(0), A(0, 2), ref=lambda x: x))
_with_nan = np.array([[1., np.nan, 2.], [np.nan, np.nan, 3.]])
add("nansum",
    Sample(lambda m, x: m.nansum(x), A(2, 3), ref=np.nansum),
    Sample(lambda m, x: x.nansum(1, keepdim=True), _with_nan, ref=lambda x: np.nansum(x, 1, keepdims=True)),
    Sample(lambda m, x: x.nansum((0, 1)), nc(A(2, 3)), ref=lambda x: np.nansum(x, (0, 1))),
    Sample(lambda m, x: m.nansum(x, 0), I(5, 2, 3), ref=lambda x: np.nansum(x, 0)))
add("nanmean",
    Sample(lambda m, x: m.nanmean(x), _with_nan, ref=np.nanmean),
    Sample(lambda m, x: x.nanmean(1), A(2, 3), ref=lambda x: np.nanmean(x, 1)),
    Sample(lambda m, x: x.nanmean(0, keepdim=True), _with_nan, ref=lambda x: np.nanmean(x, 0, keepdims=True),
           grad=False, note="NaN inputs: finite differences cannot see them; PyTorch's gradient is compared"))
add("aminmax",
    Sample(lambda m, x: m.aminmax(x), A(2, 3), ref=lambda x: (x.min(), x.max())),
    Sample(lambda m, x: x.aminmax(dim=1), A(2, 3), ref=lambda x: (x.min(1), x.max(1))),
    Sample(lambda m, x: m.aminmax(x, dim=-2, keepdim=True), nc(A(3, 2)),
           ref=lambda x: (x.min(0, keepdims=True), x.max(0, keepdims=True))),
    Sample(lambda m, x: m.aminmax(x, keepdim=True), A(2, 2),
           ref=lambda x: (x.min().reshape(1, 1), x.max().reshape(1, 1))),
    Sample(lambda m, x: m.aminmax(x), np.array([1., 3., 3., 0.]), ref=lambda x: (x.min(), x.max()), grad=False,
           note="ties (no derivative there; PyTorch's choice is compared)"),
    Sample(lambda m, x: m.aminmax(x, dim=0), I(5, 4), ref=lambda x: (x.min(0), x.max(0))))
add("diff",
    Sample(lambda m, x: m.diff(x), A(2, 4), ref=lambda x: np.diff(x)),
    Sample(lambda m, x: x.diff(n=2, dim=0), A(4, 2), ref=lambda x: np.diff(x, 2, 0)),
    Sample(lambda m, x, p, a: m.diff(x, dim=1, prepend=p, append=a), A(2, 3), A(2, 1), A(2, 2),
           ref=lambda x, p, a: np.diff(x, 1, 1, prepend=p, append=a)),
    Sample(lambda m, x: x.diff(n=0), A(3), ref=lambda x: x),
    Sample(lambda m, x: x.diff(n=5), A(3), ref=lambda x: np.diff(x, 5), note="n past the length"),
    Sample(lambda m, x: x.diff(), I(9, 5), ref=np.diff),
    Sample(lambda m, x: x.diff(), B(5), ref=np.diff, note="bools: xor"))
add("trapz",
    Sample(lambda m, y, x: m.trapz(y, x), A(2, 4), A(4), ref=lambda y, x: np.trapezoid(y, x)),
    Sample(lambda m, y: m.trapz(y, dx=2., dim=0), A(3, 2), ref=lambda y: np.trapezoid(y, dx=2., axis=0)))
add("trapezoid",
    Sample(lambda m, y: m.trapezoid(y), A(2, 4), ref=lambda y: np.trapezoid(y)),
    Sample(lambda m, y: m.trapezoid(y, dx=0.5, dim=0), A(3, 2), ref=lambda y: np.trapezoid(y, dx=0.5, axis=0)),
    Sample(lambda m, y, x: m.trapezoid(y, x), A(2, 3), Const(np.array([0., 1., 3.])),
           ref=lambda y, x: np.trapezoid(y, x)),
    Sample(lambda m, y, x: m.trapezoid(y, x, dim=0), A(3, 2), A(3, 2), ref=lambda y, x: np.trapezoid(y, x, axis=0)),
    Sample(lambda m, y: m.trapezoid(y), A(2, 0), ref=lambda y: np.zeros(2)))
add("cumprod", Sample(lambda m, x: x.clone().cumprod_(1), A(2, 3), ref=lambda x: np.cumprod(x, 1), note="in place"))
