"""Utilities built on the engine: checkpointing."""
from . import checkpoint  # noqa: F401
