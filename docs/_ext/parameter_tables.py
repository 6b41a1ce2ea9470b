"""Tables of a parameter dataclass's fields, from the fields' own docstrings.

Coach documents each field of a parameter class with a docstring under it (PEP 257's
attribute docstrings, which Sphinx's analyzer reads); a table row holds the field, its type,
its default and that docstring."""

from __future__ import annotations

import dataclasses
import enum
import inspect
from functools import cache
from typing import Any

from sphinx.pycode import ModuleAnalyzer


@cache
def _attribute_docs(module: str) -> dict[tuple[str, str], list[str]]:
    analyzer = ModuleAnalyzer.for_module(module)
    return dict(analyzer.find_attr_docs())


def field_doc(cls: type, name: str) -> str:
    """The docstring of field ``name`` where it is declared (``cls`` or a base class)."""
    for owner in inspect.getmro(cls):
        if name in getattr(owner, "__annotations__", {}):
            lines = _attribute_docs(owner.__module__).get((owner.__qualname__, name))
            return " ".join(" ".join(lines or []).split())
    return ""


def show_default(value: Any) -> str:
    """A default value as a preset would write it, short."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        text = repr(value)  # a step unit or a schedule says what it holds in a few words
        return text if len(text) <= 80 else f"{type(value).__name__}(...)"
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, dict):
        inner = ", ".join(f"{k!r}: {show_default(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list | tuple) and value and dataclasses.is_dataclass(value[0]):
        return "[" + ", ".join(show_default(v) for v in value) + "]"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def default_of(instance: Any, f: dataclasses.Field) -> Any:
    """The field's value on a freshly made instance (a subclass may change a default)."""
    return getattr(instance, f.name)


def parameter_entry(name: str, kind: str | None, default: Any, doc: str) -> str:
    """One parameter as a definition-list entry: its name, type and default, then what it
    is (a list reads better than a table once the descriptions are sentences)."""
    typed = f" · `{kind}`" if kind else ""
    return f"`{name}`{typed} · default `{show_default(default)}`\n: {doc or '(undocumented)'}\n"


def parameters_table(cls: type) -> str:
    """Every field of the dataclass ``cls``, inherited ones included, as a definition list."""
    instance = cls()
    return "\n".join(
        parameter_entry(f.name, str(f.type), default_of(instance, f), field_doc(cls, f.name))
        for f in dataclasses.fields(cls)
    )


def class_summary(cls: type) -> str:
    """The class docstring, unwrapped."""
    return " ".join((inspect.getdoc(cls) or "").split())
