"""Every ``See Note [Title]`` in retrograd/ has a matching ``Note [Title]`` definition."""
import pathlib
import re

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "retrograd"
# A definition is a line holding only ``Note [Title]`` (in a docstring or a comment), underlined by
# ``~~~`` on the next line, as in STYLE.md.
DEFINITION = re.compile(r"^[ \t]*#?[ \t]*Note \[([^\]]+)\][ \t]*\n[ \t]*#?[ \t]*~{3,}", re.MULTILINE)
REFERENCE = re.compile(r"See Note \[([^\]]+)\]", re.IGNORECASE)


def _sources():
    return {str(path.relative_to(PACKAGE.parent)): path.read_text(encoding="utf-8")
            for pattern in ("*.py", "*.c") for path in sorted(PACKAGE.rglob(pattern))}


def _title(text):
    return " ".join(text.replace("#", " ").split())  # a title may wrap across comment lines


def _definitions(sources):
    return [_title(m.group(1)) for text in sources.values() for m in DEFINITION.finditer(text)]


def _missing(sources):
    defined = set(_definitions(sources))
    return sorted({f"{path}: Note [{_title(m.group(1))}]" for path, text in sources.items()
                   for m in REFERENCE.finditer(text) if _title(m.group(1)) not in defined})


def test_every_note_reference_has_a_definition():
    missing = _missing(_sources())
    assert not missing, "references to undefined Notes:\n" + "\n".join(missing)


def test_notes_are_defined_once():
    titles = _definitions(_sources())
    assert titles, "no Note definitions found: the pattern no longer matches STYLE.md's format"
    assert len(titles) == len(set(titles)), sorted(t for t in titles if titles.count(t) > 1)


def test_checker_finds_wrapped_references_and_reports_undefined_ones():
    sources = {
        "a.py": '"""\nNote [Freeing saved tensors]\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~\nWhy.\n"""\n',
        "b.py": "x = 1  # See Note [Freeing saved\n#   tensors]\ny = 2  # See Note [Nowhere]\n",
    }
    assert _definitions(sources) == ["Freeing saved tensors"]
    assert _missing(sources) == ["b.py: Note [Nowhere]"]
