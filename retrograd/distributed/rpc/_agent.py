"""The RPC agent: request/response messages over MPI point-to-point, on a communicator of its own.

Note [RPC over MPI]
~~~~~~~~~~~~~~~~~~~
Each worker has one listener thread that matches incoming messages with ``improbe`` (a matched
probe, so no other thread can steal the message) and sleeps with a growing back-off, up to
2 ms, while nothing arrives: it never busy-spins. Requests are handled on a thread pool, so a
handler may itself make RPCs (an RPC inside an RPC) or block in a backward pass without
stopping the listener; responses complete the caller's Future. Sends are non-blocking
(``isend``) and polled with a deadline, so a dead peer yields an error, not a hang. Tensors
and autograd metadata are packed by ``retrograd.distributed.autograd`` (see Note [Distributed
autograd]); everything else is pickled, functions by reference, so every worker must be able
to import them (as with PyTorch).
"""
from __future__ import annotations

import itertools
import threading
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["Agent", "RemoteError"]

REQUEST, RESPONSE = 1, 2


class RemoteError(RuntimeError):
    """An exception raised on another worker; the message names the worker and the original error."""


class Agent:
    """This process's RPC endpoint."""

    def __init__(self, name, comm, timeout, handler):
        # The handler is in place before the name exchange below: from then on other workers
        # may send requests, and the listener must be able to serve the first one.
        self.handler = handler  # handler(src, kind, payload) -> result
        self.comm = comm
        self.rank = comm.Get_rank()
        self.world_size = comm.Get_size()
        self.timeout = timeout
        self.names = comm.allgather(name)
        if len(set(self.names)) != len(self.names):
            raise RuntimeError(f"init_rpc: worker names must be unique, got {self.names}")
        self.name = name
        self._ids = itertools.count()
        self._pending = {}  # message id -> Future of the response
        self._lock = threading.Lock()
        self._sends = []  # in-flight isend requests
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="retrograd-rpc")
        self._listener = threading.Thread(target=self._listen, name="retrograd-rpc-listener", daemon=True)

    def start(self) -> None:
        """Starts serving requests; requests sent earlier wait in MPI until then."""
        self._listener.start()

    # -- sending ----------------------------------------------------------------------------------
    def request(self, dst: int, kind: str, payload) -> Future:
        """Sends a request to rank ``dst``; the Future gets the handler's result or its error."""
        fut = Future()
        msg_id = next(self._ids)
        with self._lock:
            self._pending[msg_id] = fut
        try:
            self._send((msg_id, kind, payload), dst, REQUEST)
        except BaseException as exc:  # noqa: BLE001 - a failed send fails the Future
            with self._lock:
                self._pending.pop(msg_id, None)
            fut.set_exception(exc)
        return fut

    def _send(self, obj, dst, tag) -> None:
        """Starts a non-blocking send and waits (with a deadline) for MPI to take the message."""
        req = self.comm.isend(obj, dst, tag)
        deadline = time.monotonic() + self.timeout
        pause = 1e-5
        while not req.Test():
            if time.monotonic() > deadline:
                req.Cancel()
                raise RuntimeError(f"RPC to worker '{self.names[dst]}' (rank {dst}) timed out after "
                                   f"{self.timeout:g} seconds while sending")
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)

    # -- receiving ----------------------------------------------------------------------------------
    def _listen(self) -> None:
        from mpi4py import MPI
        pause = 1e-5
        status = MPI.Status()
        while not self._stop.is_set():
            message = self.comm.improbe(MPI.ANY_SOURCE, MPI.ANY_TAG, status)
            if message is None:
                time.sleep(pause)
                pause = min(pause * 2, 2e-3)
                continue
            pause = 1e-5
            src, tag = status.Get_source(), status.Get_tag()
            obj = message.recv()
            if tag == REQUEST:
                self._pool.submit(self._serve, src, obj)
            elif tag == RESPONSE:
                msg_id, ok, value = obj
                with self._lock:
                    fut = self._pending.pop(msg_id, None)
                if fut is not None:
                    if ok:
                        fut.set_result(value)
                    else:
                        fut.set_exception(value)

    def _serve(self, src, obj) -> None:
        msg_id, kind, payload = obj
        try:
            response = (msg_id, True, self.handler(src, kind, payload))
        except BaseException as exc:  # noqa: BLE001 - the error travels back to the caller
            response = (msg_id, False, self.remote_error(exc))
        try:
            self._send(response, src, RESPONSE)
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result
            self._send((msg_id, False, self.remote_error(exc)), src, RESPONSE)

    def remote_error(self, exc) -> RemoteError:
        """``exc`` as it reaches the caller: a RemoteError naming this worker, with the remote traceback."""
        if isinstance(exc, RemoteError):
            return exc
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        notes = "".join(f"\n{n}" for n in getattr(exc, "__notes__", ()))
        return RemoteError(f"Error on worker '{self.name}' (rank {self.rank}): {type(exc).__name__}: {exc}"
                           f"{notes}\n\nRemote traceback:\n{trace}")

    def fail_pending(self, exc) -> None:
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for fut in pending:
            if not fut.done():
                fut.set_exception(exc)

    def close(self) -> None:
        self._stop.set()
        self._listener.join(timeout=5)
        self._pool.shutdown(wait=False)
        self.fail_pending(RuntimeError("RPC agent was shut down"))
