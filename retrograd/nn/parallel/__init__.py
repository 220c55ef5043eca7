"""retrograd.nn.parallel: data parallelism, across processes (DistributedDataParallel) and in one (DataParallel)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
