"""Utilities: hook handles (``utils.hooks``) and checkpointing (``utils.checkpoint``)."""
