"""Gamma, Dirichlet and Beta: the distributions sampled through standard gamma draws, reparametrisable.

Note [Gamma samples and their gradient]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A standard gamma sample is drawn by inverting its CDF at a uniform draw ``u``:
``x = P^-1(alpha, u)`` (``scipy.special.gammaincinv``). Its derivative in ``alpha`` for the same
``u`` is the implicit one PyTorch's ``_standard_gamma_grad`` gives, ``dx/dalpha = -(dP/dalpha) / p(x)``
(``P`` the regularised lower incomplete gamma function, ``p`` the density); ``dP/dalpha`` is taken by
a central difference of ``P``. As the sample is a smooth function of ``alpha`` for a fixed seed,
gradcheck holds the formula against finite differences of the sampling itself. The numbers drawn
are retrograd's (NumPy's stream), not PyTorch's. Dirichlet samples are gamma samples normalised,
Beta samples the first coordinate of a two-sided Dirichlet.
"""
from __future__ import annotations

import numpy as np
from scipy import special as _sp

from .. import _creation
from .._size import Size
from .._tensor import Tensor
from ..autograd.function import Function, once_differentiable
from ..nn import functional as F
from ..ops import digamma, lgamma, stack, where, xlogy
from . import constraints
from .distribution import Distribution, broadcast_all

__all__ = ["Gamma", "Dirichlet", "Beta", "standard_gamma"]


class _StandardGamma(Function):
    """``P^-1(alpha, u)``, differentiable in ``alpha``. See Note [Gamma samples and their gradient]."""

    @staticmethod
    def forward(ctx, alpha, u):
        a = alpha.detach().numpy().astype(np.float64)
        x = _sp.gammaincinv(a, u.detach().numpy().astype(np.float64))
        x = np.maximum(x, np.finfo(alpha.detach().numpy().dtype).tiny)
        ctx.save_for_backward(alpha)
        ctx.x = x
        return _creation.tensor(x, dtype=alpha.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (alpha,) = ctx.saved_tensors
        a, x = alpha.detach().numpy().astype(np.float64), ctx.x
        h = 1e-5 * np.maximum(a, 1e-3)
        dp_da = (_sp.gammainc(a + h, x) - _sp.gammainc(a - h, x)) / (2 * h)
        log_pdf = (a - 1) * np.log(x) - x - _sp.gammaln(a)
        dx_da = np.nan_to_num(-dp_da * np.exp(-log_pdf), nan=0.0, posinf=0.0, neginf=0.0)
        return grad * _creation.tensor(dx_da, dtype=alpha.dtype), None


def standard_gamma(concentration):
    """A sample of ``Gamma(concentration, 1)`` per element, reparametrised (gradients flow to ``concentration``)."""
    u = _creation.rand(tuple(concentration.shape), dtype=concentration.dtype)
    return _StandardGamma.apply(concentration, u)


class Gamma(Distribution):
    """The gamma distribution of shape ``concentration`` and inverse scale ``rate``, reparametrisable.

    Example::
        >>> import retrograd as rg
        >>> rg.distributions.Gamma(rg.tensor([2.0]), rg.tensor([1.0])).log_prob(rg.tensor([1.0]))
        tensor([-1.])
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        x = (self.rate * value).detach().numpy()
        return _creation.tensor(_sp.gammainc(self.concentration.detach().numpy(), x), dtype=self.rate.dtype)


class Dirichlet(Distribution):
    """The Dirichlet distribution over the simplex of the last dim of ``concentration``, reparametrisable.

    Example::
        >>> import retrograd as rg
        >>> d = rg.distributions.Dirichlet(rg.tensor([1.0, 1.0, 1.0]))
        >>> d.log_prob(rg.tensor([0.2, 0.3, 0.5]))
        tensor(0.6931)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, Tensor) or concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c = (self.concentration - 1).clamp(min=0.0)
        mode = c / c.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1, keepdim=True)  # no interior mode: a vertex, as PyTorch's
        vertex = F.one_hot(mode.argmax(-1), c.shape[-1]).to(mode.dtype)
        return where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)


class Beta(Distribution):
    """The beta distribution on [0, 1] of ``concentration1`` (alpha) and ``concentration0`` (beta), reparametrisable.

    Example::
        >>> import retrograd as rg
        >>> rg.distributions.Beta(rg.tensor([2.0]), rg.tensor([2.0])).mean
        tensor([0.5000])
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([c1, c0], -1), validate_args=validate_args)
        self.concentration1, self.concentration0 = c1, c0
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

