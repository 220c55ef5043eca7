"""``backward`` and ``grad``: the user's entry points into the engine, and the checks at its boundary.

Outputs and inputs may be ``GradientEdge``s (``autograd.graph.get_gradient_edge``) as well as
tensors: an output edge is a root seeded like a tensor of its input's shape, dtype and device;
an input edge captures (``grad``) or runs (``backward``) what flows into that node's input.
"""
from __future__ import annotations

import functools
import operator
import warnings

import numpy as np

from .. import _runtime
from .._creation import zeros_like
from .._device import cpu as _cpu
from .._dtype import _BY_NP
from .._errors import warn_once
from .._overrides import MODES_ACTIVE, handle_torch_function, has_torch_function
from .._size import Size
from .._tensor import Tensor
from . import engine, interrupts
from .function import Function
from .graph import Edge, GradientEdge, _NodeBase as Node, make_edge, node_name
from .variable import grad_accumulator, gradient_edge

__all__ = ["backward", "grad"]


def _as_tuple(value):
    """One tensor (or GradientEdge) as a 1-tuple, any other iterable (a generator of parameters too) as a
    tuple, as PyTorch's backward and grad take them; anything else raises Python's TypeError."""
    if isinstance(value, (Tensor, GradientEdge)):
        return (value,)
    return tuple(value)


def _edge_of(value):
    """The Edge a GradientEdge names, checked as PyTorch's engine boundary checks it (and in range)."""
    node, nr = value[0], value[1]
    if not isinstance(node, Node):
        raise RuntimeError(f"GradientEdge's first object must be an autograd.graph.Node but got {type(node).__name__}")
    nr = operator.index(nr)
    if not 0 <= nr < len(node.input_metadata):
        raise RuntimeError(f"GradientEdge's output_nr {nr} is out of range: {node_name(node)} has "
                           f"{len(node.input_metadata)} inputs")
    return make_edge(Edge, (node, nr))


def _make_grads(outputs, grads, is_grads_batched=False):
    """The seed gradient of each output: the given one (shape-checked), or ones for a scalar.

    An integer or bool gradient of a floating-point output is cast to the output's dtype, as
    PyTorch's engine casts it. With ``is_grads_batched`` the leading dim of each gradient is
    the batch, and the rest must be the output's shape.
    """
    new_grads = []
    for out, grad in zip(outputs, grads, strict=True):
        if isinstance(out, GradientEdge):
            new_grads.append(_edge_seed(out, grad, outputs, grads))
        elif isinstance(grad, Tensor):
            shape = grad._data.shape
            if is_grads_batched:
                _check_batch_dim(shape)
                shape = shape[1:]
            if isinstance(out, Tensor) and shape != out._data.shape:
                if is_grads_batched:
                    gi = next(i for i, g in enumerate(grads) if g is grad)
                    oi = next(i for i, o in enumerate(outputs) if o is out)
                    raise RuntimeError(f"If `is_grads_batched=True`, we interpret the first dimension of each "
                                       f"grad_output as the batch dimension. The sizes of the remaining dimensions are "
                                       f"expected to match the shape of corresponding output, but a mismatch was "
                                       f"detected: grad_output[{gi}] has a shape of {Size(shape)} and output[{oi}] has "
                                       f"a shape of {out.shape}. If you only want some tensors in `grad_output` to be "
                                       f"considered batched, consider using vmap.")
                _raise_shape_mismatch(outputs, grads, out, grad, out.shape)
            if grad._data.dtype.kind in "biu" and out._data.dtype.kind in "fV":
                grad = Tensor._make(grad._data.astype(out._data.dtype), grad._device)
            if isinstance(out, Tensor) and grad.is_mkldnn is not out.is_mkldnn:  # Note [The MKL-DNN layout]
                oi = next(i for i, o in enumerate(outputs) if o is out)
                names = ("Strided", "Mkldnn")
                raise RuntimeError(f"invalid gradient at index {oi} - expected layout {names[out.is_mkldnn]} but got "
                                   f"{names[grad.is_mkldnn]}")
            new_grads.append(grad)
        elif grad is None:
            if isinstance(out, Tensor) and (out._requires_grad or out.requires_grad):  # a view: through its base
                arr = out._data  # read directly, not through properties: one seed per backward call
                if arr.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if arr.dtype.kind not in "fV":
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype}")
                new_grads.append(_ones(arr.shape, arr.dtype, out._device))
            else:
                new_grads.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(grad).__name__}")
    return tuple(new_grads)


