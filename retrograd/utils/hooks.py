"""RemovableHandle: what every ``register_*hook`` returns, in autograd, nn and optim alike (``torch.utils.hooks``)."""
from __future__ import annotations

import itertools
import weakref

__all__ = ["RemovableHandle", "HookDict", "add_hook"]


class RemovableHandle:
    """A handle that removes the hook it was returned for: ``handle.remove()``, or leaving a ``with`` block.

    Args:
        hooks_dict (dict): the ``id -> hook`` dict the hook is registered in. It is held weakly
            where it can be (a ``HookDict`` or an ``OrderedDict``), so that a handle does not keep
            a graph node or a module's hooks alive.
        extra_dict (dict or list of dicts): more dicts keyed by the hook's id (a module's
            ``with_kwargs`` and ``always_call`` flags); ``remove()`` drops the id from them too.

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> with x.register_hook(lambda g: g * 10):
        ...     (x * 1).sum().backward()
        >>> x.grad
        tensor([10., 10.])
    """

    __slots__ = ("hooks_dict_ref", "id", "extra_dict_ref", "__weakref__")
    _next_id = itertools.count().__next__

    def __init__(self, hooks_dict: dict, *, extra_dict=None):
        self.hooks_dict_ref = _ref(hooks_dict)
        self.id = RemovableHandle._next_id()
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(_ref(d) for d in extra_dict) if isinstance(extra_dict, list) else ()

    def remove(self) -> None:
        """Unregisters the hook; removing it twice, or after its owner is gone, does nothing."""
        hooks = self.hooks_dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)
        for ref in getattr(self, "extra_dict_ref", ()):
            extra = ref()
            if extra is not None:
                extra.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _ref(d):
    """A weak reference to ``d`` where it takes one; else a function returning it (a plain dict)."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d


class HookDict(dict):
    """An ordered ``id -> hook`` dict that handles can refer to weakly."""
    __slots__ = ("__weakref__",)


def add_hook(hooks: dict, fn) -> RemovableHandle:
    """Registers ``fn`` in ``hooks`` after the hooks already there; returns its handle."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle
