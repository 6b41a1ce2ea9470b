"""The search space of ``coach tune``: a YAML file of ``-cp`` paths and the values each may take.

    parameters:
      agent.network_wrappers.main.learning_rate: {float: [1.0e-4, 1.0e-2], log: true}
      agent.algorithm.batch_size: {categorical: [32, 64, 128, 256]}
      agent.algorithm.num_steps_between_copying_online_weights_to_target:
        {int: [64, 2048], log: true, unit: EnvironmentSteps}
    pruning: {startup_trials: 5, warmup_steps: 10000}

A range is one of three kinds:

- ``float: [low, high]``, uniform, or with ``log: true`` uniform in log space (``low > 0``),
  or on a grid with ``step: s``;
- ``int: [low, high]``, with ``log: true`` or ``step: s``, and ``unit:`` one of the step
  units (``EnvironmentSteps``, ``EnvironmentEpisodes``, ``TrainingSteps``, ``Epochs``) for a
  field counted in one: the value is then ``EnvironmentSteps(n)``;
- ``categorical: [choice, ...]``: numbers, ``true``/``false``, ``null``, or text, which is an
  override value as ``-cp`` takes it (``"EnvironmentSteps(256)"``,
  ``"LinearSchedule(1.0, 0.05, 10000)"``, ``"[64, 64]"``, a word for a text field).

``pruning`` (optional) sets Optuna's median pruner: no trial is pruned before
``startup_trials`` trials have completed (default 5), nor before it has run ``warmup_steps``
env steps (default 0); ``pruning: false`` lets every trial run to its end.

`read_space` reads and checks a file on its own; `check_space` then tries both ends of every
range (every choice of a categorical) on the preset, as a trial would set them, through the
override parser and the preset's validation, so that a path the preset does not have or a
value its field refuses stops the study before any trial runs.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coach.errors import CoachError
from coach.parameters import LEAF_TYPES, WHOLE_TYPES, get_parameter, set_parameter
from coach.trust import AllowedImports, FileSource, ImportNotAllowed, read_yaml

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution
    from optuna.pruners import BasePruner

    from coach.graph_managers.graph_manager import GraphManager

KINDS = ("float", "int", "categorical")
OPTIONS = {"float": ("log", "step"), "int": ("log", "step", "unit"), "categorical": ()}
"""What each kind takes beside its range."""
UNITS = ("EnvironmentSteps", "EnvironmentEpisodes", "TrainingSteps", "Epochs")
EXAMPLE = "{float: [0.9, 0.999]}, {int: [1, 8]} or {categorical: [32, 64]}"


@dataclass(frozen=True, slots=True)
class Dimension:
    """One ``-cp`` path of the space and the values it may take."""

    path: str
    kind: str
    """``float``, ``int`` or ``categorical``."""
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    step: float | None = None
    unit: str | None = None
    """The step unit the sampled whole number counts (``int`` only)."""
    choices: tuple[Any, ...] = ()

    def distribution(self) -> BaseDistribution:
        """The Optuna distribution a trial samples this dimension from."""
        from optuna.distributions import (
            CategoricalDistribution,
            FloatDistribution,
            IntDistribution,
        )

        if self.kind == "categorical":
            return CategoricalDistribution(list(self.choices))
        if self.kind == "int":
            step = int(self.step) if self.step is not None else 1
            return IntDistribution(int(self.low), int(self.high), log=self.log, step=step)
        return FloatDistribution(self.low, self.high, log=self.log, step=self.step)

    def value_text(self, value: Any) -> str:
        """A sampled value as an override value: what ``-cp path=...`` would say."""
        if self.unit is not None:
            return f"{self.unit}({int(value)})"
        if isinstance(value, str):
            return value
        if self.kind == "float":
            return repr(float(value))
        return repr(value)

    def override(self, value: Any) -> str:
        """``path=value``, a sampled value as a ``-cp`` override."""
        return f"{self.path}={self.value_text(value)}"

    def ends(self) -> list[tuple[str, Any]]:
        """The values that `check_space` tries, each with how an error names it."""
        if self.kind == "categorical":
            return [("one of its choices", choice) for choice in self.choices]
        distribution: Any = self.distribution()  # a grid's high end is its last point
        return [
            ("the low end of its range", distribution.low),
            ("the high end of its range", distribution.high),
        ]


@dataclass(frozen=True, slots=True)
class Pruning:
    """The median pruner's settings: how soon a trial behind the others may be stopped."""

    enabled: bool = True
    startup_trials: int = 5
    """Completed trials before any trial is pruned."""
    warmup_steps: int = 0
    """Env steps a trial runs before it may be pruned."""

    def pruner(self) -> BasePruner:
        """Optuna's pruner for these settings."""
        from optuna.pruners import MedianPruner, NopPruner

        if not self.enabled:
            return NopPruner()
        return MedianPruner(n_startup_trials=self.startup_trials, n_warmup_steps=self.warmup_steps)


