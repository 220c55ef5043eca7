"""The NumPy backend: arrays in host memory (see Note [Reusing freed array memory] in _runtime.py).

Note [NumPy's floating-point warnings]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
PyTorch computes ``log(0)``, ``0 / 0`` or ``sqrt``'s derivative at 0 silently (-inf, nan, inf);
NumPy warns (``RuntimeWarning: divide by zero``) or, under the user's ``np.errstate``, raises.
retrograd's own computations therefore run with NumPy's floating-point errors ignored, without
touching the error state that the user's own NumPy code sees: NumPy keeps that state in a context
variable, and retrograd sets it to ``FP_QUIET`` (``token = FP_STATE.set(FP_QUIET)``) around an
op's forward and its dtype promotion (call_op, the generated fast calls and the C op call; a view
op computes nothing and skips it), and once around a whole backward pass (``Engine.thread_main``,
which the engine's own threads run too, and the compiled loop's pass), then resets it
(``FP_STATE.reset(token)``). So the user's ``np.log(0)`` still warns after retrograd ops, and
inside the user's ``np.errstate(divide="raise")`` retrograd's ops still compute as PyTorch does.
Hooks and custom Functions' backwards called during a pass run under the pass's state.

A ContextVar set and reset makes three objects (two mappings and a token), about a fifth of a small
op's call. So the C op call instead keeps, per thread, a quiet copy of the thread's context (the
same variables, NumPy's error state ``FP_QUIET``) and runs the forward inside it (``PyContext_Enter``
and ``Exit``, which make nothing). It reuses that copy while the thread's context is the one it
was built from: the same context object at the same count of context changes (every set, reset,
enter and exit counts), else a fresh copy that compares equal; otherwise it builds a new one. A
forward therefore sees every context variable the user set, as before. The cached copy keeps the
values it copied alive until the thread's next op call in a changed context. Where the quiet copy
is already entered further up the stack, the forward's own op calls find the state quiet already.
"""
import functools

import numpy as np

try:  # NumPy 2 keeps its error state in a context variable; ``np.errstate`` sets it the same way
    from numpy._core._multiarray_umath import _extobj_contextvar as FP_STATE
    from numpy._core._multiarray_umath import _make_extobj
    FP_QUIET = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - a NumPy without it: the thread's state, set and restored
    class _ThreadErrorState:
        """``np.seterr`` behind the two methods of a context variable that the Note above uses."""

        @staticmethod
        def set(value):
            return np.seterr(**value)

        @staticmethod
        def reset(token):
            np.seterr(**token)

    FP_STATE = _ThreadErrorState()
    FP_QUIET = {"all": "ignore"}


def quietly(fn, *args):
    """``fn(*args)`` with NumPy's floating-point errors ignored; the caller's state is restored after it."""
    token = FP_STATE.set(FP_QUIET)
    try:
        return fn(*args)
    finally:
        FP_STATE.reset(token)


def quiet_numpy(fn):
    """``fn`` made to run as ``quietly`` runs it."""
    @functools.wraps(fn)
    def quiet(*args):
        return quietly(fn, *args)
    return quiet


class NumpyBackend:
    """Host arrays through NumPy; also backs the ``fake`` test device, which has its own worker thread."""

    xp = np
    ndarray = np.ndarray

    def asarray(self, data, dtype=None):
        """Returns ``data`` as an ndarray of NumPy dtype ``dtype`` (no copy when it already is one)."""
        return np.asarray(data, dtype=dtype)

    def to_numpy(self, array):
        """Returns a NumPy array with the contents of ``array`` (the array itself on the host)."""
        return array

    def from_numpy(self, array):
        """Returns ``array`` as this backend's array (shared, on the host)."""
        return array

    def device_count(self) -> int:
        return 1
