"""The ``__torch_function__`` protocol: how Tensor subclasses and tensor-likes override retrograd's functions.

A class that defines ``__torch_function__(cls, func, types, args=(), kwargs=None)`` (a Tensor subclass,
or any other class: a *tensor-like*) gets the calls of the public functions, Tensor methods and
operators that it takes part in, as PyTorch's. ``Tensor.__torch_function__`` is the default a
subclass inherits: it runs ``func`` with subclass dispatch off and gives the Tensor results the
subclass (``_convert``), so ``class T(Tensor): pass`` keeps ``T`` through ops. See Note [Where
__torch_function__ is checked] for where the calls look for it, and what that costs.
"""
from __future__ import annotations

import threading

from ._tensor import Tensor, _torch_function

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "handle_torch_function",
           "is_tensor_like", "DisableTorchFunctionSubclass", "DisableTorchFunction", "disabled_torch_function_impl",
           "get_overloaded_args", "dispatch_op", "dispatch_list", "wants_dispatch", "torch_function_dispatch",
           "TorchFunctionMode", "BaseTorchFunctionMode", "state", "convert", "PLAIN_TYPES", "wrap_tensor_methods",
           "dispatch_self", "any_mode", "mode_listeners", "MODES_ACTIVE", "wrap_while_modes"]


# Note [Where __torch_function__ is checked]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As in PyTorch, the check happens where a call enters retrograd, never inside: in an op's public
# function (the C op call, the generated fast call and the forwarding function of _signature.py,
# which are also Tensor's methods and operators), in the in-place methods, in indexing, and in
# the Python functions wrapped by ``torch_function_dispatch``. An op call made by retrograd's own
# code (``call_op``, a formula) is not checked, as an ATen call made by PyTorch's C++ is not.
#
# The check costs nothing on the common path: an argument whose type is exactly Tensor takes the
# path it always took. The C op call declines every other type in a tensor position, except a
# Python number or None, and every Tensor subclass but Parameter (whose ``__torch_function__`` is
# ``disabled_torch_function_impl``, as PyTorch's, so that it never dispatches); the generated
# function then looks at what it got: a subclass whose ``__torch_function__`` is not the disabled
# one, or a non-number with a ``__torch_function__`` (a tensor-like), hands the call to
# ``dispatch_op``, which collects the overloaded arguments (subclasses before superclasses, each
# type once), calls their ``__torch_function__`` in turn until one returns something other than
# NotImplemented, and raises PyTorch's TypeError where all return NotImplemented.
#
# A TorchFunctionMode (``with mode:``) sees every call first. While one is active, every call takes
# the Python path through the op-call interposition (Note [Op call interposition] in ops/_call.py):
# the mode's interposer hands each call to ``dispatch_op`` before the op runs, so plain calls pay
# nothing while no mode is active.
class _State(threading.local):
    """This thread's switches: ``DisableTorchFunctionSubclass`` and ``DisableTorchFunction``, and the mode stack."""

    def __init__(self):
        self.subclass_disabled = False
        self.all_disabled = False
        self.modes = []


state = _State()


class _DisabledImpl:
    """``torch._C._disabled_torch_function_impl``: the ``__torch_function__`` of a class that never dispatches
    (``nn.Parameter``'s). Called, it runs ``func`` with subclass dispatch off. It binds to no instance."""

    __slots__ = ()

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"


disabled_torch_function_impl = _DisabledImpl()
PLAIN_TYPES = frozenset({int, float, bool, complex, str, type(None), type(Ellipsis), slice, tuple, list})


class DisableTorchFunctionSubclass:
    """``with DisableTorchFunctionSubclass():`` calls inside dispatch to no subclass nor tensor-like (modes still run)."""

    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = state.subclass_disabled
        state.subclass_disabled = True
        return self

    def __exit__(self, *exc):
        state.subclass_disabled = self.prev
        return False


class DisableTorchFunction:
    """``with DisableTorchFunction():`` calls inside dispatch to nothing: no subclass, tensor-like or mode."""

    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = state.all_disabled
        state.all_disabled = True
        return self

    def __exit__(self, *exc):
        state.all_disabled = self.prev
        return False


