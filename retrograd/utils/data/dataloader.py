"""DataLoader: batches of a dataset, in the main process or in worker processes, as PyTorch's.

Note [Loading in worker processes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
With ``num_workers > 0`` each epoch starts ``num_workers`` processes (once, with
``persistent_workers``), each with an index queue; all share one result queue. The main process
keeps ``prefetch_factor`` batches per worker in flight, sending batch indices round-robin, and
hands out batches in the sampler's order (``in_order``), holding early arrivals until their
turn. A worker whose IterableDataset is exhausted says so and gets no more work. An exception in
a worker comes back with its traceback and is raised in the main process; a worker that dies is
reported by pid, and ``timeout`` bounds the wait for a batch. The workers are daemons and stop
when the epoch ends, when the iterator is dropped, or when the main process goes away.
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import warnings

from ..._random import default_generator
from ._collate import default_collate, default_convert
from ._worker import ExceptionWrapper, IterableDatasetStopIteration, ResumeIteration, worker_loop
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler(Sampler):
    """None forever: the indices of an IterableDataset, whose fetcher ignores them."""

    def __iter__(self):
        while True:
            yield None


class _MapDatasetFetcher:
    """Fetches a batch (or a sample) of a map-style dataset by index."""

    iterable = False

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    """Fetches the next batch (or sample) of an IterableDataset; StopIteration once it is exhausted."""

    iterable = True

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _FetcherFactory:
    """Makes a worker's fetcher for its copy of the dataset (a picklable callable, for spawned workers)."""

    def __init__(self, iterable, auto_collation, collate_fn, drop_last):
        self.cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last

    def __call__(self, dataset):
        return self.cls(dataset, self.auto_collation, self.collate_fn, self.drop_last)


_START_METHODS = ("fork", "spawn", "forkserver")


class DataLoader:
    """Iterates over batches of a dataset, as ``torch.utils.data.DataLoader``.

    Args:
        dataset (Dataset): a map-style or iterable dataset.
        batch_size (int, optional): samples per batch (default 1); None turns batching off.
        shuffle (bool, optional): a new random order every epoch (map-style datasets).
        sampler (Sampler or iterable, optional): the order of the indices (not with ``shuffle``).
        batch_sampler (Sampler or iterable, optional): lists of indices, one per batch (alone).
        num_workers (int): worker processes (0: load in the main process). See Note [Loading in
            worker processes].
        collate_fn (callable, optional): turns a list of samples into a batch (``default_collate``).
        pin_memory (bool): accepted; there is no pinned memory without an accelerator.
        drop_last (bool): drop the last, incomplete batch.
        timeout (float): seconds to wait for a worker's batch (0: forever).
        worker_init_fn (callable, optional): called with each worker's id in the worker.
        multiprocessing_context (str or context, optional): how workers are started.
        generator (Generator, optional): the source of the shuffle's and the workers' seeds.
        prefetch_factor (int, optional): batches in flight per worker (default 2 with workers).
        persistent_workers (bool): keep the workers from one epoch to the next.
        in_order (bool): hand out batches in the sampler's order (else as they arrive).

    Example::
        >>> import retrograd as rg
        >>> from retrograd.utils.data import DataLoader, TensorDataset
        >>> loader = DataLoader(TensorDataset(rg.arange(5.)), batch_size=2)
        >>> [batch.tolist() for (batch,) in loader]
        [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
                             "enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            self._dataset_kind = "map"
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self.__initialized = True

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                if context not in _START_METHODS:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{_START_METHODS!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
        self.__multiprocessing_context = context

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _fetcher_factory(self) -> _FetcherFactory:
        return _FetcherFactory(self._dataset_kind == "iterable", self._auto_collation, self.collate_fn,
                               self.drop_last)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = _MultiProcessingDataLoaderIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __len__(self) -> int:
        if self._dataset_kind == "iterable":
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._index_sampler = loader._index_sampler
        self._num_yielded = 0
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=3)
        self._sampler_iter = iter(self._index_sampler)
        generator = loader.generator if loader.generator is not None else default_generator
        self._base_seed = int(generator.np.integers(0, 2 ** 62))

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Loads each batch in the main process, when it is asked for."""

    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = loader._fetcher_factory()(loader.dataset)

    def __next__(self):
        index = next(self._sampler_iter)  # StopIteration ends the epoch
        data = self._fetcher.fetch(index)
        self._num_yielded += 1
        return data


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Loads batches in worker processes: See Note [Loading in worker processes]."""

    def __init__(self, loader):
        super().__init__(loader)
        _check_worker_count(loader.num_workers)
        context = loader.multiprocessing_context or multiprocessing
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        self._result_queue = context.Queue()
        self._done_event = context.Event()
        self._index_queues = []
        self._workers = []
        factory = loader._fetcher_factory()
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            worker = context.Process(target=worker_loop, daemon=True,
                                     args=(factory, loader.dataset, index_queue, self._result_queue, self._done_event,
                                           self._base_seed, loader.worker_init_fn, worker_id, self._num_workers))
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._shut_down = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._send_idx = 0  # the next index to send out
        self._rcvd_idx = 0  # the next index to hand out
        self._task_info = {}  # send index -> (worker,) while out, (worker, data) once arrived early
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: each answers the resume before the new epoch's work
            for index_queue in self._index_queues:
                index_queue.put(ResumeIteration())
            waiting = self._num_workers
            while waiting:
                answer, _ = self._get_data()
                if isinstance(answer, ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker that still has data
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._send_idx += 1

    def _try_get_data(self, timeout):
        try:
            return True, self._result_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [w for w, alive in zip(self._workers, self._workers_status, strict=True) if alive and
                      not w.is_alive()]
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data(5.0)
            if ok:
                return data

    def __next__(self):
        while True:
            # skip the indices of workers that have ended (their batches will not come)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:  # it arrived early and waited for its turn
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            idx, data = self._get_data()
            if isinstance(data, IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._task_info.pop(idx, None)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx or not self._in_order:
                self._task_info.pop(idx, None)
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process(data)
            self._task_info[idx] += (data,)

    def _process(self, data):
        self._try_put_index()
        self._num_yielded += 1
        if isinstance(data, ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        return data

    def _shutdown_workers(self):
        if self._shut_down:
            return
        self._shut_down = True
        self._done_event.set()
        for worker, index_queue in zip(self._workers, self._index_queues, strict=True):
            if worker.is_alive():
                index_queue.put(None)
        for worker in self._workers:
            worker.join(timeout=5.0)
            if worker.is_alive():
                worker.terminate()
        for index_queue in self._index_queues:
            index_queue.cancel_join_thread()
            index_queue.close()
        self._result_queue.cancel_join_thread()
        self._result_queue.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001 - at interpreter exit the modules may be gone
            pass


def _check_worker_count(num_workers: int) -> None:
    """Warns, as PyTorch does, when more workers are asked for than this machine has cores for."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count()
    if cpus is not None and num_workers > cpus:
        warnings.warn(f"This DataLoader will create {num_workers} worker processes in total. Our suggested max number "
                      f"of worker in current system is {cpus}, which is smaller than what this DataLoader is going "
                      "to create. Please be aware that excessive worker creation might get DataLoader running slow "
                      "or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
                      stacklevel=4)
