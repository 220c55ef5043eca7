"""The default random generator: one NumPy PCG64 generator for the process, as ``torch.manual_seed``."""
from __future__ import annotations

import numpy as np

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "default_generator"]


class Generator:
    """A seedable source of random numbers whose state can be saved and restored."""

    def __init__(self, seed_value: int = 0):
        self.manual_seed(seed_value)

    def manual_seed(self, seed_value: int):
        self._seed = int(seed_value)
        self.np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        return self.np.bit_generator.state

    def set_state(self, state) -> None:
        self.np.bit_generator.state = state


default_generator = Generator(0)


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
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    default_generator.manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """Returns the default generator's state (an opaque object for ``set_rng_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores a state returned by ``get_rng_state``."""
    default_generator.set_state(new_state)
