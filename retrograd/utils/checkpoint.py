"""Activation checkpointing (see issue: engine services). Filled in with the engine's reentrant support."""
