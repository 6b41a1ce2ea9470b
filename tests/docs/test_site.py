"""The documentation site: `make docs` builds it with no warnings, its links resolve, and it
documents every public name, every preset and every agent with a figure of a real run."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from docutils.nodes import make_id

import coach
from coach.presets import list_presets, load_preset
from tests.docs.blocks import ROOT

pytestmark = pytest.mark.xdist_group("docs-site")  # one build (`site`), in one test process


class _Page(HTMLParser):
    """A page's element ids and the addresses its links and images point to."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        address = values.get("href") if tag == "a" else values.get("src") if tag == "img" else None
        if address:
            self.targets.append(address)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(errors="replace"))
    return page


def test_every_internal_link_and_image_resolves(site: Path) -> None:
    pages = {p: _parse(p) for p in site.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for address in page.targets:
            parts = urlsplit(address)
            if parts.scheme or parts.netloc or address.startswith(("mailto:", "javascript:")):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(site)}: {address} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(site)}: {address} (no such anchor)")
    assert len(pages) > 40
    assert not broken, "\n".join(broken)


def test_every_public_name_is_in_the_api_reference(site: Path) -> None:
    ids = _parse(site / "reference" / "api.html").ids
    missing = [name for name in coach.__all__ if f"coach.{name}" not in ids]
    assert not missing, f"not in the API reference: {missing}"


def test_every_preset_has_a_row_in_the_preset_index(site: Path) -> None:
    text = (site / "reference" / "presets.html").read_text()
    # A long name may break after an underscore (<wbr>, which reads and copies as nothing).
    rows = [r.replace("<wbr>", "") for r in re.findall(r"<tr[^>]*>(.*?)</tr>", text, re.DOTALL)]
    missing = [
        name
        for name in list_presets()
        if not any(f'id="{make_id(name)}"' in row and name in row for row in rows)
    ]
    assert not missing, f"no row in the preset index: {missing}"


def test_the_cli_reference_is_read_from_the_command(site: Path) -> None:
    text = (site / "cli.html").read_text()
    for option in ("--preset", "--custom-parameter", "--seeds", "--resume", "--num-workers"):
        assert option in text
    headings = re.findall(r"<h[23][^>]*>([a-z]+)", text)
    assert headings[:1] == ["coach"] and {"plot", "tune", "export"} <= set(headings)


def test_the_readme_links_resolve() -> None:
    """The README links into docs/ as files (they read on a code host, too)."""
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not urlsplit(link).scheme]
    assert len(local) >= 10
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def test_every_agent_page_shows_its_parameters_and_a_multi_seed_benchmark_figure(
    site: Path,
) -> None:
    results = json.loads((ROOT / "docs" / "benchmarks" / "results.json").read_text())
    figures = {
        f"figures/{name}.png": len(entry["seeds"])
        for name, entry in results.items()
        if (ROOT / "docs" / "benchmarks" / entry["figure"]).is_file()
    }
    pages = sorted(p for p in (site / "agents").glob("*.html") if p.name != "index.html")
    assert len(pages) >= 27
    lacking = []
    for page in pages:
        text = page.read_text()
        if "<dl" not in text or "default" not in text:
            lacking.append(f"{page.stem}: no parameters")
        shown = re.findall(r'<img[^>]*src="[^"]*/_images/([^"/]+\.png)"', text)
        seeds = [figures.get(f"figures/{name}", 0) for name in shown]
        if not any(n >= 2 for n in seeds):
            lacking.append(f"{page.stem}: no benchmark figure of several seeds")
    assert not lacking, "\n".join(lacking)


def test_every_page_shows_the_version(site: Path) -> None:
    for page in ("index.html", "changelog.html", "agents/DQN.html"):
        title = re.search(r"<title>(.*?)</title>", (site / page).read_text(), re.DOTALL)
        assert title is not None and f"Coach {coach.__version__}" in title.group(1), page


def test_the_algorithms_matrix_has_a_row_for_every_agent_page(site: Path) -> None:
    text = (site / "agents" / "index.html").read_text()
    matrix = text.split('id="algorithms-matrix"')[1].split('id="every-agent"')[0]
    linked = set(re.findall(r'<td><p><a class="reference internal" href="(\w+)\.html"', matrix))
    pages = {p.stem for p in (site / "agents").glob("*.html")} - {"index"}
    assert len(pages) >= 27 and linked == pages


def test_a_benchmark_measured_against_baselines_shows_them_for_each_seed(site: Path) -> None:
    results = json.loads((ROOT / "docs" / "benchmarks" / "results.json").read_text())
    measured = [
        (name, seed["baselines"])
        for name, entry in results.items()
        for seed in entry["seeds"]
        if seed.get("baselines")
    ]
    assert measured, "no benchmark was measured against baselines"
    page = (site / "benchmarks" / "index.html").read_text()
    assert [m for m in measured if html.escape(m[1], quote=False) not in page] == []
    assert "The promise is relative" in page and "the sum over the 3 agents it scores" in page


def test_the_benchmark_page_shows_each_seeds_final_agent_and_judges_it(site: Path) -> None:
    """Each preset's table shows its seeds' final agents as recorded, and each seed's verdict
    is golden's: its record passed and its final agent keeps the promise (records made before
    golden judged the final agent passed without it). What a miss reads as is
    tests/docs/test_generated_pages.py's."""
    results = json.loads((ROOT / "docs" / "benchmarks" / "results.json").read_text())
    page = (site / "benchmarks" / "index.html").read_text()
    verdicts = {"pass": 0, "fail": 0}
    for name, entry in results.items():
        section = page.split(f'<section id="{make_id(name)}">')[1].split("<section")[0]
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", section, re.DOTALL)[1:]  # past the header
        assert len(rows) == len(entry["seeds"]), name
        validation = load_preset(name).validation
        for row, seed in zip(rows, entry["seeds"], strict=True):
            cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td.*?</td>", row)]
            assert cells[0] == str(seed["seed"])
            assert f"{seed['final']:,.2f}" in cells, (name, seed["seed"])
            threshold, rate = validation.min_reward, validation.min_success_rate
            if validation.gap_closed is not None or (threshold is None and rate is None):
                continue
            final = seed["final"]
            holds = (
                final * validation.per_agent >= threshold
                if threshold is not None
                else final >= rate
            )
            keeps = seed["passed"] and holds
            expected = "pass" if keeps else "fail"
            assert cells[-1].startswith(expected), (name, seed["seed"], cells[-1])
            verdicts["pass" if keeps else "fail"] += 1
    assert verdicts["pass"] > 20, verdicts