def _ones(shape, np_dtype, device):
    if device is _cpu:  # empty + fill: np.ones is a Python function doing the same, slower
        seed = np.empty(shape, np_dtype)
        seed.fill(1)
    else:
        seed = device.backend.xp.ones(shape, dtype=np_dtype)
    return Tensor._make(seed, device)


def _raise_shape_mismatch(outputs, grads, out, grad, shape):
    gi = next(i for i, g in enumerate(grads) if g is grad)
    oi = next(i for i, o in enumerate(outputs) if o is out)
    raise RuntimeError(f"Mismatch in shape: grad_output[{gi}] has a shape of {grad.shape} and output[{oi}] has a "
                       f"shape of {shape}.")


def _edge_seed(out, grad, outputs, grads):
    """The seed of an output GradientEdge: as for a tensor of the shape, dtype and device of its input."""
    node, nr = _edge_of(out)
    shape, np_dtype, device = node.input_metadata[nr]
    device = _cpu if device is None else device  # See Note [Input metadata] in graph.py
    if isinstance(grad, Tensor):
        if grad._data.shape != shape:
            _raise_shape_mismatch(outputs, grads, out, grad, Size(shape))
        return grad
    if grad is not None:
        raise TypeError(f"gradients can be either Tensors or None, but got {type(grad).__name__}")
    if any(n != 1 for n in shape):
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if np_dtype.kind not in "fV":
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {_BY_NP[np_dtype]}")
    return _ones(shape, np_dtype, device)


def _check_timeout(timeout):
    """``timeout=`` of backward and grad: None, or a positive number of seconds."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, but got {type(timeout).__name__}")
    if not timeout > 0 or timeout == float("inf"):
        raise ValueError(f"timeout must be a positive, finite number of seconds, but got {timeout}")
    return float(timeout)


def _engine_run_backward(outputs, grads, keep_graph, create_graph, inputs, allow_unreachable,
                         accumulate_grad, timeout=None):
    """Checks the engine's arguments as PyTorch's engine boundary does, then runs the pass."""
    if len(outputs) != len(grads):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    roots = []
    for i, t in enumerate(outputs):
        if isinstance(t, GradientEdge):
            roots.append(_edge_of(t))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"element {i} of tensors tuple is neither a Tensor nor a GradientEdge")
        edge = gradient_edge(t)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(edge)
    for i, g in enumerate(grads):
        if g is None:  # every output has an edge by now, so it requires grad
            raise RuntimeError(f"element {i} of gradients tuple is None, but the corresponding Tensor requires grad")
        if not isinstance(g, Tensor):
            raise TypeError(f"element {i} of gradients tuple is not a Tensor or None")
    output_edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            output_edges.append(_edge_of(t))
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if t._node is not None:
            if accumulate_grad:
                t.retain_grad()
            output_edges.append(gradient_edge(t))
        elif accumulate_grad:
            output_edges.append(make_edge(Edge, (grad_accumulator(t), 0)))
        else:  # a leaf's existing accumulator; never create one (it could not have been reached)
            ref = t._grad_accumulator
            acc = None if ref is None else ref()
            output_edges.append(None if acc is None else make_edge(Edge, (acc, 0)))
    result = engine.get_default_engine().execute(roots, grads, keep_graph, create_graph, output_edges,
                                          accumulate_grad=accumulate_grad, timeout=timeout)
    if not accumulate_grad and not allow_unreachable:
        for i, r in enumerate(result):
            if r is None:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
    return result


def _check_batch_dim(shape) -> None:
    """PyTorch's errors for a batched gradient without a batch to take its first entry from."""
    if not shape:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                         "to convert a 0-dim tensor to a number")
    if shape[0] == 0:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")


class _StackBatch(Function):
    """The gradients of a batched ``grad`` stacked along a new first dim, differentiably (``create_graph``)."""

    @staticmethod
    def forward(ctx, *parts):
        ctx.n = len(parts)
        xp = parts[0]._device.backend.xp
        return Tensor._make(xp.stack([p._data for p in parts]), parts[0]._device)

    @staticmethod
    def backward(ctx, grad):
        return tuple(grad[i] for i in range(ctx.n))


vmapped_backward = None  # one pass vmapped over the batch, attached by retrograd.func (see _run_batched_backward)


