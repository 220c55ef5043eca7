"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about a tensor's autograd attributes as
Python sees them: ``.grad`` and its warning, ``grad_dtype``, ``shape``, ``dir()``, the legacy tensor types.
See test_pytorch_suite_basics.py for the method.
"""
import warnings

import pytest

from .test_pytorch_suite_basics import _first_sentence, same_in_both

torch = pytest.importorskip("torch")


def test_reading_grad_warns_only_on_a_non_leaf_that_does_not_retain_it():
    def scenario(lib):
        counts = []
        t = lib.empty(1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t.requires_grad_()
            t.grad
            counts.append(len(caught))
            t = t.clone()
            t.grad
            counts.append(len(caught))
            t.retain_grad()
            t.grad
            counts.append(len(caught))
        return counts, [(w.category.__name__, _first_sentence(w.message)) for w in caught]
    assert same_in_both(scenario)[1][0] == [0, 1, 1]


def test_volatile_is_always_false_and_warns_that_it_was_removed():
    def scenario(lib):
        v = lib.randn(3, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            before = v.volatile
            v.volatile = True
            after = v.volatile
        return before, after, [(w.category.__name__, _first_sentence(w.message)) for w in caught]
    assert same_in_both(scenario)[1][:2] == (False, False)
