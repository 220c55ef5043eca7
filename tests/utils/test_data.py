"""retrograd.utils.data against torch.utils.data: datasets, samplers, collation and the DataLoader.

Shuffles use retrograd's random stream (NumPy's), so they are compared by their properties
(permutations, reproducibility, every rank alike); everything else is compared value by value.
"""
import collections
import os
import time
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.utils import data as rdata

torch = pytest.importorskip("torch")
from torch.utils import data as tdata  # noqa: E402


def _plain(value):
    """A batch from either library as nested Python values with its container types, for comparison."""
    if isinstance(value, (rg.Tensor, torch.Tensor)):
        arr = value.numpy() if isinstance(value, rg.Tensor) else value.numpy()
        return ("tensor", str(arr.dtype), arr.tolist())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, tuple(_plain(v) for v in value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_plain(v) for v in value])
    return value


def _both(make):
    """``make(lib, data_module)`` for retrograd and for torch."""
    return make(rg, rdata), make(torch, tdata)


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - compared as type and message
        return type(exc), str(exc).split("\n")[0]
    return None


# -- datasets -------------------------------------------------------------------------------------
def test_tensor_subset_concat_and_stack_datasets_index_as_pytorchs():
    def make(lib, d):
        ds = d.TensorDataset(lib.arange(6.0), lib.arange(6) * 10)
        sub = d.Subset(ds, [4, 0, 2])
        cat = d.ConcatDataset([sub, ds])
        stacked = d.StackDataset(a=lib.arange(3.0), b=lib.arange(3))
        return [len(ds), _plain(ds[1]), len(sub), _plain(sub[0]), len(cat), _plain(cat[3]), _plain(cat[-1]),
                cat.cumulative_sizes, _plain(stacked[2]), len(ds + ds)]
    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("case", ["size_mismatch", "empty_concat", "iterable_concat", "index_too_far", "abstract"])
def test_dataset_errors_are_pytorchs(case):
    def make(lib, d):
        class Stream(d.IterableDataset):
            def __iter__(self):
                return iter(range(3))
        return {"size_mismatch": lambda: d.TensorDataset(lib.ones(2), lib.ones(3)),
                "empty_concat": lambda: d.ConcatDataset([]),
                "iterable_concat": lambda: d.ConcatDataset([Stream()]),
                "index_too_far": lambda: d.ConcatDataset([d.TensorDataset(lib.ones(2))])[-3],
                "abstract": lambda: d.Dataset()[0]}[case]
    ours, theirs = _both(make)
    assert _error(ours) == _error(theirs) is not None


def test_chain_dataset_iterates_each_in_turn():
    def make(lib, d):
        class Stream(d.IterableDataset):
            def __init__(self, items):
                self.items = items

            def __iter__(self):
                return iter(self.items)

            def __len__(self):
                return len(self.items)
        chain = Stream([1, 2]) + Stream([3])
        return list(chain), len(chain)
    ours, theirs = _both(make)
    assert ours == theirs


def test_random_split_partitions_by_lengths_or_fractions_reproducibly():
    a, b, c = rdata.random_split(range(10), [0.5, 0.3, 0.2], generator=rg.Generator().manual_seed(3))
    assert (len(a), len(b), len(c)) == tuple(len(s) for s in tdata.random_split(range(10), [0.5, 0.3, 0.2]))
    assert sorted(a.indices + b.indices + c.indices) == list(range(10))
    again = rdata.random_split(range(10), [5, 3, 2], generator=rg.Generator().manual_seed(3))
    assert [s.indices for s in again] == [a.indices, b.indices, c.indices]
    assert [len(s) for s in rdata.random_split(range(7), [0.5, 0.5])] == \
        [len(s) for s in tdata.random_split(range(7), [0.5, 0.5])]  # the remainder goes round-robin
    assert _error(lambda: rdata.random_split(range(10), [3, 3])) == \
        _error(lambda: tdata.random_split(range(10), [3, 3]))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        rdata.random_split(range(2), [1.0, 0.0])


