"""How `coach plot` makes curves of runs: one per setting of a preset."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from coach.cli_plot import settings
from coach.studies.runs import Run


def _run(preset: str, seed: int, **parameters: object) -> Run:
    steps = np.array([100.0, 200.0])
    return Run(
        Path(f"{preset}/{seed}"),
        preset,
        seed,
        "Env-v0",
        steps,
        steps,
        steps,
        None,
        parameters=parameters,
    )


def test_the_seeds_of_one_setting_are_one_curve_named_after_the_preset() -> None:
    runs = [_run("A", 0, lr=1e-3, gamma=0.99), _run("A", 1, lr=1e-3, gamma=0.99), _run("B", 0)]
    curves = settings(runs)
    assert list(curves) == ["A", "B"]
    assert [r.seed for r in curves["A"]] == [0, 1]


def test_settings_of_one_preset_are_curves_labelled_by_what_differs() -> None:
    runs = [
        _run("A", 0, lr=1e-3, gamma=0.99),
        _run("A", 0, lr=3e-4, gamma=0.99),
        _run("A", 1, lr=1e-3, gamma=0.99),
    ]
    curves = settings(runs)
    assert sorted(curves) == ["A (lr=0.0003)", "A (lr=0.001)"]
    assert [r.seed for r in curves["A (lr=0.001)"]] == [0, 1]
