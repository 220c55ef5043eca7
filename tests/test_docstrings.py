"""The public API's docstrings: every ``Example::`` block runs as a doctest, and every function of
API.md's "Differentiable functions" list documents a summary, its arguments, its result and an example."""
from __future__ import annotations

import doctest
import inspect
import re

import pytest

import retrograd as rg

# API.md's "Differentiable functions" list, as the contract spells it.
DIFFERENTIABLE = """
add, sub, mul, div, neg, pow, exp, log, log1p, expm1, sqrt, rsqrt, abs, sign, sin,
cos, tan, tanh, sigmoid, relu, clamp, maximum, minimum, where, sum, mean, var, std,
prod, max, min, amax, amin, argmax, argmin, norm, matmul, mm, bmm, outer, einsum,
reshape, view, flatten, transpose, permute, t, unsqueeze, squeeze, expand,
expand_as, broadcast_to, cat, stack, split, chunk, gather, scatter_add,
index_select, masked_fill, softmax, log_softmax, logsumexp, cumsum, flip, roll, tril,
triu, diagonal, trace
""".replace("\n", " ").replace(" ", "").split(",")

# The public namespaces beyond the top level whose ``__all__`` names are documented the same way.
NAMESPACES = ["retrograd.nn.functional", "retrograd.nn.utils", "retrograd.nn.init", "retrograd.autograd",
              "retrograd.utils.data", "retrograd.optim", "retrograd.cuda", "retrograd.amp", "retrograd.distributions",
              "retrograd.linalg", "retrograd.profiler"]


def _documented_objects():
    """(qualified name, object) for retrograd's public functions and Tensor's public methods."""
    seen = set()
    for name in sorted(dir(rg)):
        obj = getattr(rg, name)
        if not name.startswith("_") and inspect.isroutine(obj):  # aliases too: each name is public
            seen.add(id(obj))
            yield f"retrograd.{name}", obj
    for name, obj in sorted(vars(rg.Tensor).items()):
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if not name.startswith("_") and inspect.isroutine(obj) and id(obj) not in seen:
            seen.add(id(obj))
            yield f"retrograd.Tensor.{name}", obj
    for namespace in NAMESPACES:
        module = eval(namespace, {"retrograd": rg})  # noqa: S307 - a dotted name of ours
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or (inspect.isroutine(obj) and id(obj) not in seen):
                seen.add(id(obj))
                yield f"{namespace}.{name}", obj


def _examples():
    cases = []
    for qualname, obj in _documented_objects():
        doc = obj.__doc__ or ""
        if "Example::" in doc:
            cases.append(pytest.param(qualname, doc, id=qualname))
    return cases


_PARSER = doctest.DocTestParser()


@pytest.mark.parametrize(("qualname", "doc"), _examples())
def test_example_runs(qualname, doc):
    """The ``Example::`` block prints exactly what it shows."""
    example_block = inspect.cleandoc(doc).split("Example::", 1)[1]
    test = _PARSER.get_doctest(example_block, {}, qualname, None, 0)
    assert test.examples, f"{qualname}: Example:: has no >>> lines"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_examples_were_collected():
    names = {p.values[0] for p in _examples()}
    assert {f"retrograd.{n}" for n in DIFFERENTIABLE} <= names


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_differentiable_function_is_documented(name):
    fn = getattr(rg, name)
    doc = inspect.cleandoc(fn.__doc__ or "")
    lines = doc.splitlines()
    assert lines and lines[0].strip(), f"{name}: no summary line"
    summary = lines[0]
    assert not summary.startswith(f"retrograd.{name}("), f"{name}: the docstring is only the signature"
    assert summary.endswith("."), f"{name}: the summary line should be one sentence: {summary!r}"
    assert len(lines) == 1 or not lines[1].strip(), f"{name}: the summary should be a single line"
    for section in ("Args:", "Returns:", "Example::"):
        assert f"\n{section}\n" in doc, f"{name}: no {section} section"
    example = doc.split("Example::", 1)[1]
    assert ">>> import retrograd as rg" in example
    assert f"rg.{name}(" in example, f"{name}: the example does not call rg.{name}"


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_args_section_names_every_parameter(name):
    fn = getattr(rg, name)
    doc = inspect.cleandoc(fn.__doc__)
    args = doc.split("\nArgs:\n", 1)[1].split("\n\n", 1)[0]
    documented = set(re.findall(r"^    (\**\w+):", args, re.M))
    params = {("*" if p.kind is p.VAR_POSITIONAL else "") + p.name
              for p in inspect.signature(fn).parameters.values()}
    assert documented == params


def test_defop_doc_keyword_sets_the_docstring_and_falls_back():
    from retrograd.ops._declarations import REGISTRY, defop
    try:
        documented = defop("_doc_probe", lambda xp, input: input, public=False, doc="Returns ``input``.")
        plain = defop("_doc_probe_plain", lambda xp, input: input, public=False)
    finally:
        REGISTRY.pop("_doc_probe", None)
        REGISTRY.pop("_doc_probe_plain", None)
    assert documented.__doc__ == "Returns ``input``."
    assert plain.__doc__ == "retrograd._doc_probe_plain(input)"
