"""Reading runs back for a study: each run's evaluations from its ``progress.csv``, named by
the preset and seed its ``params.yaml`` records.

A path given to a study is a run (an experiment folder with ``progress.csv``), or any
folder above runs: a group of seeds, an experiment name with its timestamps, a whole
``experiments/`` folder. Every run found under it is read. `on_grid` puts the runs of one
preset on common env-step points for `coach.studies.statistics.curve_band`.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from coach.errors import CoachError
from coach.trust import read_yaml

GRAPH_RUN = "graph"
"""The ``agent`` of the rows of the whole graph's evaluations (the team's, on several agents)."""


@dataclass(frozen=True, slots=True)
class Run:
    """One run's evaluations, in the order they were made."""

    path: Path
    """The experiment folder."""
    preset: str
    """The name of the preset it ran (``params.yaml``)."""
    seed: int
    """Its seed."""
    environment: str
    """Its environment (``environment.level``, or a multi-agent ``environment.env``; the
    preset's name where it names neither)."""
    env_steps: np.ndarray
    """Total env steps at each evaluation, (E,)."""
    wall_time: np.ndarray
    """Seconds since the run started, at each evaluation, (E,)."""
    reward: np.ndarray
    """The evaluation's mean episode reward, (E,)."""
    success_rate: np.ndarray | None
    """Its success rate, where the task reports one, (E,)."""
    spec: str = ""
    """What loads that preset from any folder (``params.yaml``'s ``preset``: a shipped
    preset's name, or the path of a user's file); the preset's name where empty."""
    parameters: dict[str, object] = field(default_factory=dict, compare=False)
    """Its resolved parameters (``params.yaml``), by dotted path: runs of one preset with
    different settings differ here, seeds of one setting do not."""


def find_runs(paths: Iterable[Path]) -> list[Run]:
    """Every run at or under ``paths``, each once, in path order.

    Raises:
        CoachError: A path does not exist, or holds no run.
    """
    found: dict[Path, None] = {}
    for path in paths:
        if not path.exists():
            raise CoachError(f"{path} does not exist")
        csvs = [path / "progress.csv"] if (path / "progress.csv").is_file() else []
        csvs = csvs or sorted(path.rglob("progress.csv"))
        if not csvs:
            raise CoachError(f"{path} holds no run (no progress.csv at or under it)")
        found.update(dict.fromkeys(c.parent.resolve() for c in csvs))
    return [read_run(folder) for folder in found]


def read_run(folder: Path) -> Run:
    """The run in ``folder``: its preset and seed, and its evaluations.

    Raises:
        CoachError: ``params.yaml`` or ``progress.csv`` is missing or unreadable.
    """
    params = folder / "params.yaml"
    if not params.is_file():
        raise CoachError(f"{folder} is not a readable run: {params.name} is missing")
    recorded = read_yaml(params, "the run's parameters")  # one line on a file it cannot read
    if not isinstance(recorded, dict):
        raise CoachError(f"{folder} is not a readable run: {params.name} is not a mapping")
    try:  # a whole number, as the YAML preset loader reads a seed (coach.presets)
        spec, seed = str(recorded["preset"]), int(recorded["seed"])
    except (KeyError, TypeError, ValueError):
        raise CoachError(
            f"{folder} is not a readable run: {params.name} records no preset and integer seed"
        ) from None
    preset = str(recorded.get("name") or spec)
    parameters = recorded.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise CoachError(f"{folder} is not a readable run: its parameters are not a mapping")
    environment = parameters.get("environment.level") or parameters.get("environment.env")
    progress = folder / "progress.csv"
    rows = _evaluation_rows(progress)

    def column(name: str) -> np.ndarray:
        return np.array([_number(progress, line, row, name) for line, row in rows], np.float64)

    successes = [row.get("success_rate", "") for _, row in rows]
    return Run(
        path=folder,
        preset=preset,
        seed=seed,
        environment=str(environment or preset),
        env_steps=column("env_steps"),
        wall_time=column("wall_time"),
        reward=column("reward"),
        success_rate=column("success_rate") if rows and all(successes) else None,
        spec=spec,
        parameters=dict(parameters),
    )


