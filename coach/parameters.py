"""Parameter overrides and dumps, without ``exec``.

An override is ``dotted.path=value``: the path walks from a named root (``agent``,
``environment``, ``schedule``) through dataclass fields, dictionary keys and list indices;
the value is a Python literal or a call of a whitelisted constructor
(``EnvironmentSteps(500)``, ``LinearSchedule(1.0, 0.05, 10000)``), parsed with `ast` and never
executed. The value is type-checked against the field's annotation before it is set, and a
wrong path names the fields that would have been valid.

A whole tree's values, as such pairs, and its checks are `coach.parameter_tree`'s.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

from coach.core.step_units import (
    EnvironmentEpisodes,
    EnvironmentSteps,
    Epochs,
    StepUnit,
    TrainingSteps,
)
from coach.errors import CoachError
from coach.exploration.parameter_noise import ParameterNoiseParameters
from coach.networks.parameters import RecurrentParameters
from coach.schedules import (
    ConstantSchedule,
    ExponentialSchedule,
    LinearSchedule,
    PieceWiseSchedule,
    Schedule,
)
from coach.trust import FileSource, check_parameter

CONSTRUCTORS: dict[str, Callable[..., Any]] = {
    cls.__name__: cls
    for cls in (
        EnvironmentSteps,
        EnvironmentEpisodes,
        TrainingSteps,
        Epochs,
        ConstantSchedule,
        LinearSchedule,
        ExponentialSchedule,
        PieceWiseSchedule,
        RecurrentParameters,
        ParameterNoiseParameters,
    )
}
"""The calls an override value may contain (``RecurrentParameters(size=128)`` makes any
network recurrent from the command line, ``ParameterNoiseParameters()`` any Q agent or
deterministic actor explore by parameter noise)."""

LEAF_TYPES = (StepUnit, Schedule)
"""Values written whole (as a constructor call) rather than field by field."""

WHOLE_TYPES = (RecurrentParameters, ParameterNoiseParameters)
"""Parameter dataclasses that may stand where the base preset has ``None`` or another type
(a recurrent layer added to a network, parameter noise in place of an agent's exploration):
written whole, so that the record replays onto such a base;
a path still goes into their fields, and they check their values like any other."""


def register_constructor(cls: Callable[..., Any], name: str | None = None) -> None:
    """Allow ``cls(...)`` in override values (for parameter types added by extensions)."""
    CONSTRUCTORS[name or str(getattr(cls, "__name__", cls))] = cls


def parse_value(text: str) -> Any:
    """Parse an override value: a literal, or a whitelisted call with literal arguments."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as error:
        raise CoachError(f"cannot parse the value {text!r}: {error.msg}") from None
    return _evaluate(node, text)


def _evaluate(node: ast.AST, text: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand, text)
        if isinstance(value, int | float):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.List):
        return [_evaluate(e, text) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, text) for e in node.elts)
    if isinstance(node, ast.Dict):
        return {
            _evaluate(k, text): _evaluate(v, text)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None
        }
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if name not in CONSTRUCTORS:
            raise CoachError(
                f"{name}(...) is not allowed in a value; allowed: {', '.join(sorted(CONSTRUCTORS))}"
            )
        args = [_evaluate(a, text) for a in node.args]
        kwargs = {k.arg: _evaluate(k.value, text) for k in node.keywords if k.arg is not None}
        try:
            return CONSTRUCTORS[name](*args, **kwargs)
        except (TypeError, ValueError) as error:
            raise CoachError(f"{text!r}: {error}") from None
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return float(node.id)
    raise CoachError(
        f"the value {text!r} is not a literal or an allowed call "
        f"({', '.join(sorted(CONSTRUCTORS))})"
    )


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _type_name(annotation: Any) -> str:
    """How a user reads a field's type: ``EnvironmentSteps | TrainingSteps``, ``int``."""
    if annotation is type(None):
        return "None"
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(annotation))
    if typing.get_origin(annotation) is None and hasattr(annotation, "__name__"):
        return str(annotation.__name__)
    return str(annotation).replace("typing.", "").replace("coach.", "")


