"""Utilities: hook handles (``utils.hooks``), checkpointing (``utils.checkpoint``) and data loading (``utils.data``)."""
