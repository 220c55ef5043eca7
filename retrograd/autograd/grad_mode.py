"""Grad modes: thread-local switches for recording the autograd graph.

Each mode is a context manager and a decorator (generators keep their own mode across yields).

Note [Inference tensors]
~~~~~~~~~~~~~~~~~~~~~~~~
As in PyTorch, every tensor made while inference mode is on is an inference tensor (a factory's
result, an op's result), except a view of a normal tensor, which stays a normal view; a view or
a detached alias of an inference tensor is one too, in any mode, and is not tracked as a view.
An inference tensor has no version counter: its ``_vc`` is ``_tensor.INFERENCE_COUNTER``, whose
version cannot be read (PyTorch's error). Nothing is recorded in inference mode, even inside
``enable_grad``; outside it, an inference tensor cannot be modified in place nor saved for
backward. ``inference_mode(False)`` turns inference mode off and grad mode on, as PyTorch's.
One odd case, as in PyTorch: an inference tensor detached (``detach()``, ``.data``) outside
inference mode gets a fresh counter of its own, an ``InferenceVersionCounter`` (the type marks
an inference tensor), so it may be modified in place there, and counts those changes.

Whether a tensor is made in inference mode is asked where it is made (``Tensor._make``, the op
call), and that happens for every tensor, so the question is cheap: ``census.threads`` counts
the threads in inference mode, and only where it is not 0 is this thread's ``state.inference``
read (a thread-local attribute costs about as much as the rest of making a tensor). The C op
call reads it the same way (in inference mode it makes inference tensors and records nothing),
and declines a call where an inference tensor argument meets one that requires grad.

Outside inference mode, an op whose tensor arguments are all inference tensors records nothing,
even where one requires grad, as in PyTorch (inference tensors lack its Autograd dispatch key):
its result is a normal tensor (a view: an inference tensor) that does not require grad. With
one normal tensor among them, the op is recorded, and saving an inference tensor raises. The op
call asks only where it would record and ``census.made`` says an inference tensor may exist
(``all_inference`` in ops/_call.py), so a process that never enters inference mode pays one
attribute read per recorded call. An in-place op on an inference leaf that requires grad, with
grad mode on, raises the leaf error first, as PyTorch's.

Note [Multithreading switch]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``set_multithreading_enabled`` is a per-thread setting, as PyTorch's (its AutogradState is
thread-local): ``state.multithreading``. A GraphTask takes it from the thread that starts the pass
(``GraphTask.multithreading``), and every node of that pass reads it there, on whatever thread it
runs, as PyTorch's worker threads run a pass's nodes under the thread-local state of its caller.
With it off, a task for another device goes to the caller's CPU queue instead of the device's
worker thread, so the whole pass runs on the calling thread. The compiled loop reads the same
GraphTask field.
"""
from __future__ import annotations

import functools
import inspect
import threading
import warnings

import numpy as np

from .._tensor import Tensor

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled"]


class _State(threading.local):
    """Per-thread autograd switches; class attributes are each new thread's defaults."""
    grad_enabled = True
    inference = False
    multithreading = True  # device work on the devices' worker threads: See Note [Multithreading switch]
    view_replay = False  # a stale view's history replays its view ops, or (False) is one as_strided of its base


state = _State()


class InferenceCensus:
    """How many threads are in inference mode; while 0, no tensor is made in it. See Note [Inference tensors]."""

    __slots__ = ("threads", "state", "made")

    def __init__(self):
        self.threads = 0
        self.state = state
        self.made = False  # whether inference mode was ever on, so that an inference tensor may exist


census = InferenceCensus()
_census_lock = threading.Lock()
Tensor._modes = census  # what Tensor._make reads (the modes live above the tensor)


def inference_now() -> bool:
    """Whether a tensor made now on this thread is made in inference mode (cheap where no thread is in it)."""
    return census.threads != 0 and state.inference


def recording() -> bool:
    """Whether an op run now on this thread records the graph: grad mode on, inference mode off."""
    return state.grad_enabled and not (census.threads != 0 and state.inference)


def _set_inference(on: bool) -> None:
    """Sets this thread's inference mode, keeping ``census`` counting the threads in it."""
    if on == state.inference:
        return
    if on:
        with _census_lock:
            census.threads += 1
            census.made = True
        state.inference = True
    else:
        state.inference = False
        with _census_lock:
            census.threads -= 1


