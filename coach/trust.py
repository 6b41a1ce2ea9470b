"""Coach's trust model: which strings may make Coach import a module or run a file's code.

Trusted is what the user gives Coach themselves: the options and ``-cp`` overrides they type,
and the Python they name on the command line (a preset file, a ``module:attr``) with
everything that code does, as are the presets shipped with Coach. Not trusted is every file
Coach reads back, wherever it came from: YAML presets, a run's ``params.yaml``, a group's
``group.yaml``, a study's ``tune.yaml`` and search space, checkpoints, datasets, progress
files. Researchers hand these around, and opening one must be as safe as opening a CSV file.

So a string read from a file never names code for Coach to run, unless the user allows that
code for the run on the command line (``--allow-import NAME``, repeatable):

- a base preset that is Python (``preset: my_preset.py`` or ``preset: my.module:attr``) is
  run only when its file or module is allowed; the presets shipped with Coach are named freely;
- a parameter that names code to import (an environment's ``level`` or ``env`` of the form
  ``module:attr``; such fields are declared with `NAMES_CODE`) may be set from a file to a
  new value only when its module is allowed. The value a trusted preset already has stays as
  it is: a run of a shipped multi-agent preset resumes without asking.

Everything else a file holds is data: literals, and the calls of the override parser's
whitelist (`coach.parameters.CONSTRUCTORS`), which build parameter values and run nothing
else. Checkpoints load with ``torch.load(weights_only=True)`` and YAML with ``safe_load``.
docs/security.md says this for users.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from coach.errors import CoachError

ALLOW_OPTION = "--allow-import"
"""The command-line option that allows a module or a preset file for a run."""

NAMES_CODE: Mapping[str, Any] = {"names_code": True}
"""The metadata of a parameter field whose value may name code to import (``module:attr``):
``level: str = field(default="CartPole-v1", metadata=NAMES_CODE)``. A file may set it to such
a value only for a module the user allowed."""


class ImportNotAllowed(CoachError):
    """A file named code for Coach to run that the user did not allow; the message names the
    module or file and the option that allows it."""


def named_module(value: Any) -> str | None:
    """The module a ``module:attr`` value makes Coach (or gymnasium) import, else ``None``."""
    if not isinstance(value, str) or ":" not in value:
        return None
    return value.partition(":")[0].strip()


@dataclass(frozen=True, slots=True)
class AllowedImports:
    """The modules and preset files the user allowed a run to import (``--allow-import``).

    A module allows its submodules too (``pettingzoo`` allows ``pettingzoo.classic``); a
    preset file is named by its path (a name ending in ``.py``), compared once resolved.
    """

    names: tuple[str, ...] = ()

    def allows_module(self, module: str) -> bool:
        return any(module == name or module.startswith(f"{name}.") for name in self.names)

    def allows_file(self, path: Path) -> bool:
        target = path.resolve()
        return any(name.endswith(".py") and Path(name).resolve() == target for name in self.names)


@dataclass(frozen=True, slots=True)
class FileSource:
    """Where parameter values were read from: a file, so they name code only as allowed."""

    path: str
    """The file (for the messages)."""
    allowed: AllowedImports
    """What the user allowed for the run."""


def check_parameter(
    source: FileSource, path: str, current: Any, new: Any, metadata: Mapping[str, Any]
) -> None:
    """Refuse a value read from ``source`` that names code the user did not allow.

    Args:
        source: The file the value comes from.
        path: The parameter's path (``environment.level``).
        current: Its value before (a trusted preset's: kept freely).
        new: The value the file sets.
        metadata: The field's metadata; only fields declared with `NAMES_CODE` name code.

    Raises:
        ImportNotAllowed: when ``new`` names a module, is not the current value and the
            user did not allow the module.
    """
    module = named_module(new) if metadata.get("names_code") else None
    if module is None or new == current or source.allowed.allows_module(module):
        return
    raise ImportNotAllowed(
        f"{source.path}: {path} is {new!r}, which would make Coach import the module "
        f"{module!r}; a file cannot ask for that: add {ALLOW_OPTION} {module} to allow it "
        f"for this run"
    )


def check_preset_spec(spec: str, allowed: AllowedImports, named_in: str, shipped: Path) -> None:
    """Refuse a base preset named in the file ``named_in`` that would run code not allowed.

    A preset's name, or a YAML file, is data; a Python file (outside ``shipped``, the folder
    of the presets shipped with Coach) or a ``module:attr`` runs code.

    Raises:
        ImportNotAllowed: naming the file or module and the option that allows it.
    """
    path = Path(spec)
    if spec.endswith((".yaml", ".yml")):
        return
    if spec.endswith(".py") or path.is_file():
        if not path.is_file() or path.resolve().parent == shipped.resolve():
            return  # no code to run (the loader says the file is missing), or Coach's own
        if allowed.allows_file(path):
            return
        raise ImportNotAllowed(
            f"{named_in} names the preset file {spec}, whose code Coach would run; a file "
            f"cannot ask for that: add {ALLOW_OPTION} {path.resolve()} to allow it for this run"
        )
    module = named_module(spec)
    if module is not None and not allowed.allows_module(module):
        raise ImportNotAllowed(
            f"{named_in} names the preset {spec}, which would make Coach import the module "
            f"{module!r}; a file cannot ask for that: add {ALLOW_OPTION} {module} to allow it "
            f"for this run"
        )


def read_yaml(path: Path, what: str = "") -> Any:
    """The document of a YAML file Coach reads back, built by ``safe_load`` (plain values,
    no tags that make objects). ``what`` names the file in the message of one that cannot be
    read (``the search space``).

    Raises:
        CoachError: in one line, what is wrong with the file: unreadable, not UTF-8 text, or
            where the parser stopped (its line and column) and why.
    """
    try:
        document = yaml.load(path.read_bytes().decode("utf-8"), Loader=_StrictLoader)
        too_large = _expanded_size(document) > MAX_YAML_VALUES
    except OSError as error:
        raise CoachError(
            f"cannot read {what + ' ' if what else ''}{path}: {error.strerror}"
        ) from None
    except UnicodeDecodeError as error:
        raise CoachError(
            f"{path}: not a YAML file: the byte at offset {error.start} is not UTF-8 text"
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = error.problem or error.context or "malformed"
        if "constructor for the tag" in problem:  # !!python/object and its kind: never built
            problem = f"the tag {problem.partition('tag ')[2]} is not allowed (only plain values)"
        raise CoachError(f"{where}: not valid YAML: {problem}") from None
    except yaml.YAMLError as error:
        lines = str(error).strip().splitlines()
        raise CoachError(f"{path}: not valid YAML: {lines[0] if lines else 'malformed'}") from None
    except RecursionError:
        raise CoachError(f"{path}: not valid YAML here: it nests too deep") from None
    if too_large:
        raise CoachError(
            f"{path}: not valid YAML here: its aliases make it contain itself, or more than "
            f"{MAX_YAML_VALUES:,} values"
        )
    return document


MAX_YAML_VALUES = 1_000_000
"""The most values a YAML file Coach reads may stand for once its aliases are followed (a
params.yaml of Coach's largest preset holds a few hundred): aliases of aliases can make a
file of a few lines stand for billions."""


class _StrictLoader(yaml.SafeLoader):
    """``safe_load``'s loader, refusing a mapping that gives a key twice (YAML would let the
    last one win, silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str | int | float | bool):
                continue  # not hashable as such: the base loader says what is wrong with it
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _expanded_size(document: Any) -> float:
    """How many values ``document`` stands for, its shared parts counted each time they are
    reached; infinite where it contains itself."""
    sizes: dict[int, float] = {}

    def size(node: Any, ancestors: frozenset[int]) -> float:
        if not isinstance(node, dict | list):
            return 1
        if id(node) in ancestors:
            return float("inf")
        if id(node) not in sizes:
            inner = ancestors | {id(node)}
            children = list(node.values()) if isinstance(node, dict) else node
            sizes[id(node)] = 1 + sum(size(child, inner) for child in children)
        return sizes[id(node)]

    return size(document, frozenset())
