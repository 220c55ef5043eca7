"""Comparing what retrograd does with what PyTorch does: a result, or an error's type and first sentence.

A test module imports what it needs (``from errors_like_torch import same_in_both``); the tests
directory is on ``sys.path`` through its conftest.
"""
import re

import pytest

import retrograd as rg


def first_sentence(exc) -> str:
    """The first sentence of an exception's (or a warning's) message, with ``torch.`` read as ``retrograd.``.

    A sentence ends at a period and a space, except an ellipsis's ("functions with out=... arguments").
    """
    return re.split(r"(?<=[^.]\.)\s", str(exc).replace("torch.", "retrograd."), maxsplit=1)[0]


def outcome(scenario, lib, plain=None):
    """``("ok", result)`` of ``scenario(lib)``, the result passed through ``plain`` if given; or the
    name of the error it raised and that error's first sentence."""
    try:
        result = scenario(lib)
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return (type(e).__name__, first_sentence(e))
    return ("ok", result if plain is None else plain(result))


def same_in_both(scenario, plain=None):
    """Runs ``scenario`` with retrograd and with torch, asserts the outcomes agree, returns retrograd's."""
    import torch
    ours, theirs = outcome(scenario, rg, plain), outcome(scenario, torch, plain)
    assert ours == theirs
    return ours


def same_error(call):
    """Asserts that ``call(lib)`` raises, with the same type and first sentence for retrograd and for torch."""
    import torch
    raised = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:  # any type: it is compared with PyTorch's
            call(lib)
        raised.append((type(info.value), first_sentence(info.value)))
    assert raised[0] == raised[1]
