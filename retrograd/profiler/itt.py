"""``retrograd.profiler.itt``: ranges and marks for Intel's ITT API (PyTorch's ``torch.profiler.itt``).

Intel's Instrumentation and Tracing Technology (ITT) API lets a program name the spans of its run
that a collector (Intel VTune Profiler) shows on its timeline. PyTorch's CPU build links the ITT
library; retrograd reaches it through Intel's Python binding, ``ittapi``, the optional extra
``itt`` (``pip install 'retrograd[itt]'``). Without it, this module behaves as a PyTorch built
without ITT: ``is_available()`` is False and the other functions raise RuntimeError.

With no collector attached (a run outside VTune), ITT's calls do nothing and cost well under a
microsecond each. A range is an ITT task of the domain ``retrograd``, begun by ``range_push`` and
ended by the next ``range_pop`` of the same thread, as PyTorch's are in its domain ``PyTorch``.
``autograd.profiler.emit_itt`` makes every op call and backward node a range.
"""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]

DOMAIN = "retrograd"
_NOT_INSTALLED = ("ITT functions not installed. Are you sure you have a ITT build? "
                  "(retrograd needs the 'itt' extra: pip install 'retrograd[itt]')")
_UNLOADED = object()


class _Binding:
    """ittapi's native module, its domain and the string handles of the names seen so far."""

    __slots__ = ("native", "domain", "handles")

    def __init__(self, native):
        self.native = native
        self.domain = native.Domain(DOMAIN)
        self.handles = {}

    def handle(self, msg, caller="rangePush"):
        h = self.handles.get(msg)
        if h is None:
            if not isinstance(msg, str):
                raise TypeError(f"{caller}(): incompatible function arguments. The message must be a str, "
                                f"not {type(msg).__name__}")
            h = self.handles[msg] = self.native.StringHandle(msg)
        return h


_binding = _UNLOADED  # a _Binding, or None where ittapi is not installed; loaded on first use


def _itt():
    """The binding, loaded on first use (importing ittapi takes a few milliseconds); None without ittapi."""
    global _binding
    if _binding is _UNLOADED:
        try:
            from ittapi import native
        except ImportError:
            _binding = None
        else:
            _binding = _Binding(native)
    return _binding


def _require():
    itt = _itt()
    if itt is None:
        raise RuntimeError(_NOT_INSTALLED)
    return itt


def is_available() -> bool:
    """Whether ITT can be used: whether ``ittapi`` is installed."""
    return _itt() is not None


def range_push(msg):
    """Begins a range named ``msg`` on this thread, nested in the ranges it has open.

    Args:
        msg (str): the range's name.
    """
    itt = _require()
    itt.native.task_begin(itt.domain, itt.handle(msg))


def range_pop():
    """Ends the range this thread began last."""
    itt = _require()
    itt.native.task_end(itt.domain)


def mark(msg):
    """Marks an instant event named ``msg`` (an empty range, as PyTorch's).

    Args:
        msg (str): the event's name.
    """
    itt = _require()
    itt.native.task_begin(itt.domain, itt.handle(msg, "mark"))
    itt.native.task_end(itt.domain)


@contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 - PyTorch's name
    """A context manager (or decorator) that begins a range at its start and ends it at its end.

    Args:
        msg (str): the range's name; with extra arguments, ``msg.format(*args, **kwargs)``.

    Example::
        >>> from retrograd.profiler import itt
        >>> if itt.is_available():
        ...     with itt.range("step {}", 3):
        ...         pass
    """
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