@dataclass(frozen=True, slots=True)
class SearchSpace:
    """A parsed search-space file."""

    dimensions: tuple[Dimension, ...]
    pruning: Pruning
    document: dict[str, Any] = field(default_factory=dict)
    """The file as read (kept in the study folder, for ``--resume``)."""


def read_space(path: Path) -> SearchSpace:
    """Read and check a search-space file on its own (`check_space` checks it on a preset).

    Raises:
        CoachError: the file is missing, not YAML, or not a search space; the message names
            the file, the path and what is wrong, on one line.
    """
    document = read_yaml(path, "the search space")
    return parse_space(document, str(path))


def parse_space(document: Any, where: str) -> SearchSpace:
    """The search space a YAML ``document`` describes (``where`` names it in errors).

    Raises:
        CoachError: the document is not a search space.
    """
    if not isinstance(document, dict) or "parameters" not in document:
        raise CoachError(
            f"{where}: a search space is a mapping with 'parameters' (each -cp path and its "
            f"range, e.g. agent.algorithm.discount: {{float: [0.9, 0.999]}}) and optionally "
            f"'pruning'"
        )
    unknown = sorted(str(k) for k in document if k not in ("parameters", "pruning"))
    if unknown:
        raise CoachError(f"{where}: unknown keys {unknown}; valid: parameters, pruning")
    parameters = document["parameters"]
    if not isinstance(parameters, dict) or not parameters:
        raise CoachError(
            f"{where}: 'parameters' maps each -cp path to its range, such as {EXAMPLE}"
        )
    dimensions = tuple(_dimension(str(path), spec, where) for path, spec in parameters.items())
    return SearchSpace(dimensions, _pruning(document.get("pruning", True), where), document)


def _dimension(path: str, spec: Any, where: str) -> Dimension:
    said = f"{where}: {path}:"
    if not isinstance(spec, dict) or not spec:
        raise CoachError(f"{said} a range is a mapping such as {EXAMPLE}; got {spec!r}")
    kinds = [str(k) for k in spec if k in KINDS]
    if len(kinds) != 1:
        others = [str(k) for k in spec if k not in KINDS and k not in ("log", "step", "unit")]
        what = f"unknown kind {others[0]!r}" if others and not kinds else f"keys {list(spec)}"
        raise CoachError(f"{said} {what}; give one kind of {', '.join(KINDS)}, as {EXAMPLE}")
    (kind,) = kinds
    extra = [str(k) for k in spec if k != kind and k not in OPTIONS[kind]]
    if extra:
        takes = f"takes {', '.join(OPTIONS[kind])}" if OPTIONS[kind] else "takes no options"
        raise CoachError(f"{said} {extra[0]!r} does not go with {kind}; {kind} {takes}")
    if kind == "categorical":
        return Dimension(path, kind, choices=_choices(spec[kind], said))
    whole = kind == "int"
    bounds = spec[kind]
    if not isinstance(bounds, list) or len(bounds) != 2:
        raise CoachError(f"{said} {kind} takes [low, high], two numbers; got {bounds!r}")
    low, high = (_number(b, whole, f"{said} {kind} bound") for b in bounds)
    if not low < high:
        raise CoachError(f"{said} the range [{low}, {high}] is empty: low must be below high")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise CoachError(f"{said} log is true or false; got {log!r}")
    if log and low <= 0:
        raise CoachError(f"{said} a log range needs low > 0; got [{low}, {high}]")
    step = None
    if "step" in spec:
        if log:
            raise CoachError(f"{said} log and step do not go together; give one of them")
        step = _number(spec["step"], whole, f"{said} step")
        if not 0 < step <= high - low:
            raise CoachError(f"{said} step must be > 0 and fit in the range; got {step}")
    unit = spec.get("unit")
    if unit is not None and unit not in UNITS:
        raise CoachError(f"{said} unknown unit {unit!r}; the units are {', '.join(UNITS)}")
    return Dimension(path, kind, low=low, high=high, log=log, step=step, unit=unit)


