"""Builds the optional C loop of the engine (Note [The compiled loop]); metadata is in pyproject.toml.

``optional=True``: without a C compiler the build skips it and retrograd runs its pure-Python loop.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("retrograd.autograd._engine_loop", ["retrograd/autograd/_engine_loop.c"],
                             optional=True)])
