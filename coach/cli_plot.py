"""``coach plot PATH...``: evaluation curves of runs across seeds, one figure per environment.

Every run at or under the paths is read (`coach.studies.runs`); runs of one preset are one
curve, their mean and 95% bootstrap band, and presets on the same environment share a figure.
Where the presets of a figure share a validation threshold for the metric, it is drawn too.
Each figure is written as PNG and SVG into ``--output``, named after its environment, beside
``final_performance.csv`` and its figure: each preset's final scores over its threshold,
aggregated (`coach.studies.tables`), and ``report.html``, a page of it all
(`coach.studies.report`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import click

from coach import cli_options
from coach.cli_options import fail
from coach.errors import CoachError

if TYPE_CHECKING:
    from coach.studies.runs import Run


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, type=cli_options.existing_path())
@click.option(
    "-o",
    "--output",
    type=cli_options.experiment_path(),
    default=Path("plots"),
    show_default=True,
    help="Where the figures go.",
)
@click.option(
    "-x",
    "--x-axis",
    type=click.Choice(["env_steps", "wall_time"]),
    default="env_steps",
    show_default=True,
    help="The curves' x axis: total env steps, or seconds since each run started.",
)
@click.option(
    "--metric",
    type=click.Choice(["reward", "success_rate"]),
    default="reward",
    show_default=True,
    help="What the curves show of each evaluation.",
)
def plot(paths: tuple[Path, ...], output: Path, x_axis: str, metric: str) -> None:
    """Plot the evaluation curves of runs, groups of seeds or several presets."""
    try:
        for path in plot_runs(list(paths), output, x_axis, metric):
            click.echo(str(path))
    except CoachError as error:
        fail(str(error))


def plot_runs(paths: list[Path], output: Path, x_axis: str, metric: str) -> list[Path]:
    """Write one figure per environment of the runs under ``paths``, the table of the
    presets' final performance (``final_performance.csv``) and the report of them all
    (``report.html``); returns the files."""
    from coach.studies.figures import aggregate_figure, curve_figure, save
    from coach.studies.report import Report, write_report
    from coach.studies.runs import find_runs, on_grid
    from coach.studies.tables import final_performance, write_table

    by_environment: dict[str, dict[str, list[Run]]] = {}
    for run in find_runs(paths):
        by_environment.setdefault(run.environment, {}).setdefault(run.preset, []).append(run)
    every = {name: runs for presets in by_environment.values() for name, runs in presets.items()}
    thresholds = {name: _threshold(name, metric) for name in every}  # each preset loaded once
    written = []
    figures = {}  # by environment, its SVG
    for environment, presets in by_environment.items():
        curves = {name: on_grid(runs, metric=metric, x=x_axis) for name, runs in presets.items()}
        shared = {thresholds[name] for name in presets}
        figure = curve_figure(
            curves,
            environment,
            x_label=x_axis.replace("_", " "),
            y_label=f"evaluation {metric.replace('_', ' ')}",
            threshold=shared.pop() if len(shared) == 1 else None,
        )
        written += save(figure, output / re.sub(r"[^A-Za-z0-9._-]+", "_", environment))
        figures[environment] = written[-1]
    rows = final_performance(every, thresholds, metric)
    aggregates = None
    if rows:
        written.append(write_table(rows, output / "final_performance.csv"))
        written += save(aggregate_figure(rows), output / "final_performance")
        aggregates = written[-1]
    report = Report(paths, every, thresholds, figures, rows, aggregates, metric, x_axis)
    written.append(write_report(report, output / "report.html"))
    return written


def _threshold(preset: str, metric: str) -> float | None:
    """The preset's validation threshold for ``metric``, if it still loads and has one."""
    from coach.presets import load_preset

    try:
        validation = load_preset(preset).validation
    except CoachError:
        return None
    if validation is None:
        return None
    return validation.min_reward if metric == "reward" else validation.min_success_rate
