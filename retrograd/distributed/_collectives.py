"""The default process group's lifecycle and its collectives, with PyTorch's names and arguments.

Each collective checks its arguments locally, builds a ``Work`` whose header every rank
compares before data moves, and submits it. See Note [Collectives over MPI].
"""
from __future__ import annotations

import atexit
import datetime
import sys
import threading

import numpy as np

from .._tensor import Tensor
from ._process_group import ProcessGroupMPI, ReduceOp, Work, _header, broken_groups

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_available", "is_mpi_available",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "broadcast", "all_gather",
           "reduce_scatter", "ReduceOp", "Work", "default_pg_timeout"]

default_pg_timeout = datetime.timedelta(minutes=30)
_state_lock = threading.Lock()
_default_pg = None


def is_mpi_available() -> bool:
    """True if mpi4py (and an MPI library under it) can be imported."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


is_available = is_mpi_available


def _mpi():
    try:
        import mpi4py
        if "mpi4py.MPI" not in sys.modules:  # finalize ourselves, unless a peer died: see _finalize
            mpi4py.rc.finalize = False
            atexit.register(_finalize)
        from mpi4py import MPI
    except ImportError as exc:
        raise RuntimeError("Distributed package doesn't have MPI built in: the 'mpi' backend needs mpi4py and an "
                           "MPI library. Install them with: pip install 'retrograd[distributed]'") from exc
    return MPI


_FINALIZE_WAIT = 10.0  # seconds the exit waits for MPI_Finalize before it leaves it to the process's end


def _finalize() -> None:
    """MPI_Finalize at exit, as mpi4py would do, except after a group broke: then it would wait for the
    dead peer forever. A peer that ended without telling this process (no group broke here) can make it
    wait too, so it runs on a thread that the exit waits for a bounded time. See Note [When a rank dies]."""
    from mpi4py import MPI
    if MPI.Is_initialized() and not MPI.Is_finalized() and not broken_groups:
        done = threading.Thread(target=MPI.Finalize, name="retrograd-mpi-finalize", daemon=True)
        done.start()
        done.join(_FINALIZE_WAIT)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Joins this process to the default process group: every rank started by ``mpiexec``.

    Args:
        backend (str, optional): ``"mpi"`` (the only backend; also the default).
        init_method (str, optional): ignored; MPI's launcher already connects the ranks.
        timeout (datetime.timedelta or float, optional): how long a collective may wait for the
            other ranks before failing (default 30 minutes). A rank that died or skipped a
            collective thus produces ``RuntimeError`` on the others instead of a hang.
        world_size (int): if given, must equal the number of processes ``mpiexec`` started.
        rank (int): if given, must equal this process's MPI rank.

    Raises:
        ValueError: an unsupported backend, or a rank/world_size that contradicts MPI's.
        RuntimeError: called twice, or mpi4py is missing.

    Example::
        >>> import retrograd.distributed as dist            # doctest: +SKIP
        >>> dist.init_process_group("mpi")                   # doctest: +SKIP
        >>> dist.get_world_size()                            # doctest: +SKIP
        2
    """
    global _default_pg
    if backend is not None and str(backend).lower() != "mpi":
        raise ValueError(f"Invalid backend: '{backend}'. retrograd's only backend is 'mpi'.")
    MPI = _mpi()
    with _state_lock:
        if _default_pg is not None:
            raise RuntimeError("trying to initialize the default process group twice!")
        world = MPI.COMM_WORLD
        if world_size not in (-1, None) and world_size != world.Get_size():
            raise ValueError(f"world_size={world_size} but mpiexec started {world.Get_size()} processes")
        if rank not in (-1, None) and rank != world.Get_rank():
            raise ValueError(f"rank={rank} but this process is MPI rank {world.Get_rank()}")
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise RuntimeError("the MPI library does not provide MPI_THREAD_MULTIPLE, which the 'mpi' backend "
                               "needs (collectives progress on a background thread)")
        seconds = (timeout.total_seconds() if hasattr(timeout, "total_seconds") else
                   float(timeout) if timeout is not None else default_pg_timeout.total_seconds())
        _default_pg = ProcessGroupMPI(world, seconds)


class ProcessGroupNotInitializedError(ValueError, RuntimeError):
    """No default process group yet: a ValueError, as PyTorch raises it, and a RuntimeError, as retrograd raised it."""


