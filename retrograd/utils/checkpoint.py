"""Activation checkpointing: trade compute for memory by recomputing a segment in backward.

Two forms, as in PyTorch:

* ``use_reentrant=True`` runs the segment without recording in forward and, in backward,
  recomputes it under grad mode and calls ``autograd.backward`` on the recomputed outputs
  from inside the engine: a reentrant backward (see Note [Reentrant backwards] in
  autograd/engine.py). It cannot serve ``autograd.grad``, where the engine only runs the nodes
  that lead to the requested inputs.
* ``use_reentrant=False`` records the segment as usual but keeps none of its saved tensors:
  saved-tensor hooks store only a position, and the first unpack in backward recomputes the
  segment once to produce them. It works with ``autograd.grad`` and nested calls.

Both restore the random number generator state of the forward pass before recomputing, so
dropout-like randomness draws the same numbers and the gradients equal the un-checkpointed ones.
"""
from __future__ import annotations

import contextlib
import warnings

from .._random import get_rng_state, set_rng_state
from .._tensor import Tensor
from ..autograd import backward as _backward
from ..autograd.engine import is_checkpoint_valid
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential"]


@contextlib.contextmanager
def _fork_rng(state, enabled):
    """Runs the body with the generator at ``state``, then puts back the state it had before."""
    if not enabled:
        yield
        return
    current = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(current)


def _detach_like(args):
    return tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in args)


class CheckpointFunction(Function):
    """The reentrant form: one node whose backward recomputes the segment and runs a nested backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = get_rng_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if not is_checkpoint_valid():
            raise RuntimeError("Checkpointing is not compatible with .grad(), please use .backward() if possible")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        detached = _detach_like(inputs)
        with _fork_rng(getattr(ctx, "fwd_rng_state", None), ctx.preserve_rng_state), enable_grad():
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=False)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(a.grad if isinstance(a, Tensor) else None for a in detached)
        return (None, None) + grads


def _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs):
    """The non-reentrant form, built on saved-tensor hooks. See the module docstring."""
    rng_state = get_rng_state() if preserve_rng_state else None
    recomputed = []
    done = [False]

    count = [0]

    def pack(tensor):  # keep only the position: the value is recomputed on first unpack
        count[0] += 1
        return count[0] - 1

    def unpack(position):
        if not done[0]:
            def pack_recomputed(tensor):
                recomputed.append(tensor.detach())
                return len(recomputed) - 1
            with _fork_rng(rng_state, preserve_rng_state), enable_grad(), \
                    saved_tensors_hooks(pack_recomputed, lambda i: recomputed[i]):
                function(*_detach_like(args), **kwargs)
            done[0] = True
        if position >= len(recomputed):
            raise RuntimeError("torch.utils.checkpoint: trying to unpack a tensor that the recomputation did not "
                               "save: the checkpointed function is not deterministic in what it saves")
        return recomputed[position]

    with saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=True, preserve_rng_state=True, **kwargs):
    """Runs ``function(*args)`` without keeping its intermediate results; recomputes them in backward.

    Args:
        function: the segment to checkpoint.
        *args: its arguments.
        use_reentrant (bool): the reentrant form (default, as in this API) or the form built on
            saved-tensor hooks; see the module docstring.
        preserve_rng_state (bool): restore the random generator's forward-time state before
            recomputing (default True).

    Returns:
        What ``function(*args)`` returns.

    Raises:
        RuntimeError: in backward, for the reentrant form reached from ``autograd.grad``.

    Example::
        >>> import retrograd as rg
        >>> from retrograd.utils.checkpoint import checkpoint
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> checkpoint(lambda t: (t.sin() * 2).sum(), x).backward()
        >>> bool(rg.allclose(x.grad, 2 * x.detach().cos()))
        True
    """
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, preserve_rng_state=True):
    """Checkpoints a sequence of functions (or an ``nn.Sequential``) in ``segments`` chunks.

    All chunks but the last are checkpointed; the last runs normally.
    """
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(len(functions) // segments, 1)

    def run(start, end):
        def forward(x):
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve_rng_state)
    return run(end + 1, len(functions) - 1)(input)
