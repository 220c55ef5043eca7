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

    Example::
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> with x.register_hook(lambda g: g * 10):
        ...     (x * 1).sum().backward()
        >>> x.grad
        tensor([10., 10.])
    """

    __slots__ = ("hooks_dict_ref", "id", "__weakref__")
    _next_id = itertools.count().__next__

    def __init__(self, hooks_dict: dict):
        try:
            self.hooks_dict_ref = weakref.ref(hooks_dict)
        except TypeError:  # a plain dict takes no weak reference: hold it
            self.hooks_dict_ref = lambda: hooks_dict
        self.id = RemovableHandle._next_id()

    def remove(self) -> None:
        """Unregisters the hook; removing it twice, or after its owner is gone, does nothing."""
        hooks = self.hooks_dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class HookDict(dict):
    """An ordered ``id -> hook`` dict that handles can refer to weakly."""
    __slots__ = ("__weakref__",)


def add_hook(hooks: dict, fn) -> RemovableHandle:
    """Registers ``fn`` in ``hooks`` after the hooks already there; returns its handle."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle
