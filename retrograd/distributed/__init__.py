"""retrograd.distributed: collectives across processes started by ``mpiexec``, as ``torch.distributed``.

Start N processes with ``python -m retrograd.distributed.run -n N script.py`` (a thin wrapper
around ``mpiexec``); each calls ``init_process_group("mpi")`` and then the collectives.
Install the MPI pieces with ``pip install 'retrograd[distributed]'``.
"""
from ._collectives import (init_process_group, destroy_process_group, is_initialized, is_available,
                           is_mpi_available, get_rank, get_world_size, get_backend, barrier, all_reduce,
                           broadcast, all_gather, reduce_scatter, ReduceOp, Work, default_pg_timeout)

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_available", "is_mpi_available",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "broadcast", "all_gather",
           "reduce_scatter", "ReduceOp", "Work", "default_pg_timeout"]
