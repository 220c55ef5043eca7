"""Scenarios of PyTorch's test/test_autograd.py (class TestAutograd) about the grad modes as decorators and
context managers: classes, generators and coroutines, recursion. See test_pytorch_suite_basics.py for the method.
"""
import warnings

import pytest

from errors_like_torch import first_sentence
from .test_pytorch_suite_basics import same_in_both

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
        seen.append([(w.category.__name__, first_sentence(w.message)) for w in caught])
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


def test_no_grad_given_a_function_and_enable_grad_without_parentheses_decorate_it():
    def scenario(lib):
        x, y = lib.ones(5, 5, requires_grad=True), lib.ones(5, 5) * 4
        z = lib.no_grad(lambda a, b: a + b)(x, y)

        @lib.enable_grad
        def doubler(t):
            return t * 2
        with lib.no_grad():
            doubled = doubler(x)
        return z.requires_grad, z.grad_fn, doubled.requires_grad
    assert same_in_both(scenario) == ("ok", (False, None, True))


def test_decorators_and_context_managers_calling_each_other_restore_the_callers_mode():
    def scenario(lib):
        seen = []

        @lib.enable_grad()
        def enabling(depth):
            seen.append(lib.is_grad_enabled())
            if depth > 0:
                disabling(depth - 1)
                seen.append(lib.is_grad_enabled())

        @lib.no_grad()
        def disabling(depth):
            seen.append(lib.is_grad_enabled())
            if depth > 0:
                enabling(depth - 1)
                seen.append(lib.is_grad_enabled())

        def enabling_block(depth):
            with lib.enable_grad():
                seen.append(lib.is_grad_enabled())
                if depth > 0:
                    disabling_block(depth - 1)
                    seen.append(lib.is_grad_enabled())

        def disabling_block(depth):
            with lib.no_grad():
                seen.append(lib.is_grad_enabled())
                if depth > 0:
                    enabling_block(depth - 1)
                    seen.append(lib.is_grad_enabled())
        for outer in (lib.enable_grad, lib.no_grad):
            with outer():
                enabling(4)
                seen.append(lib.is_grad_enabled())
                enabling_block(4)
                seen.append(lib.is_grad_enabled())
        return seen
    same_in_both(scenario)


class _Recoverable(Exception):
    pass


class _Unrecoverable(Exception):
    pass


class _Secondary(Exception):
    pass


@pytest.mark.parametrize("drive", ["send", "throw_recoverable", "throw_unrecoverable", "close"])
def test_a_decorated_coroutine_runs_in_its_mode_and_its_caller_in_its_own(drive):
    def scenario(lib):
        seen = []

        def make(mode):
            @mode()
            def coroutine(n=4):
                has_raised = False
                seen.append(("start", lib.is_grad_enabled()))
                for i in range(n):
                    try:
                        seen.append(("inside", lib.is_grad_enabled()))
                        received = yield (-i if has_raised else i)
                        seen.append(("received", received, lib.is_grad_enabled()))
                    except _Recoverable:
                        seen.append(("recovered", lib.is_grad_enabled()))
                        has_raised = True
                    except _Unrecoverable:
                        seen.append(("failing", lib.is_grad_enabled()))
                        raise _Secondary from None
                    except GeneratorExit:
                        seen.append(("closing", lib.is_grad_enabled()))
                        raise
                seen.append(("end", lib.is_grad_enabled()))
            return coroutine
        for outer, inner in ((lib.enable_grad, lib.no_grad), (lib.no_grad, lib.enable_grad)):
            with outer():
                coroutine = make(inner)()
                try:
                    if drive == "send":
                        value = None
                        while True:
                            value = coroutine.send(value)
                            seen.append(("caller", lib.is_grad_enabled()))
                    elif drive == "throw_recoverable":
                        seen.append(next(coroutine))
                        while True:
                            seen.append(coroutine.throw(_Recoverable))
                            seen.append(("caller", lib.is_grad_enabled()))
                    elif drive == "throw_unrecoverable":
                        seen.append(next(coroutine))
                        coroutine.throw(_Unrecoverable)
                    else:
                        next(coroutine)
                        next(coroutine)
                        coroutine.close()
                except StopIteration:
                    seen.append("stopped")
                except _Secondary:
                    seen.append("secondary")
                seen.append(("after", lib.is_grad_enabled()))
        return seen
    same_in_both(scenario)


@pytest.mark.parametrize("as_decorator", [True, False])
def test_set_grad_enabled_wrapping_a_function_leaves_the_callers_mode(as_decorator):
    def scenario(lib):
        seen = []
        with lib.enable_grad():
            if as_decorator:
                @lib.set_grad_enabled(False)
                def inner(x):
                    return x.sin()
            else:
                def inner(x):
                    return x.sin()
                switch = lib.set_grad_enabled(False)  # switches at once, as a function call
                seen.append(lib.is_grad_enabled())
                inner = switch(inner)  # wrapping gives the switch back
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled())
            seen.append(inner(lib.zeros(1, requires_grad=True)).requires_grad)
        return seen
    assert same_in_both(scenario) == ("ok", [True, False] if as_decorator else [False, True, True, False])
