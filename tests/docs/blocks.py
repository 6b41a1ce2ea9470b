"""The code blocks of the documentation's hand-written pages (and the README), and how each
kind is run by the docs tests.

The kind of a block is its fence's language:

- ``python``: run, in the order of the page, in one namespace per page (a later block sees
  what an earlier one defined), in a scratch folder. A block that assigns ``graph_manager``
  is a preset: it is also written to a file and loaded, built and run for a few steps.
- ``yaml``: a YAML preset (it names ``preset:``) is loaded; a search space (``parameters:``
  with ``low``/``high`` or ``choices``) is parsed; anything else must parse.
- ``console``: a tutorial's commands, each line that starts with ``$ ``, run for real one
  after another in the page's scratch folder, with this Python's ``coach`` first on the
  PATH; each must succeed. The lines under a command are what it prints: each must be a
  line it printed, up to the figures, clock times and absolute paths that differ from run to
  run (`expected_line`). A line ``...`` stands for lines left out, and ``...`` ending a
  line for the rest of it.
- ``bash``: commands too long to run in a test (a whole training run). Every line must be
  valid bash (``bash -n``: an unquoted ``EnvironmentSteps(500)`` is not); every ``coach``
  line is parsed by the ``coach`` command itself, and the preset it names must load; every
  ``make`` target must exist.
- anything else (``text``, a MyST directive such as ``{toctree}``): shown, not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GENERATED = ("agents", "reference", "benchmarks", "_build", "_ext")
"""Folders of docs/ whose pages are written by the build (their blocks come from code)."""

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    """The line of the opening fence (1-based)."""
    language: str
    text: str

    def __str__(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line} ({self.language})"


def pages() -> list[Path]:
    """The hand-written Markdown pages, and the README."""
    found = [
        p
        for p in sorted(DOCS.rglob("*.md"))
        if p.relative_to(DOCS).parts[0] not in GENERATED or p.parent == DOCS
    ]
    return [ROOT / "README.md", *found]


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, dedented to their fence's indent."""
    lines = page.read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence = match["indent"], match["fence"]
        language = match["info"].strip().split(" ")[0]
        body = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
            j += 1
        out.append(Block(page, i + 1, language, "\n".join(body) + "\n"))
        i = j + 1
    return out


def every_block(language: str | None = None) -> list[Block]:
    return [b for p in pages() for b in blocks(p) if language is None or b.language == language]


def commands(block: Block) -> list[str]:
    """A ``bash`` block's commands: every line but comments, a trailing backslash joining
    the next line (a ``console`` block's are in `transcript`)."""
    out: list[str] = []
    pending = ""
    for raw in block.text.splitlines():
        line = (pending + raw.strip()) if pending else raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        out.append(line)
    return out


def transcript(block: Block, prompt: str = "$ ") -> list[tuple[str, list[str]]]:
    """A ``console`` block's commands, each with the lines shown as its output."""
    out: list[tuple[str, list[str]]] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        if not line.startswith(prompt):
            if out:
                out[-1][1].append(line)
            continue
        command = line[len(prompt) :]
        while command.endswith("\\") and i < len(lines):
            command = command[:-1] + " " + lines[i].strip()
            i += 1
        out.append((command, []))
    return out


_NUMBER = r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?"
"""A figure as printed: 1,234 or -0.58 or 1e-05 (and each part of a clock time)."""
_WILD = re.compile(
    rf"(?P<path>(?<![\w.])/[^\s()]+)|(?P<number>{_NUMBER})|(?P<rest>\.\.\.$)|(?P<space>\s+)"
)
_WILDCARDS = {"path": r"\S+", "number": _NUMBER, "rest": r".*", "space": r"\s+"}


def expected_line(shown: str) -> re.Pattern[str]:
    """A line of a console block's output as a pattern of the line printed: a figure matches
    any figure, an absolute path any path, a run of spaces any run of spaces (columns), and a
    trailing ``...`` anything."""
    text = shown.strip()
    parts: list[str] = []
    position = 0
    for match in _WILD.finditer(text):
        parts += [re.escape(text[position : match.start()]), _WILDCARDS[str(match.lastgroup)]]
        position = match.end()
    parts.append(re.escape(text[position:]))
    return re.compile("".join(parts))