def wants_dispatch(x) -> bool:
    """Whether ``x`` (not exactly a Tensor) overrides calls: its type has a ``__torch_function__`` that is not the
    disabled one, and dispatch is not switched off in this thread."""
    tp = type(x)
    if tp is Tensor or tp in PLAIN_TYPES:
        return False
    fn = getattr(tp, "__torch_function__", None)
    return fn is not None and fn is not disabled_torch_function_impl and not (
        state.subclass_disabled or state.all_disabled)


def is_tensor_like(inp) -> bool:
    """``torch.overrides.is_tensor_like``: a Tensor, or an object whose type defines ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def _relevant_overloaded(relevant_args):
    return [a for a in relevant_args if wants_dispatch(a)]


def has_torch_function(relevant_args) -> bool:
    """Whether any of ``relevant_args`` would dispatch a call to its ``__torch_function__`` (or a mode is active)."""
    if state.all_disabled:
        return False
    if state.modes:
        return True
    return any(wants_dispatch(a) for a in relevant_args)


def has_torch_function_unary(arg) -> bool:
    return has_torch_function((arg,))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def get_overloaded_args(relevant_args):
    """The arguments whose ``__torch_function__`` is tried, in PyTorch's order: one per type, each subclass
    before its superclasses, else in the order given."""
    types, out = [], []
    for arg in relevant_args:
        tp = type(arg)
        if tp in types or not wants_dispatch(arg):
            continue
        types.append(tp)
        index = len(out)
        for i, old in enumerate(out):
            if issubclass(tp, type(old)):
                index = i
                break
        out.insert(index, arg)
    return out


def _func_name(public_api):
    name = getattr(public_api, "__name__", repr(public_api))
    op = getattr(public_api, "op", None)
    if op is not None and getattr(public_api, "__module__", None) == "retrograd":
        return f"torch.{name}"
    return f"{getattr(public_api, '__module__', None)}.{name}"


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls ``__torch_function__`` of the active mode, then of each overloaded argument of ``relevant_args``, until
    one returns something other than NotImplemented; ``torch.overrides.handle_torch_function``.

    Raises:
        TypeError: every handler returned NotImplemented (PyTorch's words).
    """
    overloaded = get_overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    if state.modes and not state.all_disabled:
        mode = state.modes.pop()  # the mode runs with itself off, as PyTorch's
        try:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            state.modes.append(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    handlers = "".join(f"\n  - {'tensor subclass' if isinstance(a, Tensor) else 'tensor-like'} {type(a)}"
                       for a in overloaded)
    raise TypeError(f"Multiple dispatch failed for '{_func_name(public_api)}'; all __torch_function__ handlers "
                    f"returned NotImplemented:\n{handlers}\n\nFor more information, try re-running with "
                    "TORCH_LOGS=not_implemented")


def _bound_call(op, args):
    """``args`` (one per parameter of ``op``) as the call's positional arguments and keywords: the trailing ones
    left at their defaults dropped, the keyword-only ones that are not as keywords."""
    params = list(op.signature.parameters.values())
    n = len(args)
    while n and params[n - 1].default is not params[n - 1].empty and args[n - 1] is params[n - 1].default:
        n -= 1
    positional, kwargs = [], {}
    for p, a in zip(params[:n], args[:n]):
        if p.kind is p.KEYWORD_ONLY:
            if a is not p.default:
                kwargs[p.name] = a
        else:
            positional.append(a)
    return tuple(positional), kwargs


def dispatch_op(func, op, args):
    """The call of ``func`` (``op``'s public function, a method or operator of it) on ``args`` (one per parameter)
    through ``__torch_function__``. See Note [Where __torch_function__ is checked]."""
    relevant = []
    for i in op.tensor_pos:
        if i < len(args):
            a = args[i]
            if i in op.index_lists and type(a) in (list, tuple):
                relevant.extend(a)
            else:
                relevant.append(a)
    positional, kwargs = _bound_call(op, args)
    return handle_torch_function(func, relevant, *positional, **kwargs)


def dispatch_list(seq) -> bool:
    """Whether a sequence given for a tensor list argument holds something that dispatches."""
    return type(seq) in (list, tuple) and any(type(t) is not Tensor and wants_dispatch(t) for t in seq)


def torch_function_dispatch(fn):
    """Wraps the Python function ``fn`` (its first argument a tensor) so that a call with an overriding first
    argument (or any while a mode is active) goes through ``__torch_function__`` with ``func`` the wrapper."""
    def wrapper(*args, **kwargs):
        if args and (type(args[0]) is not Tensor or _active[0]) and has_torch_function(args[:1]):
            return handle_torch_function(wrapper, args[:1], *args, **kwargs)
        return fn(*args, **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


def wrap_tensor_methods(names) -> None:
    """Makes each Tensor method of ``names`` (written in Python) look for ``__torch_function__`` on ``self`` first,
    as PyTorch's methods do (Note [Where __torch_function__ is checked])."""
    for name in names:
        method = Tensor.__dict__[name]
        if isinstance(method, property):
            continue
        wrapper = torch_function_dispatch(method)
        wrapper.__name__ = name  # ``func.__name__`` as PyTorch's, where ``method`` is a lambda or another's function
        setattr(Tensor, name, wrapper)


_MODE_WRAPPED = {}  # name -> the method, for the Tensor methods wrapped only while a mode is active


def wrap_while_modes(names) -> None:
    """Makes each Tensor method of ``names`` (whose own check is ``type(self) is not Tensor`` alone) wrapped by
    ``torch_function_dispatch`` while a TorchFunctionMode is active in some thread, so that a mode sees its calls
    on plain tensors too, and plain calls pay nothing otherwise."""
    for name in names:
        _MODE_WRAPPED[name] = Tensor.__dict__[name]


def _swap_mode_wrappers(on) -> None:
    for name, method in _MODE_WRAPPED.items():
        if on:
            wrapper = torch_function_dispatch(method)
            wrapper.__name__ = name
            setattr(Tensor, name, wrapper)
        else:
            setattr(Tensor, name, method)


def dispatch_self(func, self, *args, **kwargs):
    """``func(self, *args, **kwargs)`` through ``__torch_function__`` where ``self`` (or a mode) overrides it, else
    NotImplemented: the check of a Tensor method written in Python, after ``type(self) is not Tensor``."""
    if has_torch_function((self,)):
        return handle_torch_function(func, (self,), self, *args, **kwargs)
    return NotImplemented


def any_mode() -> bool:
    """Whether a TorchFunctionMode is active in some thread (a cheap first check before ``state.modes``)."""
    return _active[0] != 0


def convert(ret, cls):
    """PyTorch's ``torch._tensor._convert``: ``ret`` with each Tensor in it (tuples and lists too) made a ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        ret = type(ret)(*(convert(r, cls) for r in ret)) if hasattr(ret, "_fields") else type(ret)(
            convert(r, cls) for r in ret)
    return ret


_NO_WRAP = set()  # funcs whose results the default __torch_function__ leaves as they are (Tensor.grad's getter)


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """The default ``__torch_function__`` of Tensor: ``func`` run with subclass dispatch off, its Tensor results
    given the class ``cls``; NotImplemented where some type of ``types`` is not a base of ``cls``."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _NO_WRAP:
            return ret
        return convert(ret, cls)


Tensor.__torch_function__ = classmethod(_tensor_torch_function)


class TorchFunctionMode:
    """A mode whose ``__torch_function__(func, types, args=(), kwargs=None)`` sees every call made inside
    ``with mode:`` first (``torch.overrides.TorchFunctionMode``). It runs with itself inactive, so its own calls of
    ``func`` run as usual."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        push_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        pop_mode(self)
        return False


class BaseTorchFunctionMode(TorchFunctionMode):
    """A TorchFunctionMode that calls ``func`` as it is."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


mode_listeners = []  # called with whether any thread has a mode active (ops/_signature.py interposes while one is)
_active = MODES_ACTIVE = _torch_function.modes  # [how many threads have a mode active]: a cheap first check
_torch_function.dispatch_self = staticmethod(dispatch_self)
mode_listeners.append(_swap_mode_wrappers)
_active_lock = threading.Lock()


def push_mode(mode) -> None:
    state.modes.append(mode)
    with _active_lock:
        _active[0] += 1
        if _active[0] == 1:
            for listener in mode_listeners:
                listener(True)


def pop_mode(mode) -> None:
    if state.modes and state.modes[-1] is mode:
        state.modes.pop()
    elif mode in state.modes:
        state.modes.remove(mode)
    else:
        return
    with _active_lock:
        _active[0] -= 1
        if _active[0] == 0:
            for listener in mode_listeners:
                listener(False)
