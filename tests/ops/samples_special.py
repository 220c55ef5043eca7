"""Samples of the special functions (retrograd/ops/special.py); format in samples.py."""
import numpy as np
import scipy.special as sp

from samples import A, Const, I, P, Sample, add, nc


def _unary(name, call, ref, low=-2.0, high=2.0, integers=True, float32=True):
    add(name,
        Sample(call, A(2, 3, low=low, high=high), ref=ref),
        Sample(call, nc(A(3, low=low, high=high)), ref=ref),
        Sample(call, A(low=low, high=high), ref=ref),
        Sample(call, A(0, 2, low=low, high=high), ref=ref))
    if float32:
        add(name, Sample(call, A(4, low=low, high=high).astype(np.float32), grad=False, note="float32"))
    if integers:
        add(name, Sample(call, I(3, 4, low=1), note="integers give the default float dtype"))


_unary("erf", lambda m, x: m.erf(x), sp.erf)
_unary("erfc", lambda m, x: x.erfc(), sp.erfc)
_unary("erfinv", lambda m, x: m.erfinv(x), sp.erfinv, low=-0.9, high=0.9)
_unary("lgamma", lambda m, x: x.lgamma(), sp.gammaln, low=0.3, high=4.0)
_unary("digamma", lambda m, x: m.digamma(x), sp.psi, low=0.3, high=4.0)
_unary("i0", lambda m, x: m.i0(x), sp.i0)
_unary("sinc", lambda m, x: m.sinc(x), np.sinc, integers=False)  # at integers both give rounding noise
_unary("erf", lambda m, x: m.special.ndtr(x), sp.ndtr)  # ndtr is (1 + erf(x / sqrt(2))) / 2, as PyTorch's
_unary("special_ndtri", lambda m, x: m.special.ndtri(x), sp.ndtri, low=0.05, high=0.95)
_unary("special_log_ndtr", lambda m, x: m.special.log_ndtr(x), sp.log_ndtr)
_unary("special_i1", lambda m, x: m.special.i1(x), sp.i1)
_unary("special_entr", lambda m, x: m.special.entr(x), sp.entr, low=0.2, high=2.0)
add("lgamma", Sample(lambda m, x: m.special.gammaln(x), P(3), ref=sp.gammaln, note="special.gammaln"))
add("digamma", Sample(lambda m, x: m.special.psi(x), P(3), ref=sp.psi, note="special.psi"))
add("erf", Sample(lambda m, x: m.special.erf(x), A(3), ref=sp.erf, note="special.erf"))
add("i0", Sample(lambda m, x: m.special.i0(x), A(3), ref=sp.i0, note="special.i0"))
add("sinc", Sample(lambda m, x: m.sinc(x), np.array([0., 1., 0.5]), gradgrad=False,
                   note="1 at 0, with slope 0 (PyTorch's second derivative there is NaN)"))
add("special_i1", Sample(lambda m, x: m.special.i1(x), np.array([0., 1.]), note="slope 1/2 at 0"))
add("polygamma",
    Sample(lambda m, x: m.polygamma(1, x), P(2, 3), ref=lambda x: sp.polygamma(1, x)),
    Sample(lambda m, x: x.polygamma(2), P(3), ref=lambda x: sp.polygamma(2, x)),
    Sample(lambda m, x: m.polygamma(0, x), P(3), ref=sp.psi, note="n = 0 is digamma"),
    Sample(lambda m, x: m.special.polygamma(3, x), nc(P(2))),
    Sample(lambda m, x: m.polygamma(1, x), I(3, 4, low=1)))
add("xlogy",
    Sample(lambda m, x, y: m.xlogy(x, y), A(2, 3), P(2, 3), ref=sp.xlogy),
    Sample(lambda m, x, y: x.xlogy(y), A(2, 3), P(3), ref=sp.xlogy, note="broadcasting"),
    Sample(lambda m, x: m.xlogy(x, 3.), A(3), ref=lambda x: sp.xlogy(x, 3.), note="a number as other"),
    Sample(lambda m, y: m.xlogy(2., y), P(3), ref=lambda y: sp.xlogy(2., y), note="a number as input"),
    Sample(lambda m, x, y: m.special.xlogy(x, y), np.array([0., 0., 1.]), np.array([0., -1., 2.]),
           grad=False, note="0 where input is 0, whatever other is"),
    Sample(lambda m, x, y: m.xlogy(x, y), I(3, 3), I(3, 3, low=1)))