# -- samplers -------------------------------------------------------------------------------------
def test_sequential_and_batch_samplers_give_pytorchs_indices():
    for drop_last in (False, True):
        ours = list(rdata.BatchSampler(rdata.SequentialSampler(range(7)), 3, drop_last))
        theirs = list(tdata.BatchSampler(tdata.SequentialSampler(range(7)), 3, drop_last))
        assert ours == theirs
        assert len(rdata.BatchSampler(range(7), 3, drop_last)) == len(tdata.BatchSampler(range(7), 3, drop_last))


def test_random_samplers_permute_and_repeat_under_a_seed():
    rg.manual_seed(0)
    first = list(rdata.RandomSampler(range(20)))
    second = list(rdata.RandomSampler(range(20)))
    assert sorted(first) == list(range(20)) and first != second  # a new order each epoch
    rg.manual_seed(0)
    assert list(rdata.RandomSampler(range(20))) == first  # the same after the same seed
    drawn = list(rdata.RandomSampler(range(5), replacement=True, num_samples=70))
    assert len(drawn) == 70 and set(drawn) <= set(range(5))
    nine = list(rdata.RandomSampler(range(4), num_samples=9))  # two whole permutations, then part of a third
    assert len(nine) == 9 and sorted(nine[:4]) == sorted(nine[4:8]) == [0, 1, 2, 3] and nine[8] in range(4)
    sub = list(rdata.SubsetRandomSampler([10, 20, 30], generator=rg.Generator().manual_seed(1)))
    assert sorted(sub) == [10, 20, 30]
    weighted = list(rdata.WeightedRandomSampler([0.0, 1.0, 3.0], 200, generator=rg.Generator().manual_seed(2)))
    assert 0 not in weighted and weighted.count(2) > weighted.count(1)
    assert sorted(rdata.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]


@pytest.mark.parametrize("case", ["replacement", "num_samples", "batch_size", "drop_last", "weights_shape",
                                  "weights_count", "weights_replacement"])
def test_sampler_errors_are_pytorchs(case):
    def make(lib, d):
        return {"replacement": lambda: d.RandomSampler(range(3), replacement=1),
                "num_samples": lambda: d.RandomSampler(range(3), num_samples=0),
                "batch_size": lambda: d.BatchSampler(range(3), 0, False),
                "drop_last": lambda: d.BatchSampler(range(3), 2, 1),
                "weights_shape": lambda: d.WeightedRandomSampler([[1.0]], 2),
                "weights_count": lambda: d.WeightedRandomSampler([1.0], 0),
                "weights_replacement": lambda: d.WeightedRandomSampler([1.0], 2, replacement=1)}[case]
    ours, theirs = _both(make)
    assert _error(ours) == _error(theirs) is not None


def test_distributed_sampler_shares_the_indices_among_ranks_as_pytorchs():
    for n, replicas, drop_last in [(10, 3, False), (10, 3, True), (2, 3, False), (9, 3, False)]:
        for rank in range(replicas):
            ours = rdata.distributed.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
            theirs = tdata.distributed.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                                          drop_last=drop_last)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)
    shares = [list(rdata.distributed.DistributedSampler(range(12), 3, r, seed=5)) for r in range(3)]
    assert sorted(sum(shares, [])) == list(range(12))  # the ranks' permutations agree
    sampler = rdata.distributed.DistributedSampler(range(12), 3, 0, seed=5)
    sampler.set_epoch(1)
    assert list(sampler) != shares[0]
    assert _error(lambda: rdata.distributed.DistributedSampler(range(3), 2, 2)) == \
        _error(lambda: tdata.distributed.DistributedSampler(range(3), 2, 2))
    with pytest.raises(ValueError) as theirs:  # no process group: PyTorch's ValueError and message
        tdata.distributed.DistributedSampler(range(3))
    with pytest.raises(ValueError, match=str(theirs.value).split(",")[0]):
        rdata.distributed.DistributedSampler(range(3))


# -- collation ------------------------------------------------------------------------------------
Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("batch", [
    "tensors", "tuples", "dicts", "named", "numpy", "numpy_scalars", "floats", "bools", "strings", "nested_lists"])
