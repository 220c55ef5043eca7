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
from .._random import vmap_randomness
from .._tensor import Tensor
from ._call import call_op, set_factory_route
from ._codegen import define
from ._declarations import OpInfo

__all__ = ["factory_op"]

_ops: dict = {}  # name -> (OpInfo, its binder, where its device, requires_grad and tensor are in a call)
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
    binder, defaults, star = [], {}, False  # the source of bind's parameters, and their defaults
    for i, p in enumerate(sig.parameters.values()):
        text = p.name
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            varargs = len(params) - 1
            params.append(inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD))
            text, star = "*" + p.name, True
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            keyword_only.append(p.name)
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            if not star:
                binder.append("*")
                star = True
        else:
            params.append(p)
        if p.default is not inspect.Parameter.empty:
            defaults[f"_d{i}"] = p.default
            text += f"=_d{i}"
        binder.append(text)

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
    # bind: the factory's own signature (its errors for bad arguments), returning the op's arguments in order.
    bind = define(f"def bind({', '.join(binder)}):\n    return [{', '.join(op.params)}]\n", f"{name}.bind", defaults,
                  "bind")
    like = op.index.get("input", op.index.get("self"))
    return op, bind, op.index["device"], op.index.get("requires_grad"), like


def _route(name, factory, args, **kwargs):
    """``factory(*args, **kwargs)`` as an op call; None where another factory's run made the call."""
    if getattr(_local, "running", False) or vmap_randomness() is not None:
        return None  # under a vmap the factory draws as the level's randomness says (func/_randomness.py)
    found = _ops.get(name)
    if found is None:
        found = _ops[name] = _make(name, factory)
    op, bind, device_at, requires_grad_at, like_at = found
    call = bind(*args, **kwargs)
    device = call[device_at]
    if device is None:
        if like_at is not None and isinstance(call[like_at], Tensor):
            call[device_at] = call[like_at]._device  # a *_like or new_* factory: its tensor's device
    elif not isinstance(device, _device_cls):
        call[device_at] = _device_cls(device)
    requires_grad = requires_grad_at is not None and call[requires_grad_at]
    if requires_grad:
        call[requires_grad_at] = False  # the result is made a leaf that requires grad below
    out = call_op(op, tuple(call))
    if requires_grad:
        if out._data.dtype.kind != "f":  # the factory's own error
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        out.requires_grad_(True)
    return out


set_factory_route(_route)
