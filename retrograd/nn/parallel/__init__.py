"""retrograd.nn.parallel: data-parallel training across processes."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
