"""Generated code: compiled once, at import, under a file name that tracebacks and debuggers show.

The op table generates Python source in a few places, each to unroll a loop over an op's tables
that would otherwise run on every call: the public function of an op (_signature.py), the
``apply`` of its node (_node.py), a forward's positional adapter and the formula and forward
constructors (_declarations.py). ``define`` compiles such source under a name like
``retrograd/ops/<generated>/mul.call.py`` and registers the source with ``linecache``, so that a
traceback through generated code shows its lines, not ``File "<string>"``.
"""
from __future__ import annotations

import inspect
import linecache
import os

__all__ = ["define", "generated_filename", "parameter_source"]

_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "<generated>")


def generated_filename(name: str) -> str:
    """The file name that generated code called ``name`` is shown under."""
    return os.path.join(_DIR, f"{name}.py")


def parameter_source(parameters, env: dict) -> tuple:
    """The parameter list of ``parameters`` (``inspect.Parameter``s) as source text, and the call that
    passes each on (keyword-only ones by keyword): ``("x, *, alpha=_d1", "x, alpha=alpha")``.

    Defaults are bound through ``env`` (``_d0``, ``_d1``...), so any value works as a default.
    """
    text, call = [], []
    kwonly = False
    for i, p in enumerate(parameters):
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not kwonly:
            text.append("*")
            kwonly = True
        if p.default is inspect.Parameter.empty:
            text.append(p.name)
        else:
            env[f"_d{i}"] = p.default
            text.append(f"{p.name}=_d{i}")
        call.append(f"{p.name}={p.name}" if kwonly else p.name)
    return ", ".join(text), ", ".join(call)


def define(source: str, name: str, env: dict, function: str):
    """Compiles ``source`` in the namespace ``env`` as ``<generated>/<name>.py``; returns ``env[function]``."""
    filename = generated_filename(name)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # mtime None: kept
    exec(compile(source, filename, "exec"), env)  # noqa: S102 - generated from an op's own tables
    return env[function]
