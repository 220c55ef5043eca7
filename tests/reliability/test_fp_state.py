"""The quiet floating-point state of an op's forward follows the user's context as it changes.

The C op call keeps one quiet context per thread and reuses it while the thread's context is unchanged (Note
[NumPy's floating-point warnings]); these cases change the context between op calls, from other threads and from
inside ``Context.run``, and check that no NumPy warning reaches the user and that the user's own state, and
every other context variable, stays the user's. Each runs with the C modules and without (``engine_loop``).
"""
import contextvars
import threading
import warnings

import numpy as np

import retrograd as rg

_mark = contextvars.ContextVar("_mark", default="unset")


def _log_of_zero_silently():
    """``rg.log(0)`` computed with no warning; returns its value."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = rg.log(rg.zeros(1)).item()
    assert [str(w.message) for w in caught] == []
    return out


def test_users_state_changed_between_op_calls_is_kept():
    for mode in ("raise", "warn", "ignore", "raise"):
        with np.errstate(divide=mode):
            assert _log_of_zero_silently() == float("-inf")
            assert np.geterr()["divide"] == mode
    assert np.geterr()["divide"] == "warn"


def test_users_own_context_variables_survive_op_calls():
    token = _mark.set("first")
    assert _log_of_zero_silently() == float("-inf")
    assert _mark.get() == "first"
    _mark.reset(token)
    assert _log_of_zero_silently() == float("-inf")
    assert _mark.get() == "unset"


def test_op_calls_inside_context_run_and_threads_are_quiet():
    def body():
        _mark.set("inside")
        assert _log_of_zero_silently() == float("-inf")
        with np.errstate(divide="raise"):
            assert _log_of_zero_silently() == float("-inf")
        return _mark.get()

    assert contextvars.copy_context().run(body) == "inside"
    results = []
    threads = [threading.Thread(target=lambda: results.append(body())) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["inside"] * 3
    assert _mark.get() == "unset"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.log(np.zeros(1))
    assert [w.category for w in caught] == [RuntimeWarning]
