"""The HTML report: one page, the figures inlined, names and paths escaped, the tables' cells."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from coach.studies.report import Report, inline_svg, write_report
from coach.studies.runs import Run
from coach.studies.tables import final_performance

SVG = """<?xml version="1.0" encoding="utf-8" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"
  "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" width="10pt" height="10pt"><text>{}</text></svg>
"""
ODD = '<b>&"odd"'
"""A preset name that HTML would read as markup."""
MADE = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


class Tables(HTMLParser):
    """The text of every cell of every table of a page, by the table's class (the rows of
    tables of one class one after the other)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.tags: list[str] = []
        self._table = ""
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "table":
            self._table = dict(attrs)["class"] or ""
            self.tables.setdefault(self._table, [])
        elif tag == "tr":
            self.tables[self._table].append([])
        elif tag in ("td", "th"):
            self.tables[self._table][-1].append("")
            self._in_cell = True

    def handle_endtag(self, tag: str) -> None:
        self._in_cell = self._in_cell and tag not in ("td", "th")

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.tables[self._table][-1][-1] += data


def run(preset: str, seed: int, rewards: list[float], success: list[float] | None = None) -> Run:
    steps = np.arange(1, len(rewards) + 1) * 1000.0
    path = Path(f"/runs/{preset}/seed_{seed}")
    successes = None if success is None else np.array(success)
    return Run(path, preset, seed, "Env-v0", steps, steps / 10, np.array(rewards), successes)


def report(
    tmp_path: Path, presets: dict[str, list[Run]], thresholds: dict[str, float | None]
) -> Report:
    figures = {}
    for name, text in (("curves", "curve legend"), ("aggregates", "IQM")):
        figures[name] = tmp_path / f"{name}.svg"
        figures[name].write_text(SVG.format(text))
    rows = final_performance(presets, thresholds)
    return Report(
        sources=[Path("experiments/a"), Path("b c")],
        presets=presets,
        thresholds=thresholds,
        figures={"Env-v0": figures["curves"]},
        rows=rows,
        aggregate_figure=figures["aggregates"] if rows else None,
    )


def test_the_page_holds_its_figures_and_tables_and_escapes_every_name(tmp_path: Path) -> None:
    presets = {
        "DQN": [run("DQN", 2, [10.0, 50.0, 40.0]), run("DQN", 1, [20.0, 100.0])],
        ODD: [run(ODD, 7, [1234.5, 3.0])],
    }
    page = report(tmp_path, presets, {"DQN": 100.0, ODD: None}).html(MADE)
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2
    assert "<?xml" not in page and "DTD SVG" not in page  # the SVG files' preambles left out
    assert "<text>curve legend</text>" in page and "<text>IQM</text>" in page
    assert ODD not in page and "&lt;b&gt;&amp;&quot;odd&quot;" in page
    assert "Made on 2025-01-02 at 03:04:05 UTC" in page and "3 runs of 2 presets" in page
    command = "coach plot experiments/a &#x27;b c&#x27; -x env_steps --metric reward"
    assert f"<code>{command}</code>" in page  # the paths quoted as a shell would need
    parsed = Tables()
    parsed.feed(page)
    assert not {"script", "img", "link", "iframe"} & set(parsed.tags)  # nothing to fetch or run
    presets_table = parsed.tables["presets"]
    assert presets_table[1:] == [
        ["DQN", "Env-v0", "2", "1, 2", "100"],
        [ODD, "Env-v0", "1", "7", "\N{EM DASH}"],
    ]
    (header, row) = parsed.tables["final-performance"]  # ODD promises nothing: not scored
    assert header[:3] == ["preset", "runs", "IQM"]
    assert row[0:2] == ["DQN", "2"] and row[-1] == "100"
    assert row[4] == "0.700 [0.400, 1.000]"  # the mean of 0.4 and 1, and its interval
    runs = parsed.tables["runs"]  # a table per preset
    assert (
        runs[0]
        == runs[3]
        == [
            "seed",
            "folder",
            "final evaluation reward",
            "best evaluation reward",
            "env steps",
            "evaluations",
        ]
    )
    assert runs[1:3] == [
        ["1", "/runs/DQN/seed_1", "100", "100", "2,000", "2"],  # by seed
        ["2", "/runs/DQN/seed_2", "40", "50", "3,000", "3"],
    ]
    assert runs[4] == ["7", f"/runs/{ODD}/seed_7", "3", "1,234.5", "2,000", "2"]  # unescaped


def test_without_a_threshold_there_is_no_score_and_the_metric_names_the_columns(
    tmp_path: Path,
) -> None:
    presets = {"HER": [run("HER", 0, [-5.0, -1.0], success=[0.25, 0.5])]}
    study = replace(report(tmp_path, presets, {"HER": None}), metric="success_rate")
    path = write_report(study, tmp_path / "out" / "report.html", made=MADE)
    page = path.read_text(encoding="utf-8")
    parsed = Tables()
    parsed.feed(page)
    assert "final-performance" not in parsed.tables and page.count("<svg") == 1
    assert "No preset here has a positive threshold for the success rate" in page
    header, row = parsed.tables["runs"]
    assert header[2:4] == ["final evaluation success rate", "best evaluation success rate"]
    assert row[2:4] == ["0.5", "0.5"]


def test_an_svg_file_is_inlined_from_its_svg_element(tmp_path: Path) -> None:
    path = tmp_path / "figure.svg"
    path.write_text(SVG.format("x"))
    assert inline_svg(path).startswith("<svg xmlns=") and inline_svg(path).endswith("</svg>")
    path.write_text("<html></html>")
    with pytest.raises(ValueError, match="no <svg>"):
        inline_svg(path)