add("logit",
    Sample(lambda m, x: m.logit(x), A(2, 3, low=0.1, high=0.9), ref=sp.logit),
    Sample(lambda m, x: x.logit(eps=0.2), A(2, 3, low=0.25, high=0.75), ref=sp.logit),
    Sample(lambda m, x: m.special.logit(x, 0.1), np.array([0.05, 0.5, 0.97]), grad=False, note="clamped by eps"),
    Sample(lambda m, x: m.logit(x), A(low=0.1, high=0.9)))
_unary("special_i0e", lambda m, x: m.special.i0e(x), sp.i0e)
# In float32 the gradients of i1e and erfcx cancel, and differ from PyTorch's in the last digits.
_unary("special_i1e", lambda m, x: m.special.i1e(x), sp.i1e, float32=False)
_unary("special_erfcx", lambda m, x: m.special.erfcx(x), sp.erfcx, float32=False)
add("special_i0e", Sample(lambda m, x: m.special.i0e(x), np.array([0., 1.]), gradgrad=False,
                          note="slope 0 at 0 (a kink: sign(x))"))
add("special_i1e", Sample(lambda m, x: m.special.i1e(x), np.array([0., 1.]), gradgrad=False, note="slope 1/2 at 0"))
add("special_xlog1py",
    Sample(lambda m, x, y: m.special.xlog1py(x, y), A(2, 3), P(2, 3), ref=sp.xlog1py),
    Sample(lambda m, x: m.special.xlog1py(x, 3.), A(3), ref=lambda x: sp.xlog1py(x, 3.), note="a number as other"),
    Sample(lambda m, y: m.special.xlog1py(2., y), P(3), ref=lambda y: sp.xlog1py(2., y), note="a number as input"),
    Sample(lambda m, x, y: m.special.xlog1py(x, y), np.array([0., 0., 2.]), np.array([-1., -2., 3.]), grad=False,
           note="0 where input is 0, whatever other is"))
# igamma and igammac have a derivative in ``other`` only (PyTorch's input formula is not implemented);
# literal arrays, so that the shared generator's later draws stay as they were.
_A_POS = np.array([[0.7, 1.5, 2.5], [3.0, 1.2, 0.9]])
_X_POS = np.array([[0.4, 1.1, 2.2], [1.7, 0.6, 3.1]])
for _name in ("igamma", "igammac"):
    _ref = sp.gammainc if _name == "igamma" else sp.gammaincc
    add(_name,
        Sample(lambda m, a, x, n=_name: getattr(m, n)(a, x), Const(_A_POS), _X_POS, ref=_ref),
        Sample(lambda m, a, x, n=_name: getattr(a, n)(x), Const(_A_POS), _X_POS[0], ref=_ref, note="broadcasting"),
        Sample(lambda m, a, x, n=_name: getattr(m.special, "gammainc" if n == "igamma" else "gammaincc")(a, x),
               Const(np.array(2.0)), np.array(1.3), ref=_ref, note="0-d, the torch.special name"))
add("polygamma_",  # x.polygamma_(n), PyTorch's PolygammaBackward1; on a copy, which requires grad
    Sample(lambda m, x: (x * 1).polygamma_(1), P(2, 3), ref=lambda x: sp.polygamma(1, x)),
    Sample(lambda m, x: (x * 1).polygamma_(0), nc(P(3)), ref=sp.psi, note="n = 0, non-contiguous"))
_gammaln_sum = lambda x, p: sum(sp.gammaln(x - i / 2) for i in range(p)) + p * (p - 1) / 4 * np.log(np.pi)  # noqa: E731
add("mvlgamma",
    Sample(lambda m, x: m.mvlgamma(x, 2), A(2, 3, low=0.7, high=3.), ref=lambda x: _gammaln_sum(x, 2)),
    Sample(lambda m, x: x.mvlgamma(p=3), nc(A(3, low=1.2, high=3.)), ref=lambda x: _gammaln_sum(x, 3),
           note="method, non-contiguous"),
    Sample(lambda m, x: m.special.multigammaln(x, 1), A(low=0.5, high=3.), ref=lambda x: _gammaln_sum(x, 1),
           note="special.multigammaln, p = 1 is lgamma, 0-d"),
    Sample(lambda m, x: (x * 1).mvlgamma_(2), A(2, low=0.7, high=3.), ref=lambda x: _gammaln_sum(x, 2),
           note="in place"),
    Sample(lambda m, x: m.mvlgamma(x, 2), I(5, 3, low=1), ref=lambda x: _gammaln_sum(x, 2).astype(np.float32),
           note="integers give float32"))
