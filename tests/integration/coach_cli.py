"""Running the ``coach`` command in subprocesses, and reading what it wrote."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

SMALL = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(300)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(1200)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(600)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(3)",
    "-cp", "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(64)",
    "-cp", "agent.algorithm.num_consecutive_training_steps=8",
]  # fmt: skip
"""A CartPole_DQN run of a few seconds."""


def overriding(base: Sequence[str], extra: Sequence[str]) -> list[str]:
    """The options ``base`` then ``extra``, without the ``-cp`` of ``base`` whose path an
    ``-cp`` of ``extra`` sets (the command refuses a path given twice with two values)."""

    def paths(options: Sequence[str]) -> list[str | None]:
        return [
            option.partition("=")[0].strip() if i > 0 and options[i - 1] == "-cp" else None
            for i, option in enumerate(options)
        ]

    replaced = {path for path in paths(extra) if path is not None}
    kept: list[str] = []
    for option, path in zip(base, paths(base), strict=True):
        if path in replaced:
            kept.pop()  # its "-cp"
        else:
            kept.append(option)
    return [*kept, *extra]


TINY = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(1)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(1)",
    "-cp", "schedule.evaluation_steps=EnvironmentSteps(1)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(1)",
]  # fmt: skip
"""A run of two env steps: heatup, the training budget, the evaluation and its period one
step long each."""

COMMAND = [sys.executable, "-m", "coach.cli"]
ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def coach(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300
    )


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    """Start ``coach`` with its console on a pipe (read it to follow the run)."""
    return subprocess.Popen(
        [*COMMAND, *args],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(process: subprocess.Popen[str], text: str) -> str:
    """Read the run's console until a line contains ``text``; return that line."""
    assert process.stdout is not None
    for line in process.stdout:
        if text in line:
            return line
    raise AssertionError(f"the run ended without printing {text!r}")


def experiment(root: Path, name: str = "CartPole_DQN") -> Path:
    (run,) = list((root / name).iterdir())
    return run


def rewards(run: Path) -> list[tuple[str, str, str]]:
    with open(run / "progress.csv") as f:
        return [(r["phase"], r["env_steps"], r["reward"]) for r in csv.DictReader(f)]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` with its contents (to prove nothing changed)."""
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command in this process; return its one error line (after checking it)."""
    from coach.cli import main

    with pytest.raises(SystemExit) as stop:
        main.main(args, prog_name="coach")
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("coach: error: "), err
    assert "Traceback" not in err
    return lines[0]