NUMERIC_COLUMNS = ("wall_time", "env_steps", "reward")
"""The columns of ``progress.csv`` a study reads numbers from (and ``success_rate``, where
the task has one)."""


def _evaluation_rows(progress: Path) -> list[tuple[int, dict[str, str]]]:
    """The rows of the graph's evaluations in ``progress``, each with its line number.

    Raises:
        CoachError: the file cannot be read, is not text, or lacks a column a study reads.
    """
    rows = []
    try:
        with open(progress, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or ()
            missing = [c for c in ("phase", "agent", *NUMERIC_COLUMNS) if c not in header]
            if missing:
                raise CoachError(
                    f"{progress} is not a run's progress.csv: it has no column "
                    f"{', '.join(map(repr, missing))}"
                )
            for row in reader:
                if row["phase"] == "evaluate" and row["agent"] == GRAPH_RUN:
                    rows.append((reader.line_num, row))
    except UnicodeDecodeError as error:
        raise CoachError(
            f"{progress} is not a run's progress.csv: byte {error.start} is not UTF-8 text "
            f"({error.object[error.start : error.start + 1]!r})"
        ) from None
    except (OSError, csv.Error) as error:
        raise CoachError(f"{progress} cannot be read: {error}") from None
    return rows


def _number(progress: Path, line: int, row: Mapping[str, str | None], name: str) -> float:
    """The number in ``row``'s column ``name``, read from ``progress``'s line ``line``.

    Raises:
        CoachError: the column holds no number there.
    """
    text = row.get(name) or ""  # a short row has None in the columns it lacks
    try:
        return float(text)
    except ValueError:
        raise CoachError(
            f"{progress}, line {line}, column {name}: {text!r} is not a number"
        ) from None


def on_grid(
    runs: list[Run], points: int = 100, metric: str = "reward", x: str = "env_steps"
) -> tuple[np.ndarray, np.ndarray]:
    """The runs' ``metric`` on common points of ``x`` (``env_steps`` or ``wall_time``), for a
    band across them.

    Over env steps, the grid runs from the latest first evaluation to the earliest last one,
    so that every run has evaluations on both sides of every point; each run's value at a
    point is interpolated linearly between its evaluations. Over wall time, runs of the same
    schedule evaluate at the same env steps but not at the same seconds (a loaded machine,
    another seed's longer episodes): their evaluations are matched one to one, as far as the
    shortest run goes, at the runs' mean wall time of each.

    Returns:
        ``(x, values)``: the points (P,) and each run's values at them (runs, P).

    Raises:
        CoachError: No runs, a run without evaluations or without ``metric``, or runs that
            share no stretch of env steps.
    """
    if not runs:
        raise CoachError("no runs to put on a grid")
    curves = []
    for run in runs:
        values = run.reward if metric == "reward" else run.success_rate
        if values is None or not len(run.env_steps):
            raise CoachError(f"{run.path} has no evaluation {metric} to plot")
        curves.append((run.env_steps if x == "env_steps" else run.wall_time, values))
    if x == "wall_time":
        count = min(len(values) for _, values in curves)
        seconds = np.mean([times[:count] for times, _ in curves], axis=0)
        return seconds, np.stack([values[:count] for _, values in curves])
    start = max(float(steps[0]) for steps, _ in curves)
    end = min(float(steps[-1]) for steps, _ in curves)
    if end < start:
        raise CoachError(
            f"the runs share no stretch of {x} (their evaluations end by {end:.0f} "
            f"and begin from {start:.0f})"
        )
    grid = np.linspace(start, end, points) if end > start else np.array([start])
    return grid, np.stack([np.interp(grid, steps, values) for steps, values in curves])
