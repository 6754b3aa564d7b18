"""The public API's docstrings say what its signatures take: every name in ``td2048.__all__`` (and every public
method of its classes) documents each of its parameters under a numpy-style *Parameters* heading, documents no
parameter it does not have, and has *Returns* where it returns something.

Docstrings are parsed by griffe, the parser that renders them on the documentation site.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import logging
import re
from pathlib import Path

import pytest
from griffe import Docstring

import td2048

logging.getLogger("griffe").setLevel(logging.ERROR)  # a section griffe cannot read fails below, by name


def sections(doc: str | None) -> dict[str, list]:
    parsed = Docstring(inspect.cleandoc(doc or ""), parser="numpy").parse()
    found: dict[str, list] = {}
    for section in parsed:
        value = section.value if isinstance(section.value, list) else [section.value]
        found.setdefault(section.kind.value, []).extend(value)
    return found


def documented_parameters(doc: str | None) -> set[str]:
    found = sections(doc)
    return {item.name.lstrip("*") for kind in ("parameters", "other parameters") for item in found.get(kind, [])}


def signature_parameters(func) -> list[str]:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [p.name for p in signature.parameters.values() if p.name not in ("self", "cls")]


def returns_something(func) -> bool:
    annotation = inspect.signature(func).return_annotation
    return annotation not in (inspect.Signature.empty, None, "None")


API_PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "api.md"


def rendered_names() -> dict[str, object]:
    """The names of ``td2048.__all__``, and the objects the API reference page renders beside them (``::: path``:
    a class a public method returns, such as ``StartChecks``), by name."""
    names = {name: getattr(td2048, name) for name in td2048.__all__}
    for path in re.findall(r"^::: (td2048[\w.]+)$", API_PAGE.read_text(), re.MULTILINE):
        module, _, attr = path.rpartition(".")
        obj = getattr(importlib.import_module(module), attr)
        if all(obj is not known for known in names.values()):
            names[attr] = obj
    return names


def public_callables():
    """(qualified name, callable, docstring holding its parameters) for the public API."""
    names = rendered_names()
    for name in sorted(names):
        obj = names[name]
        if name.startswith("__") or not callable(obj):
            continue
        if inspect.isclass(obj):
            if issubclass(obj, Exception):
                continue
            init_doc = obj.__doc__
            if dataclasses.is_dataclass(obj):
                yield f"{name}", obj, init_doc
            elif "__init__" in vars(obj) or any("__init__" in vars(base) for base in obj.__mro__[1:-1]):
                yield f"{name}", obj.__init__, init_doc
            for attr, member in vars(obj).items():
                if attr.startswith("_") or isinstance(member, property):
                    continue
                func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                if inspect.isfunction(func):
                    yield f"{name}.{attr}", func, func.__doc__
        else:
            yield name, obj, obj.__doc__


CALLABLES = list(public_callables())


@pytest.mark.parametrize(("name", "func", "doc"), CALLABLES, ids=[c[0] for c in CALLABLES])
def test_parameters_documented(name, func, doc):
    assert doc and doc.strip(), f"{name} has no docstring"
    params = signature_parameters(func)
    documented = documented_parameters(doc)
    missing = [p for p in params if p not in documented]
    extra = sorted(documented - set(params))
    assert not missing, f"{name}: parameters not documented under 'Parameters': {missing}"
    assert not extra, f"{name}: documented parameters it does not have: {extra}"


@pytest.mark.parametrize(("name", "func", "doc"), [c for c in CALLABLES if not inspect.isclass(c[1])],
                         ids=[c[0] for c in CALLABLES if not inspect.isclass(c[1])])
def test_returns_documented(name, func, doc):
    if func.__name__ == "__init__" or not returns_something(func):
        return
    assert "returns" in sections(doc) or "yields" in sections(doc), f"{name}: no 'Returns' section"


def test_every_public_name_is_covered():
    covered = {name.split(".")[0] for name, _, _ in CALLABLES}
    expected = {n for n in td2048.__all__ if not n.startswith("__") and n != "TD2048Error"}
    assert expected <= covered and "StartChecks" in covered, sorted(expected - covered)
