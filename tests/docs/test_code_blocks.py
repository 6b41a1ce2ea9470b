"""Every code block of the documentation and the README runs (`tests.docs.blocks` says how
each kind is run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.blocks import ROOT, blocks, expected_line, pages, transcript
from tests.docs.run_blocks import printed_as_shown, run_page

RUNNABLE = {"python", "yaml", "yml", "console", "bash", "sh", "shell"}


def _pages_with_blocks() -> list[Path]:
    return [p for p in pages() if any(b.language in RUNNABLE for b in blocks(p))]


@pytest.mark.parametrize("page", _pages_with_blocks(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    run_page(blocks(page), tmp_path)


def test_every_hand_written_page_is_found() -> None:
    found = {p.relative_to(ROOT).as_posix() for p in pages()}
    assert {"README.md", "docs/index.md"} <= found
    assert not any(part.startswith("docs/agents/") for part in found)  # generated, not run


def test_a_block_of_an_unknown_kind_is_shown_not_run(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n```text\nnot python at all (\n```\n\n```python\nx = 1\n```\n")
    (text, python) = blocks(page)
    assert (text.language, python.language, python.text) == ("text", "python", "x = 1\n")
    run_page([text, python], tmp_path)


def test_a_console_blocks_output_is_compared_up_to_figures_clock_times_and_paths(
    tmp_path: Path,
) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```console\n"
        "$ printf '12:01:02 seed 3, writing to /tmp/a/b\\nreward -1,234.5\\n'\n"
        "04:05:06 seed 0, writing to /home/me/runs\n"
        "reward 9.0\n"
        "...\n"
        "$ printf 'graph\\nlevel_0\\n'\n"
        "graph  level_0\n"
        "```\n"
    )
    (block,) = blocks(page)
    assert [c for c, _ in transcript(block)] == [
        "printf '12:01:02 seed 3, writing to /tmp/a/b\\nreward -1,234.5\\n'",
        "printf 'graph\\nlevel_0\\n'",
    ]
    run_page([block], tmp_path)

    page.write_text("```console\n$ echo 'seeds 0, 1; 2 at a time'\nseeds 0, 1, 2 at once\n```\n")
    with pytest.raises(AssertionError, match="printed no line like"):
        run_page(blocks(page), tmp_path)


def test_a_shown_line_is_a_pattern_of_the_printed_one() -> None:
    pattern = expected_line("done: best 9.4 at 32 env steps; results in ...")
    assert pattern.fullmatch("done: best -200.0 at 1,024 env steps; results in x/y; more")
    assert not pattern.fullmatch("done: best 9.4 at 32 episodes; results in x")
    assert expected_line("(/tmp/a/b):").fullmatch("(/home/c):")
    assert not printed_as_shown("graph  level_1", ["graph", "level_0"])
