"""Builds the optional C accelerators in retrograd/_C (Note [The compiled modules]).

The metadata is in pyproject.toml. ``optional=True``: without a C compiler the build skips them
and retrograd runs its pure-Python code, which does the same.
"""
from setuptools import Extension, setup

try:  # the array pool is a NumPy memory handler: it needs NumPy's headers (Note [Large arrays apart])
    import numpy
    _POOL = [Extension("retrograd._C._array_pool", ["retrograd/_C/_array_pool.c"], include_dirs=[numpy.get_include()],
                       optional=True)]
except ImportError:
    _POOL = []

_COMMON = ["retrograd/_C/_capi.h"]  # the helpers both modules include

setup(ext_modules=[
    Extension("retrograd._C._engine_loop", ["retrograd/_C/_engine_loop.c"], depends=_COMMON, optional=True),
    Extension("retrograd._C._op_call", ["retrograd/_C/_op_call.c"], depends=_COMMON, optional=True),
] + _POOL)
