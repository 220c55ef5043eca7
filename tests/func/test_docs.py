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


def test_readme_transforms_example_runs():
    section = README.read_text(encoding="utf-8").split("## Function transforms", 1)[1].split("\n## ", 1)[0]
    _run(section.split("```python", 1)[1].split("```", 1)[0], "README: Function transforms")