def _number(value: Any, whole: bool, what: str) -> Any:
    """A bound or a step: a finite number (a whole one for ints). YAML reads ``1e-4`` as
    text (its floats need a dot: ``1.0e-4``), so text that is a number is taken too."""
    if isinstance(value, str) and not whole:
        with contextlib.suppress(ValueError):
            value = float(value)
    if whole and not (isinstance(value, int) and not isinstance(value, bool)):
        raise CoachError(f"{what} must be a whole number; got {value!r}")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CoachError(f"{what} must be a finite number; got {value!r}")
    return value if whole else float(value)


def _choices(choices: Any, said: str) -> tuple[Any, ...]:
    if not isinstance(choices, list) or not choices:
        raise CoachError(f"{said} categorical takes a list of one or more choices; got {choices!r}")
    for choice in choices:
        if choice is not None and not isinstance(choice, bool | int | float | str):
            raise CoachError(
                f"{said} a choice is a number, true/false, null or a -cp value as text "
                f"(write {choice!r} as '{choice}'); got {choice!r}"
            )
    seen: list[Any] = []
    for choice in choices:
        if any(type(choice) is type(s) and choice == s for s in seen):
            raise CoachError(f"{said} the choice {choice!r} is given twice")
        seen.append(choice)
    return tuple(choices)


def _pruning(spec: Any, where: str) -> Pruning:
    if isinstance(spec, bool):
        return Pruning(enabled=spec)
    if not isinstance(spec, dict):
        raise CoachError(
            f"{where}: pruning is false, or a mapping of startup_trials and warmup_steps; "
            f"got {spec!r}"
        )
    unknown = [str(k) for k in spec if k not in ("startup_trials", "warmup_steps")]
    if unknown:
        raise CoachError(
            f"{where}: pruning has no {unknown[0]!r}; it takes startup_trials, warmup_steps"
        )
    values: dict[str, Any] = {}
    for name in ("startup_trials", "warmup_steps"):
        if name in spec:
            value = spec[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise CoachError(f"{where}: pruning {name} is a whole number >= 0; got {value!r}")
            values[name] = value
    return Pruning(**values)


def check_space(
    space: SearchSpace, graph: GraphManager, where: str, allowed: AllowedImports | None = None
) -> None:
    """Try every dimension's ends (each choice of a categorical) on ``graph``'s parameters
    (the preset with the study's own overrides), as a trial sets them, through the override
    parser and the graph's validation; the other dimensions keep the preset's values.

    The space is a file, so a value that names code to import needs ``allowed``
    (`coach.trust`): every value a trial can take is checked here, before any trial runs.

    Raises:
        CoachError: a path the preset does not have (naming the valid fields), or a value its
            field or the validation refuses (naming the value and which end it is).
    """
    for dimension in space.dimensions:
        try:
            current = get_parameter(graph.parameters(), dimension.path)
        except CoachError as error:
            raise CoachError(f"{where}: {error}") from None
        whole = isinstance(current, (*LEAF_TYPES, *WHOLE_TYPES))
        if isinstance(current, dict | list) or (dataclasses.is_dataclass(current) and not whole):
            raise CoachError(f"{where}: {dimension.path} is a group of parameters; name a field")
        for label, value in dimension.ends():
            trial = copy.deepcopy(graph)
            try:
                set_parameter(
                    trial.parameters(),
                    dimension.path,
                    dimension.value_text(value),
                    read_from=FileSource(where, allowed or AllowedImports()),
                )
                trial.validate()
            except ImportNotAllowed:  # it names the file already
                raise
            except CoachError as error:
                raise CoachError(f"{where}: {error} ({label})") from None
