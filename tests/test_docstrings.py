"""Every public name of ``fastcdl`` documents itself in numpydoc sections, which the API
reference (``make docs``) is built from: a function says its Parameters, what it Returns and
gives Examples; a class documents its fields (Attributes, or Parameters of its constructor)
and gives Examples; a warning or error says when it is raised. Read from the docstrings as
``help()`` shows them, so it costs nothing to run."""

import dataclasses
import inspect
import re

import pytest

import fastcdl

NAMES = sorted(fastcdl.__all__)


def _sections(doc: str) -> set[str]:
    """The numpydoc section titles of a docstring: a line underlined by dashes of its length."""
    lines = inspect.cleandoc(doc).splitlines()
    return {
        a.strip()
        for a, b in zip(lines, lines[1:])
        if re.fullmatch(r"-{3,}", b.strip()) and len(b.strip()) == len(a.strip())
    }


def _returns_something(fn) -> bool:
    """Whether the function's source returns a value (a ``return x`` anywhere in it)."""
    return re.search(r"^\s+return \S", inspect.getsource(inspect.unwrap(fn)), flags=re.M) is not None


def test_sections_are_found():
    sections = _sections(fastcdl.cdl.__doc__)
    assert {"Parameters", "Returns", "Examples"} <= sections
    assert "Notes" not in sections
    assert not _sections("A line.\n\nParameters\n--\nx : int\n")


@pytest.mark.parametrize("name", NAMES)
def test_public_name_has_numpydoc_sections(name):
    obj = getattr(fastcdl, name)
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return  # data (MEASURES): documented where it is defined, checked by the docs build
    doc = obj.__doc__
    assert doc and doc.strip(), f"{name} has no docstring"
    sections = _sections(doc)
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return  # a warning or an error: its docstring says when
    assert "Examples" in sections, f"{name}: no Examples section"
    assert ">>>" in doc.split("Examples", 1)[1], f"{name}: its Examples section has no example to run"
    if inspect.isclass(obj):
        documented = {"Attributes", "Parameters"} & sections
        assert documented, f"{name}: neither Attributes nor Parameters"
        if dataclasses.is_dataclass(obj):
            text = doc.split("Examples", 1)[0]
            missing = [f.name for f in dataclasses.fields(obj) if not re.search(rf"\b{f.name}\b", text)]
            assert not missing, f"{name}: fields not documented: {missing}"
        return
    assert "Parameters" in sections, f"{name}: no Parameters section"
    if _returns_something(obj):
        assert "Returns" in sections, f"{name}: no Returns section"
