"""vmap's randomness modes for what draws from the default generator outside the op table.

Note [Randomness under vmap]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The random ops of the table (``bernoulli``, ``normal``...) are taken by the level's interposer
like any op (``_vmap.py``). ``rand``, ``randn``, ``rand_like``, ``randn_like`` and ``dropout``
draw from the default generator directly, so while a vmap level is active the generator's NumPy
stream is guarded (``_GuardedStream``) and those functions are replaced, in ``retrograd`` and the
modules that define them, by versions that know the levels:

- 'error' (any active level): every draw raises PyTorch's error;
- 'same' (every level): one draw, unbatched, shared by all samples; a random op of the table
  with a batched argument (``bernoulli(p)``) runs once per sample with the generator rewound to
  the same state for each (``rewound``), so every sample draws the same numbers; and a chunked
  vmap (``chunk_size``) rewinds the default generator for each chunk, as PyTorch does;
- 'different': one draw per sample of every 'different' level, returned batched at those levels.

Under 'different', a draw from the guarded stream by any other function raises (its result
would silently be shared by the samples), except where the interposer runs a random op of the
table on a lifted batch (``allowed``). The replacement is process-wide while a level is active,
as the interposer is.
"""
from __future__ import annotations

import sys
import threading

from .. import _creation
from .._random import default_generator
from ..nn import functional as _F
from ._batched import levels, wrap

__all__ = ["RANDOMNESS_ERROR", "guard", "allowed", "real_stream", "rewound"]

RANDOMNESS_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                    "'different' randomness flags on vmap or perform the randomness operation out of vmap")
_UNSUPPORTED = ("vmap: randomness='different' is supported for rand, randn, rand_like, randn_like, dropout and the "
                "random ops; this random function would draw once for all samples.")

_state = threading.local()
_lock = threading.Lock()
_installed = [0, None]  # how many guards are active; the saved originals


def _mode():
    modes = {lv.randomness for lv in levels()}
    if "error" in modes:
        return "error"
    return "different" if "different" in modes else "same"


class _GuardedStream:
    """The default generator's NumPy generator while a vmap level is active (Note [Randomness under vmap])."""

    __slots__ = ("real",)

    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):
        if levels():
            mode = _mode()
            if mode == "error":
                raise RuntimeError(RANDOMNESS_ERROR)
            if mode == "different" and not getattr(_state, "allowed", 0):
                raise RuntimeError(_UNSUPPORTED)
        return getattr(self.real, name)


class rewound:
    """``with rewound(generator) as rewind:`` each ``rewind()`` puts the NumPy generator of
    ``generator`` (None: the default one) back to its state on entering: the same draws again."""

    def __init__(self, generator=None):
        self.stream = real_stream(generator)

    def __enter__(self):
        self.state = self.stream.bit_generator.state
        return self.rewind

    def rewind(self):
        self.stream.bit_generator.state = self.state

    def __exit__(self, *exc):
        return False


class allowed:
    """``with allowed():`` lets a random op of the table draw from the guarded stream (its batch is lifted)."""

    def __enter__(self):
        _state.allowed = getattr(_state, "allowed", 0) + 1

    def __exit__(self, *exc):
        _state.allowed -= 1
        return False


def real_stream(generator):
    """The NumPy generator of ``generator`` (or the default one), past the guard."""
    gen = generator or default_generator
    stream = gen.np
    return stream.real if type(stream) is _GuardedStream else stream


def _draw(method, size, generator, dtype, device, requires_grad):
    """A draw of logical ``size`` as the active levels' randomness says."""
    mode = _mode()
    if mode == "error":
        raise RuntimeError(RANDOMNESS_ERROR)
    different = [lv for lv in levels() if lv.randomness == "different"]
    shape = _creation._shape(size, "rand" if method == "random" else "randn")
    batch = tuple(lv.size for lv in different)
    array = getattr(real_stream(generator), method)(batch + shape)
    t = _creation._finish(array, dtype or _creation._dtype.get_default_dtype(), device, requires_grad)
    for lv in different:
        t = wrap(t, lv)
    return t


def _rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    return _draw("random", size, generator, dtype, device, requires_grad)


def _randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    return _draw("standard_normal", size, generator, dtype, device, requires_grad)


def _rand_like(input, *, dtype=None, device=None, requires_grad=False):
    shape, dtype, device = _creation._like(input, dtype, device)
    return _rand(shape, dtype=dtype, device=device, requires_grad=requires_grad)


def _randn_like(input, *, dtype=None, device=None, requires_grad=False):
    shape, dtype, device = _creation._like(input, dtype, device)
    return _randn(shape, dtype=dtype, device=device, requires_grad=requires_grad)


def _dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    keep = (_rand_like(input) >= p).to(input.dtype)
    mask = keep * (1.0 / (1.0 - p)) if p < 1.0 else keep * 0.0
    return input.mul_(mask) if inplace else input * mask


_REPLACED = (("rand", _rand), ("randn", _randn), ("rand_like", _rand_like), ("randn_like", _randn_like))


_TARGETS = []  # (module, name, replacement) for each function to replace, made on first use


def _targets():
    if not _TARGETS:
        out = [(_creation, n, f) for n, f in _REPLACED] + [(_F, "dropout", _dropout)]
        root = sys.modules.get("retrograd")  # the package's own names (it is imported by now)
        if root is not None:
            out += [(root, n, f) for n, f in _REPLACED]
        _TARGETS.extend(out)
    return _TARGETS


class guard:
    """``with guard():`` around a vmap level: the randomness of Note [Randomness under vmap]."""

    def __enter__(self):
        with _lock:
            if _installed[0] == 0:
                targets = _targets()
                saved = [(m, n, getattr(m, n)) for m, n, _ in targets]
                for m, n, f in targets:
                    setattr(m, n, f)
                stream = default_generator.np
                if type(stream) is not _GuardedStream:
                    default_generator.np = _GuardedStream(stream)
                _installed[1] = saved
            _installed[0] += 1

    def __exit__(self, *exc):
        with _lock:
            _installed[0] -= 1
            if _installed[0] == 0:
                for m, n, f in _installed[1]:
                    setattr(m, n, f)
                stream = default_generator.np
                if type(stream) is _GuardedStream:
                    default_generator.np = stream.real
                _installed[1] = None
        return False
