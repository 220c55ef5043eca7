"""``detect_nonfinite()``: the first op whose result, and the first backward node whose gradient, is not finite.

Forward, every op call in the mode is seen through the op call's interposition (Note [Op call
interposition]); backward, every node through the engine's observers (Note [Observing the engine]),
which hand it the node's outputs. Each finding names the op or node, the forward traceback (for a
node: of the op call that made it, recorded in the mode), statistics of its inputs (min, max, how
many NaN and inf) and the ``nn.Module`` path it ran in (module forwards seen through the global
module hooks). A tool built on the autograd API, the ops and nn; it attaches itself to
``retrograd.autograd``.
"""
from __future__ import annotations

import os
import sys
import traceback

import numpy as np

from .. import autograd as _autograd_package
from .._tensor import Tensor
from ..ops._call import pop_interposer, push_interposer
from . import observation
from .debug import ModulePaths
from .graph import node_name
from .graph_task import NO_DEVICE, local as _worker

__all__ = ["detect_nonfinite", "NonFinite"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_TRACE_KEY = "nonfinite_traceback_"


def _stats(tensors):
    """min, max, NaN and inf counts of each floating-point tensor (None for others)."""
    out = []
    for t in tensors:
        if not isinstance(t, Tensor) or t._data.dtype.kind not in "fcV":
            out.append(None)
            continue
        a = t._data
        finite = a[np.isfinite(a)]
        out.append({"shape": list(a.shape), "min": float(finite.min()) if finite.size else None,
                    "max": float(finite.max()) if finite.size else None,
                    "nan": int(np.isnan(a).sum()), "inf": int(np.isinf(a).sum())})
    return out


def _finite(t) -> bool:
    return not isinstance(t, Tensor) or t._data.dtype.kind not in "fcV" or bool(np.isfinite(t._data).all())


def _user_stack():
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return traceback.format_stack(frame) if frame is not None else []


class NonFinite:
    """One finding: ``kind`` ("forward" or "backward"), ``name`` (op or node), ``traceback`` (the forward
    call's, as lines), ``inputs`` (statistics per input), ``module`` (the nn.Module path, or None)."""

    def __init__(self, kind, name, stack, inputs, module):
        self.kind = kind
        self.name = name
        self.traceback = stack
        self.inputs = inputs
        self.module = module

    def __str__(self):
        what = "op" if self.kind == "forward" else "backward node"
        where = f" in module {self.module}" if self.module else ""
        lines = [f"The first non-finite {'result' if self.kind == 'forward' else 'gradient'} came from {what} "
                 f"{self.name}{where}. Its inputs:"]
        for i, s in enumerate(self.inputs):
            if s is not None:
                lines.append(f"  {i}: shape {s['shape']}, min {s['min']}, max {s['max']}, {s['nan']} nan, "
                             f"{s['inf']} inf")
        if self.traceback:
            lines.append("Traceback of the forward call:\n" + "".join(self.traceback).rstrip())
        return "\n".join(lines)


class detect_nonfinite:
    """Finds the first op whose output is not finite, and the first backward node that produced a
    non-finite gradient, while the mode is on (forward and backward both inside it).

    Args:
        raise_error (bool): raise ``RuntimeError`` with the finding's report at the first one, instead
            of only recording it. Default False.

    The findings are ``forward`` and ``backward`` (``NonFinite`` or None) of the object ``with`` gives.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([0.0, 1.0], requires_grad=True)
        >>> with rg.autograd.detect_nonfinite() as found:
        ...     x.log().sum().backward()
        >>> found.forward.name, found.backward.name
        ('log', 'LogBackward0')
    """

    def __init__(self, raise_error: bool = False):
        self.raise_error = raise_error
        self.forward = None
        self.backward = None
        self._paths = ModulePaths()

    # -- forward: the interposer -----------------------------------------------------------------
    def interpose(self, op, args, inplace, proceed):
        """Records the forward traceback on each node the call makes; the call's non-finite result, if first.
        (The op calls of backward formulas are not the forward's: the engine's threads are skipped.)"""
        out = proceed(op, args, inplace)
        results = out if isinstance(out, tuple) else (out,)
        for r in results:
            if isinstance(r, Tensor) and r._node is not None:
                meta = r._node.metadata
                if _TRACE_KEY not in meta:
                    meta[_TRACE_KEY] = (_user_stack(), self._paths.path())
        # A factory (no tensor argument: Note [Factories as op calls]) makes what it is asked for, an inf mask say.
        if self.forward is None and _worker.worker_device == NO_DEVICE and op.tensor_pos and not all(
                _finite(r) for r in results):
            self._found("forward", op.name, _user_stack(), _stats(args), self._paths.path())
        return out

    # -- backward: the engine observer -----------------------------------------------------------
    def begin(self, name, node, grads, args):
        return None

    def end(self, token):
        pass

    def node_outputs(self, node, grads, outputs):
        if self.backward is None and not all(_finite(g) for g in outputs):
            stack, module = (node._metadata or {}).get(_TRACE_KEY, ([], None))
            self._found("backward", node_name(node), stack, _stats(grads), module)

    def _found(self, kind, name, stack, inputs, module):
        finding = NonFinite(kind, name, stack, inputs, module)
        setattr(self, kind, finding)
        if self.raise_error:
            raise RuntimeError(str(finding))

    def __enter__(self):
        self._paths.__enter__()
        push_interposer(self)
        observation.add_observer(self)
        return self

    def __exit__(self, *exc):
        observation.remove_observer(self)
        pop_interposer(self)
        self._paths.__exit__(*exc)
        return False


_autograd_package.detect_nonfinite = detect_nonfinite
_autograd_package.__all__ += ["detect_nonfinite"]
