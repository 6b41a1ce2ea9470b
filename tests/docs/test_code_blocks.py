"""Every code block of the documentation and the README runs (`tests.docs.blocks` says how
each kind is run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.blocks import ROOT, blocks, pages
from tests.docs.run_blocks import run_page

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
