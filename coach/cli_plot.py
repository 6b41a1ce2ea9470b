"""``coach plot PATH...``: evaluation curves of runs across seeds, one figure per environment.

Every run at or under the paths is read (`coach.studies.runs`); the runs of one setting (a
preset with the same parameters: its seeds) are one curve, their mean and 95% bootstrap band,
labelled with the preset's name and, where it ran with several settings, the parameters that
differ; curves on the same environment share a figure.
Where the presets of a figure share a validation threshold for the metric (or a ceiling, for a
preset that promises to stay below one), it is drawn too.
Each figure is written as PNG and SVG into ``--output``, named after its environment, beside
``final_performance.csv`` and its figure: each preset's final scores over its threshold,
aggregated (`coach.studies.tables`), and ``report.html``, a page of it all
(`coach.studies.report`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from coach import cli_options
from coach.cli_options import fail
from coach.errors import CoachError
from coach.trust import AllowedImports

if TYPE_CHECKING:
    from coach.presets import PresetValidation
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
@cli_options.allow_import_option()
def plot(
    paths: tuple[Path, ...], output: Path, x_axis: str, metric: str, allow_import: tuple[str, ...]
) -> None:
    """Plot the evaluation curves of runs, groups of seeds or several presets."""
    try:
        for path in plot_runs(
            list(paths), output, x_axis, metric, None, AllowedImports(allow_import)
        ):
            click.echo(str(path))
    except CoachError as error:
        fail(str(error))


def plot_runs(
    paths: list[Path],
    output: Path,
    x_axis: str,
    metric: str,
    floors: Mapping[str, float] | None = None,
    allowed: AllowedImports | None = None,
) -> list[Path]:
    """Write one figure per environment of the runs under ``paths``, the table of the
    presets' final performance (``final_performance.csv``) and the report of them all
    (``report.html``); returns the files.

    ``floors`` gives, by preset name, the threshold of a validation that has none until it is
    judged (a share of the gap between baselines measured then): drawn and scored as if the
    validation had it. The presets the runs' ``params.yaml`` name are loaded for their
    validations: a Python file or module among them only where ``allowed`` (`coach.trust`)."""
    from coach.studies.figures import aggregate_figure, curve_figure, save
    from coach.studies.report import Report, write_report
    from coach.studies.runs import find_runs, on_grid
    from coach.studies.tables import final_performance, write_table

    by_environment: dict[str, dict[str, list[Run]]] = {}
    for label, runs in settings(find_runs(paths)).items():
        by_environment.setdefault(runs[0].environment, {})[label] = runs
    every = {name: runs for presets in by_environment.values() for name, runs in presets.items()}
    specs = {run.spec or run.preset for runs in every.values() for run in runs}
    allowed = allowed if allowed is not None else AllowedImports()
    loaded = {spec: _validation(spec, allowed) for spec in specs}  # each preset loaded once
    validations = {name: loaded[runs[0].spec or runs[0].preset] for name, runs in every.items()}
    given = floors or {}
    thresholds = {
        name: given.get(runs[0].preset, _threshold(validations[name], metric))
        for name, runs in every.items()
    }
    lines = {
        name: _ceiling(validations[name], metric) if floor is None else floor
        for name, floor in thresholds.items()
    }
    written = []
    figures = {}  # by environment, its SVG
    for environment, presets in by_environment.items():
        curves = {name: on_grid(runs, metric=metric, x=x_axis) for name, runs in presets.items()}
        shared = {lines[name] for name in presets}
        line = shared.pop() if len(shared) == 1 else None
        minimums = {thresholds[name] for name in presets}
        batch = all(
            any(key.startswith("batch.") for key in run.parameters)
            for runs in presets.values()
            for run in runs
        )
        # A batch run counts gradient steps where a run that acts counts env steps.
        x_label = "gradient steps" if batch and x_axis == "env_steps" else x_axis.replace("_", " ")
        figure = curve_figure(
            curves,
            environment,
            x_label=x_label,
            y_label=f"evaluation {metric.replace('_', ' ')}",
            threshold=line,
            threshold_label="threshold" if minimums == {line} else "ceiling",
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


def settings(runs: list[Run]) -> dict[str, list[Run]]:
    """The runs by setting, each a curve: a preset's runs with the same parameters (its seeds)
    together. A preset run with several settings (``-cp`` overrides, say) makes a curve per
    setting, labelled with the parameters that tell them apart."""
    by_preset: dict[str, dict[str, list[Run]]] = {}
    for run in runs:
        key = repr(sorted(run.parameters.items()))
        by_preset.setdefault(run.preset, {}).setdefault(key, []).append(run)
    out: dict[str, list[Run]] = {}
    for preset, groups in by_preset.items():
        if len(groups) == 1:
            out[preset] = next(iter(groups.values()))
            continue
        keys = sorted({k for group in groups.values() for k in group[0].parameters})
        differing = [
            k for k in keys if len({repr(g[0].parameters.get(k)) for g in groups.values()}) > 1
        ]
        for group in groups.values():
            shown = ", ".join(f"{k}={group[0].parameters.get(k)!r}" for k in differing)
            out[f"{preset} ({shown})"] = group
    return out


def _validation(preset: str, allowed: AllowedImports) -> PresetValidation | None:
    """The preset's validation, if it still loads and has one. ``preset`` is what a run's
    params.yaml names, so it runs no code the user did not allow: such a preset's threshold
    is not drawn, and a line says how to allow it."""
    from coach.presets import load_preset, presets_dir
    from coach.trust import ImportNotAllowed, check_preset_spec

    try:
        check_preset_spec(preset, allowed, "a run's params.yaml", presets_dir())
        return load_preset(preset, allowed).validation
    except ImportNotAllowed as error:
        click.echo(f"coach: note: {error}; its threshold is not drawn", err=True)
        return None
    except CoachError:
        return None


def _threshold(validation: PresetValidation | None, metric: str) -> float | None:
    """The validation's threshold for ``metric``: what the run must reach."""
    if validation is None:
        return None
    return validation.min_reward if metric == "reward" else validation.min_success_rate


def _ceiling(validation: PresetValidation | None, metric: str) -> float | None:
    """The validation's ceiling for ``metric``: what the run must stay below (the control of
    an exploration test, say)."""
    if validation is None:
        return None
    return validation.max_reward if metric == "reward" else validation.max_success_rate
