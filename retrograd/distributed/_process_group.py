"""The default process group: one MPI communicator, and the progress engine of its collectives.

Note [Collectives over MPI]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every collective is two non-blocking MPI operations on two communicators duplicated from
``COMM_WORLD``: first a small fixed-size *header* (operation, reduce op, root, dtype, shape) is
all-gathered on the header communicator, then, once every rank's header has arrived and all
agree, the data operation is started on the data communicator. Ranks whose tensors disagree
therefore all see the same headers and all raise the same error, instead of starting a data
operation with mismatched counts, which MPI would leave undefined (usually a hang).

MPI requires collectives on one communicator to start in the same order on every rank. Headers
start in call order at call time. Data operations start strictly in the order of the queue of
pending Works (a Work starts its data only after every earlier Work has started its own), so
the order is the same everywhere even though headers complete at different moments.

MPI makes progress only inside MPI calls, so something must keep calling ``Test``: the
progress thread of the group while asynchronous Works are pending (this is what lets gradient
all-reduces overlap the backward pass), and any thread blocked in ``Work.wait``. Both run
``_progress_once`` under one lock. Each Work has a deadline (the group's ``timeout``); a Work
still pending past it fails, and so does the whole group from then on, since a rank that died
or stopped calling collectives leaves the communicator unusable. No thread ever blocks in MPI,
so a dead peer produces an error instead of a hang. Under the launcher, the group also looks, a
few times a second while Works are pending, for peers that have ended with an error, and then
fails within about a second, naming them (Note [When a rank dies] in run.py).
"""
from __future__ import annotations

import collections
import enum
import threading
import time

import numpy as np

from ._rank_monitor import describe, failed, read_statuses

__all__ = ["ProcessGroupMPI", "Work", "ReduceOp"]


class ReduceOp(enum.Enum):
    """How ``all_reduce`` and ``reduce_scatter`` combine the tensors of all ranks."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


_HEADER_LEN = 16
_MAX_NDIM = _HEADER_LEN - 6
_OPCODES = {name: i + 1 for i, name in enumerate(
    ["barrier", "all_reduce", "broadcast", "all_gather", "reduce_scatter"])}
_DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"]
_REDOPS = list(ReduceOp)


def _header(opname, tensor=None, op=None, root=-1):
    """The int64 header that every rank compares before any data moves."""
    h = np.zeros(_HEADER_LEN, np.int64)
    h[0] = _OPCODES[opname]
    h[1] = -1 if op is None else _REDOPS.index(op)
    h[2] = root
    if tensor is not None:
        shape = tensor.shape
        h[3] = _DTYPES.index(np.dtype(tensor.dtype).name)
        h[4] = len(shape)
        h[5] = int(np.prod(shape, dtype=np.int64))
        if len(shape) <= _MAX_NDIM:
            h[6:6 + len(shape)] = shape
        else:  # rare: compare a digest of the shape
            h[6] = hash(tuple(shape)) & 0x7FFFFFFFFFFFFFFF
    else:
        h[3] = h[4] = -1
    return h


def _describe(h) -> str:
    """``float64 [2, 3]`` (or ``all_reduce`` when the operation itself differs)."""
    if h[3] < 0:
        return "no tensor"
    ndim = int(h[4])
    shape = list(h[6:6 + ndim]) if ndim <= _MAX_NDIM else f"<{ndim} dims>"
    return f"{_DTYPES[h[3]]} {[int(s) for s in shape] if isinstance(shape, list) else shape}"


def _mismatch_message(opname, headers) -> str | None:
    """None if every rank's header agrees, else a message naming what each rank passed."""
    first = headers[0]
    if all((h == first).all() for h in headers[1:]):
        return None
    names = {v: k for k, v in _OPCODES.items()}
    if len({int(h[0]) for h in headers}) > 1:
        calls = ", ".join(f"rank {r} called {names.get(int(h[0]), '?')}" for r, h in enumerate(headers))
        return f"{opname}: ranks called different collectives ({calls})"
    if len({int(h[1]) for h in headers}) > 1:
        ops = ", ".join(f"rank {r} passed {_REDOPS[h[1]]}" for r, h in enumerate(headers))
        return f"{opname}: ranks passed different reduce ops ({ops})"
    if len({int(h[2]) for h in headers}) > 1:
        roots = ", ".join(f"rank {r} passed src={int(h[2])}" for r, h in enumerate(headers))
        return f"{opname}: ranks passed different roots ({roots})"
    tensors = ", ".join(f"rank {r} has {_describe(h)}" for r, h in enumerate(headers))
    return f"{opname}: tensors differ across ranks in shape or dtype ({tensors})"