def destroy_process_group(group=None) -> None:
    """Leaves the default process group; pending collectives fail. ``init_process_group`` may follow."""
    global _default_pg
    with _state_lock:
        pg, _default_pg = _default_pg, None
    if pg is None:
        raise ProcessGroupNotInitializedError("Default process group has not been initialized, please make sure to "
                                              "call init_process_group.")
    pg.close()


def is_initialized() -> bool:
    """True between ``init_process_group`` and ``destroy_process_group``."""
    return _default_pg is not None


def _get_default_group() -> ProcessGroupMPI:
    pg = _default_pg
    if pg is None:
        raise ProcessGroupNotInitializedError("Default process group has not been initialized, please make sure to "
                                              "call init_process_group.")
    return pg


def _check_group(group):
    if group is not None and group is not _default_pg and group != "default":
        raise ValueError("retrograd supports only the default process group (group=None)")
    return _get_default_group()


def get_rank(group=None) -> int:
    """This process's rank in the default group (0 to world_size - 1)."""
    return _check_group(group).rank


def get_world_size(group=None) -> int:
    """The number of processes in the default group."""
    return _check_group(group).size


def get_backend(group=None) -> str:
    _check_group(group)
    return "mpi"


# -- argument checks and buffers -----------------------------------------------------------------
def _check_tensor(tensor, name, fn):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(tensor).__name__}")
    if tensor.device.type != "cpu":
        raise RuntimeError(f"{fn}(): the 'mpi' backend supports only CPU tensors, but '{name}' is on "
                           f"{tensor.device}")
    return tensor._data


def _wire_array(arr):
    """A C-contiguous array MPI can reduce: ``arr`` itself when possible, else a converted copy."""
    if arr.dtype == np.float16:
        return arr.astype(np.float32)
    if arr.dtype == np.bool_:
        return arr.astype(np.uint8)
    if not arr.flags.c_contiguous or not arr.flags.writeable:
        return np.ascontiguousarray(arr).copy()
    return arr


def _store(tensor, values) -> None:
    """Writes ``values`` into the tensor's memory and counts it as an in-place change."""
    arr = tensor._data
    if values is not arr:
        arr[...] = values
    tensor._version_counter.bump()


def _mpi_op(op, dtype):
    MPI = _mpi()
    if not isinstance(op, ReduceOp):
        raise ValueError(f"op must be a ReduceOp, got {op!r}")
    if dtype == np.bool_:  # PyTorch reduces bools logically: sum/max are "or", product/min are "and"
        return MPI.MAX if op in (ReduceOp.SUM, ReduceOp.MAX) else MPI.MIN
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}[op]


def _check_avg(op, arr, fn):
    if op is ReduceOp.AVG and arr.dtype.kind != "f":
        raise RuntimeError(f"{fn}(): ReduceOp.AVG needs a floating point tensor, got {arr.dtype}")


