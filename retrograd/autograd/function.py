"""Custom autograd Functions: user-defined forward and backward, recorded as one node.

As in PyTorch, the ``ctx`` that ``forward`` and ``backward`` receive *is* the graph node
(``<Name>Backward``), so ``y.grad_fn`` of a custom Function's output is its ctx.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings

from .._tensor import Tensor
from . import grad_mode
from .graph import _NodeBase as Node, _next_sequence_nr, input_metadata, materialize_grads, node_name
from .saved_variable import SECOND_TIME, SavedTensor
from .variable import (CreationMeta, gradient_edge, move_retains_grad, regenerate_view_grad_fn, replay_view,
                       view_rebase_error)

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable",
           "DelayedError", "NotImplementedNode"]


class FunctionCtx:
    """The methods a custom Function's ``forward`` uses to talk to its ``backward``."""

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``.

        Saved tensors are version-checked: modifying one in place before backward raises. As in
        PyTorch, what is saved is checked when the call is recorded: a non-tensor then raises
        TypeError.
        """
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Keeps tensors (or None) for a forward-mode ``jvp``, as ``ctx.saved_for_forward``.

        Raises:
            AssertionError: if an argument is neither a Tensor nor None.
        """
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                     "non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Marks input tensors that ``forward`` modified in place; each must be returned as an output.

        Their history becomes the Function's node (a view's base gets a ``CopySlices``). See
        Note [Outputs of a custom Function].
        """
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Marks outputs that do not require grad; backward gets zeros for them (None without materializing)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        """Whether undefined output gradients reach ``backward`` as zeros (default) or as None."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, checked for in-place modification (in ``jvp``:
        those given to ``save_for_forward``)."""
        in_jvp = getattr(self, "_jvp_saved", None)
        if in_jvp is not None:
            return in_jvp
        saved = self._saved_variables
        if saved is None:
            raise RuntimeError(SECOND_TIME)
        if saved is _NOT_CONVERTED:  # still inside forward or setup_context: nothing is saved yet
            return ()
        if saved is _CLEARED_ON_ACCESS:
            raise RuntimeError("saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is "
                               "set on the autograd.Function. Either access saved_tensors only once, or set "
                               "clear_saved_tensors_on_access=False.")
        unpacked = tuple(None if s is None else s.unpack(self, keep_subclass=True) for s in saved)
        if getattr(getattr(self, "_forward_cls", None), "clear_saved_tensors_on_access", False):
            self._saved_variables = _CLEARED_ON_ACCESS  # the caller then holds the only references
        return unpacked

    @property
    def saved_variables(self):
        """The old name of ``saved_tensors``; warns DeprecationWarning, as PyTorch's."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    @property
    def _raw_saved_tensors(self):
        """The ``SavedTensor`` objects behind ``saved_tensors`` (an undefined one for None), to register hooks on.

        Raises:
            RuntimeError: once backward has freed them.
        """
        saved = self._saved_variables
        if saved is None:
            raise RuntimeError(SECOND_TIME)
        if saved is _NOT_CONVERTED or saved is _CLEARED_ON_ACCESS:
            return ()
        return tuple(SavedTensor(None) if s is None else s for s in saved)


_NOT_CONVERTED = object()
_CLEARED_ON_ACCESS = object()  # saved_tensors was read once, with the Function's clear_saved_tensors_on_access
# Set by autograd/forward_ad.py (the layer above): what ``apply`` asks of forward-mode AD, where a
# call has dual inputs (``has_tangents``, ``suspended``, ``jvp``). See Note [Forward-mode tangents].
forward_mode_hook = None


