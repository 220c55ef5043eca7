"""Builds the optional C accelerators (Note [The compiled loop], Note [The compiled op call]).

The metadata is in pyproject.toml. ``optional=True``: without a C compiler the build skips them
and retrograd runs its pure-Python code, which does the same.
"""
from setuptools import Extension, setup

_COMMON = ["retrograd/_capi.h"]  # the helpers both modules include

setup(ext_modules=[
    Extension("retrograd.autograd._engine_loop", ["retrograd/autograd/_engine_loop.c"], depends=_COMMON,
              optional=True),
    Extension("retrograd.ops._op_call", ["retrograd/ops/_op_call.c"], depends=_COMMON, optional=True),
])
