"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about the grad modes as decorators and
context managers: classes, generators and coroutines, recursion. See test_pytorch_suite_basics.py for the method.
"""
import warnings

import pytest

from .test_pytorch_suite_basics import _first_sentence, same_in_both

torch = pytest.importorskip("torch")


def test_decorating_a_class_warns_and_runs_only_its_constructor_in_the_mode():
    def scenario(lib):
        seen = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @lib.no_grad()
            class Decorated:
                def __init__(self):
                    seen.append(("init", lib.is_grad_enabled()))

                def method(self):
                    seen.append(("method", lib.is_grad_enabled()))
            Decorated().method()
        seen.append([(w.category.__name__, _first_sentence(w.message)) for w in caught])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @lib.no_grad()
            def function():
                seen.append(("function", lib.is_grad_enabled()))

            class Methods:
                @lib.no_grad()
                def __init__(self):
                    seen.append(("init", lib.is_grad_enabled()))

                @lib.no_grad()
                def method(self):
                    seen.append(("method", lib.is_grad_enabled()))
            function()
            Methods().method()
        seen.append(len(caught))
        return seen
    assert same_in_both(scenario)[1][2] == [("FutureWarning", "Decorating classes is deprecated and will be "
                                                              "disabled in future versions.")]
