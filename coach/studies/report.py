"""The HTML report of a study: one self-contained page of what ``coach plot`` drew and scored.

The page needs nothing but itself: the figures are the SVG files ``coach plot`` wrote, inlined
(their text stays text, so a browser's search finds a preset in a legend), the style is in the
page, and there is no script. It opens from the file system in any browser, and can be mailed
or archived as one file. Every name and path that comes from the runs is escaped.

In order: what the report was made from (the paths, when, each preset's runs and seeds), a
curve figure per environment, the final-performance table and its figure
(`coach.studies.tables`), and a table of each preset's runs.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

import coach
from coach.studies.runs import Run
from coach.studies.statistics import AGGREGATES

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #1d1d1f; margin: 2rem auto;
       max-width: 1100px; padding: 0 1.5rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; margin-top: 2.4rem; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05rem; margin-top: 1.6rem; }
.made, figcaption, .note { color: #555; }
nav a { margin-right: 1rem; }
code { font: 0.9em ui-monospace, monospace; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.8rem 0; }
th, td { padding: 0.3rem 0.7rem; border-bottom: 1px solid #e3e3e3; text-align: left;
         vertical-align: top; }
th { background: #f5f5f7; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.interval { color: #666; font-size: 0.85em; }
figure { margin: 1rem 0; }
figure svg { display: block; max-width: 100%; height: auto; }
"""

NONE = "&mdash;"
"""What a cell without a value shows."""


@dataclass(frozen=True, slots=True)
class Report:
    """What one ``coach plot`` read, drew and scored."""

    sources: Sequence[Path]
    """The paths it was given."""
    presets: Mapping[str, list[Run]]
    """Each preset's runs."""
    thresholds: Mapping[str, float | None]
    """Each preset's validation threshold for the metric, where it has one."""
    figures: Mapping[str, Path]
    """Each environment's curve figure, an SVG file."""
    rows: Sequence[Mapping[str, Any]]
    """The final-performance table (`coach.studies.tables.final_performance`)."""
    aggregate_figure: Path | None
    """Its figure, an SVG file (none without rows)."""
    metric: str = "reward"
    """What the curves show of each evaluation: ``reward`` or ``success_rate``."""
    x_axis: str = "env_steps"
    """The curves' x axis: ``env_steps`` or ``wall_time``."""

    @property
    def metric_words(self) -> str:
        """The metric as the page names it (``success rate``)."""
        return self.metric.replace("_", " ")

    def html(self, made: datetime) -> str:
        """The page, stamped as made at ``made``."""
        metric = self.metric_words
        environments = list(self.figures)
        runs = sum(len(runs) for runs in self.presets.values())
        command = shlex.join(
            ["coach", "plot", *map(str, self.sources), "-x", self.x_axis, "--metric", self.metric]
        )
        links = "".join(
            f'<a href="#environment-{k}">{escape(name)}</a>' for k, name in enumerate(environments)
        )
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en">',
            '<head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>Coach study: {escape(', '.join(environments))}</title>",
            f"<style>{STYLE}</style></head>",
            "<body>",
            f"<h1>Coach study: {escape(', '.join(environments))}</h1>",
            f'<p class="made">Made on {made:%Y-%m-%d at %H:%M:%S %Z} by Coach '
            f"{escape(coach.__version__)} from {_count(runs, 'run')} of "
            f"{_count(len(self.presets), 'preset')}: the evaluation {escape(metric)} over "
            f"{escape(self.x_axis.replace('_', ' '))}.</p>",
            f"<p>Command: <code>{escape(command)}</code></p>",
            f"<nav>{links}"
            '<a href="#final-performance">Final performance</a><a href="#runs">Runs</a></nav>',
            self._presets_table(),
        ]
        for k, environment in enumerate(environments):
            parts += [
                f'<h2 id="environment-{k}">{escape(environment)}</h2>',
                _figure(
                    self.figures[environment],
                    f"Each preset's mean evaluation {escape(metric)} over its runs, with a 95% "
                    "bootstrap confidence band across them; dashed, the threshold the presets "
                    "share, if they do.",
                ),
            ]
        parts += self._final_performance()
        parts.append('<h2 id="runs">Runs</h2>')
        for name, preset_runs in self.presets.items():
            parts.append(f"<h3>{escape(name)}</h3>")
            parts.append(self._runs_table(preset_runs))
        parts += ["</body>", "</html>", ""]
        return "\n".join(parts)

    def _presets_table(self) -> str:
        metric = self.metric_words
        header = ["preset", "environment", "runs", "seeds", f"threshold ({metric})"]
        body = []
        for name, runs in self.presets.items():
            environments = sorted({run.environment for run in runs})
            seeds = ", ".join(str(seed) for seed in sorted(run.seed for run in runs))
            body.append(
                [
                    _cell(name),
                    _cell(", ".join(environments)),
                    _number_cell(len(runs)),
                    _cell(seeds),
                    _number_cell(self.thresholds.get(name)),
                ]
            )
        return _table(header, body, "presets")

    def _final_performance(self) -> list[str]:
        metric = self.metric_words
        parts = ['<h2 id="final-performance">Final performance</h2>']
        if not self.rows:
            parts.append(
                f'<p class="note">No preset here has a positive threshold for the {metric}'
                ", so none is scored: final performance is each run's last evaluation as a "
                "fraction of its preset's threshold.</p>"
            )
            return parts
        parts.append(
            '<p class="note">Each run is scored by its last evaluation divided by its preset\'s '
            "threshold (1 reaches it). Per preset: the interquartile mean, median and mean of "
            "the scores, and the optimality gap (how far runs fall short of 1), each with its "
            "95% stratified-bootstrap interval in brackets. With two presets or more, the "
            "last row takes them together, each preset a task: as many runs of each as the "
            "preset with the fewest has.</p>"
        )
        header = ["preset", "runs", *AGGREGATES, f"threshold ({metric})"]
        body = []
        for row in self.rows:
            cells = [_cell(str(row["preset"])), _number_cell(int(row["runs"]))]
            for label in AGGREGATES:
                low, high = float(row[f"{label} low"]), float(row[f"{label} high"])
                cells.append(
                    f'<td class="number">{float(row[label]):.3f} '
                    f'<span class="interval">[{low:.3f}, {high:.3f}]</span></td>'
                )
            cells.append(_number_cell(row["threshold"]))
            body.append(cells)
        parts.append(_table(header, body, "final-performance"))
        if self.aggregate_figure is not None:
            parts.append(
                _figure(
                    self.aggregate_figure,
                    "The aggregates with their 95% intervals, a panel each; dashed, the "
                    "threshold (a gap of 0).",
                )
            )
        return parts

    def _runs_table(self, runs: list[Run]) -> str:
        metric = self.metric_words
        header = [
            "seed",
            "folder",
            f"final evaluation {metric}",
            f"best evaluation {metric}",
            "env steps",
            "evaluations",
        ]
        body = []
        for run in sorted(runs, key=lambda run: (run.seed, str(run.path))):
            values = run.reward if self.metric == "reward" else run.success_rate
            if values is None or not len(values):
                values = np.array([np.nan])
            body.append(
                [
                    _cell(str(run.seed), "number"),
                    f"<td><code>{escape(str(run.path))}</code></td>",
                    _number_cell(float(values[-1])),
                    _number_cell(float(np.max(values))),
                    _number_cell(int(run.env_steps[-1]) if len(run.env_steps) else None),
                    _number_cell(len(run.env_steps)),
                ]
            )
        return _table(header, body, "runs")