def test_default_collate_gives_pytorchs_structure_and_dtypes(batch):
    def make(lib, d):
        samples = {"tensors": [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
                   "tuples": [(1, 2.0, "a"), (3, 4.0, "b")],
                   "dicts": [{"a": 1, "b": lib.ones(2)}, {"a": 2, "b": lib.zeros(2)}],
                   "named": [Point(1, 2), Point(3, 4)],
                   "numpy": [np.ones(2), np.zeros(2)],
                   "numpy_scalars": [np.float32(1), np.float32(2)],
                   "floats": [0.5, 1.5],
                   "bools": [True, False],
                   "strings": ["ab", "cd"],
                   "nested_lists": [[1, [2.0]], [3, [4.0]]]}[batch]
        return _plain(d.default_collate(samples))
    ours, theirs = _both(make)
    assert ours == theirs


def test_default_collate_and_convert_refuse_and_convert_as_pytorch():
    for bad in ([object()], [[1, 2], [1]], [np.array(["a", "b"])]):
        assert _error(lambda: rdata.default_collate(bad)) == _error(lambda: tdata.default_collate(bad)) is not None
    for value in (np.ones(2), [np.ones(1)], {"k": np.zeros(1)}, "s", 3):
        assert _plain(rdata.default_convert(value)) == _plain(tdata.default_convert(value))


# -- the DataLoader -------------------------------------------------------------------------------
def _loader_batches(lib, d, **kwargs):
    ds = d.TensorDataset(lib.arange(11.0), lib.arange(11))
    return [_plain(b) for b in d.DataLoader(ds, **kwargs)]


@pytest.mark.parametrize("kwargs", [dict(), dict(batch_size=4), dict(batch_size=4, drop_last=True),
                                    dict(batch_size=None), dict(batch_size=3, num_workers=2),
                                    dict(batch_size=2, num_workers=1, prefetch_factor=3),
                                    dict(batch_sampler=[[3, 1], [0], [10, 9, 8]]),
                                    dict(sampler=[5, 4, 3], batch_size=2),
                                    dict(batch_size=3, collate_fn=lambda samples: len(samples))])
def test_dataloader_batches_as_pytorchs(kwargs):
    ours, theirs = _both(lambda lib, d: _loader_batches(lib, d, **kwargs))
    assert ours == theirs


def test_dataloader_len_as_pytorchs():
    for kwargs in (dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=None)):
        ours, theirs = _both(lambda lib, d: len(d.DataLoader(d.TensorDataset(lib.arange(11.0)), **kwargs)))
        assert ours == theirs


