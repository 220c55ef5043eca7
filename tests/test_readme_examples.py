"""The README's examples of "Seeing inside a backward pass" run, and print what the README shows.

Each example marked ``<!-- checked: NAME -->`` is a ``python`` block followed by the block of its
output; it is run here as the file ``example.py`` (so the lines its output names are the block's
own) and its printed lines compared with the README's, times, percentages and object ids set
aside (they differ from run to run), and so are the lines of tracebacks outside the example. ``any order`` in the marker compares the lines as a multiset
(a table sorted by time).
"""
import contextlib
import importlib.util
import io
import linecache
import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
SECTION = "## Seeing inside a backward pass"
_MARKED = re.compile(r"<!-- checked: (?P<name>[\w-]+)(?P<any>, any order)? -->\n+```python\n(?P<code>.*?)```\n+"
                     r"```\n(?P<out>.*?)```", re.S)
_VARYING = [(re.compile(r"\d+(?:\.\d+)?(?:us|ms|s)\b"), "<time>"), (re.compile(r"\d+\.\d+%|\bNaN\b"), "<share>"),
            (re.compile(r"\d{9,}"), "<id>"), (re.compile(r"\(seq \d+\)"), "(seq <n>)")]


def _section():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start:end if end >= 0 else len(text)]


EXAMPLES = {m["name"]: m for m in _MARKED.finditer(_section())}


# A traceback's entry for a frame outside the example (the test's own, pytest's), with its source line.
_OUTER_FRAME = re.compile(r'  File "(?!example\.py")[^"]*", line \d+, in [^\n]*\n(?:    [^\n]*\n)?')


def _key_lines(text):
    lines = []
    for line in text.splitlines():
        for pattern, placeholder in _VARYING:
            line = pattern.sub(placeholder, line)
        line = " ".join(line.split())
        if line:
            lines.append(line)
    return lines


def _run(code, directory):
    """What ``code`` prints, run as ``example.py`` in ``directory`` (its source lines known to tracebacks)."""
    linecache.cache["example.py"] = (len(code), None, code.splitlines(True), "example.py")
    namespace = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            exec(compile(code, "example.py", "exec"), namespace)
    finally:
        os.chdir(cwd)
        linecache.cache.pop("example.py", None)
    return printed.getvalue()


def test_the_section_has_its_checked_examples():
    assert set(EXAMPLES) >= {"profiler", "explain", "detect-nonfinite", "memory-summary", "viz"}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_an_example_prints_what_the_readme_shows(name, tmp_path):
    example = EXAMPLES[name]
    if "retrograd.viz" in example["code"] and importlib.util.find_spec("graphviz") is None:
        pytest.skip("the graphviz package (the 'viz' extra) is not installed")
    printed = _key_lines(_OUTER_FRAME.sub("", _run(example["code"], tmp_path)))
    shown = _key_lines(example["out"])
    if example["any"]:
        assert sorted(printed) == sorted(shown)
    else:
        assert printed == shown
