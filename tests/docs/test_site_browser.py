"""The built site in a real headless browser (Debian's chromium, driven by playwright, as
`tests.integration.test_report_browser` drives it), 1400 px wide: the home page, the pages
written for newcomers, the preset index and agent pages of the widest tables each load with
the theme and Coach's stylesheet, with no console or page error, and nothing on them is
wider than its place: the page does not scroll sideways, and no table or image is wider than
the element that holds it (a table that does not fit scrolls inside its wrapper, which is
what this catches).

Without chromium these tests fail (they do not skip): the suite needs it, and says how to get it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import installed_chromium, launched

pytestmark = pytest.mark.xdist_group("docs-site")  # the site (`site`) is built once

WIDTH = 1400
"""The window's width, in CSS pixels."""

PAGES = [
    "index.html",
    "comparison.html",
    "coming-from-sb3.html",
    "trained-agents.html",
    "faq.html",
    "changelog.html",
    "getting-started.html",
    "agents/index.html",
    "agents/DQN.html",
    "agents/SAC.html",
    "agents/ClippedPPO.html",
    "agents/TD3.html",
    "reference/presets.html",
    "benchmarks/index.html",
]
"""The pages measured: the front door and the pages written for newcomers, the agents'
matrix and pages (ClippedPPO has the most presets, SAC three networks side by side), the
preset index, the benchmark tables."""

MEASURE = """() => {
  const root = document.scrollingElement;
  const wider = (element, holder) => element.scrollWidth > holder.clientWidth + 1;
  const describe = (element, holder) =>
    `${element.tagName.toLowerCase()} ${element.scrollWidth}px in ${holder.clientWidth}px` +
    ` (${(element.innerText || element.getAttribute('src') || '').slice(0, 60)})`;
  const tables = [...document.querySelectorAll('article table')];
  const images = [...document.querySelectorAll('article img')];
  const body = parseFloat(getComputedStyle(document.body).fontSize);
  return {
    title: document.title,
    headings: document.querySelectorAll('article h1').length,
    page: root.scrollWidth,
    window: window.innerWidth,
    article: document.querySelector('article').clientWidth,
    tables: tables.length,
    smallTables: tables.every(t => parseFloat(getComputedStyle(t).fontSize) < body),
    tooWide: [
      ...tables.filter(t => wider(t, t.parentElement)).map(t => describe(t, t.parentElement)),
      ...images.filter(i => wider(i, i.parentElement)).map(i => describe(i, i.parentElement)),
    ],
  };
}"""


@pytest.fixture(scope="session")
def chromium() -> Path:
    return installed_chromium("the site's browser test")


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Any]:
    with launched(chromium) as opened:
        yield opened


@pytest.mark.parametrize("name", PAGES)
def test_the_page_renders_and_nothing_is_wider_than_its_place(
    name: str, site: Path, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto((site / name).as_uri(), wait_until="load")
        measured = page.evaluate(MEASURE)
    finally:
        page.close()
    assert errors == []
    assert measured["headings"] == 1 and "Coach" in measured["title"]
    assert measured["window"] == WIDTH
    assert measured["article"] > 600  # laid out by the theme, beside its sidebars
    assert measured["page"] <= WIDTH, f"the page scrolls sideways: {measured['page']}px"
    assert measured["tooWide"] == [], measured["tooWide"]
    assert measured["smallTables"]  # Coach's stylesheet is loaded


def test_every_page_measured_exists(site: Path) -> None:
    missing = [name for name in PAGES if not (site / name).is_file()]
    assert missing == []