class BackwardCFunction(Node, FunctionCtx):
    """The graph node (and ctx) of one custom Function call."""

    _forward_cls = None

    def _get_user_fn(self):
        """The Function's ``backward``, or its ``vjp`` (the same method under another name)."""
        cls = self._forward_cls
        backward_fn, vjp_fn = cls.backward, cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                               "should only implement one of them.")
        return vjp_fn if vjp_fn is not Function.vjp else backward_fn

    def apply(self, grads):
        user_fn = self._get_user_fn()
        with self._lock:  # See Note [Thread safety of nodes] in engine.py
            if self.materialize_grads:
                grads = _materialized(grads, self.input_metadata,
                                      () if self._materialize_non_diff_grads else self._non_diff_slots)
            result = user_fn(self, *grads)
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
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")  # PyTorch's type, too
            out.append(g)
        return out

    def release_variables(self):
        if self._saved_variables is not _NOT_CONVERTED and self._saved_variables:
            self._saved_variables = None

    def __call__(self, *grads):
        # As PyTorch's nodes of Python Functions (unlike its C++ nodes): run backward with ``ctx.backward``.
        raise TypeError(f"'{type(self).__name__}' object is not callable")


_NON_TENSOR = ((), None, None)  # the input metadata of a forward output that is not a tensor: it gets no gradient


def _materialized(grads, metadata, skip=()):
    """``materialize_grads`` for the tensor outputs but those in ``skip``; a non-tensor output's stays None."""
    return [g if g is not None or m[1] is None or i in skip else materialize_grads([None], [m])[0]
            for i, (g, m) in enumerate(zip(grads, metadata, strict=True))]