def write_report(report: Report, path: Path, made: datetime | None = None) -> Path:
    """Write ``report`` as the page at ``path`` (made now, unless ``made`` says when)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.html(made or datetime.now().astimezone()), encoding="utf-8")
    return path


def inline_svg(path: Path) -> str:
    """The ``<svg>`` element of the SVG file at ``path``, to put in a page: what comes before
    it (the XML declaration, the DOCTYPE naming an external DTD) is left out."""
    text = path.read_text(encoding="utf-8")
    start = text.find("<svg")
    if start < 0:
        raise ValueError(f"{path} holds no <svg> element")
    return text[start:].strip()


def _figure(svg: Path, caption: str) -> str:
    return f"<figure>{inline_svg(svg)}<figcaption>{caption}</figcaption></figure>"


def _table(header: list[str], body: list[list[str]], kind: str) -> str:
    """A table of a row of ``header`` names and rows of ``<td>`` cells."""
    head = "".join(f"<th>{escape(name)}</th>" for name in header)
    rows = "".join("<tr>" + "".join(row) + "</tr>" for row in body)
    return f'<table class="{kind}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _cell(text: str, kind: str = "") -> str:
    """A cell of ``text``, escaped."""
    return f'<td class="{kind}">{escape(text)}</td>' if kind else f"<td>{escape(text)}</td>"


def _number_cell(value: float | None) -> str:
    """A number's cell: a count with its thousands separated, a measure to two decimals
    (without trailing zeros), a dash for none (or NaN)."""
    if value is None or value != value:
        return f'<td class="number">{NONE}</td>'
    if isinstance(value, int):
        return f'<td class="number">{value:,}</td>'
    return f'<td class="number">{f"{value:,.2f}".rstrip("0").rstrip(".")}</td>'


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