def _matches(value: Any, annotation: Any) -> bool:
    """Whether ``value`` fits ``annotation`` (shallowly for containers)."""
    if annotation is Any:
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, a) for a in typing.get_args(annotation))
    if annotation is type(None):
        return value is None
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is list:
        (item,) = typing.get_args(annotation) or (Any,)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if origin is tuple:
        return isinstance(value, tuple | list)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


def _accepts_text(annotation: Any) -> bool:
    if annotation is str:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return str in typing.get_args(annotation)
    return False


def _coerce(value: Any, annotation: Any, path: str) -> Any:
    if isinstance(value, str):
        try:
            parsed = parse_value(value)
        except CoachError as error:
            if _accepts_text(annotation):
                return value  # a plain word is the string it is
            # Why it did not parse, without the value the message has quoted already.
            reason = str(error).removeprefix(f"{value!r}: ")
            raise CoachError(
                f"{path} takes {_type_name(annotation)}, not {value!r}: {reason}"
            ) from error
        if _accepts_text(annotation) and not _matches(parsed, annotation):
            return value  # text that parses as something else (True, 3) stays text
        value = parsed
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not _matches(value, annotation):
        raise CoachError(
            f"{path} takes {_type_name(annotation)}, not {type(value).__name__} ({value!r})"
        )
    return value


def _children(node: Any) -> list[str]:
    if dataclasses.is_dataclass(node):
        return [f.name for f in dataclasses.fields(node)]
    if isinstance(node, dict):
        return [str(k) for k in node]
    if isinstance(node, list):
        return [str(i) for i in range(len(node))]
    return []


def _is_group(node: Any) -> bool:
    """Whether a path may go on into ``node`` (a parameter dataclass, a dict or a list)."""
    if isinstance(node, dict | list):
        return True
    return dataclasses.is_dataclass(node) and not isinstance(node, (*LEAF_TYPES, type))


def _child(node: Any, name: str, path: str) -> Any:
    if isinstance(node, dict) and name in node:
        return node[name]
    if isinstance(node, list) and name.isdigit() and int(name) < len(node):
        return node[int(name)]
    if _is_group(node) and not isinstance(node, dict | list) and name in _children(node):
        return getattr(node, name)
    where = path or "the parameters"
    if not _is_group(node):  # a schedule, a step count, a number: replaced whole, never entered
        raise CoachError(
            f"{where} has no field {name!r}: it is one value, {node!r}, set as a whole "
            f"({where}=...)"
        )
    valid = _children(node)
    raise CoachError(f"{where} has no field {name!r}; valid fields: {', '.join(valid) or '(none)'}")


def _child_type(node: Any, annotation: Any, name: str) -> Any:
    """The annotation of ``node``'s member ``name``, given ``node``'s own annotation."""
    if dataclasses.is_dataclass(node) and not isinstance(node, dict | list):
        return _field_types(typing.cast(type, type(node))).get(name, Any)
    args = typing.get_args(annotation)
    if isinstance(node, dict) and len(args) == 2:
        return args[1]
    if isinstance(node, list) and len(args) == 1:
        return args[0]
    return Any