class FunctionMeta(type):
    """Gives every Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class for custom differentiable functions.

    Subclass it with ``@staticmethod forward(ctx, *args)`` and ``@staticmethod
    backward(ctx, *grad_outputs)`` (one gradient per forward argument, None where there is
    none), then call ``MyFunction.apply(*args)``. Alternatively write ``forward(*args)``
    without ctx and fill the ctx in ``@staticmethod setup_context(ctx, inputs, output)``.
    ``vjp`` is another name for ``backward``: define one of them.

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

    Setting the class attribute ``clear_saved_tensors_on_access = True`` lets ``ctx.saved_tensors``
    be read once, after which the node lets go of them: what backward does not keep is freed as soon
    as it is dropped.
    """

    clear_saved_tensors_on_access = False

    def __init__(self, *args, **kwargs):
        # As PyTorch: an instance is still made (its methods may be called directly), with a warning; calling it
        # as a function is the legacy use, which raises.
        warnings.warn(f"{self.__class__} should not be instantiated. The methods of an autograd Function are "
                      "static: call them on the class (apply), as instances will be refused in a later version.",
                      DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
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

    vjp = backward  # the two names of one method, as in PyTorch

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """The forward-mode derivative: the tangents of the outputs from those of the inputs (zeros
        where an input has none), for ``autograd.forward_ad``; ``ctx.saved_tensors`` there holds what
        ``save_for_forward`` kept."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    # PyTorch's defaults for its batching rules under torch.vmap: none is generated, and ``vmap``
    # (``vmap(info, in_dims, *args)``) must be overridden to give one.
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """The rule of this Function under ``func.vmap``: override it, or set ``generate_vmap_rule``."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs ``forward`` without recording, then records one node for the whole call.

        Keyword arguments are inputs too (each gets a gradient slot in backward, after the
        positional ones). With ``setup_context`` overridden they are bound to ``forward``'s
        parameters first (defaults filled in), so ``inputs`` holds every positional argument.
        ``forward``, ``setup_context`` and ``backward`` are looked up on the class, so classmethods
        work as staticmethods do, as in PyTorch.
        """
        custom_setup = cls.setup_context is not Function.setup_context
        if custom_setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
            inputs = args
        else:
            inputs = args + tuple(kwargs.values())  # keyword arguments are inputs too, after the positional ones
        node_cls = cls._backward_cls
        ctx = node_cls.__new__(node_cls)
        Node.__init__(ctx, (), (), sequence_nr=_next_sequence_nr())
        ctx._lock = threading.RLock()
        ctx.to_save = None
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()
        ctx.materialize_grads = True
        ctx._materialize_non_diff_grads = True  # False: non-differentiable outputs get None even so, as in PyTorch
        ctx._non_diff_slots = ()
        ctx._saved_variables = _NOT_CONVERTED
        is_tensor = tuple(isinstance(a, Tensor) for a in inputs)
        ctx._is_tensor_arg = is_tensor
        ctx.needs_input_grad = tuple(t and _requires_grad(a) for a, t in zip(inputs, is_tensor, strict=True))
        record = grad_mode.state.grad_enabled and any(ctx.needs_input_grad)
        forward_mode = forward_mode_hook if forward_mode_hook is not None and forward_mode_hook.has_tangents(
            inputs) else None  # the forward runs without tangents; jvp gives the outputs theirs
        with grad_mode.no_grad(), (contextlib.nullcontext() if forward_mode is None else forward_mode.suspended()):
            if custom_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        outputs = _wrap_outputs(ctx, inputs, outputs, record, custom_setup)
        if forward_mode is not None:
            outputs = forward_mode.jvp(cls, ctx, inputs, outputs)
        # As PyTorch's, the node lets go of what mark_dirty and mark_non_differentiable were given once the
        # outputs are made: a dirty output would otherwise hold its own node, in a reference cycle.
        ctx.dirty_tensors = ctx.non_differentiable = ()
        return outputs


class InplaceFunction(Function):
    """A Function that may work in place: ``inplace`` is kept for its ``forward`` to read (as in PyTorch)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


# Note [Outputs of a custom Function]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# After ``forward``, each output is given its place, as PyTorch's ``_wrap_outputs`` does:
# - a non-tensor output (an int, None, a string) is returned as it is and takes a slot of the
#   node that never receives a gradient (None in backward, even with materialized gradients);
# - an input returned unchanged is returned as a new view of it (``y is not x``), so that the
#   input's own history is not replaced;
# - an input marked dirty is returned as the same object, its history rebased onto the node
#   (onto a CopySlices of its base where it is a view, as an in-place op on a view does), and its
#   version counter bumped once more (what forward did to it in place counts on its own), even where
#   the call is not recorded;
# - an output marked non-differentiable, or of a non-floating dtype, or any output of a call
#   that is not recorded, does not require grad (inputs among them are returned as new views,
#   detached ones where they required grad); in backward its gradient is zeros of its dtype, or
#   None without materialize_grads (or with ``ctx._materialize_non_diff_grads = False``);
# - every other output's history is the node.
# Views among the outputs (but dirty inputs) remember that they were made in a custom Function:
# modifying one in place while grad is needed raises, as that would replace the custom backward
# (``view_rebase_error`` in variable.py).
def _wrap_outputs(ctx, args, outputs, record, custom_setup):
    """Gives the outputs of a custom Function their history (the node ``ctx``); converts what it saved.

    See Note [Outputs of a custom Function].
    """
    is_tuple = isinstance(outputs, tuple)
    outs = list(outputs) if is_tuple else [outputs]
    for i, t in enumerate(ctx.dirty_tensors):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"mark_dirty can only accept variables, but argument {i} is of type "
                               f"{type(t).__name__}")
    for t in ctx.non_differentiable:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"mark_non_differentiable only accepts variable arguments, but got "
                               f"{type(t).__name__}")
    tensor_args = [a for a, t in zip(args, ctx._is_tensor_arg, strict=True) if t]
    inputs = {id(a) for a in tensor_args}
    dirty = {id(t) for t in ctx.dirty_tensors}
    if not dirty <= {id(o) for o in outs if isinstance(o, Tensor)}:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    for t in {id(t): t for t in ctx.dirty_tensors}.values():
        t._version_counter.bump()  # the Function's write counts once more, as in PyTorch, recorded or not
    if not record:
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                outs[i] = _not_differentiable(o, id(o) in inputs, id(o) in dirty)
        ctx.to_save = None
        return tuple(outs) if is_tuple else outs[0]
    # A dirty input that is a view made otherwise than the default way cannot take the node as its
    # history, as with an in-place op. PyTorch takes the inputs' edges before forward and finds this
    # out here; taking them after forward would raise the error of a view whose base changed.
    for t in ctx.dirty_tensors:
        if id(t) in inputs and t._base is not None and t._view_creation is not CreationMeta.DEFAULT:
            raise view_rebase_error(t, indirect=False)
    ctx.next_edges = tuple(gradient_edge(a) if _requires_grad(a) else None for a in tensor_args)
    nondiff = {id(t) for t in ctx.non_differentiable}
    saved_ids = {id(t) for t in ctx.to_save or () if t is not None} if custom_setup else ()
    metadata = []
    diff_views = []
    non_diff_slots = []
    n_diff = 0
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            metadata.append(_NON_TENSOR)
            continue
        oid = id(o)
        is_input, is_modified = oid in inputs, oid in dirty
        metadata.append(input_metadata(o._data, o._device))
        if oid in nondiff or o._data.dtype.kind not in "fV":
            outs[i] = _not_differentiable(o, is_input, is_modified)
            non_diff_slots.append(i)
            continue
        n_diff += 1
        if is_modified:
            if not is_input:
                msg = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
                       "mutated should be passed to ctx.mark_dirty().")
                if o._is_view():  # a view of an intermediate: its base's history cannot be rewritten
                    raise RuntimeError(msg)
                warnings.warn(msg, UserWarning, stacklevel=3)
            _rebase_dirty(ctx, o, i, len(outs))
            continue
        if is_input:
            if oid in saved_ids:
                raise RuntimeError("An input that has been returned as-is as output is being saved for backward. "
                                   "This is not supported if you override setup_context. You should return and "
                                   "save a view of the input instead, e.g. with x.view_as(x) or setup ctx inside "
                                   "the forward function itself.")
            o = outs[i] = _view_of_self(o)
        rebased = (o._node, o._output_nr)
        o._node = ctx
        o._output_nr = i
        o._requires_grad = True
        if o._base is not None:
            o._view_version = o._version_counter.version
            o._view_creation = CreationMeta.IN_CUSTOM_FUNCTION
            diff_views.append(o)
        if o._retains_grad:
            move_retains_grad(o, *rebased)
    if n_diff > 1:
        for o in diff_views:
            o._view_creation = CreationMeta.MULTI_OUTPUT_NODE
    ctx.input_metadata = tuple(metadata)
    ctx._non_diff_slots = frozenset(non_diff_slots)
    out_ids = {id(o) for o in outs}
    to_save = ctx.to_save
    if to_save:
        for j, t in enumerate(to_save):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {j} is of type "
                                f"{type(t).__name__}")
        try:
            ctx._saved_variables = tuple(
                None if t is None else SavedTensor(t, is_output=id(t) in out_ids and t._node is ctx)
                for t in to_save)
        finally:  # also where a pack hook raised (a checkpoint stopping its recomputation early): an output
            ctx.to_save = None  # kept in to_save would hold its own node, a reference cycle
    else:
        ctx._saved_variables = ()
    return tuple(outs) if is_tuple else outs[0]


