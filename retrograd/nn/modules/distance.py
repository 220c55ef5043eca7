"""Distance layers: the cosine similarity and the pairwise p-norm distance of two inputs."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``; see ``functional.cosine_similarity``.

    Example::
        >>> import retrograd as rg
        >>> rg.nn.CosineSimilarity(dim=0)(rg.tensor([1., 0.]), rg.tensor([2., 0.]))
        tensor(1.)
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance of two inputs along their last dimension; see ``functional.pairwise_distance``."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
