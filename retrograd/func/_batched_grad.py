"""``autograd.grad(..., is_grads_batched=True)`` as PyTorch does it: one backward pass vmapped over the batch.

Note [A vmapped backward pass]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The batched gradients enter the engine as BatchedTensors (Note [Batched tensors]), so every
formula runs once on the whole batch through the batching rules. The pass runs on the engine's
Python loop (the compiled loop reads gradients' arrays directly, which a batched tensor's are
not), and with its graph recorded, so that the input buffers sum out of place (they add in place
into an array only with grad mode off); the results are detached unless ``create_graph`` asked
for a graph.
"""
from __future__ import annotations

import threading

from .._creation import zeros_like
from ..autograd import _api, engine
from ..autograd.gradcheck import use_vmap
from ._vmap import autograd_vmap

__all__ = ["vmapped_backward"]

_lock = threading.Lock()
_python_passes = [0, None]  # passes running on the Python loop; the compiled loop to put back after the last


class _python_loop:
    """``with _python_loop():`` the engine's passes started meanwhile run its Python loop."""

    def __enter__(self):
        with _lock:
            if _python_passes[0] == 0:
                _python_passes[1] = engine._loop
                engine._loop = None
            _python_passes[0] += 1

    def __exit__(self, *exc):
        with _lock:
            _python_passes[0] -= 1
            if _python_passes[0] == 0:
                engine._loop = _python_passes[1]
                _python_passes[1] = None
        return False


def vmapped_backward(run, outputs, grads, keep_graph, create_graph, inputs, allow_unreachable, accumulate_grad):
    """The batched gradients of ``inputs`` by one pass of ``run`` (the engine's entry) under vmap."""
    unused = []

    def one(*seeds):
        result = run(outputs, seeds, keep_graph, True, inputs, allow_unreachable, accumulate_grad)
        unused[:] = [r is None for r in result]
        return tuple(zeros_like(inp) if r is None else r for r, inp in zip(result, inputs, strict=True))

    with _python_loop():
        out = autograd_vmap(one)(*grads)
    return tuple(None if u else (o if create_graph else o.detach()) for o, u in zip(out, unused, strict=True))


_api.vmapped_backward = vmapped_backward
use_vmap(autograd_vmap)  # gradcheck(check_batched_forward_grad=True) vmaps forward mode over its tangents
