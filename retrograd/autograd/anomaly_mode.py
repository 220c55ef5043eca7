"""Anomaly mode: forward tracebacks on nodes, and NaN checks on backward outputs.

A process-wide flag, as in PyTorch. When off, the only cost is one attribute read per node
created and per node run.
"""
from __future__ import annotations

import os
import sys
import threading
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]


class _Anomaly:
    enabled = False
    check_nan = True


class _Running(threading.local):
    """The node whose backward runs on this thread, set by the engine in anomaly mode only."""
    node = None


running = _Running()


def is_anomaly_enabled() -> bool:
    """Returns True if anomaly detection is on."""
    return _Anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Returns True if anomaly detection checks backward outputs for NaN."""
    return _Anomaly.check_nan


class detect_anomaly:
    """Context manager that turns anomaly detection on for its scope.

    Nodes created inside record the traceback of the forward call that made them; an error in
    their backward then carries that traceback, and (with ``check_nan``) a NaN produced by a
    backward function raises ``RuntimeError`` naming the node.

    Args:
        check_nan (bool): raise when a backward function returns NaN. Default True.

    Example::
        >>> import retrograd as rg
        >>> with rg.autograd.detect_anomaly():  # doctest: +SKIP
        ...     y = (rg.tensor([0.], requires_grad=True).sqrt() * 0).sum()
    """

    def __init__(self, check_nan: bool = True):
        self.prev = _Anomaly.enabled
        self.prev_check_nan = _Anomaly.check_nan
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should "
                      "only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _Anomaly.enabled, _Anomaly.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _Anomaly.enabled, _Anomaly.check_nan = self.prev, self.prev_check_nan


class set_detect_anomaly:
    """Sets anomaly detection on or off, at once; as a context manager it restores the previous state.

    Args:
        mode (bool): the new state.
        check_nan (bool): raise when a backward function returns NaN. Default True.
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = _Anomaly.enabled
        self.prev_check_nan = _Anomaly.check_nan
        _Anomaly.enabled, _Anomaly.check_nan = bool(mode), check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _Anomaly.enabled, _Anomaly.check_nan = self.prev, self.prev_check_nan


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The frames of an op call and of making its node: the op table (generated code included) and
# the autograd layers. PyTorch runs these steps in C++, so its traceback ends at the user's line.
_INTERNAL = tuple(os.path.join(_PACKAGE, d) + os.sep for d in ("ops", "autograd"))


def record_forward_trace(node) -> None:
    """Stores the Python stack of the call that made ``node``, and the node whose backward is running,
    in ``node.metadata``.

    The stack ends at the innermost frame outside retrograd's op and autograd code, however
    many frames the call went through: none from the C op call, several from the Python paths.
    """
    meta = node.metadata
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
    meta["traceback_"] = traceback.format_stack(frame) if frame is not None else []
    parent = running.node
    if parent is not None:
        meta["parent_"] = parent


def _name(node) -> str:
    return type(node).name(node)  # as graph.node_name, whatever a custom Function's ctx set as .name


def forward_trace_messages(node) -> list:
    """PyTorch's 'Error detected in ...' text for ``node``, then one text per parent for a nested backward."""
    meta = node._metadata or {}
    stack = meta.get("traceback_")
    if stack is None:
        return [f"Error detected in {_name(node)}. No forward pass information available. Enable detect "
                "anomaly during forward pass for more information."]
    parts = [f"Error detected in {_name(node)}. Traceback of forward call that caused the error:\n" + "".join(stack)]
    parent = meta.get("parent_")
    while parent is not None:
        pmeta = parent._metadata or {}
        pstack = pmeta.get("traceback_")
        if pstack is None:
            break
        parts.append(f"\n\nPrevious calculation was induced by {_name(parent)}. Traceback of forward call that "
                     "induced the previous calculation:\n" + "".join(pstack))
        parent = pmeta.get("parent_")
    return parts


def warn_of_failed_node(node) -> str:
    """Warns with the forward traces of ``node``, whose backward failed, one warning per text as
    PyTorch; returns them joined.

    The pass's own error must reach the caller: where a warnings filter turns a warning into an
    error, the warning is printed to stderr instead, as PyTorch prints warnings that would raise
    while an error is already on its way.
    """
    parts = forward_trace_messages(node)
    for msg in parts:
        try:
            warnings.warn(msg, stacklevel=3)
        except Exception:  # noqa: BLE001 - whatever the filter raises, the node's error wins
            traceback.print_exc()
    return "".join(parts)


def check_nan(node, outputs) -> None:
    """Raises, naming ``node``, if a floating-point gradient it returned holds NaN (anomaly mode's ``check_nan``)."""
    for i, grad in enumerate(outputs):
        if grad is not None and grad._data.dtype.kind in "fV" and bool((grad._data != grad._data).any()):
            raise RuntimeError(f"Function '{_name(node)}' returned nan values in its {i}th output.")