def _view_of_self(t):
    """A new tensor viewing all of ``t``, with no history of its own yet (PyTorch's view_as_self)."""
    with grad_mode.no_grad():
        return t.view_as(t)


def _requires_grad(a) -> bool:
    """``a.requires_grad`` for a tensor argument: a view's through its base (Note [The autograd state of views])."""
    return a._requires_grad or (a._base is not None and a._base._requires_grad)


def _not_differentiable(o, is_input, is_modified):
    """The output ``o`` as one that does not require grad. See Note [Outputs of a custom Function]."""
    if not o._requires_grad:
        if is_input and not is_modified:
            o = _view_of_self(o)
        if o._base is not None and not is_modified:
            o._view_creation = CreationMeta.IN_CUSTOM_FUNCTION  # made in no_grad mode inside the Function
        return o
    if is_input:
        return o.detach()
    if o._base is None:
        o.detach_()
    return o


def _rebase_dirty(ctx, o, output_nr, n_outputs):
    """Makes output ``output_nr`` of ``ctx`` the history of the dirty input ``o`` (PyTorch's rebase_history)."""
    base = o._base
    if base is None:
        if o._node is None and o._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        rebased = (o._node, o._output_nr)
        o._node = ctx
        o._output_nr = output_nr
        o._requires_grad = True
        move_retains_grad(o, *rebased)
        return
    if n_outputs > 1:
        raise RuntimeError("If your Function modifies inplace an input that is a view of another Tensor, your "
                           "Function cannot return more than one Tensor. This is not supported by the current "
                           "autograd engine. You should either make sure the input is not a view (using .clone() "
                           "for example) or make your Function only return one Tensor (potentially splitting it "
                           "into two Functions: one doing the inplace that returns a single Tensor and a second "
                           "one that does the other operations). You can ask on the forum "
                           "https://discuss.pytorch.org/ if you need help to do this change.")
    if base._node is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    result = Tensor._alias_of(o)  # the view's new value: output output_nr of the node
    result._node, result._output_nr, result._requires_grad = ctx, output_nr, True
    node = _CopySlices(base, o._view_fn, result)
    rebased = (base._node, base._output_nr)
    base._node = node
    base._output_nr = 0
    base._requires_grad = True
    move_retains_grad(base, *rebased)
    regenerate_view_grad_fn(o)


