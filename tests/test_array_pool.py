"""Note [Large arrays apart]: large NumPy arrays in mappings of their own, kept and reused."""
import threading

import numpy as np
import pytest

from retrograd import _C, _runtime

pool = _C.array_pool
pytestmark = pytest.mark.skipif(pool is None or pool.stats() == {} or np._core.multiarray.get_handler_name()
                                != "retrograd_array_pool", reason="the array pool is not built or not installed")

BIG = _runtime.POOL_THRESHOLD // 4  # float32 elements of one threshold's worth


def test_large_arrays_come_from_the_pool_and_small_ones_from_numpys_handler():
    before = pool.stats()
    a = np.ones(BIG, np.float32)
    assert pool.stats()["live"] == before["live"] + 1
    small = np.ones(BIG // 2, np.float32)
    assert pool.stats()["live"] == before["live"] + 1
    assert np._core.multiarray.get_handler_name(a) == "retrograd_array_pool"
    assert a.ctypes.data % 64 == 0
    del a, small
    assert pool.stats()["live"] == before["live"]


def test_a_freed_mapping_serves_the_next_request_with_its_values_gone_where_zeros_are_asked():
    pool.release_cached()
    a = np.full(2 * BIG, 7.0, np.float32)
    del a
    mapped = pool.stats()["mapped"]
    b = np.zeros(BIG, np.float32)  # calloc on a reused mapping: zeroed
    c = np.empty(BIG, np.float32)  # the cached tail serves this one
    assert pool.stats()["mapped"] == mapped
    assert not b.any()
    c[:] = 3.0
    np.testing.assert_array_equal(b, 0.0)
    np.testing.assert_array_equal(c, 3.0)


def test_a_request_larger_than_every_cached_mapping_lengthens_one_and_returns_the_rest():
    pool.release_cached()
    parts = [np.ones(BIG, np.float32) for _ in range(3)]
    del parts
    assert pool.stats()["cached_bytes"] >= 3 * _runtime.POOL_THRESHOLD
    before = pool.stats()
    big = np.ones(8 * BIG, np.float32)
    after = pool.stats()
    assert after["cached"] == 0 and after["mapped"] == before["mapped"] + (after["resized"] == before["resized"])
    assert big.sum() == 8 * BIG
    # the pool never holds more pages than its live arrays held at once: live plus cached is now the one array
    assert 0 <= after["live_bytes"] - before["live_bytes"] - 8 * _runtime.POOL_THRESHOLD <= 4096  # and its offset


@pytest.mark.parametrize("start,end", [(2, 3), (3, 2), (2, 0.25), (0.25, 2)])
def test_resizing_in_place_keeps_the_values_across_the_threshold(start, end):
    a = np.arange(int(start * BIG), dtype=np.float32)
    keep = min(a.size, int(end * BIG))
    expected = a[:keep].copy()
    a.resize(int(end * BIG), refcheck=False)
    np.testing.assert_array_equal(a[:keep], expected)
    a[:] = 1.0
    assert a.sum() == a.size


def test_arrays_made_in_another_thread_use_numpys_handler_and_free_across_threads():
    made = {}

    def work():
        made["theirs"] = np.ones(BIG, np.float32)
        made["mine_freed"] = made.pop("mine").sum()

    made["mine"] = np.ones(BIG, np.float32)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert made["mine_freed"] == BIG
    assert np._core.multiarray.get_handler_name(made["theirs"]) == "default_allocator"


def test_large_arrays_start_at_different_places_of_their_pages():
    arrays = [np.empty(BIG, np.float32) for _ in range(4)]
    assert len({a.ctypes.data % 4096 for a in arrays}) == 4


def test_the_cache_stays_under_its_limit():
    pool.release_cached()
    arrays = [np.ones(4 * BIG, np.float32) for _ in range(80)]
    del arrays
    stats = pool.stats()
    assert stats["cached_bytes"] <= stats["cache_limit"]
    assert stats["cached"] <= 64
