"""The inventory of PyTorch's own autograd tests stays true.

``tests/autograd/pytorch_inventory/*.tsv`` lists every test method of PyTorch's
``test/test_autograd.py`` and ``test/autograd/test_functional.py``, one line each::

    TestAutograd.test_hooks<TAB>ported<TAB>tests/autograd/test_hooks_pytorch.py::test_x tests/...::test_y
    TestAutograd.test_y<TAB>xfail<TAB>tests/autograd/test_z.py::test_w -- what is missing
    TestAutograd.test_z<TAB>out of scope<TAB>cuda: it compares the CUDA stream of ...

``ported`` names the tests of this suite that check the same behaviour against torch; ``xfail``
names the strict xfail that pins what is still missing; ``out of scope`` gives one of the
categories below and why. This file checks that every test named exists, that no PyTorch test is
listed twice, and that the counts in docs/PYTORCH_AUTOGRAD.md are the inventory's.
"""
from __future__ import annotations

import ast
import functools
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
INVENTORY = ROOT / "tests" / "autograd" / "pytorch_inventory"
STATUSES = ("ported", "xfail", "out of scope")
# What retrograd deliberately does not have; each line out of scope names one of these.
CATEGORIES = (
    "cuda",              # a CUDA device, several devices, accelerator streams or their synchronisation
    "complex",           # complex dtypes
    "sparse",            # sparse layouts
    "nested tensors",
    "quantized",
    "meta device",       # tensors without data
    "torchscript",       # torch.jit
    "torch.compile",     # dynamo, compiled autograd, inductor, torch.export
    "torch dispatch",    # TorchDispatchMode, __torch_dispatch__ subclasses, dispatch keys, FakeTensor
    "C++",               # C++ extensions, the C++ API, load_inline
    "private internals", # torch._C internals with no public equivalent
)
_REF = re.compile(r"(tests/[\w/]+\.py)::(\w+)")


def _entries():
    """[(file, line number, pytorch test, status, detail)] of every inventory file."""
    entries = []
    for path in sorted(INVENTORY.glob("*.tsv")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            assert len(fields) == 3, f"{path.name}:{number}: three tab-separated fields, not {len(fields)}"
            entries.append((path.name, number, *(f.strip() for f in fields)))
    return entries


@functools.lru_cache(maxsize=None)
def _test_functions(path):
    """The names of the functions (at any depth) defined in a test file."""
    tree = ast.parse((ROOT / path).read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_line_has_a_known_status():
    for name, number, test, status, detail in _entries():
        assert re.fullmatch(r"Test\w+\.test_\w+", test), f"{name}:{number}: {test!r} is not Class.test_name"
        assert status in STATUSES, f"{name}:{number}: unknown status {status!r}"
        if status == "out of scope":
            category, _, why = detail.partition(": ")
            assert category in CATEGORIES, f"{name}:{number}: {category!r} is not one of {CATEGORIES}"
            assert len(why) >= 10, f"{name}:{number}: say why {test} is out of scope"


def test_no_pytorch_test_is_listed_twice():
    seen = {}
    for name, number, test, *_ in _entries():
        assert test not in seen, f"{test} is listed in {seen[test]} and in {name}:{number}"
        seen[test] = f"{name}:{number}"


def test_every_test_named_exists():
    for name, number, test, status, detail in _entries():
        if status == "out of scope":
            continue
        refs = _REF.findall(detail)
        assert refs, f"{name}:{number}: {test} names no test of ours"
        for path, function in refs:
            assert (ROOT / path).is_file(), f"{name}:{number}: {path} does not exist"
            assert function in _test_functions(path), f"{name}:{number}: {path} has no {function}"
        if status == "xfail":
            assert " -- " in detail, f"{name}:{number}: say what is missing after ' -- '"


def counts():
    """{status: number of PyTorch tests} over the whole inventory."""
    result = dict.fromkeys(STATUSES, 0)
    for *_, status, _detail in _entries():
        result[status] += 1
    return result


def test_the_autograd_page_states_the_inventorys_counts():
    if not _entries():
        pytest.skip("the inventory is empty")
    page = (ROOT / "docs" / "PYTORCH_AUTOGRAD.md").read_text()
    c = counts()
    stated = re.search(r"<!-- inventory: (\d+) ported, (\d+) xfail, (\d+) out of scope -->", page)
    assert stated, "docs/PYTORCH_AUTOGRAD.md lacks the inventory's counts comment"
    assert tuple(map(int, stated.groups())) == (c["ported"], c["xfail"], c["out of scope"])
