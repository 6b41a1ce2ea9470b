"""The HTML report of ``coach plot``, opened from the file system in a real headless browser:
Debian's chromium (``scripts/install-system-packages`` installs it), driven by playwright.

The report of two presets on CartPole (two seeds of one) loads with no console error, page
error or failed request, and asks for nothing but itself; every figure is drawn with a box of
its own and something painted in it; the curves' legend names both presets; the tables hold
a row per preset and per run; a screenshot of the page is not blank.

Without chromium these tests fail (they do not skip): the suite needs it, and says how to get it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageStat

from coach.studies.runs import find_runs
from tests.browser import installed_chromium, launched
from tests.integration.coach_cli import coach

# The study's runs are made once per test process (`study_experiments`); grouped on one
# worker by `make test`'s --dist loadgroup, they are made once in all.
pytestmark = pytest.mark.xdist_group("study")


@dataclass
class Opened:
    """The report as the browser loaded it, and what the browser saw on the way."""

    page: Any  # playwright's Page
    url: str
    status: int | None
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def console(self, message: Any) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)


@pytest.fixture(scope="module")
def report(study_experiments: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``coach plot`` on the groups of two presets, as a user types it."""
    folder = tmp_path_factory.mktemp("report")
    groups = [study_experiments / name for name in ("CartPole_DQN_1", "CartPole_DQN_2")]
    groups.append(study_experiments / "CartPole_DDQN_1")
    done = coach("plot", *map(str, groups), "-o", "plots", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == str(Path("plots") / "report.html")
    return folder / "plots" / "report.html"


@pytest.fixture(scope="session")  # session: set up before the runs, also session-wide
def chromium() -> Path:
    """The browser, or a failure that says how to install it (before any run is made)."""
    return installed_chromium("the report's browser test")


@pytest.fixture(scope="module")
def opened(chromium: Path, report: Path) -> Iterator[Opened]:
    """``report`` loaded from its file in headless chromium."""
    with launched(chromium) as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        seen = Opened(page, report.as_uri(), None)
        page.on("request", lambda request: seen.requests.append(request.url))
        page.on("requestfailed", lambda request: seen.failed.append(request.url))
        page.on("pageerror", lambda error: seen.page_errors.append(str(error)))
        page.on("console", seen.console)
        response = page.goto(seen.url, wait_until="load")
        seen.status = None if response is None else response.status
        yield seen


def test_the_report_loads_alone_with_no_errors(opened: Opened) -> None:
    page = opened.page
    assert opened.status in (0, 200, None)  # file:// answers without an HTTP status
    assert page.title() == "Coach study: CartPole-v1"
    assert page.evaluate("document.readyState") == "complete"
    assert opened.console_errors == []
    assert opened.page_errors == []
    assert opened.failed == []
    assert opened.requests == [opened.url]  # nothing else: no network, no file beside it
    assert page.locator("script, link, iframe, object, embed").count() == 0


def test_every_figure_is_visible_with_something_drawn(opened: Opened, tmp_path: Path) -> None:
    page = opened.page
    figures = page.locator("figure svg")
    assert figures.count() == 2  # CartPole's curves, the final-performance aggregates
    for k in range(figures.count()):
        figure = figures.nth(k)
        figure.scroll_into_view_if_needed()
        assert figure.is_visible()
        box = figure.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 150
        figure.screenshot(path=tmp_path / f"figure_{k}.png")
        assert _painted(tmp_path / f"figure_{k}.png") > 0.01  # lines, bands, text: not blank
    images = page.locator("img")  # none now; any there must have loaded and have a size
    for k in range(images.count()):
        image = images.nth(k)
        assert image.evaluate("i => i.complete && i.naturalWidth > 0")
        box = image.bounding_box()
        assert box is not None and box["width"] > 0 and box["height"] > 0


def test_the_curves_legend_names_both_presets(opened: Opened) -> None:
    curves = opened.page.locator("figure svg").first
    for label in ("CartPole_DQN (2 runs)", "CartPole_DDQN (1 run)", "threshold"):
        text = curves.locator("text").filter(has_text=label)
        assert text.count() == 1, label
        box = text.bounding_box()
        assert text.is_visible() and box is not None and box["width"] > 0, label


def test_the_tables_hold_a_row_per_preset_and_per_run(
    opened: Opened, study_experiments: Path
) -> None:
    page = opened.page

    def rows(selector: str) -> list[list[str]]:
        table = page.locator(selector)
        return [
            [cell.strip() for cell in row.locator("td").all_inner_texts()]
            for row in table.locator("tbody tr").all()
        ]

    presets = rows("table.presets")
    assert [row[0] for row in presets] == ["CartPole_DQN", "CartPole_DDQN"]
    assert [row[2:4] for row in presets] == [["2", "1, 2"], ["1", "1"]]
    final = rows("table.final-performance")
    assert [(row[0], row[1], row[-1]) for row in final] == [
        ("CartPole_DQN", "2", "475"),
        ("CartPole_DDQN", "1", "475"),
        ("all presets", "1", "—"),  # each preset's first run, together
    ]
    runs = {(run.preset, run.seed): run for run in find_runs([study_experiments])}
    tables = page.locator("table.runs")
    assert tables.count() == 2
    for k, (preset, seeds) in enumerate((("CartPole_DQN", [1, 2]), ("CartPole_DDQN", [1]))):
        table = rows(f"table.runs >> nth={k}")
        assert [int(row[0]) for row in table] == seeds
        for row, seed in zip(table, seeds, strict=True):
            run = runs[(preset, seed)]
            assert row[1] == str(run.path)
            assert float(row[2]) == pytest.approx(run.reward[-1], abs=0.01)
            assert float(row[3]) == pytest.approx(run.reward.max(), abs=0.01)
            assert row[4:] == [f"{int(run.env_steps[-1]):,}", str(len(run.env_steps))]


def test_a_screenshot_of_the_page_is_not_blank(opened: Opened, tmp_path: Path) -> None:
    path = tmp_path / "report.png"
    opened.page.screenshot(path=path, full_page=True)
    with Image.open(path) as image:
        assert image.width == 1200 and image.height > 1500  # the whole page, figures and all
    assert _painted(path) > 0.02


def _painted(path: Path) -> float:
    """The fraction of the image at ``path`` that is not background white."""
    with Image.open(path) as image:
        gray = image.convert("L")
        ink = gray.point(lambda value: 255 if value < 240 else 0)
        return float(ImageStat.Stat(ink).mean[0] / 255)