def _run_batched_backward(outputs, grads, keep_graph, create_graph, inputs, allow_unreachable, accumulate_grad,
                          timeout=None):
    """``grad(..., is_grads_batched=True)``: the gradients for each entry of the gradients' first dim, stacked.

    As PyTorch, one pass vmapped over the batch: ``retrograd.func`` attaches it as
    ``vmapped_backward`` (``run, *arguments of this function``). Without it (and for inputs that
    are GradientEdges) one pass per entry gives the same values; the errors for gradients without
    a batch to map over are PyTorch's either way.
    """
    for g in grads:
        if g is None:
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for an input but the input is of type "
                             "<class 'NoneType'>. We cannot vmap over non-Tensor arguments, please use None as the "
                             "respective in_dim")
        if g._data.ndim == 0:
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a "
                             "Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0.")
    sizes = [g._data.shape[0] for g in grads]
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    if vmapped_backward is not None and sizes and not any(isinstance(t, GradientEdge) for t in inputs):
        run = _engine_run_backward if timeout is None else functools.partial(_engine_run_backward, timeout=timeout)
        return vmapped_backward(run, outputs, grads, keep_graph, create_graph, inputs, allow_unreachable,
                                accumulate_grad)
    n = sizes[0] if sizes else 0
    passes = []
    for b in range(n):
        seeds = tuple(g[b] if create_graph and g._requires_grad else Tensor._make(g._data[b], g._device)
                      for g in grads)
        passes.append(_engine_run_backward(outputs, seeds, keep_graph or b < n - 1, create_graph, inputs,
                                           allow_unreachable, accumulate_grad, timeout))
    result = []
    for k in range(len(inputs)):
        parts = [p[k] for p in passes]
        if all(r is None for r in parts):
            result.append(None)
            continue
        parts = [r if r is not None else zeros_like(inputs[k]) for r in parts]
        if create_graph and any(r._requires_grad for r in parts):
            result.append(_StackBatch.apply(*parts))
        else:
            result.append(Tensor._make(parts[0]._device.backend.xp.stack([r._data for r in parts]), parts[0]._device))
    return tuple(result)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None, *, timeout=None):
    """Accumulates into ``.grad`` of the leaves the gradients of ``tensors``.

    Args:
        tensors (Tensor, GradientEdge, or sequence of them): the outputs to differentiate.
        grad_tensors (Tensor, None, or sequence): the gradient of each output; None is allowed
            for scalar outputs (ones) and outputs that do not require grad.
        retain_graph (bool, optional): keep the graph for another pass; defaults to ``create_graph``.
        create_graph (bool): record the pass itself, for higher-order derivatives.
        inputs (Tensor, GradientEdge, or sequence of them, optional): accumulate only into these
            tensors' ``.grad`` (leaves, or non-leaves, whose gradient is then retained); for an
            edge, run only what leads to its node, and the node itself.
        timeout (float, optional): retrograd's own: seconds the pass may run; past them it stops at
            its next node boundary and raises ``BackwardTimeout`` (Note [Stopping a pass from
            outside] says what is accumulated by then).

    Raises:
        RuntimeError: an output does not require grad, or an implicit gradient is asked for a
            non-scalar output.
        BackwardTimeout: the pass ran longer than ``timeout``.
        BackwardCancelled: the pass was cancelled from another thread (``graph.current_passes()``).

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> rg.autograd.backward((x * x).sum()); x.grad
        tensor([2., 4.])
    """
    if grad_variables is not None:
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to backward(). "
                               "Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    else:
        inputs = ()
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    else:
        grad_tensors = _as_tuple(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    grad_tensors = _make_grads(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    timeout = _check_timeout(timeout)
    if create_graph:  # PyTorch's engine warns once the pass's arguments are checked; here, before
        warn_once(_CREATE_GRAPH_CYCLE, stacklevel=3)
    _engine_run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, True, bool(inputs), timeout)


# PyTorch's warning, given once per process (every time under set_warn_always), where a backward records its pass
_CREATE_GRAPH_CYCLE = ("Using backward() with create_graph=True will create a reference cycle between the parameter "
                       "and its gradient which can cause a memory leak. autograd.grad records the pass without "
                       "storing into .grad, so it makes no such cycle; after a backward that records its pass, "
                       "set the parameters' .grad back to None to break it.")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False, *, timeout=None):
    """Returns the gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    Only the nodes on a path from the outputs to the inputs run.

    Args:
        outputs (Tensor, GradientEdge, or sequence of them): the outputs to differentiate.
        inputs (Tensor, GradientEdge, or sequence of them): what to differentiate with respect to.
        grad_outputs (Tensor, None, or sequence, optional): the gradient of each output.
        retain_graph (bool, optional): keep the graph; defaults to ``create_graph``.
        create_graph (bool): record the pass, so the results can be differentiated again.
        allow_unused (bool, optional): return None for inputs the outputs do not depend on
            instead of raising; defaults to ``materialize_grads``.
        is_grads_batched (bool): the first dim of every ``grad_outputs`` tensor is a batch: the
            result is the stack of the gradients for each of its entries (one pass, vmapped over it).
        materialize_grads (bool): return zeros instead of None for unused inputs.
        timeout (float, optional): retrograd's own: seconds the pass may run, as in ``backward``.

    Returns:
        tuple of Tensor (or None): one gradient per input.

    Raises:
        RuntimeError: an input was not used in the graph (unless ``allow_unused``).
        BackwardTimeout: the pass ran longer than ``timeout``.
        BackwardCancelled: the pass was cancelled from another thread.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor(3., requires_grad=True)
        >>> rg.autograd.grad(x ** 2, x)
        (tensor(6.),)
    """
    loop = engine._loop  # the plainest call, compiled where it applies: Note [The compiled loop]
    if (loop is not None and grad_outputs is None and only_inputs is True and is_grads_batched is False
            and materialize_grads is False and timeout is None and not MODES_ACTIVE[0]
            and interrupts.Watchdog.seconds is None):  # See Note [Stopping a pass from outside]
        result = _compiled_pass(loop.grad, engine._default_engine, outputs, inputs,
                                create_graph if retain_graph is None else retain_graph, create_graph, allow_unused)
        if result is not NotImplemented:
            return result
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    t_outputs = _as_tuple(outputs)
    t_inputs = _as_tuple(inputs)
    overridable = t_outputs + t_inputs  # as PyTorch's: See Note [Where __torch_function__ is checked]
    if (MODES_ACTIVE[0] or any(type(t) is not Tensor for t in overridable)) and has_torch_function(overridable):
        return handle_torch_function(grad, overridable, outputs, inputs, grad_outputs=grad_outputs,
                                     retain_graph=retain_graph, create_graph=create_graph, only_inputs=only_inputs,
                                     allow_unused=allow_unused, is_grads_batched=is_grads_batched,
                                     materialize_grads=materialize_grads)
    if not t_inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", stacklevel=2)
    if grad_outputs is None:
        grad_outputs = (None,) * len(t_outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    if len(grad_outputs) != len(t_outputs):
        raise RuntimeError(f"grad_outputs must be of the same length as outputs, but got {len(grad_outputs)} and "
                           f"{len(t_outputs)}")
    grad_outputs = _make_grads(t_outputs, grad_outputs, is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    run = _run_batched_backward if is_grads_batched else _engine_run_backward
    result = run(t_outputs, grad_outputs, retain_graph, create_graph, t_inputs, allow_unused, False,
                 _check_timeout(timeout))
    if materialize_grads:
        if any(r is None and isinstance(inp, GradientEdge) for r, inp in zip(result, t_inputs, strict=True)):
            raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
        result = [r if r is not None else zeros_like(inp, requires_grad=create_graph) for r, inp in
                  zip(result, t_inputs, strict=True)]
    if any(getattr(inp, "is_mkldnn", False) for inp in t_inputs):  # its layout, as PyTorch's engine requires it
        result = [r._retyped(type(inp)) if type(r) is Tensor and getattr(inp, "is_mkldnn", False) else r
                  for r, inp in zip(result, t_inputs, strict=True)]  # See Note [The MKL-DNN layout] in ops/mkldnn.py
    return tuple(result)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None, *, timeout=None):
    """Computes the gradient of this tensor with respect to the graph leaves; see ``autograd.backward``
    (``timeout=`` too)."""
    if type(self) is not Tensor:  # See Note [Where __torch_function__ is checked]
        if has_torch_function((self,)):
            kwargs = dict(gradient=gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)
            if timeout is not None:
                kwargs["timeout"] = timeout
            return handle_torch_function(_tensor_backward, (self,), self, **kwargs)
    loop = engine._loop  # the plainest call, compiled where it applies: Note [The compiled loop]
    if (loop is not None and gradient is None and inputs is None and create_graph is False and timeout is None
            and interrupts.Watchdog.seconds is None  # See Note [Stopping a pass from outside]
            and _compiled_pass(loop.backward, engine._default_engine, self, bool(retain_graph))):
        return
    backward(self, gradient, retain_graph, create_graph, inputs=inputs, timeout=timeout)


_compiled_pass = interrupts.deliver_compiled  # See Note [Interrupts during backward]
_tensor_backward.__name__ = _tensor_backward.__qualname__ = "backward"
Tensor.backward = _tensor_backward
