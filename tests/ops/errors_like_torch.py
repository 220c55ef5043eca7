"""Comparing an error of retrograd's with PyTorch's: its type and its first sentence."""
import re

import pytest

import retrograd as rg


def first_sentence(exc) -> str:
    """The first sentence of an exception's message."""
    return re.split(r"(?<=\.)\s", str(exc), maxsplit=1)[0]


def same_error(call):
    """Asserts that ``call(lib)`` raises, with the same type and first sentence for retrograd and for torch."""
    import torch
    raised = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:  # any type: it is compared with PyTorch's
            call(lib)
        raised.append((type(info.value), first_sentence(info.value)))
    assert raised[0] == raised[1]