def is_grad_enabled() -> bool:
    """Returns True if grad mode is currently enabled on this thread."""
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Returns True if inference mode is currently enabled on this thread."""
    return state.inference


def is_multithreading_enabled() -> bool:
    """Returns True if backward passes started on this thread run device work on the devices' worker threads.

    See Note [Multithreading switch].

    Example::
        >>> import retrograd as rg
        >>> with rg.autograd.set_multithreading_enabled(False):
        ...     rg.autograd.is_multithreading_enabled()
        False
    """
    return state.multithreading


class _DecoratorContextManager:
    """Base for modes usable as ``with mode():`` and ``@mode()`` (also bare ``@mode``)."""

    def __call__(self, func):
        if inspect.isclass(func):
            # As in PyTorch: deprecated, but still honoured by running the constructor under the mode
            # (the class's other methods are left as they are).
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. "
                          "Decorate the functions or methods instead; to keep what this does now, "
                          "decorate the class's `__init__` alone.", FutureWarning, stacklevel=2)
            cls = func
            func = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorate_context(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return decorate_context

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator_context(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:  # forward throw() into the wrapped generator
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value
        return generator_context

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
    """Context manager and decorator that disables gradient recording on this thread.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1.], requires_grad=True)
        >>> with rg.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func) and cls is no_grad:
            return cls()(orig_func)  # bare @no_grad
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Context manager and decorator that enables gradient recording on this thread.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1.], requires_grad=True)
        >>> with rg.no_grad(), rg.enable_grad():
        ...     y = x * 2
        >>> y.requires_grad
        True
    """

    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on this thread to ``mode``, at once; used as a context manager it restores
    the previous mode on exit, and as a decorator it applies the mode inside each call only.

    Args:
        mode (bool): whether to record gradients.

    Raises:
        TypeError: ``mode`` is not a bool.

    Example::
        >>> import retrograd as rg
        >>> with rg.set_grad_enabled(False):
        ...     rg.is_grad_enabled()
        False
    """

    def __init__(self, mode: bool):
        if not isinstance(mode, (bool, np.bool_)):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(mode).__name__}")
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __call__(self, func):
        state.grad_enabled = self.prev  # used as a decorator: the mode applies only inside calls
        return super().__call__(func)

    def __enter__(self):
        state.grad_enabled = self.mode

    def __exit__(self, *exc):
        state.grad_enabled = self.prev

    def clone(self):
        clone = object.__new__(type(self))
        clone.prev, clone.mode = state.grad_enabled, self.mode
        return clone

    def __repr__(self):
        return f"retrograd.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """Context manager and decorator for inference mode: ``no_grad``, and tensors made are inference tensors.

    Nothing is recorded inside, even under ``enable_grad``; tensors made inside (but views of
    normal tensors) are inference tensors: they track no version, cannot be saved for backward,
    and cannot be modified in place outside inference mode. ``inference_mode(False)`` turns
    inference mode off (and grad mode on) inside an enclosing ``inference_mode()``.
    See Note [Inference tensors].

    Args:
        mode (bool): whether to enable inference mode (default True).

    Example::
        >>> import retrograd as rg
        >>> with rg.inference_mode():
        ...     x = rg.ones(2)
        ...     rg.is_grad_enabled()
        False
        >>> x.is_inference(), x.requires_grad
        (True, False)
    """

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode)
        self.prev = (True, False)

    def __enter__(self):
        self.prev = (state.grad_enabled, state.inference)
        state.grad_enabled = not self.mode
        _set_inference(self.mode)

    def __exit__(self, *exc):
        state.grad_enabled = self.prev[0]
        _set_inference(self.prev[1])

    def clone(self):
        return type(self)(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """Sets, on this thread, whether backward passes run device work on the devices' worker threads.

    It takes effect at once; used as a context manager it restores the previous setting on exit,
    and as a decorator it applies the setting inside each call. With it off, a pass started on this
    thread runs every node on this thread. See Note [Multithreading switch].

    Args:
        mode (bool): whether device work runs on the device's worker thread.

    Example::
        >>> import retrograd as rg
        >>> with rg.autograd.set_multithreading_enabled(False):
        ...     rg.autograd.is_multithreading_enabled()
        False
        >>> rg.autograd.is_multithreading_enabled()
        True
    """

    def __init__(self, mode: bool):
        self.prev = state.multithreading
        self.mode = bool(mode)
        state.multithreading = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.multithreading = self.prev

    def clone(self):
        return type(self)(self.mode)


def is_view_replay_enabled() -> bool:
    """Whether a view whose base changed in place gets its history by replaying its view ops on the base
    (``_force_original_view_tracking(True)``), rather than by one ``as_strided`` of the base (the default).

    See Note [The autograd state of views] in variable.py.
    """
    return state.view_replay


class _force_original_view_tracking(_DecoratorContextManager):
    """Sets, on this thread, whether stale views replay their view ops: at once as a function call, until
    the block ends as a context manager, and inside each call only as a decorator (PyTorch's semantics).

    Args:
        mode (bool): replay the view ops (True), or regenerate views with ``as_strided`` (False).

    Example::
        >>> import retrograd as rg
        >>> with rg.autograd._force_original_view_tracking(True):
        ...     rg.autograd.is_view_replay_enabled()
        True
    """

    def __init__(self, mode: bool):
        self.prev = state.view_replay
        self.mode = bool(mode)
        state.view_replay = self.mode

    def __call__(self, func):
        state.view_replay = self.prev  # used as a decorator: the mode applies only inside calls
        return super().__call__(func)

    def __enter__(self):
        state.view_replay = self.mode

    def __exit__(self, *exc):
        state.view_replay = self.prev

    def clone(self):
        return type(self)(self.mode)


class _unsafe_preserve_version_counter(_DecoratorContextManager):
    """Sets the version counters of ``tensors`` back, on exit, to what they were when this was made.

    In-place changes made inside are then invisible to autograd: a node that saved one of the tensors
    uses the changed values without complaint. As PyTorch says of its own: only for those who know
    exactly why (to hide that a tensor's memory was freed and filled again, say).

    Args:
        tensors (Tensor or tuple of Tensors): the tensors whose versions to keep.

    Example::
        >>> import retrograd as rg
        >>> x = rg.ones(2)
        >>> with rg.autograd._unsafe_preserve_version_counter(x):
        ...     x.mul_(2)
        tensor([2., 2.])
        >>> x._version
        0
    """

    def __init__(self, tensors):
        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tensors
        if not isinstance(self.tensors, tuple):
            raise AssertionError("Expected tensors to be a tuple")
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        for t, version in zip(self.tensors, self.prev_versions):
            if not t.is_inference():  # an inference tensor has no version to set
                t._version_counter.version = version

    def clone(self):
        return type(self)(self.tensors)
