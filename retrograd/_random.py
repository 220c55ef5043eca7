"""The default random generator: one NumPy PCG64 generator for the process, as ``torch.manual_seed``."""
from __future__ import annotations

import threading

import numpy as np

from ._device import device as _device

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "default_generator",
           "vmap_randomness", "set_vmap_randomness"]

_DEFAULT_SEED = 67280421310721  # what a new torch.Generator starts from


class Generator:
    """A seedable source of random numbers whose state can be saved and restored, as ``torch.Generator``.

    The random functions take one as ``generator=``; without one they use ``default_generator``.
    Its numbers are NumPy's PCG64 stream, not PyTorch's: the same seed gives the same numbers
    in retrograd every time, but not those PyTorch gives.

    Args:
        device (str or device): where its numbers are for (the CPU).

    Example::
        >>> import retrograd as rg
        >>> g = rg.Generator().manual_seed(1)
        >>> rg.equal(rg.rand(3, generator=g), rg.rand(3, generator=rg.Generator().manual_seed(1)))
        True
    """

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> "Generator":
        """Seeds the generator; returns it."""
        self._seed = int(seed)
        self.np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Seeds the generator from the operating system's entropy; returns the seed."""
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed it was last seeded with."""
        return self._seed

    def get_state(self):
        return self.np.bit_generator.state

    def set_state(self, state) -> None:
        self.np.bit_generator.state = state


default_generator = Generator().manual_seed(0)


def manual_seed(seed_value: int) -> Generator:
    """Seeds the default generator; returns it.

    Example::
        >>> import retrograd as rg
        >>> _ = rg.manual_seed(0); a = rg.rand(2)
        >>> _ = rg.manual_seed(0); rg.equal(rg.rand(2), a)
        True
    """
    return default_generator.manual_seed(seed_value)


def seed() -> int:
    """Seeds the default generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """Returns the default generator's state (an opaque object for ``set_rng_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores a state returned by ``get_rng_state``."""
    default_generator.set_state(new_state)


class _ThreadRandomness(threading.local):
    def __init__(self):
        self.handler = None


_thread = _ThreadRandomness()


def vmap_randomness():
    """This thread's vmap randomness while a vmap level is active in it, else None.

    Every function that draws from a generator outside the op table asks it first (See Note
    [Randomness under vmap] in func/_randomness.py): ``check()`` raises where a draw is refused,
    ``batch(into=None)`` is the batch sizes to draw in front of the logical shape, and
    ``wrap(tensor)`` makes such a draw the batched tensor of the logical shape.
    """
    return _thread.handler


def set_vmap_randomness(handler):
    """Makes ``handler`` this thread's vmap randomness (None: none); returns the one it replaces."""
    previous = _thread.handler
    _thread.handler = handler
    return previous
