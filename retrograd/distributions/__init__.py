"""``retrograd.distributions``: probability distributions with sampling, log-densities and KL divergences.

As ``torch.distributions`` for ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical``,
``OneHotCategorical``, ``Exponential``, ``Laplace``, ``Gamma``, ``Beta``, ``Dirichlet``, ``Poisson``,
``Binomial``, ``MultivariateNormal`` and ``Independent``: ``sample``/``rsample``, ``log_prob``,
``entropy``, ``mean``/``variance``, ``expand``, argument validation with PyTorch's errors, and
``kl_divergence`` for each pair of one type. Sampling draws from retrograd's generator
(``rg.manual_seed``), so the numbers are not PyTorch's.
"""
from . import constraints
from .categorical import Categorical, OneHotCategorical
from .distribution import Distribution
from .exponential import Exponential, Laplace
from .gamma import Beta, Dirichlet, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Bernoulli, Normal, Uniform
from .poisson import Binomial, Poisson

__all__ = ["constraints", "Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "OneHotCategorical",
           "Exponential", "Laplace", "Gamma", "Beta", "Dirichlet", "Poisson", "Binomial", "Independent",
           "MultivariateNormal", "kl_divergence", "register_kl"]
