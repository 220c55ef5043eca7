"""retrograd.distributed.rpc: remote calls between the processes of one ``mpiexec``, as ``torch.distributed.rpc``.

Every process calls ``init_rpc(name, rank, world_size)``; then any worker may run a function
on another with ``rpc_sync`` / ``rpc_async``, or create a value there with ``remote`` and
refer to it through an ``RRef``. ``shutdown()`` waits for every worker. Tensors that require
grad and cross an RPC inside ``retrograd.distributed.autograd.context()`` are recorded for
distributed backward. See Note [RPC over MPI] in ``_agent.py``.
"""
from __future__ import annotations

import collections
import itertools
import threading
import time

from .. import autograd as dist_autograd
from .._collectives import _mpi
from .._current_agent import current_agent, get_agent as _get_agent, set_agent
from ._agent import Agent, RemoteError

__all__ = ["init_rpc", "shutdown", "rpc_sync", "rpc_async", "remote", "RRef", "WorkerInfo", "get_worker_info",
           "RemoteError", "DEFAULT_RPC_TIMEOUT_SEC"]

DEFAULT_RPC_TIMEOUT_SEC = 60.0
WorkerInfo = collections.namedtuple("WorkerInfo", ["name", "id"])
_rref_ids = itertools.count()
_owned = {}  # rref id -> ("ok", value) | ("err", exception)
_owned_cond = threading.Condition()


def init_rpc(name, backend=None, rank=-1, world_size=None, rpc_backend_options=None, timeout=None):
    """Starts this worker's RPC agent; every process of the ``mpiexec`` must call it.

    Args:
        name (str): a unique name for this worker.
        rank (int): this worker's rank; if given, must equal its MPI rank.
        world_size (int): if given, must equal the number of processes.
        timeout (float, optional): seconds an RPC may take before failing (default 60).

    Raises:
        RuntimeError: called twice, or names are not unique.
        ValueError: rank or world_size contradict MPI's.
    """
    MPI = _mpi()
    if current_agent() is not None:
        raise RuntimeError("RPC is already initialized")
    world = MPI.COMM_WORLD
    if world_size is not None and world_size != world.Get_size():
        raise ValueError(f"world_size={world_size} but mpiexec started {world.Get_size()} processes")
    if rank not in (-1, None) and rank != world.Get_rank():
        raise ValueError(f"rank={rank} but this process is MPI rank {world.Get_rank()}")
    dist_autograd._reset_worker(world.Get_rank())  # before any request can arrive
    agent = Agent(str(name), world.Dup(), DEFAULT_RPC_TIMEOUT_SEC if timeout is None else float(timeout),
                  _handle)
    set_agent(agent)
    agent.start()  # only now: a request's handler may look up the agent


def shutdown(graceful=True, timeout=0):
    """Stops the agent; with ``graceful``, first waits until every worker has called ``shutdown``.

    While waiting, this worker keeps serving the others' requests.
    """
    agent = _get_agent()
    if graceful:
        req = agent.comm.Ibarrier()
        deadline = time.monotonic() + agent.timeout
        while not req.Test():
            if time.monotonic() > deadline:
                raise RuntimeError(f"rpc.shutdown: not every worker reached shutdown within {agent.timeout:g} "
                                   f"seconds")
            time.sleep(1e-3)
    agent.close()
    set_agent(None)
    with _owned_cond:
        _owned.clear()


def get_worker_info(worker_name=None) -> WorkerInfo:
    """The ``WorkerInfo(name, id)`` of ``worker_name``, or of this worker."""
    agent = _get_agent()
    if worker_name is None:
        return WorkerInfo(agent.name, agent.rank)
    return WorkerInfo(worker_name, _rank_of(worker_name))


def _rank_of(to) -> int:
    agent = _get_agent()
    if isinstance(to, WorkerInfo):
        return to.id
    if isinstance(to, int):
        if not 0 <= to < agent.world_size:
            raise ValueError(f"no worker with rank {to}")
        return to
    try:
        return agent.names.index(to)
    except ValueError:
        raise ValueError(f"Unknown destination worker {to!r}; workers are {agent.names}") from None


def _wait(fut, timeout):
    limit = _get_agent().timeout if timeout is None or timeout < 0 else timeout
    try:
        return fut.result(timeout=limit if limit > 0 else None)
    except TimeoutError:
        raise RuntimeError(f"RPC ran longer than the timeout of {limit:g} seconds") from None


# -- calls ------------------------------------------------------------------------------------------
def rpc_async(to, func, args=None, kwargs=None, timeout=-1.0):
    """Runs ``func(*args, **kwargs)`` on worker ``to``; returns a Future of its result.

    Args:
        to (str, int or WorkerInfo): the destination worker.
        func (callable): a function every worker can import (pickled by reference).
        args (tuple), kwargs (dict): its arguments; tensors are copied.

    Returns:
        concurrent.futures.Future: ``wait()`` (or ``result()``) gives the result, or raises
        ``RemoteError`` naming the worker where ``func`` failed.
    """
    dst = _rank_of(to)
    wire, meta = dist_autograd._pack((tuple(args or ()), dict(kwargs or {})), dst)
    inner = _get_agent().request(dst, "call", (func, wire, meta))
    return _Future(dist_autograd._unpacking(inner, dst), timeout)


