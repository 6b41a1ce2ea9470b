"""Figures of a study: evaluation curves across seeds, drawn with matplotlib.

`aggregate_figure` draws the presets' final-performance aggregates with their intervals.
`curve_figure` draws one line per preset (or any label): the mean over its runs and, shaded,
the bootstrap confidence band (`coach.studies.statistics.curve_band`), with the number of
runs in the legend and, where given, the validation's threshold as a dashed line. `save`
writes a figure as PNG and SVG side by side. Figures are drawn without a display (the Agg
backend), so they work on a headless machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from coach.studies.statistics import AGGREGATES, curve_band


def curve_figure(
    curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
    title: str,
    x_label: str = "env steps",
    y_label: str = "evaluation reward",
    threshold: float | None = None,
    confidence: float = 0.95,
    threshold_label: str = "threshold",
) -> Any:
    """A figure of learning curves.

    Args:
        curves: By label: ``(steps, values)``, the grid (P,) and each run's values on it
            (runs, P) (`coach.studies.runs.on_grid`).
        title: The figure's title (the environment, say).
        x_label: The x axis.
        y_label: The y axis.
        threshold: A horizontal dashed line (a validation's threshold), if given.
        confidence: The bands' coverage.
        threshold_label: The dashed line's name in the legend ("ceiling", say).

    Returns:
        The matplotlib figure (close it, or `save` it, when done).
    """
    from matplotlib.figure import Figure  # no pyplot: no display, no global figure state

    figure = Figure(figsize=(7.0, 4.5), layout="constrained")
    axes = figure.add_subplot()
    for label, (steps, values) in curves.items():
        mean, low, high = curve_band(values, confidence=confidence)
        runs = f"{len(values)} run{'s' if len(values) > 1 else ''}"
        (line,) = axes.plot(steps, mean, label=f"{label} ({runs})")
        axes.fill_between(steps, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    if threshold is not None:
        axes.axhline(threshold, color="0.4", linestyle="--", linewidth=1, label=threshold_label)
    axes.set(title=title, xlabel=x_label, ylabel=y_label)
    axes.grid(alpha=0.3)
    axes.legend(loc="best", frameon=False)
    return figure


def aggregate_figure(rows: Sequence[Mapping[str, Any]]) -> Any:
    """A figure of the presets' aggregate final scores (`coach.studies.tables` rows): a panel
    per aggregate (IQM, median, mean, optimality gap), a point and its interval per preset,
    with 1 (the threshold) marked."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3.0 * len(AGGREGATES), 0.5 * len(rows) + 1.5), layout="constrained")
    panels = figure.subplots(1, len(AGGREGATES), sharey=True, squeeze=False)[0]
    names = [str(row["preset"]) for row in rows]
    places = np.arange(len(rows))
    for axes, label in zip(panels, AGGREGATES, strict=True):
        points = np.array([float(row[label]) for row in rows])
        low = points - np.array([float(row[f"{label} low"]) for row in rows])
        high = np.array([float(row[f"{label} high"]) for row in rows]) - points
        axes.errorbar(points, places, xerr=[low, high], fmt="o", capsize=4)
        axes.axvline(1.0 if label != "optimality gap" else 0.0, color="0.4", ls="--", lw=1)
        axes.set(title=label, xlabel="score / threshold" if label != "optimality gap" else "gap")
        axes.grid(alpha=0.3, axis="x")
    panels[0].set_yticks(places, names)
    panels[0].invert_yaxis()
    return figure


def save(figure: Any, stem: Path) -> list[Path]:
    """Write ``figure`` as ``stem.png`` (150 dpi) and ``stem.svg`` (its text kept as text,
    not outlines: smaller, and searchable); returns their paths."""
    import matplotlib

    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        for path in paths:
            figure.savefig(path, dpi=150)
    return paths
