"""The factories as op calls, while an op-call interposer is active: See Note [Factories as op calls].

Each factory of ``retrograd._creation`` that PyTorch dispatches as an op (``rand``, ``zeros_like``,
``Tensor.new_zeros``...) is an op here too, made on first use: its parameters are the factory's (a
``*size`` is one parameter holding the sizes), it takes no tensor arguments (the tensor of a ``*_like``
or ``new_*`` factory is handed to it as it is), records nothing, and its forward runs the factory itself. The route below runs that op through
``call_op``, so every interposer sees the call under PyTorch's name (``aten.rand.default``), and a
selective checkpoint can store its output and hand it out again in the recomputation.
"""
from __future__ import annotations

import inspect
import threading

from .. import _creation
from .._device import device as _device_cls
from .._tensor import Tensor
from ._call import call_op, set_factory_route
from ._declarations import OpInfo

__all__ = ["factory_op"]

_ops: dict = {}  # name -> (OpInfo, the factory's signature, whether its sizes come as *size)
_local = threading.local()  # .running: a factory's own run is under way on this thread


def factory_op(name, factory):
    """The op of factory ``name`` (the public function ``factory``), made on first use."""
    found = _ops.get(name)
    if found is None:
        found = _ops[name] = _make(name, factory)
    return found[0]


def _make(name, factory):
    sig = inspect.signature(factory)
    params, keyword_only = [inspect.Parameter("xp", inspect.Parameter.POSITIONAL_OR_KEYWORD)], []
    varargs = None  # the position of a *size parameter
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            varargs = len(params) - 1
            params.append(inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD))
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            keyword_only.append(p.name)
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
        else:
            params.append(p)

    def forward(xp, *args, **kwargs):
        _local.running = True
        try:
            if varargs is not None:
                args = args[:varargs] + tuple(args[varargs])
            out = factory(*args, **kwargs)
        finally:
            _local.running = False
        return out._data

    forward.__signature__ = inspect.Signature(params)
    op = OpInfo(name, forward, {}, promote=None, view=False, tensors=(), lists=(), nondiff_outputs=(),
                node_name=None, multi_output=False, device_param="device")
    op.index_lists, op.jvp, op.jvp_names, op.inplace, op.public, op.function = frozenset(), None, None, False, False, \
        factory
    return op, sig, varargs


def _route(name, factory, args, **kwargs):
    """``factory(*args, **kwargs)`` as an op call; None where another factory's run made the call."""
    if getattr(_local, "running", False):
        return None
    op = factory_op(name, factory)
    sig = _ops[name][1]
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    values = bound.arguments
    requires_grad = values.get("requires_grad", False)
    device = values.get("device")
    like = values.get("input", values.get("self"))
    if device is None and isinstance(like, Tensor):
        device = like._device  # a *_like or new_* factory: its tensor's device
    elif device is not None and not isinstance(device, _device_cls):
        device = _device_cls(device)
    values["device"] = device
    if requires_grad:
        values["requires_grad"] = False  # the result is made a leaf that requires grad below
    call = tuple(values[p] for p in op.params)
    out = call_op(op, call)
    if requires_grad:
        if out._data.dtype.kind != "f":  # the factory's own error
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        out.requires_grad_(True)
    return out


set_factory_route(_route)