class _CopySlices(Node):
    """The history of a view's base after a custom Function modified the view in place (``mark_dirty``).

    ``result`` is the view's new value as output of the Function's node. Unlike the CopySlices of
    an op (ops/_inplace.py), which runs the op's node itself, the base's gradient in the written
    region goes to the Function's node as its output's gradient, wherever the view is among its
    inputs; the rest of the base's gradient to the base's old history.
    """

    __slots__ = ("chain",)

    def __init__(self, base, chain, result):
        super().__init__((gradient_edge(base), gradient_edge(result)), (input_metadata(base._data, base._device),))
        self.chain = chain

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return [None, None]
        result_grad = replay_view(self.chain, grad)
        base_grad = grad.clone()
        replay_view(self.chain, base_grad).zero_()
        return [base_grad, result_grad]


class Error(Node):
    """A node that raises ``msg`` if the backward pass reaches it (PyTorch's ``Error``, made by its DelayedError)."""

    __slots__ = ("msg",)

    def __init__(self, msg, next_edges, input_metadata):
        super().__init__(next_edges, input_metadata)
        self.msg = msg

    def name(self) -> str:
        return "torch::autograd::Error"  # PyTorch's name for the node its DelayedError makes

    def apply(self, grads):
        raise RuntimeError(self.msg)


DelayedError = Error  # the name this node had here before


class NotImplementedNode(Error):
    """The node of an op call that has no derivative, where something requires grad: it raises PyTorch's
    "derivative for <op> is not implemented" if the backward pass reaches it (PyTorch's ``NotImplemented``)."""

    __slots__ = ()

    def __init__(self, forward_fn, next_edges, input_metadata):
        super().__init__(f"derivative for {forward_fn} is not implemented", next_edges, input_metadata)

    def name(self) -> str:
        return "torch::autograd::NotImplemented"


NotImplementedNode.__name__ = NotImplementedNode.__qualname__ = "NotImplemented"  # PyTorch's class name


def once_differentiable(fn):
    """Decorator for a custom Function's ``backward`` that does not support double backward.

    The backward runs without recording. Where grad mode is on and a gradient it received
    requires grad, its results require grad through a node that raises "trying to differentiate
    twice a function that was marked with @once_differentiable" when the backward pass reaches it.
    """
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not grad_mode.state.grad_enabled:
            return outputs
        if not any(isinstance(a, Tensor) and _requires_grad(a) for a in args):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = list(outputs) if is_tuple else [outputs]
        # As in PyTorch, the node's edges lead to fresh leaves (one per output), not to the history
        # of the gradients: differentiating the results reaches the node, or nothing that was asked for.
        leaves = [Tensor._alias_of(o) if isinstance(o, Tensor) else None for o in outs]
        for leaf in leaves:
            if leaf is not None:
                leaf._requires_grad = True
        node = Error("trying to differentiate twice a function that was marked with @once_differentiable",
                            [None if leaf is None else gradient_edge(leaf) for leaf in leaves],
                            [_NON_TENSOR if o is None else input_metadata(o._data, o._device) for o in leaves])
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and o._data.dtype.kind in "fV":
                alias = Tensor._alias_of(o)
                alias._node, alias._output_nr, alias._requires_grad = node, i, True
                outs[i] = alias
        return tuple(outs) if is_tuple else outs[0]
    return wrapper
