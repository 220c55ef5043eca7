"""docs/PYTORCH_AUTOGRAD.md stays true: each public name of PyTorch's autograd is listed, as supported
(and present in retrograd's matching module, with its tests existing) or out of scope with a reason."""
from __future__ import annotations

import contextlib
import importlib
import pathlib
import re

import pytest

import retrograd as rg

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "PYTORCH_AUTOGRAD.md"
MODULES = {"torch.autograd": "retrograd.autograd", "torch.autograd.graph": "retrograd.autograd.graph",
           "torch.autograd.function": "retrograd.autograd.function",
           "torch.utils.checkpoint": "retrograd.utils.checkpoint"}
_ROW = re.compile(r"^\| `(\w+)` \| (.+?) \|(.*)\|$")


def _tables():
    """{torch module: [(name, status, tests)]} from the page's sections and rows."""
    tables, current = {}, None
    for line in PAGE.read_text().splitlines():
        if line.startswith("## "):
            current = tables.setdefault(line[3:].strip(), [])
        elif current is not None and (m := _ROW.match(line)):
            current.append(tuple(g.strip() for g in m.groups()))
    return tables


def test_the_page_has_a_table_per_module():
    assert set(_tables()) == set(MODULES)


@pytest.mark.parametrize("torch_module", sorted(MODULES))
def test_every_supported_name_exists_and_every_other_says_why(torch_module):
    ours = importlib.import_module(MODULES[torch_module])
    for name, status, tests in _tables()[torch_module]:
        if status.startswith("out of scope"):
            assert status.startswith("out of scope: ") and len(status) > 20, name
            assert not hasattr(ours, name), f"{name} exists now: list it as supported"
            continue
        assert hasattr(ours, name), f"{MODULES[torch_module]}.{name} is listed as supported"
        files = re.findall(r"`(test_\w+\.py)`", tests) + re.findall(r"`tests/\w+/(test_\w+)\*\.py`", tests)
        assert files, f"{name}: no test named"
        for f in files:
            assert list(ROOT.glob(f"tests/**/{f}*")), f"{name}: {f} does not exist"


@pytest.mark.parametrize("torch_module", sorted(MODULES))
def test_the_page_lists_exactly_torchs_public_names(torch_module):
    pytest.importorskip("torch")
    names = [row[0] for row in _tables()[torch_module]]
    assert sorted(names) == sorted(importlib.import_module(torch_module).__all__)


# -- the names the other tests do not otherwise reach ------------------------------------------------
def test_increment_version_counts_an_in_place_change_of_one_or_several_tensors():
    a, b = rg.ones(2), rg.ones(3)
    rg.autograd.graph.increment_version(a)
    rg.autograd.graph.increment_version([a, b])
    assert (a._version, b._version) == (2, 1)
    x = rg.ones(2, requires_grad=True)
    y = x * 1
    z = y * y
    rg.autograd.graph.increment_version(y)  # as if y had been written in place behind autograd's back
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been modified"):
        z.sum().backward()


def test_increment_version_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (rg, torch):
        t = lib.zeros(1)
        lib.autograd.graph.increment_version((t, t))
        assert t._version == 2


def test_custom_functions_are_made_by_function_meta_and_get_a_function_ctx():
    seen = []

    class Double(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(isinstance(ctx, rg.autograd.function.FunctionCtx))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    assert type(Double) is rg.autograd.function.FunctionMeta
    Double.apply(rg.ones(1, requires_grad=True)).sum().backward()
    assert seen == [True]


def test_noop_context_fn_and_the_ignored_ops():
    forward_ctx, recompute_ctx = rg.utils.checkpoint.noop_context_fn()
    assert isinstance(forward_ctx, contextlib.nullcontext) and isinstance(recompute_ctx, contextlib.nullcontext)
    assert rg.utils.checkpoint.SAC_IGNORED_OPS == set()
