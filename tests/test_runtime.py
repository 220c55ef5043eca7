"""The process-wide settings retrograd makes at import: collector thresholds and freed memory reuse."""
import gc

import pytest

from retrograd._runtime import reuse_freed_memory, tune_collector


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_collector_tuning_raises_only_cpythons_default_full_collection_threshold(thresholds, monkeypatch):
    monkeypatch.delenv("RETROGRAD_GC_TUNING", raising=False)
    gc.set_threshold(700, 10, 10)
    assert tune_collector() is True
    assert gc.get_threshold() == (700, 10, 100)


def test_collector_tuning_leaves_a_programs_own_thresholds(thresholds, monkeypatch):
    monkeypatch.delenv("RETROGRAD_GC_TUNING", raising=False)
    gc.set_threshold(5000, 20, 30)
    assert tune_collector() is False
    assert gc.get_threshold() == (5000, 20, 30)


def test_collector_tuning_can_be_switched_off(thresholds, monkeypatch):
    monkeypatch.setenv("RETROGRAD_GC_TUNING", "0")
    gc.set_threshold(700, 10, 10)
    assert tune_collector() is False
    assert gc.get_threshold() == (700, 10, 10)


def test_malloc_tuning_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("RETROGRAD_MALLOC_TUNING", "0")
    assert reuse_freed_memory() is False