class Work:
    """A collective in flight, as returned with ``async_op=True``.

    ``wait()`` blocks until it finishes (and raises its error, if any); ``is_completed()``
    says whether it has finished, without blocking.
    """

    def __init__(self, pg, opname, header, start_data, finish=None):
        self._pg = pg
        self._opname = opname
        self._header = header
        self._start_data = start_data  # () -> MPI request; starts the data operation
        self._finish = finish  # () -> None; copies results into the user's tensors
        self._headers = np.empty((pg.size, _HEADER_LEN), np.int64)
        self._request = None
        self._data_started = False
        self._done = threading.Event()
        self._error = None
        self._deadline = time.monotonic() + pg.timeout

    def is_completed(self) -> bool:
        """True once the collective has finished (successfully or not); never blocks."""
        if not self._done.is_set():
            self._pg._progress_once(blocking=False)
        return self._done.is_set()

    def is_success(self) -> bool:
        return self._done.is_set() and self._error is None

    def exception(self):
        return self._error

    def wait(self, timeout=None) -> bool:
        """Blocks until the collective finishes; raises its error if it failed.

        Args:
            timeout (datetime.timedelta or float, optional): give up after this long with
                ``RuntimeError`` (the group's own timeout applies anyway).

        Returns:
            True.
        """
        limit = None if timeout is None else time.monotonic() + _seconds(timeout)
        pause = 2e-5
        while not self._done.is_set():
            if self._pg._progress_once(blocking=False):
                pause = 2e-5
            else:
                pause = min(pause * 2, 1e-3)
            if limit is not None and time.monotonic() > limit:
                raise RuntimeError(f"{self._opname}: Work.wait timed out after {_seconds(timeout)} seconds")
            self._done.wait(pause)
        if self._error is not None:
            raise self._error
        return True

    def _fail(self, exc) -> None:
        self._error = exc
        self._done.set()


class _Destroyed(RuntimeError):
    """The error of Works still pending when their group is destroyed."""


broken_groups = []  # one entry per group that broke in this process (read at exit)
_LOOK_EVERY = 0.25  # seconds between looks for dead peers while Works are pending
_GRACE = 1.0  # seconds a pending Work may still finish after a peer is seen dead


def dead_peers(rank) -> str:
    """``rank 1 (exit code 1), rank 2 (signal 9 (SIGKILL))``: the peers that ended with an error,
    as the launcher recorded them; "" outside the launcher or if none did."""
    return ", ".join(f"rank {r} ({describe(s)})" for r, s in sorted(read_statuses().items())
                     if r != rank and failed(s))


def duplicate(comm, timeout: float, what: str):
    """``comm.Dup()`` that gives up after ``timeout`` seconds: a dead peer would block it forever."""
    try:
        new, request = comm.Idup()
        deadline = time.monotonic() + timeout
        pause = 2e-5
        while not request.Test():
            if time.monotonic() > deadline:
                dead = dead_peers(comm.Get_rank())
                raise RuntimeError(f"{what} timed out after {timeout:g} seconds on rank {comm.Get_rank()}: "
                                   + (f"{dead} ended" if dead else "another rank died or did not call it too"))
            pause = min(pause * 2, 1e-3)
            time.sleep(pause)
    except RuntimeError:
        raise
    except Exception as exc:  # noqa: BLE001 - MPI's own error, after a peer failed
        raise RuntimeError(f"{what} failed on rank {comm.Get_rank()}: {exc}") from exc
    return new


def _seconds(timeout) -> float:
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


