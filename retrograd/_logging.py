"""``retrograd._logging``: PyTorch's ``torch._logging.set_logs`` for what retrograd logs (the autograd engine).

Note [The engine's log]
~~~~~~~~~~~~~~~~~~~~~~~
``set_logs(autograd=logging.DEBUG)`` makes every backward pass log, before each node it runs (the
GraphRoot aside), "Executing: <node> with grad_outputs: [f32[10], ...]" at DEBUG to the
``retrograd.autograd.graph`` logger, as PyTorch's ``torch.autograd.graph`` logger does. The log is
an observer of the engine (Note [Observing the engine]), registered only while the level set here
is DEBUG or lower, so with it off the engine pays nothing; setting the logger's level by other
means logs nothing. While a level is set, the ``retrograd.autograd`` logger has that level, a
handler of its own writing to stderr, and does not propagate, as PyTorch's registered loggers; a
call of ``set_logs()`` without it puts everything back.
"""
from __future__ import annotations

import logging
import threading

from .autograd import observation

__all__ = ["set_logs"]

_AUTOGRAD = "retrograd.autograd"
_node_log = logging.getLogger(_AUTOGRAD + ".graph")

_LEVELS = (logging.CRITICAL, logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG, logging.NOTSET)
_SHORT_DTYPES = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
                 "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8", "complex64": "c64",
                 "complex128": "c128"}


def _describe(grad) -> str:
    """A gradient as PyTorch's log writes it: ``f32[2, 3]``, or ``None``."""
    if grad is None:
        return "None"
    dtype = str(grad.dtype).rpartition(".")[2]
    return f"{_SHORT_DTYPES.get(dtype, dtype)}[{', '.join(str(n) for n in grad.shape)}]"


class _NodeLog:
    """The engine observer that logs each node before it runs: See Note [The engine's log]."""

    def begin(self, name, node, grads, args):
        if node is not None and name.startswith("autograd::engine::evaluate_function: "):
            _node_log.debug("Executing: %r with grad_outputs: [%s]", node,
                            ", ".join(_describe(g) for g in grads))

    def end(self, token):
        pass


class _Settings:
    """What ``set_logs`` has set: the autograd level, its observer and handler, under one lock."""
    lock = threading.Lock()
    observer = None
    handler = None


def _set_autograd(level) -> None:
    """Sets the ``retrograd.autograd`` logger to ``level`` (None: back to its default)."""
    logger = logging.getLogger(_AUTOGRAD)
    with _Settings.lock:
        if level is None:
            logger.setLevel(logging.NOTSET)
            if _Settings.handler is not None:
                logger.removeHandler(_Settings.handler)
                _Settings.handler = None
            logger.propagate = True
        else:
            logger.setLevel(level)
            if _Settings.handler is None:
                _Settings.handler = logging.StreamHandler()
                _Settings.handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
                logger.addHandler(_Settings.handler)
            logger.propagate = False
        wanted = level is not None and logger.getEffectiveLevel() <= logging.DEBUG
        if wanted and _Settings.observer is None:
            _Settings.observer = _NodeLog()
            observation.add_observer(_Settings.observer)
        elif not wanted and _Settings.observer is not None:
            observation.remove_observer(_Settings.observer)
            _Settings.observer = None


def set_logs(*, all=None, autograd=None) -> None:  # noqa: A002 - PyTorch's argument name
    """Sets the levels of retrograd's logs; each call replaces the settings of the previous one.

    Args:
        all (int, optional): the level of every log below that is not given.
        autograd (int, optional): the level of the ``retrograd.autograd`` loggers; ``logging.DEBUG``
            makes the engine log each node it runs (Note [The engine's log]).

    Raises:
        ValueError: a level is not one of ``logging``'s (50, 40, 30, 20, 10, 0).

    Example::
        >>> import logging
        >>> import retrograd as rg
        >>> rg._logging.set_logs(autograd=logging.INFO)
        >>> logging.getLogger("retrograd.autograd").level == logging.INFO
        True
        >>> rg._logging.set_logs()
    """
    for name, level in (("all", all), ("autograd", autograd)):
        if level is not None and (isinstance(level, bool) or level not in _LEVELS):
            raise ValueError(f"Unrecognized log level for log {name}: {level}, valid level values are: "
                             f"{','.join(str(v) for v in _LEVELS)}")
    _set_autograd(autograd if autograd is not None else all)
