"""vmap's randomness modes for what draws from a generator outside the op table.

Note [Randomness under vmap]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``vmap(..., randomness=)`` says what a random draw under the level gives, as torch.func's:

- 'error': every draw raises PyTorch's error (a level of any mode outside does not help);
- 'same': one draw, unbatched, shared by all samples; a random op of the table whose tensor
  argument is batched at the level raises PyTorch's error (its samples would draw apart); a
  chunked vmap (``chunk_size``) rewinds the generator for each chunk (``rewound``), as PyTorch does;
- 'different': one draw per sample, batched at the level; an in-place draw (``uniform_``...) into a
  tensor that is not batched at the level raises PyTorch's error (every sample would read the
  one draw).

The random ops of the table (``bernoulli``, ``normal``, ``poisson``, ``multinomial``,
``rrelu_with_noise``) are taken by the level's interposer like any op (``_vmap.py``), by their
batching rule when an argument is batched at the level and as a draw of unbatched arguments
otherwise (lifted to the batch under 'different'). Everything else that draws (the factories
``rand``, ``randn``, ``randint``, ``randperm``, ``normal`` of numbers, the in-place initialisers
of Tensor and ``nn.init``, the dropouts, ``rrelu``, the distributions' samplers) asks
``_random.vmap_randomness()`` first: the handler below while a vmap level is active in the
calling thread, None otherwise. It is set per thread when a level is entered (``guard``), so a
vmap in one thread changes nothing that another thread draws, and no module attribute is
replaced; the handler refuses a draw under 'error' (``check``), gives the batch sizes of the
'different' levels to draw in front of the logical shape (``batch``) and wraps such a draw at
those levels (``wrap``). A tangents-only level (``jacfwd``'s basis, Note [Batched tangents]) never
batches a primal, so only its 'error' counts.
"""
from __future__ import annotations

from .._random import default_generator, set_vmap_randomness
from ._batched import _primal_chain, levels, primal_levels, wrap

__all__ = ["RANDOMNESS_ERROR", "SAME_WITH_BATCHED_INPUT", "INPLACE_UNBATCHED", "guard", "rewound", "check_level"]

RANDOMNESS_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                    "'different' randomness flags on vmap or perform the randomness operation out of vmap")
SAME_WITH_BATCHED_INPUT = ("Vmap does not currently support same randomness with a batched tensor input. Please file "
                           "an issue with functorch")
INPLACE_UNBATCHED = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear like "
                     "same randomness. If this is necessary for your usage, please file an issue with functorch.")


def check_level(level, batched):
    """Raises where a random op of the table may not draw at ``level`` (its tensor argument ``batched`` there or not)."""
    if level.randomness == "error":
        raise RuntimeError(RANDOMNESS_ERROR)
    if batched and level.randomness == "same":
        raise RuntimeError(SAME_WITH_BATCHED_INPUT)


class _ThreadRandomness:
    """What a draw outside the op table does under this thread's vmap levels (Note [Randomness under vmap])."""

    __slots__ = ()

    @staticmethod
    def check():
        for lv in levels():
            if lv.randomness == "error":
                raise RuntimeError(RANDOMNESS_ERROR)

    @staticmethod
    def _different():
        return [lv for lv in primal_levels() if lv.randomness == "different"]

    def batch(self, into=None):
        """The batch sizes to draw in front of the logical shape, the outermost level's first.

        ``into``: the tensor an in-place draw writes, which must be batched at every 'different' level.
        """
        self.check()
        different = self._different()
        if into is not None and different:
            present = _primal_chain(into)[1]
            if any(not any(lv is p for p in present) for lv in different):
                raise RuntimeError(INPLACE_UNBATCHED)
        return tuple(lv.size for lv in different)

    def wrap(self, t):
        """``t``, whose leading dims are ``batch()``, as the batched tensor of its logical shape."""
        for lv in self._different():
            t = wrap(t, lv)
        return t


_HANDLER = _ThreadRandomness()


class guard:
    """``with guard():`` around a vmap level's function: this thread's draws follow its levels' randomness."""

    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = set_vmap_randomness(_HANDLER)

    def __exit__(self, *exc):
        set_vmap_randomness(self.previous)
        return False


class rewound:
    """``with rewound(generator) as rewind:`` each ``rewind()`` puts the NumPy generator of
    ``generator`` (None: the default one) back to its state on entering: the same draws again."""

    def __init__(self, generator=None):
        self.stream = (generator or default_generator).np

    def __enter__(self):
        self.state = self.stream.bit_generator.state
        return self.rewind

    def rewind(self):
        self.stream.bit_generator.state = self.state

    def __exit__(self, *exc):
        return False
