"""DistributedSampler: each rank's share of a dataset, as ``torch.utils.data.distributed``'s."""
from __future__ import annotations

import math

from ... import _creation
from ... import distributed as dist
from ..._random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of rank ``rank`` of ``num_replicas``: every ``num_replicas``-th index, from ``rank`` on.

    The dataset is padded by repeating its first indices (or, with ``drop_last``, cut) so that every
    rank gets as many. With ``shuffle``, the order is a permutation seeded by ``seed + epoch``, the
    same on every rank: call ``set_epoch`` at the start of each epoch.

    Args:
        dataset: a map-style dataset.
        num_replicas (int, optional): the number of ranks (default: the process group's size).
        rank (int, optional): this rank (default: the process group's rank).
        shuffle (bool): permute the indices. Default True.
        seed (int): the permutation's seed, the same on every rank.
        drop_last (bool): cut the tail instead of padding it.

    Raises:
        ValueError: for a rank outside ``[0, num_replicas - 1]``.
        RuntimeError: without ``num_replicas``/``rank`` and without an initialized process group.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            indices = _creation.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch, which seeds the next permutation (the same on every rank)."""
        self.epoch = epoch