class _Stream(rdata.IterableDataset):
    """0..n-1, split between workers by get_worker_info(), as PyTorch's documentation shows."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = rdata.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_iterable_dataset_is_batched_and_split_between_workers():
    assert [b.tolist() for b in rdata.DataLoader(_Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in rdata.DataLoader(_Stream(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    with_workers = [b.tolist() for b in rdata.DataLoader(_Stream(10), batch_size=2, num_workers=2)]
    assert sorted(sum(with_workers, [])) == list(range(10))
    assert len(rdata.DataLoader(_Stream(7), batch_size=3)) == 3


def test_shuffling_repeats_under_the_same_seed_with_and_without_workers():
    ds = rdata.TensorDataset(rg.arange(12))
    orders = []
    for workers in (0, 2, 0):
        rg.manual_seed(7)
        orders.append([b[0].tolist() for b in rdata.DataLoader(ds, batch_size=4, shuffle=True, num_workers=workers)])
    assert orders[0] == orders[1] == orders[2]
    assert sorted(sum(orders[0], [])) == list(range(12)) and sum(orders[0], []) != list(range(12))
    g = rg.Generator().manual_seed(1)
    by_generator = [b[0].tolist() for b in rdata.DataLoader(ds, batch_size=4, shuffle=True, generator=g)]
    assert sorted(sum(by_generator, [])) == list(range(12))


class _Seeds(rdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = rdata.get_worker_info()
        return (info.id, info.num_workers, os.getpid(), float(rg.rand(1).item()), float(np.random.rand()))


def test_workers_are_told_who_they_are_and_seeded_apart():
    calls = []
    rows = [tuple(t.tolist() if isinstance(t, rg.Tensor) else t for t in row) for row in
            rdata.DataLoader(_Seeds(), batch_size=None, num_workers=2, worker_init_fn=calls.append)]
    assert {r[0] for r in rows} == {0, 1} and {r[1] for r in rows} == {2}
    assert len({r[2] for r in rows}) == 2 and os.getpid() not in {r[2] for r in rows}
    first_draws = {r[0]: (r[3], r[4]) for r in rows[:2]}
    assert first_draws[0] != first_draws[1]  # each worker's generators seeded differently
    assert rdata.get_worker_info() is None


class _Fails(rdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("missing key")
        return i


class _TFails(tdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("missing key")
        return i


@pytest.mark.parametrize("workers", [0, 2])
def test_an_error_in_the_dataset_reaches_the_caller_as_in_pytorch(workers):
    with pytest.raises(KeyError) as ours:
        list(rdata.DataLoader(_Fails(), batch_size=1, num_workers=workers))
    with pytest.raises(KeyError) as theirs:
        list(tdata.DataLoader(_TFails(), batch_size=1, num_workers=workers))
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]
    if workers:
        assert "Caught KeyError in DataLoader worker process" in str(ours.value) and "missing key" in str(ours.value)


class _Slow(rdata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1)
        return i


def test_a_batch_that_takes_longer_than_the_timeout_raises():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.2 seconds"):
        list(rdata.DataLoader(_Slow(), num_workers=1, timeout=0.2))


def test_persistent_workers_serve_every_epoch():
    loader = rdata.DataLoader(rdata.TensorDataset(rg.arange(6)), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [[b[0].tolist() for b in loader] for _ in range(3)]
    assert epochs == [[[0, 1], [2, 3], [4, 5]]] * 3
    workers = loader._iterator._workers
    assert all(w.is_alive() for w in workers)
    loader._iterator._shutdown_workers()
    assert not any(w.is_alive() for w in workers)


@pytest.mark.parametrize("case", ["workers", "timeout", "prefetch", "persistent", "sampler_shuffle", "batch_sampler",
                                  "no_batch_drop_last", "iterable_shuffle", "iterable_sampler", "iterable_batch",
                                  "context", "setattr"])
def test_dataloader_argument_errors_are_pytorchs(case):
    def make(lib, d):
        ds = d.TensorDataset(lib.arange(4.0))

        class Stream(d.IterableDataset):
            def __iter__(self):
                return iter(range(3))

        def setattr_after_init():
            loader = d.DataLoader(ds)
            loader.batch_size = 3
        return {"workers": lambda: d.DataLoader(ds, num_workers=-1),
                "timeout": lambda: d.DataLoader(ds, timeout=-1),
                "prefetch": lambda: d.DataLoader(ds, prefetch_factor=2),
                "persistent": lambda: d.DataLoader(ds, persistent_workers=True),
                "sampler_shuffle": lambda: d.DataLoader(ds, sampler=[0, 1], shuffle=True),
                "batch_sampler": lambda: d.DataLoader(ds, batch_sampler=[[0]], batch_size=2),
                "no_batch_drop_last": lambda: d.DataLoader(ds, batch_size=None, drop_last=True),
                "iterable_shuffle": lambda: d.DataLoader(Stream(), shuffle=True),
                "iterable_sampler": lambda: d.DataLoader(Stream(), sampler=[1]),
                "iterable_batch": lambda: d.DataLoader(Stream(), batch_sampler=[[1]]),
                "context": lambda: d.DataLoader(ds, multiprocessing_context="fork"),
                "setattr": setattr_after_init}[case]
    ours, theirs = _both(make)
    assert _error(ours) == _error(theirs) is not None


def test_pin_memory_is_accepted_with_pytorchs_warning():
    def warned(lib, d):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            list(d.DataLoader(d.TensorDataset(lib.arange(2.0)), pin_memory=True))
        return [str(x.message) for x in w]
    ours, theirs = _both(warned)
    assert ours == theirs
