"""Finding, loading and listing presets.

A preset is named in one of four ways:

- by name, ``CartPole_DQN``: a file in the ``coach_presets`` package (``.py`` or ``.yaml``),
  the repository's ``presets/`` folder as installed;
- by path, ``path/to/my_preset.py``;
- by ``module:attr``, ``my_package.my_presets:graph_manager``;
- by a YAML file, ``my_run.yaml``, that names a base preset and overrides::

      preset: CartPole_DQN
      seed: 3
      parameters:
        agent.algorithm.discount: 0.98
        schedule.improve_steps: EnvironmentSteps(20000)

A Python preset ends with a module-level ``graph_manager``; it may define ``validation``,
a `PresetValidation` with the reward it must reach and the budget to reach it in.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from coach.errors import CoachError
from coach.graph_managers.graph_manager import GraphManager
from coach.parameters import set_parameter
from coach.preset_validation import PresetValidation as PresetValidation  # re-exported
from coach.trust import (
    AllowedImports,
    FileSource,
    ImportNotAllowed,
    check_preset_spec,
    read_yaml,
)


@dataclass(slots=True)
class Preset:
    """A loaded preset."""

    name: str
    """The preset's name (its file's stem, or what the YAML's base is called)."""
    graph_manager: GraphManager
    """The graph the preset built, with any overrides applied."""
    source: str
    """Where it came from (a file path or ``module:attr``)."""
    validation: PresetValidation | None = None
    """The preset's promise, if it makes one."""
    seed: int | None = None
    """A seed the preset file asks for (YAML presets), overridden by ``--seed``."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """The overrides applied to the base preset, in order."""
    spec: str = ""
    """What `load_preset` loads to build the preset again from any folder: a shipped
    preset's name, a file's absolute path, or ``module:attr``; a YAML preset's is its
    base's (``params.yaml`` records it, so that a run of a user's own file repeats and
    resumes from anywhere)."""


SHIPPED_PRESETS = "coach_presets"
"""The package of the presets shipped with Coach: the repository's ``presets/`` folder,
installed under a name that no user's own ``presets`` module can shadow."""


