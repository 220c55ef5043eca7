"""MultivariateNormal: the normal distribution over vectors, by covariance, precision or Cholesky factor."""
from __future__ import annotations

import math

import numpy as np

from .. import _creation
from .._size import Size
from . import constraints
from ._linalg import cholesky, solve_triangular
from .distribution import Distribution

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(L, x):
    """``x^T (L L^T)^-1 x`` over the last dim of ``x``, ``L`` broadcast to ``x``'s batch dims."""
    n = x.shape[-1]
    shape = tuple(np.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1])))
    y = solve_triangular(L.expand(shape + (n, n)), x.expand(shape + (n,)).unsqueeze(-1), upper=False)
    return y.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of ``P^-1`` without inverting ``P`` (through the flipped factor of P)."""
    Lf = cholesky(P.flip(-2, -1))
    L_inv = Lf.flip(-2, -1).transpose(-2, -1)
    eye = _creation.eye(P.shape[-1], dtype=P.dtype)
    return solve_triangular(L_inv, eye.expand(tuple(L_inv.shape)), upper=False)


class MultivariateNormal(Distribution):
    """The normal distribution of mean vector ``loc``, reparametrisable.

    Exactly one of ``covariance_matrix``, ``precision_matrix`` and ``scale_tril`` (the lower
    Cholesky factor of the covariance) is given; the others are derived on first use.

    Raises:
        ValueError: if ``loc`` is 0-d, a matrix has fewer than two dims, or not exactly one is given.

    Example::
        >>> import retrograd as rg
        >>> d = rg.distributions.MultivariateNormal(rg.zeros(2), covariance_matrix=rg.eye(2))
        >>> d.log_prob(rg.zeros(2))
        tensor(-1.8379)
    """

    arg_constraints = {"loc": constraints.independent(constraints.real, 1),
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.independent(constraints.real, 1)
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        for name, matrix in (("scale_tril matrix", scale_tril), ("covariance_matrix", covariance_matrix),
                             ("precision_matrix", precision_matrix)):
            if matrix is not None:
                if matrix.dim() < 2:
                    raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch "
                                     "dimensions")
                batch_shape = tuple(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
                given = matrix
        key = "scale_tril" if scale_tril is not None else (
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        self.__dict__[key] = given.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    def __getattr__(self, name):  # the other parametrisations, made on first use
        d = self.__dict__
        if "_unbroadcasted_scale_tril" not in d:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        L = d["_unbroadcasted_scale_tril"]
        if name == "scale_tril":
            return L.expand(self._matrix_shape())
        if name == "covariance_matrix":
            return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())
        if name == "precision_matrix":
            eye = _creation.eye(L.shape[-1], dtype=L.dtype).expand(tuple(L.shape))
            L_inv = solve_triangular(L, eye, upper=False)
            return (L_inv.transpose(-2, -1) @ L_inv).expand(self._matrix_shape())
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        n = self._event_shape[0]
        new.loc = self.loc.expand(tuple(batch_shape) + (n,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for key in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if key in self.__dict__:
                new.__dict__[key] = self.__dict__[key].expand(tuple(batch_shape) + (n, n))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape) +
                                                                    tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _creation.randn(shape, dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
