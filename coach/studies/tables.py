"""Final-performance tables of a study: each preset's runs scored by their last evaluation,
normalised by the preset's validation threshold (1 reaches it), and aggregated with
bootstrap intervals (`coach.studies.statistics.aggregate`).

Only presets with a positive threshold for the metric are normalised this way: a score over
a negative threshold (Pendulum's -200, say) would read better the lower it is, and needs a
baseline to normalise against instead.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from coach.studies.runs import Run
from coach.studies.statistics import AGGREGATES, aggregate

COLUMNS = ["preset", "runs", "threshold"] + [
    column for name in AGGREGATES for column in (name, f"{name} low", f"{name} high")
]
"""The table's columns: each aggregate's point estimate and its interval's bounds."""


def final_scores(runs: list[Run], metric: str = "reward") -> np.ndarray:
    """Each run's last evaluation ``metric``, (runs,)."""
    values = [run.reward if metric == "reward" else run.success_rate for run in runs]
    return np.array([v[-1] for v in values if v is not None and len(v)], dtype=np.float64)


ALL_PRESETS = "all presets"
"""The row of every scored preset together (where there are two or more)."""


def final_performance(
    presets: Mapping[str, list[Run]],
    thresholds: Mapping[str, float | None],
    metric: str = "reward",
) -> list[dict[str, object]]:
    """A row per preset with a positive threshold: its runs, threshold and aggregates of its
    normalised final scores (`COLUMNS`). With two presets or more, a last row aggregates
    over all of them, each preset a task of rliable's (runs, tasks) matrix, so that its
    bootstrap resamples runs within each preset: there each preset gives as many runs as
    the one with the fewest (its first ones), and ``runs`` says how many."""
    scores = {}
    for name, runs in presets.items():
        threshold = thresholds.get(name)
        finals = final_scores(runs, metric)
        if threshold is not None and threshold > 0 and len(finals):
            scores[name] = (finals / threshold)[:, None]
    if len(scores) >= 2:
        fewest = min(len(s) for s in scores.values())
        scores[ALL_PRESETS] = np.hstack([s[:fewest] for s in scores.values()])
    rows: list[dict[str, object]] = []
    for name, estimates in aggregate(scores).items() if scores else []:
        row: dict[str, object] = {
            "preset": name,
            "runs": len(scores[name]),
            "threshold": thresholds.get(name),
        }
        for label, estimate in estimates.items():
            row[label] = estimate.point
            row[f"{label} low"] = estimate.low
            row[f"{label} high"] = estimate.high
        rows.append(row)
    return rows


def write_table(rows: list[dict[str, object]], path: Path) -> Path:
    """``rows`` as a CSV file at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path
