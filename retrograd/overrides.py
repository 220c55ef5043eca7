"""``torch.overrides``: the ``__torch_function__`` protocol's public helpers.

A class with ``__torch_function__(cls, func, types, args=(), kwargs=None)`` takes over the calls of retrograd's
functions, Tensor methods and operators that it is an argument of (see Note [Where __torch_function__ is checked]
in retrograd/_overrides.py); a ``TorchFunctionMode`` takes over every call made inside ``with mode:``.

Example::
    >>> import retrograd as rg
    >>> class Logged(rg.Tensor):
    ...     seen = []
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         cls.seen.append(func.__name__)
    ...         return super().__torch_function__(func, types, args, kwargs)
    >>> x = rg.ones(2).as_subclass(Logged)
    >>> y = (x * 2).sum()
    >>> type(y).__name__, Logged.seen
    ('Logged', ['mul', 'sum'])
"""
from __future__ import annotations

import sys

from ._overrides import (BaseTorchFunctionMode, TorchFunctionMode, handle_torch_function, has_torch_function,
                         has_torch_function_unary, has_torch_function_variadic, is_tensor_like, state as _state,
                         _NO_WRAP)
from ._tensor import Tensor
from .ops._declarations import REGISTRY

__all__ = ["BaseTorchFunctionMode", "TorchFunctionMode", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like", "get_overridable_functions",
           "get_default_nowrap_functions", "is_tensor_method_or_property"]


def get_overridable_functions() -> dict:
    """``{namespace: [functions]}``: the public functions of retrograd and the methods of Tensor that call
    ``__torch_function__`` (retrograd's ops, whose public functions all check it, and Tensor's callables)."""
    functions = [op.function for op in REGISTRY.values() if op.public]
    methods = [getattr(Tensor, name) for name in dir(Tensor)
               if not name.startswith("_") and callable(getattr(Tensor, name, None))]
    return {sys.modules[__package__]: functions, Tensor: methods}


def get_default_nowrap_functions() -> set:
    """The functions whose results ``Tensor.__torch_function__`` gives back unconverted (``Tensor.grad``'s getter)."""
    return set(_NO_WRAP)


def is_tensor_method_or_property(func) -> bool:
    """Whether ``func`` is a method or property getter of Tensor (then its first argument is the tensor)."""
    return any(getattr(Tensor, name, None) is func for name in dir(Tensor)) or getattr(
        func, "__name__", None) == "__get__"


def _get_current_function_mode_stack() -> list:
    """This thread's active TorchFunctionModes, the innermost last."""
    return list(_state.modes)


def _is_torch_function_mode_enabled() -> bool:
    return bool(_state.modes) and not _state.all_disabled