def set_parameter(
    roots: dict[str, Any], path: str, value: Any, read_from: FileSource | None = None
) -> None:
    """Set ``path`` (``agent.algorithm.discount``) to ``value`` (text is parsed).

    The value is checked against the annotation of what it replaces: a dataclass field's,
    or a dictionary's or list's item type. A dictionary may also gain a new key.

    Args:
        roots: The parameter trees by name (``agent``, ``environment``, ``schedule``).
        path: The dotted path from a root.
        value: The value, or its text as ``-cp`` takes it.
        read_from: The file the value was read from, if it was: it may then name code to
            import only as the user allowed (`coach.trust`). ``None``: the user gave it.

    Raises:
        CoachError: naming the valid fields when the path is wrong, or the expected type when
            the value does not fit, or the option that allows a module a file names.
    """
    parts = _path_parts(roots, path)
    node, annotation = roots[parts[0]], Any
    if len(parts) == 1:
        raise CoachError(
            f"{path!r} names a whole group; set one of its fields: {', '.join(_children(node))}"
        )
    for i, name in enumerate(parts[1:-1], start=1):
        annotation = _child_type(node, annotation, name)
        node = _child(node, name, ".".join(parts[:i]))
    last, parent_path = parts[-1], ".".join(parts[:-1])
    if not (isinstance(node, dict) and _is_group(node)):
        _child(node, last, parent_path)  # raises, naming the valid fields, if there is none
    new = _coerce(value, _child_type(node, annotation, last), path)
    if read_from is not None:
        check_parameter(read_from, path, _current(node, last), new, _field_metadata(node, last))
    if isinstance(node, dict):
        node[last] = new
    elif isinstance(node, list):
        node[int(last)] = new
    else:
        setattr(node, last, new)


def _current(node: Any, name: str) -> Any:
    """What ``node``'s member ``name`` holds now (``None`` for a dictionary's new key)."""
    if isinstance(node, dict):
        return node.get(name)
    if isinstance(node, list):
        return node[int(name)]
    return getattr(node, name)


def _field_metadata(node: Any, name: str) -> Any:
    """The metadata of the dataclass field ``name`` of ``node`` (empty for other members)."""
    if dataclasses.is_dataclass(node) and not isinstance(node, dict | list):
        for f in dataclasses.fields(node):
            if f.name == name:
                return f.metadata
    return {}


def _path_parts(roots: dict[str, Any], path: str) -> list[str]:
    """The names of a dotted parameter path whose first name is one of ``roots``."""
    parts = path.strip().split(".")
    if not path.strip() or not all(parts):
        raise CoachError(f"bad parameter path {path!r}")
    if parts[0] not in roots:
        raise CoachError(
            f"no parameters named {parts[0]!r}; valid roots: {', '.join(sorted(roots))}"
        )
    return parts


def get_parameter(roots: dict[str, Any], path: str) -> Any:
    """The value at ``path`` (``agent.algorithm.discount``), which must exist already.

    Raises:
        CoachError: naming the valid fields where the path goes wrong, as `set_parameter`.
    """
    parts = _path_parts(roots, path)
    node = roots[parts[0]]
    for i, name in enumerate(parts[1:], start=1):
        node = _child(node, name, ".".join(parts[:i]))
    return node


def parse_override(text: str) -> tuple[str, str]:
    """Split ``path=value``."""
    path, sep, value = text.partition("=")
    if not sep or not path.strip():
        raise CoachError(f"an override is path=value, got {text!r}")
    return path.strip(), value.strip()


def apply_overrides(
    roots: dict[str, Any], overrides: Iterable[str], read_from: FileSource | None = None
) -> None:
    """Set each ``path=value`` of ``overrides`` in turn (`set_parameter`), as the command
    line's ``-cp`` gives them (or a file that keeps them, ``read_from``: see `set_parameter`).

    Raises:
        CoachError: what `parse_override` and `set_parameter` raise, or for a path given
            twice with different values (the later one would win without a word).
    """
    given: dict[str, tuple[str, Any]] = {}
    for text in overrides:
        path, value = parse_override(text)
        set_parameter(roots, path, value, read_from)
        new = get_parameter(roots, path)  # as set: 0.5 and 0.50 are the same value
        if path in given:
            first, before = given[path]
            if value != first and new != before:
                raise CoachError(
                    f"-cp {path} is given twice, as {first!r} and {value!r}: give it once"
                )
            continue
        given[path] = value, new
