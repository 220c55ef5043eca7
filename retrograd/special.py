"""``retrograd.special``: the special functions under PyTorch's ``torch.special`` names.

Most are the ops of ``retrograd.ops.special`` (SciPy's kernels, each with its derivative); the
rest are other names of ops found elsewhere (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``,
``gammainc`` is ``igamma``, ``multigammaln`` is ``mvlgamma``).
"""
from __future__ import annotations

from .ops.pointwise import expm1, log1p, round  # noqa: A004
from .ops.pointwise import sigmoid as expit
from .ops.reduction import log_softmax, logsumexp, softmax
from .ops.special import (digamma, entr, erf, erfc, erfcx, erfinv, i0, i0e, i1, i1e, log_ndtr, logit, ndtr, ndtri,
                          polygamma, sinc, xlog1py, xlogy)
from .ops.special import digamma as psi
from .ops.special import igamma as gammainc
from .ops.special import igammac as gammaincc
from .ops.special import lgamma as gammaln
from .ops.special import mvlgamma as multigammaln
from .ops.arithmetic import exp2

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e",
           "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "sinc", "softmax", "xlog1py", "xlogy"]
