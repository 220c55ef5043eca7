"""Custom autograd Functions: user-defined forward and backward, recorded as one node.

As in PyTorch, the ``ctx`` that ``forward`` and ``backward`` receive *is* the graph node
(``<Name>Backward``), so ``y.grad_fn`` of a custom Function's output is its ctx.
"""
from __future__ import annotations

import functools
import inspect
import threading

from .._tensor import Tensor
from . import grad_mode
from .graph import Node, _next_sequence_nr, input_metadata, materialize_grads, node_name
from .saved_variable import SECOND_TIME, SavedTensor
from .variable import gradient_edge, move_retains_grad

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "DelayedError"]


class FunctionCtx:
    """The methods a custom Function's ``forward`` uses to talk to its ``backward``."""

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``.

        Saved tensors are version-checked: modifying one in place before backward raises.
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Marks input tensors that ``forward`` modified in place (they are returned as outputs)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Marks outputs that do not require grad (their gradient in backward is always zeros)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        """Whether undefined output gradients reach ``backward`` as zeros (default) or as None."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, checked for in-place modification."""
        saved = self._saved_variables
        if saved is None:
            raise RuntimeError(SECOND_TIME)
        if saved is _NOT_CONVERTED:  # still inside forward
            return tuple(self.to_save or ())
        return tuple(None if s is None else s.unpack(self) for s in saved)


_NOT_CONVERTED = object()


class BackwardCFunction(Node, FunctionCtx):
    """The graph node (and ctx) of one custom Function call."""

    _forward_cls = None

    def apply(self, grads):
        cls = self._forward_cls
        with self._lock:  # See Note [Thread safety of nodes] in engine.py
            if self.materialize_grads:
                grads = _materialized(grads, self.input_metadata)
            result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._is_tensor_arg)
        name = node_name(self)
        if len(result) > n:
            if any(r is not None for r in result[n:]):
                raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, "
                                   f"got {len(result)})")
            result = result[:n]
        elif len(result) < n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(result)})")
        out = []
        for i, (g, is_tensor) in enumerate(zip(result, self._is_tensor_arg, strict=True)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"expected Variable or None (got {type(g).__name__})")
            out.append(g)
        return out

    def release_variables(self):
        if self._saved_variables is not _NOT_CONVERTED and self._saved_variables:
            self._saved_variables = None

    def __call__(self, *grads):
        return super().__call__(*grads)


def _materialized(grads, metadata):
    """The gradients with zeros for undefined ones, None for an output that is not a tensor (no dtype), as PyTorch."""
    if all(m[1] is not None for m in metadata):
        return materialize_grads(grads, metadata)
    return [g if m[1] is None else materialize_grads([g], [m])[0] for g, m in zip(grads, metadata, strict=True)]


class FunctionMeta(type):
    """Gives every Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class for custom differentiable functions.

    Subclass it with ``@staticmethod forward(ctx, *args)`` and ``@staticmethod
    backward(ctx, *grad_outputs)`` (one gradient per forward argument, None where there is
    none), then call ``MyFunction.apply(*args)``.

    Example::
        >>> import retrograd as rg
        >>> class Exp(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         y = x.exp()
        ...         ctx.save_for_backward(y)
        ...         return y
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         y, = ctx.saved_tensors
        ...         return grad * y
        >>> x = rg.tensor([0.], requires_grad=True)
        >>> Exp.apply(x).sum().backward(); x.grad
        tensor([1.])
    """

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs ``forward`` without recording, then records one node for the whole call."""
        if not isinstance(inspect.getattr_static(cls, "forward"), staticmethod):
            raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                               "new-style autograd function with static forward method.")
        node_cls = cls._backward_cls
        ctx = node_cls.__new__(node_cls)
        Node.__init__(ctx, (), (), sequence_nr=_next_sequence_nr())
        ctx._lock = threading.RLock()
        ctx.to_save = None
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()
        ctx.materialize_grads = True
        ctx._saved_variables = _NOT_CONVERTED
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        ctx._is_tensor_arg = is_tensor
        ctx.needs_input_grad = tuple(t and a._requires_grad for a, t in zip(args, is_tensor, strict=True))
        record = grad_mode.state.grad_enabled and any(ctx.needs_input_grad)
        custom_setup = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if custom_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if not record:
            return outputs
        return _record(ctx, args, outputs)


def _record(ctx, args, outputs):
    """Links the outputs of a custom Function to its node ``ctx``; converts what it saved."""
    is_tuple = isinstance(outputs, tuple)
    outs = list(outputs) if is_tuple else [outputs]
    ctx.next_edges = tuple(gradient_edge(a) if a._requires_grad else None
                           for a, t in zip(args, ctx._is_tensor_arg, strict=True) if t)
    dirty = {id(t) for t in ctx.dirty_tensors}
    nondiff = {id(t) for t in ctx.non_differentiable}
    inputs = {id(a) for a, t in zip(args, ctx._is_tensor_arg, strict=True) if t}
    metadata = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            metadata.append(((), None, None))
            continue
        if id(o) in dirty:
            if o._grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        elif id(o) in inputs:  # an input returned as is: give the output its own tensor object
            o = outs[i] = Tensor._alias_of(o)
        metadata.append(input_metadata(o._data, o._device))
        if id(o) in nondiff or o._data.dtype.kind != "f":
            o._requires_grad = o._requires_grad and o._grad_fn is not None and id(o) in dirty
            continue
        rebased = (o._grad_fn, o._output_nr)
        o._grad_fn = ctx
        o._output_nr = i
        o._requires_grad = True
        if o._base is not None:
            o._view_version = o._version_counter.version
        if o._retains_grad:
            move_retains_grad(o, *rebased)
    ctx.input_metadata = tuple(metadata)
    out_ids = {id(o) for o in outs}
    to_save = ctx.to_save
    if to_save:
        ctx._saved_variables = tuple(
            None if t is None else SavedTensor(t, is_output=id(t) in out_ids and t._grad_fn is ctx)
            for t in to_save)
        ctx.to_save = None
    else:
        ctx._saved_variables = ()
    return tuple(outs) if is_tuple else outs[0]


class DelayedError(Node):
    """A node that raises ``msg`` if the backward pass reaches it."""

    __slots__ = ("msg",)

    def __init__(self, msg, next_edges, input_metadata):
        super().__init__(next_edges, input_metadata)
        self.msg = msg

    def apply(self, grads):
        raise RuntimeError(self.msg)


def once_differentiable(fn):
    """Decorator for a custom Function's ``backward`` that does not support double backward.

    The backward runs without recording; trying to differentiate its result raises
    "trying to differentiate twice a function that was marked with @once_differentiable".
    """
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.state.grad_enabled:
            return outputs
        needing = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not needing:
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = list(outputs) if is_tuple else [outputs]
        node = DelayedError("trying to differentiate twice a function that was marked with @once_differentiable",
                            [gradient_edge(a) for a in needing],
                            [input_metadata(o._data, o._device) if isinstance(o, Tensor) else ((), None, None)
                             for o in outs])
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and o._data.dtype.kind == "f":
                alias = Tensor._alias_of(o)
                alias._grad_fn, alias._output_nr, alias._requires_grad = node, i, True
                outs[i] = alias
        return tuple(outs) if is_tuple else outs[0]
    return wrapper
