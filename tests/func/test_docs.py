"""The examples of retrograd.func's docstrings and of the README's transforms section run as doctests."""
import doctest
import inspect
import pathlib

import pytest

import retrograd as rg

_PARSER = doctest.DocTestParser()
README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _run(text, name):
    test = _PARSER.get_doctest(text, {}, name, None, 0)
    assert test.examples, f"{name}: no >>> lines"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


@pytest.mark.parametrize("name", rg.func.__all__)
def test_func_docstring_example_runs(name):
    doc = inspect.cleandoc(getattr(rg.func, name).__doc__)
    assert "Example::" in doc
    _run(doc.split("Example::", 1)[1], f"retrograd.func.{name}")


def _readme_blocks(title):
    section = README.read_text(encoding="utf-8").split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [part.split("```", 1)[0] for part in section.split("```python\n")[1:]]


@pytest.mark.parametrize("title,count", [("Function transforms", 2), ("Forward-mode AD", 1)])
def test_every_example_of_the_readmes_transform_sections_runs(title, count):
    blocks = _readme_blocks(title)
    assert len(blocks) >= count
    for k, block in enumerate(blocks):
        _run(block, f"README: {title}, example {k + 1}")


def test_the_readme_shows_every_transform():
    text = "".join(_readme_blocks("Function transforms") + _readme_blocks("Forward-mode AD"))
    for name in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
                 "functional_call", "stack_module_state", "vmap", "dual_level", "make_dual", "unpack_dual"):
        assert f"{name}(" in text, name