def presets_dir() -> Path:
    """The folder of the presets shipped with Coach.

    Raises:
        CoachError: when the package is not installed (a checkout on ``PYTHONPATH`` alone).
    """
    spec = importlib.util.find_spec(SHIPPED_PRESETS)
    if spec is None or not spec.submodule_search_locations:
        raise CoachError(
            f"Coach's presets (the package {SHIPPED_PRESETS}) are not installed; "
            f"install Coach with `pip install .` (or `pip install -e .` in a checkout)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def list_presets() -> list[str]:
    """Names of the shipped presets, sorted."""
    folder = presets_dir()
    names = {
        p.stem
        for p in folder.iterdir()
        if p.suffix in (".py", ".yaml", ".yml") and not p.name.startswith("_")
    }
    return sorted(names)


def _exec_file(path: Path, module_name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CoachError(f"cannot load a preset from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        del sys.modules[module_name]
        # A file that is no Python text (null bytes) has neither a file name nor a line.
        line = f":{error.lineno}" if error.lineno else ""
        raise CoachError(f"{path}{line}: syntax error in preset: {error.msg}") from None
    except CoachError:
        del sys.modules[module_name]
        raise
    except SystemExit as stop:  # the preset ended the process: there is no run to make
        del sys.modules[module_name]
        frames = [f for f in traceback.extract_tb(stop.__traceback__) if f.filename == str(path)]
        where = f"{path}:{frames[-1].lineno}" if frames else str(path)
        raise CoachError(
            f"{where}: the preset called sys.exit({stop.code!r}) instead of defining a "
            f"graph_manager"
        ) from None
    except Exception as error:
        del sys.modules[module_name]
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)]
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else str(path)
        raise _failed(where, error) from None
    return module


def _failed(where: str, error: Exception) -> CoachError:
    """The error of a preset whose own code raised ``error`` (at ``where``: a file and line,
    or the preset)."""
    return CoachError(f"{where}: preset failed: {type(error).__name__}: {error}")


def _from_module(
    module: ModuleType, name: str, source: str, spec: str, attr: str = "graph_manager"
) -> Preset:
    graph_manager = getattr(module, attr, None)
    if inspect.isfunction(graph_manager):  # a factory: each load builds a graph of its own
        try:
            graph_manager = graph_manager()
        except CoachError:
            raise
        except Exception as error:
            raise _failed(source, error) from None
        if not isinstance(graph_manager, GraphManager):
            raise CoachError(f"{source}: {attr}() returned no GraphManager")
    if not isinstance(graph_manager, GraphManager):
        raise CoachError(f"{source} defines no GraphManager named {attr!r}")
    graph_manager.name = name
    validation = getattr(module, "validation", None)
    return Preset(name, graph_manager, source, validation, spec=spec)


def _load_python(path: Path) -> Preset:
    # Modules next to the preset import as they would next to a script (a custom
    # environment named "my_env:MyEnv").
    folder = str(path.parent.resolve())
    if folder not in sys.path:
        sys.path.append(folder)
    module_name = f"coach_preset_{path.stem}_{abs(hash(str(path.resolve())))}"
    # A preset that builds on a shipped one's module (``from coach_presets.Acrobot_A2C
    # import agent``) gets that module run afresh, as a preset loaded by name is: its
    # objects are its own each time, never those an earlier load built, changed or trained.
    for name in [m for m in sys.modules if m.startswith(f"{SHIPPED_PRESETS}.")]:
        del sys.modules[name]
    return _from_module(_exec_file(path, module_name), path.stem, str(path), str(path.resolve()))


RECORDS = ("name", "fixed", "agent_classes", "versions")
"""What a run's params.yaml records beside its parameters (only the name is read back)."""


def _load_yaml(
    path: Path, allowed: AllowedImports, depth: int = 0, base_spec: str | None = None
) -> Preset:
    if depth > 8:
        raise CoachError(f"{path}: YAML presets nest too deep (a cycle?)")
    document = read_yaml(path)
    if not isinstance(document, dict) or "preset" not in document:
        raise CoachError(f"{path}: a YAML preset is a mapping with a 'preset' key (the base)")
    unknown = set(document) - {"preset", "seed", "parameters", *RECORDS}
    if unknown:
        raise CoachError(
            f"{path}: unknown keys {sorted(unknown)}; valid: preset, seed, parameters (and "
            f"{', '.join(RECORDS)}, which a run's params.yaml holds)"
        )
    if base_spec is not None:  # given by the user: as the command line names presets
        base = load_preset(base_spec, allowed, _depth=depth + 1)
    else:
        base_name = str(document["preset"])
        beside = path.parent / base_name  # a base file is found next to the YAML first
        if base_name.endswith((".py", ".yaml", ".yml")) and beside.exists():
            base_name = str(beside)
        check_preset_spec(base_name, allowed, str(path), presets_dir())
        base = load_preset(base_name, allowed, _depth=depth + 1)
    overrides = document.get("parameters") or {}
    if not isinstance(overrides, dict):
        raise CoachError(f"{path}: 'parameters' is a mapping of path: value")
    roots = base.graph_manager.parameters()
    source = FileSource(str(path), allowed)
    for key, value in overrides.items():
        try:
            set_parameter(roots, str(key), value, read_from=source)
        except ImportNotAllowed:  # it names the file already
            raise
        except CoachError as error:
            raise CoachError(f"{path}: {error}") from None
    base.overrides.update(overrides)
    if document.get("seed") is not None:
        try:
            base.seed = int(document["seed"])
        except (TypeError, ValueError):
            raise CoachError(f"{path}: seed is a whole number, not {document['seed']!r}") from None
    if document.get("name") is not None:  # a run's params.yaml: the name the run went by
        base.name = base.graph_manager.name = str(document["name"])
    base.source = str(path)
    return base


def _load_file(path: Path, allowed: AllowedImports, depth: int = 0) -> Preset:
    if not path.exists():
        raise CoachError(f"no preset file {path}")
    if path.suffix in (".yaml", ".yml"):
        return _load_yaml(path, allowed, depth)
    return _load_python(path)


def load_preset(spec: str, allowed: AllowedImports | None = None, _depth: int = 0) -> Preset:
    """Load a preset by name, file path, YAML file or ``module:attr``.

    Args:
        spec: The preset, as the user named it: whatever it names is run (a Python file, a
            module). The files it reads on the way (a YAML preset, the base that one names)
            are not trusted (`coach.trust`).
        allowed: What the user allowed those files to name (``--allow-import``): nothing
            when not given.

    Raises:
        CoachError: when nothing matches (naming the close matches), the preset fails, or a
            file names code the user did not allow.
    """
    allowed = allowed if allowed is not None else AllowedImports()
    path = Path(spec)
    if spec.endswith((".py", ".yaml", ".yml")) or path.is_file():
        return _load_file(path, allowed, _depth)
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise CoachError(
                f"cannot import {module_name!r} for preset {spec!r}: {error}"
            ) from None
        except Exception as error:  # not a module name (":x", ".x"), or its code failed
            raise CoachError(
                f"cannot import {module_name!r} for preset {spec!r}: "
                f"{type(error).__name__}: {error}"
            ) from None
        return _from_module(module, attr, spec, spec, attr)
    folder = presets_dir()
    for suffix in (".py", ".yaml", ".yml"):
        candidate = folder / f"{spec}{suffix}"
        if candidate.exists():
            preset = _load_file(candidate, allowed, _depth)
            preset.spec = spec  # found by its name from anywhere
            return preset
    # Close matches ignore case; a name that differs only in case or underscores comes first.
    names = list_presets()
    lowered = {n.lower(): n for n in names}
    close = [lowered[m] for m in difflib.get_close_matches(spec.lower(), lowered, 3, 0.6)]
    folded = {n.lower().replace("_", ""): n for n in names}
    exact = folded.get(spec.lower().replace("_", ""))
    if exact is not None:
        close = [exact] + [n for n in close if n != exact]
    hint = f"; did you mean {', '.join(close)}?" if close else "; `coach -l` lists them"
    raise CoachError(f"no preset named {spec!r}{hint}")


def load_run_preset(
    params: Path, base: str | None = None, allowed: AllowedImports | None = None
) -> Preset:
    """A run's preset from its ``params.yaml``: the base preset it names (or ``base``, for a
    run of a preset that is not found by its name, such as a file of the user's) with the
    run's parameters applied.

    ``params.yaml`` is a file, so what it names is held to `coach.trust`: a base it names
    that is Python, or a parameter that names a module, needs ``allowed``; ``base`` is the
    user's own.

    Raises:
        CoachError: as `load_preset`.
    """
    return _load_yaml(params, allowed if allowed is not None else AllowedImports(), base_spec=base)


def describe(preset: Preset) -> tuple[str, str]:
    """The environment and the agent of a preset, for ``coach -l``."""
    roots = preset.graph_manager.parameters()
    env_params = roots.get("environment")
    environment = str(getattr(env_params, "level", getattr(env_params, "env", "?")))
    level_set = getattr(env_params, "level_set", None)
    if level_set is not None:
        environment += f" (-lvl: {level_set})"
    agents = [roots["agent"]] if roots.get("agent") is not None else roots.get("agents") or []
    if isinstance(agents, dict):  # a multi-agent level's, by name
        agents = list(agents.values())
    names = list(dict.fromkeys(type(a).__name__.removesuffix("Parameters") for a in agents))
    agent_name = " / ".join(names) if names else "?"
    return environment, agent_name