# -- collectives -------------------------------------------------------------------------------
def barrier(group=None, async_op=False, device_ids=None):
    """Blocks until every rank has called ``barrier``.

    Returns:
        A ``Work`` if ``async_op``, else None.
    """
    pg = _check_group(group)
    work = Work(pg, "barrier", _header("barrier"), lambda: pg._data_comm.Ibarrier())
    return pg.submit(work, async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across all ranks, in place: every rank ends with the result.

    Args:
        tensor (Tensor): input and output; same shape and dtype on every rank.
        op (ReduceOp): ``SUM`` (default), ``AVG``, ``PRODUCT``, ``MIN`` or ``MAX``.
        async_op (bool): return a ``Work`` at once instead of waiting.

    Returns:
        A ``Work`` (with ``wait()`` and ``is_completed()``) if ``async_op``, else None.

    Raises:
        RuntimeError: before ``init_process_group``; if the ranks' tensors differ in shape or
            dtype (every rank raises); if another rank does not join within the timeout.

    Example::
        >>> t = rg.tensor([float(dist.get_rank())])         # doctest: +SKIP
        >>> dist.all_reduce(t); t                            # doctest: +SKIP
        tensor([1.])
    """
    pg = _check_group(group)
    arr = _check_tensor(tensor, "tensor", "all_reduce")
    _check_avg(op, arr, "all_reduce")
    mpi_op = _mpi_op(op, arr.dtype)
    buf = _wire_array(arr)
    size = pg.size

    def start():
        return pg._data_comm.Iallreduce(_mpi().IN_PLACE, buf, op=mpi_op)

    def finish():
        if op is ReduceOp.AVG:
            np.divide(buf, size, out=buf)
        _store(tensor, buf)

    return pg.submit(Work(pg, "all_reduce", _header("all_reduce", arr, op), start, finish), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Copies ``tensor`` from rank ``src`` into ``tensor`` on every other rank.

    Args:
        tensor (Tensor): the data on ``src``, the destination elsewhere; same shape and dtype.
        src (int): the source rank.
        async_op (bool): return a ``Work`` at once instead of waiting.

    Returns:
        A ``Work`` if ``async_op``, else None.

    Raises:
        RuntimeError: as ``all_reduce``; ValueError for a ``src`` outside the group.
    """
    pg = _check_group(group)
    arr = _check_tensor(tensor, "tensor", "broadcast")
    if not 0 <= src < pg.size:
        raise ValueError(f"broadcast(): src={src} is not a rank of a group of {pg.size}")
    buf = _wire_array(arr)
    if pg.rank == src and buf is arr:  # the root's tensor may change while the Work is in flight
        buf = arr.copy()
    is_src = pg.rank == src

    def finish():
        if not is_src:
            _store(tensor, buf.astype(arr.dtype, copy=False))

    return pg.submit(Work(pg, "broadcast", _header("broadcast", arr, root=src),
                          lambda: pg._data_comm.Ibcast(buf, root=src), finish), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gathers ``tensor`` from every rank into ``tensor_list`` (entry ``i`` from rank ``i``).

    Args:
        tensor_list (list of Tensor): ``world_size`` tensors shaped like ``tensor``.
        tensor (Tensor): this rank's contribution; same shape and dtype on every rank.
        async_op (bool): return a ``Work`` at once instead of waiting.

    Returns:
        A ``Work`` if ``async_op``, else None.
    """
    pg = _check_group(group)
    arr = _check_tensor(tensor, "tensor", "all_gather")
    outs = _check_list(tensor_list, "tensor_list", arr, pg.size, "all_gather")
    send = _wire_array(arr)
    if send is arr:
        send = arr.copy()
    recv = np.empty((pg.size,) + send.shape, send.dtype)

    def finish():
        for i, t in enumerate(tensor_list):
            _store(t, recv[i].astype(outs[i].dtype, copy=False))

    return pg.submit(Work(pg, "all_gather", _header("all_gather", arr),
                          lambda: pg._data_comm.Iallgather(send, recv), finish), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input_list`` across ranks and gives rank ``i`` the reduction of entry ``i``.

    Args:
        output (Tensor): receives this rank's share.
        input_list (list of Tensor): ``world_size`` tensors shaped like ``output``.
        op (ReduceOp): as in ``all_reduce``.
        async_op (bool): return a ``Work`` at once instead of waiting.

    Returns:
        A ``Work`` if ``async_op``, else None.
    """
    pg = _check_group(group)
    arr = _check_tensor(output, "output", "reduce_scatter")
    ins = _check_list(input_list, "input_list", arr, pg.size, "reduce_scatter")
    _check_avg(op, arr, "reduce_scatter")
    mpi_op = _mpi_op(op, arr.dtype)
    send = np.ascontiguousarray(np.stack([_wire_array(a) for a in ins]))
    recv = np.empty(send.shape[1:], send.dtype)
    size = pg.size

    def finish():
        if op is ReduceOp.AVG:
            np.divide(recv, size, out=recv)
        _store(output, recv.astype(arr.dtype, copy=False))

    return pg.submit(Work(pg, "reduce_scatter", _header("reduce_scatter", arr, op),
                          lambda: pg._data_comm.Ireduce_scatter_block(send, recv, op=mpi_op), finish), async_op)


def _check_list(tensors, name, like, size, fn):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument '{name}' must be a list of Tensors, not {type(tensors).__name__}")
    if len(tensors) != size:
        raise ValueError(f"{fn}(): '{name}' must hold world_size ({size}) tensors, but holds {len(tensors)}")
    arrays = []
    for i, t in enumerate(tensors):
        a = _check_tensor(t, f"{name}[{i}]", fn)
        if a.shape != like.shape or a.dtype != like.dtype:
            raise ValueError(f"{fn}(): {name}[{i}] is {a.dtype} {list(a.shape)} but the tensor is "
                             f"{like.dtype} {list(like.shape)}")
        arrays.append(a)
    return arrays
