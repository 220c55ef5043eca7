"""retrograd's optional C accelerators, in one place.

Note [The compiled modules]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Two C extension modules re-state, for their common case, steps that the Python code defines:
``_engine_loop.c`` the engine's per-node loop (Note [The compiled loop] in autograd/engine.py)
and ``_op_call.c`` an op call and the ops' public functions (Note [The compiled op call] in
ops/_compiled.py). They are built by ``pip install`` where a C compiler exists
(``optional=True`` in setup.py) and used unless ``RETROGRAD_COMPILED=0``.

They follow CPython's PEP 399: the Python code is the definition, and the whole test suite runs
against both. The C calls the same Python objects in the same order, and declines every case it
does not handle (returning to the Python code before it has done anything visible); it never
raises where the Python would succeed.

A third, ``_array_pool.c``, re-states nothing: it is NumPy's memory handler for large arrays
(Note [Large arrays apart] in retrograd/_runtime.py), loaded as ``array_pool`` whatever
``RETROGRAD_COMPILED`` says and installed unless ``RETROGRAD_MALLOC_TUNING=0``.

This package holds the C sources and the built modules. This module imports nothing of
retrograd, so that every layer may ask it for the modules: ``engine_loop`` and ``op_call`` are
the imported modules, or None where they are not built or are switched off. One module,
``_configure.py``, is allowed to import from every layer: it gathers the classes, functions and
values the C works with into one namespace, configures both modules with it, and switches them
on. Until then the C declines every call. ``retrograd.is_compiled()`` tells which are in use.
"""
from __future__ import annotations

import os

__all__ = ["wanted", "engine_loop", "op_call", "array_pool"]


def wanted() -> bool:
    """Whether retrograd is to use its C modules: unless the environment sets ``RETROGRAD_COMPILED=0``."""
    return os.environ.get("RETROGRAD_COMPILED", "1") != "0"


engine_loop = op_call = None
try:  # not an engine step but the allocator of large arrays: Note [Large arrays apart] in retrograd/_runtime.py
    from . import _array_pool as array_pool
except ImportError:  # not built, or NumPy's headers were missing at build time
    array_pool = None
if wanted():
    try:
        from . import _engine_loop as engine_loop
    except ImportError:  # not built (no C compiler at install time): the Python code runs
        engine_loop = None
    try:
        from . import _op_call as op_call
    except ImportError:
        op_call = None
