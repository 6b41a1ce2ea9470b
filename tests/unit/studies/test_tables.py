"""The final-performance table: last evaluations over positive thresholds, aggregated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coach.studies.runs import Run
from coach.studies.tables import (
    ALL_PRESETS,
    COLUMNS,
    final_performance,
    final_scores,
    write_table,
)


def run(preset: str, rewards: list[float]) -> Run:
    steps = np.arange(1, len(rewards) + 1) * 100.0
    return Run(Path(preset), preset, 0, "Env-v0", steps, steps / 10, np.array(rewards), None)


def test_each_preset_is_scored_by_its_runs_last_evaluations_over_its_threshold(
    tmp_path: Path,
) -> None:
    presets = {
        "good": [run("good", [10, 200]), run("good", [50, 100])],
        "negative": [run("negative", [-300, -150])],  # Pendulum-like: no ratio to take
        "unpromised": [run("unpromised", [1, 2])],
    }
    assert final_scores(presets["good"]).tolist() == [200.0, 100.0]
    rows = final_performance(presets, {"good": 200.0, "negative": -200.0, "unpromised": None})
    assert [row["preset"] for row in rows] == ["good"]
    (row,) = rows
    assert row["runs"] == 2 and row["mean"] == pytest.approx((1.0 + 0.5) / 2)
    assert row["optimality gap"] == pytest.approx(0.25)  # (0 + 0.5) / 2
    assert row["IQM low"] <= row["IQM"] <= row["IQM high"]
    path = write_table(rows, tmp_path / "out" / "final.csv")
    header, line = path.read_text().splitlines()
    assert header.split(",") == COLUMNS and line.startswith("good,2,200.0,")
    assert final_performance({"x": presets["negative"]}, {"x": -200.0}) == []


def test_two_presets_or_more_are_also_aggregated_together() -> None:
    presets = {
        "a": [run("a", [400]), run("a", [500]), run("a", [300])],
        "b": [run("b", [50]), run("b", [100])],  # two runs: each preset gives its first two
    }
    rows = final_performance(presets, {"a": 500.0, "b": 100.0})
    assert [row["preset"] for row in rows] == ["a", "b", ALL_PRESETS]
    together = rows[-1]
    assert together["runs"] == 2 and together["threshold"] is None
    pooled = np.array([0.8, 1.0, 0.5, 1.0])  # a's first two, b's two
    assert together["mean"] == pytest.approx(pooled.mean())
    assert together["median"] == pytest.approx(np.median([0.9, 0.75]))  # rliable: of task means
    assert together["IQM"] == pytest.approx(0.9)  # the middle half of 0.5, 0.8, 1, 1: 0.8, 1
    assert together["optimality gap"] == pytest.approx((0.2 + 0.5) / 4)
    for label in ("IQM", "median", "mean", "optimality gap"):
        assert together[f"{label} low"] <= together[label] <= together[f"{label} high"]
