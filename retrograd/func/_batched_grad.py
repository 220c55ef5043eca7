"""``autograd.grad(..., is_grads_batched=True)`` as PyTorch does it: one backward pass vmapped over the batch.

Note [A vmapped backward pass]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The batched gradients enter the engine as BatchedTensors (Note [Batched tensors]), so every
formula runs once on the whole batch through the batching rules. The pass records its graph:
with grad mode on, the input buffers sum out of place (both loops add in place into a
gradient's array only with grad mode off, and a batched tensor's array is one sample's view),
and a leaf's accumulator is never reached (``autograd.grad`` captures). What else either loop
reads of a gradient directly, its array's shape and dtype, is the logical one. So the pass runs
on whichever loop the engine uses, compiled or not, and changes nothing that a pass on another
thread reads. The results are detached unless ``create_graph`` asked for a graph.
"""
from __future__ import annotations

from .._creation import zeros_like
from ..autograd import _api
from ..autograd.gradcheck import use_vmap
from ._vmap import autograd_vmap

__all__ = ["vmapped_backward"]


def vmapped_backward(run, outputs, grads, keep_graph, create_graph, inputs, allow_unreachable, accumulate_grad):
    """The batched gradients of ``inputs`` by one pass of ``run`` (the engine's entry) under vmap."""
    unused = []

    def one(*seeds):
        # See Note [A vmapped backward pass]: the graph is recorded, whatever create_graph says
        result = run(outputs, seeds, keep_graph, True, inputs, allow_unreachable, accumulate_grad)
        unused[:] = [r is None for r in result]
        return tuple(zeros_like(inp) if r is None else r for r, inp in zip(result, inputs, strict=True))

    out = autograd_vmap(one)(*grads)
    return tuple(None if u else (o if create_graph else o.detach()) for o, u in zip(out, unused, strict=True))


_api.vmapped_backward = vmapped_backward
use_vmap(autograd_vmap)  # gradcheck(check_batched_forward_grad=True) vmaps forward mode over its tangents
