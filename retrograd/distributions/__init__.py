"""``retrograd.distributions``: probability distributions with sampling, log-densities and KL divergences.

As ``torch.distributions`` for ``Normal``, ``Uniform``, ``Bernoulli`` and ``Categorical``:
``sample``/``rsample``, ``log_prob``, ``entropy``, ``mean``/``variance``, argument validation
with PyTorch's errors, and ``kl_divergence`` for each pair of one type. Sampling draws from
retrograd's generator (``rg.manual_seed``), so the numbers are not PyTorch's.
"""
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Bernoulli, Normal, Uniform

__all__ = ["constraints", "Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "kl_divergence",
           "register_kl"]