def rpc_sync(to, func, args=None, kwargs=None, timeout=-1.0):
    """Runs ``func(*args, **kwargs)`` on worker ``to`` and returns its result (see ``rpc_async``).

    Example::
        >>> rpc.rpc_sync("worker1", operator.add, args=(rg.ones(2), 1))    # doctest: +SKIP
        tensor([2., 2.])
    """
    return rpc_async(to, func, args, kwargs, timeout).wait()


class _Future:
    """A Future with PyTorch's ``wait()``, plus ``result``/``done``/``then``-less basics."""

    def __init__(self, fut, timeout=-1.0):
        self._fut = fut
        self._timeout = timeout

    def wait(self):
        return _wait(self._fut, self._timeout)

    result = wait

    def done(self) -> bool:
        return self._fut.done()

    def add_done_callback(self, fn):
        self._fut.add_done_callback(lambda _: fn(self))


def remote(to, func, args=None, kwargs=None, timeout=-1.0):
    """Runs ``func(*args, **kwargs)`` on worker ``to`` and keeps the result there; returns an ``RRef``."""
    agent = _get_agent()
    dst = _rank_of(to)
    rref = RRef._make(dst, (agent.rank, next(_rref_ids)))
    wire, meta = dist_autograd._pack((tuple(args or ()), dict(kwargs or {})), dst)
    rref._created = agent.request(dst, "remote", (rref._id, func, wire, meta))
    return rref


class RRef:
    """A reference to a value that lives on one worker (its owner).

    ``RRef(value)`` makes this worker the owner of ``value``; ``rpc.remote`` makes one on
    another worker. ``to_here()`` copies the value to the caller; ``local_value()`` returns it
    on the owner. An RRef may be passed in RPC arguments.
    """

    def __init__(self, value):
        agent = _get_agent()
        self._owner = agent.rank
        self._id = (agent.rank, next(_rref_ids))
        self._created = None
        _store(self._id, "ok", value)

    @classmethod
    def _make(cls, owner, rref_id):
        rref = object.__new__(cls)
        rref._owner, rref._id, rref._created = owner, rref_id, None
        return rref

    def __reduce__(self):
        return RRef._make, (self._owner, self._id)

    def owner(self) -> WorkerInfo:
        return WorkerInfo(_get_agent().names[self._owner], self._owner)

    def owner_name(self) -> str:
        return self.owner().name

    def is_owner(self) -> bool:
        return self._owner == _get_agent().rank

    def confirmed_by_owner(self) -> bool:
        return self._created is None or self._created.done()

    def local_value(self):
        """The value, on its owner; RuntimeError elsewhere."""
        if not self.is_owner():
            raise RuntimeError(f"Calling local_value() on an RRef owned by worker '{self.owner_name()}' from "
                               f"'{_get_agent().name}': use to_here()")
        return _lookup(self._id, _get_agent().timeout)

    def to_here(self, timeout=-1.0):
        """Copies the value to this worker (recorded for distributed autograd inside a context)."""
        if self._created is not None:
            _wait(self._created, timeout)  # raises the error the remote call raised, if any
        if self.is_owner():
            return self.local_value()
        wire, meta = dist_autograd._pack((), self._owner)
        inner = _get_agent().request(self._owner, "fetch", (self._id, meta))
        return _wait(dist_autograd._unpacking(inner, self._owner), timeout)

    def __repr__(self):
        return f"RRef(owner={self._owner}, id={self._id})"


def _store(rref_id, status, value) -> None:
    with _owned_cond:
        _owned[rref_id] = (status, value)
        _owned_cond.notify_all()


def _lookup(rref_id, timeout):
    with _owned_cond:
        if not _owned_cond.wait_for(lambda: rref_id in _owned, timeout):
            raise RuntimeError(f"RRef {rref_id} was not created within {timeout:g} seconds")
        status, value = _owned[rref_id]
    if status == "err":
        raise value
    return value


# -- serving ----------------------------------------------------------------------------------------
def _handle(src, kind, payload):
    """Runs one request from rank ``src`` on a pool thread; returns the response payload."""
    if kind == "call":
        func, wire, meta = payload
        with dist_autograd._received(meta, src):
            args, kwargs = dist_autograd._unpack(wire, meta, src)
            result = func(*args, **kwargs)
            return dist_autograd._pack(result, src)
    if kind == "remote":
        rref_id, func, wire, meta = payload
        try:
            with dist_autograd._received(meta, src):
                args, kwargs = dist_autograd._unpack(wire, meta, src)
                value = func(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - kept for to_here, and sent back
            _store(rref_id, "err", _get_agent().remote_error(exc))
            raise
        _store(rref_id, "ok", value)
        return None
    if kind == "fetch":
        rref_id, meta = payload
        with dist_autograd._received(meta, src):
            return dist_autograd._pack(_lookup(rref_id, _get_agent().timeout), src)
    return dist_autograd._handle(src, kind, payload)
