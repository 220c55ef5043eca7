"""Builds the optional C accelerators in retrograd/_C (Note [The compiled modules]).

The metadata is in pyproject.toml. ``optional=True``: without a C compiler the build skips them
and retrograd runs its pure-Python code, which does the same.
"""
from setuptools import Extension, setup

_COMMON = ["retrograd/_C/_capi.h"]  # the helpers both modules include

setup(ext_modules=[
    Extension("retrograd._C._engine_loop", ["retrograd/_C/_engine_loop.c"], depends=_COMMON, optional=True),
    Extension("retrograd._C._op_call", ["retrograd/_C/_op_call.c"], depends=_COMMON, optional=True),
])
