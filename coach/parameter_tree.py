"""A whole parameter tree: its values as ``path: value`` pairs, and its checks.

`flatten` turns a parameter tree back into the pairs an override takes (`coach.parameters`),
which is how a run's ``params.yaml`` records everything it ran with and a checkpoint what it
trained with. `validate_parameters` runs the ``validate()`` of every parameter dataclass in a
tree (`coach.validation`), naming a value that is not allowed by its path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from coach.errors import CoachError
from coach.parameters import LEAF_TYPES, WHOLE_TYPES
from coach.validation import InvalidParameter, Validated


def _is_literal(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple):
        return all(_is_literal(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_literal(v) for k, v in value.items())
    return False


def flatten(roots: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Every leaf of the parameter trees as ``path: value``.

    Returns:
        ``(settable, fixed)``: ``settable`` holds literals and constructor calls (as text)
        that `set_parameter` takes back; ``fixed`` holds the ``repr`` of objects an override
        cannot express (filters, for instance), for the record.
    """
    settable: dict[str, Any] = {}
    fixed: dict[str, str] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, (*LEAF_TYPES, *WHOLE_TYPES)):
            settable[path] = repr(node)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name), f"{path}.{f.name}")
        elif isinstance(node, dict | list) and node and not _is_literal(node):
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                walk(value, f"{path}.{key}")
        elif _is_literal(node):
            settable[path] = list(node) if isinstance(node, tuple) else node
        else:
            fixed[path] = repr(node)

    for name, root in roots.items():
        walk(root, name)
    return settable, fixed


def parameter_dataclasses(roots: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every parameter dataclass of the trees (through nested dataclasses, dictionaries and
    lists) with its path from its root, each once, its members before itself."""
    seen: set[int] = set()

    def walk(node: Any, path: str) -> Iterator[tuple[str, Any]]:
        if isinstance(node, (*LEAF_TYPES, type)) or id(node) in seen:
            return  # step units and schedules check their arguments when they are made
        if dataclasses.is_dataclass(node):
            seen.add(id(node))
            for f in dataclasses.fields(node):
                yield from walk(getattr(node, f.name), f"{path}.{f.name}")
            yield path, node
        elif isinstance(node, dict | list | tuple):
            seen.add(id(node))
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                yield from walk(value, f"{path}.{key}")

    for name, root in roots.items():
        yield from walk(root, name)


def validate_parameters(roots: dict[str, Any]) -> None:
    """Run the ``validate()`` of every parameter dataclass under ``roots`` (through nested
    dataclasses, dictionaries and lists), each one's members before itself.

    Raises:
        CoachError: for the first value that is not allowed, named by its path from its root
            (``agent.algorithm.discount must be in [0, 1], got 1.5``).
    """
    for path, node in parameter_dataclasses(roots):
        checked: object = node  # a dataclass that may check itself
        if isinstance(checked, Validated):
            try:
                checked.validate()
            except InvalidParameter as error:
                raise error.under(path) from None
            except CoachError as error:
                raise CoachError(f"{path}: {error}") from None