class ProcessGroupMPI:
    """All the ranks started by one ``mpiexec``. See Note [Collectives over MPI]."""

    def __init__(self, comm, timeout: float):
        self.size = comm.Get_size()
        self.rank = comm.Get_rank()
        self.timeout = timeout
        self._header_comm = duplicate(comm, timeout, "init_process_group")
        self._data_comm = duplicate(comm, timeout, "init_process_group")
        self._pending = collections.deque()  # Works in call order
        self._submit_lock = threading.Lock()  # keeps header starts in call order
        self._progress_lock = threading.Lock()
        self._wakeup = threading.Condition(threading.Lock())
        self._broken = None  # the error that broke the group
        self._closed = False
        self._thread = None
        self._next_look = 0.0  # when to look for dead peers next
        self.peer_failed = False  # a peer died: MPI_Finalize would wait for it forever

    # -- submission --------------------------------------------------------------------------
    def submit(self, work: Work, async_op: bool):
        """Starts ``work``'s header exchange; returns the Work, or waits for it when not async."""
        with self._submit_lock:
            if self._closed:
                raise RuntimeError("the process group has been destroyed; call init_process_group again")
            if self._broken is not None:
                raise RuntimeError(f"{work._opname}: the process group is unusable after an earlier error: "
                                   f"{self._broken}")
            work._header_request = self._header_comm.Iallgather(work._header, work._headers)
            with self._wakeup:
                self._pending.append(work)
                self._wakeup.notify()
        if async_op:
            self._ensure_thread()
            return work
        work.wait()
        return None

    # -- progress ----------------------------------------------------------------------------
    def _progress_once(self, blocking: bool) -> bool:
        """Advances every pending Work as far as it can go; True if anything moved."""
        if not self._progress_lock.acquire(blocking):
            return False
        try:
            return self._advance_all()
        finally:
            self._progress_lock.release()

    def _look_for_dead_peers(self, now) -> None:
        """Shortens the deadlines of pending Works once a peer is seen dead. See Note [When a rank dies]."""
        self._next_look = now + _LOOK_EVERY
        if self.peer_failed or not dead_peers(self.rank):
            return
        self.peer_failed = True
        for work in list(self._pending):
            work._deadline = min(work._deadline, now + _GRACE)

    def _advance_all(self) -> bool:
        moved = False
        now = time.monotonic()
        if self._pending and now >= self._next_look:
            self._look_for_dead_peers(now)
        data_order_open = True  # may a Work start its data? only if all earlier ones have
        for work in list(self._pending):
            if work._done.is_set():
                continue
            try:
                if not work._data_started:
                    if data_order_open and work._header_request.Test():
                        moved = True
                        message = _mismatch_message(work._opname, work._headers)
                        if message is not None:
                            work._fail(RuntimeError(message))
                            continue
                        work._request = work._start_data()
                        work._data_started = True
                    else:
                        data_order_open = False
                if work._data_started and work._request.Test():
                    moved = True
                    if work._finish is not None:
                        work._finish()
                    work._done.set()
                    continue
            except Exception as exc:  # noqa: BLE001 - the error belongs to the Work's caller
                dead = dead_peers(self.rank)
                if dead:  # MPI's own error for a dead peer: say who
                    self.peer_failed = True
                    exc = RuntimeError(f"{work._opname} failed on rank {self.rank}: {dead} ended ({exc})")
                work._fail(exc)
                continue
            if now > work._deadline:
                dead = dead_peers(self.rank)
                if dead:
                    self.peer_failed = True
                    self._break(RuntimeError(f"{work._opname} failed on rank {self.rank}: {dead} ended before "
                                             "the collective completed"))
                else:
                    self._break(RuntimeError(
                        f"{work._opname} timed out after {self.timeout:g} seconds on rank {self.rank}: another "
                        f"rank died or did not call the same collective (see init_process_group's timeout)"))
                return True
        with self._wakeup:
            while self._pending and self._pending[0]._done.is_set():
                self._pending.popleft()
        return moved

    def _break(self, exc) -> None:
        """Fails every pending Work: after a timeout the communicator cannot be trusted."""
        self._broken = exc
        if not isinstance(exc, _Destroyed):
            broken_groups.append(self.rank)  # MPI_Finalize may now wait forever
        with self._wakeup:
            pending, self._pending = list(self._pending), collections.deque()
        for work in pending:
            if not work._done.is_set():
                work._fail(exc)

    def _ensure_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._progress_main, name="retrograd-dist-progress",
                                            daemon=True)
            self._thread.start()

    def _progress_main(self) -> None:
        """Keeps asynchronous collectives moving while their callers compute."""
        pause = 2e-5
        while True:
            with self._wakeup:
                while not self._pending and not self._closed:
                    self._wakeup.wait()
                if self._closed:
                    return
            if self._progress_once(blocking=True):
                pause = 2e-5
            else:
                pause = min(pause * 2, 1e-3)
                time.sleep(pause)

    def close(self) -> None:
        with self._submit_lock:
            self._closed = True
            with self._wakeup:
                self._wakeup.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        healthy = self._broken is None
        self._break(_Destroyed("the process group was destroyed while this collective was pending"))
        if healthy:  # freeing is collective: after a dead peer it could block
            for comm in (self._header_comm, self._data_comm):
                try:
                    comm.Free()
                except Exception:  # noqa: BLE001 - freeing after a failed peer may itself fail
                    pass
