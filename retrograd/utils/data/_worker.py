"""What runs in a DataLoader's worker processes, and what they send back.

Each worker seeds its random generators (retrograd's, Python's and NumPy's global one) from the
loader's base seed plus its id, records ``get_worker_info()``, runs ``worker_init_fn``, then
fetches the batches whose indices arrive on its index queue and puts ``(send index, batch)`` on
the result queue, until it gets None. An exception is sent back wrapped, with its traceback,
and re-raised in the main process with PyTorch's "Caught ... in DataLoader worker process N."
"""
from __future__ import annotations

import os
import queue
import random
import sys
import traceback

import numpy as np

from ..._random import manual_seed

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

_worker_info = None
_POLL_SECONDS = 5.0  # how often an idle worker checks that its parent is still alive


class WorkerInfo:
    """Who this worker is: ``id``, ``num_workers``, ``seed`` and its copy of the ``dataset``."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        return f"{self.__class__.__name__}({', '.join(f'{k}={getattr(self, k)}' for k in self.__keys)})"


def get_worker_info():
    """In a DataLoader worker process, its ``WorkerInfo``; in the main process, None.

    Use it in an IterableDataset's ``__iter__`` (or in ``worker_init_fn``) to give each worker its
    share of the stream.
    """
    return _worker_info


class _KeyErrorMessage(str):
    """A KeyError's message shown as it is (KeyError would show its repr, newlines escaped)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info=None, where: str = "in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raises the exception again, of its type, its message telling where it came from."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type that takes no message
            raise RuntimeError(msg) from None
        raise exception


class IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """Sent to a persistent worker at a new epoch; it answers with the same object."""


def _numpy_seed(base_seed: int, worker_id: int) -> int:
    """A NumPy seed of 32 bits for this worker, different for each worker of one base seed."""
    return int(np.random.SeedSequence([base_seed % (2 ** 63), worker_id]).generate_state(1)[0])


def worker_loop(fetcher_factory, dataset, index_queue, data_queue, done_event, base_seed, init_fn, worker_id,
                num_workers):
    """The body of one worker process (see the module docstring)."""
    global _worker_info
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_numpy_seed(base_seed, worker_id))
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"
    init_error = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = fetcher_factory(dataset)
    except Exception:  # noqa: BLE001 - sent to the main process, raised at the first batch
        init_error = ExceptionWrapper(where=where)
    parent = os.getppid()
    exhausted = False
    while True:
        try:
            request = index_queue.get(timeout=_POLL_SECONDS)
        except queue.Empty:
            if os.getppid() != parent:  # the main process died: nobody will read what we send
                break
            continue
        if isinstance(request, ResumeIteration):
            data_queue.put((request, None))
            exhausted = False
            if init_error is None:
                fetcher = fetcher_factory(dataset)
            continue
        if request is None:  # shut down
            break
        if done_event.is_set() or exhausted:
            continue
        idx, index = request
        if init_error is not None:
            data, init_error = init_error, None
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                if not fetcher.iterable:  # a map-style dataset's own StopIteration is an error like any other
                    data = ExceptionWrapper(where=where)
                else:
                    data = IterableDatasetStopIteration(worker_id)
                    exhausted = True
            except Exception:  # noqa: BLE001 - sent to the main process and raised there
                data = ExceptionWrapper(where=where)
        data_queue.put((idx, data))
        del data, idx, index
    data_queue.cancel_join_thread()
