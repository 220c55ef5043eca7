"""Grad modes: thread-local switches for recording the autograd graph.

Each mode is a context manager and a decorator (generators keep their own mode across yields).
"""
from __future__ import annotations

import functools
import inspect
import threading

import numpy as np

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


class _State(threading.local):
    """Per-thread autograd switches; class attributes are each new thread's defaults."""
    grad_enabled = True
    inference = False


state = _State()


def is_grad_enabled() -> bool:
    """Returns True if grad mode is currently enabled on this thread."""
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Returns True if inference mode is currently enabled on this thread."""
    return state.inference


class _DecoratorContextManager:
    """Base for modes usable as ``with mode():`` and ``@mode()`` (also bare ``@mode``)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} cannot decorate a class")
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
    """Like ``no_grad``, and also marks the scope as inference (``is_inference_mode_enabled()``).

    Args:
        mode (bool): whether to enable inference mode (default True).

    Example::
        >>> import retrograd as rg
        >>> with rg.inference_mode():
        ...     rg.is_grad_enabled()
        False
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
        if self.mode:
            state.grad_enabled, state.inference = False, True

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self.prev

    def clone(self):
        return type(self)(self.mode)
