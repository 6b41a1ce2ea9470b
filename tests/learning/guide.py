"""The presets a documentation page ships: the guide's own agents, trained by golden.

A guide page shows its files whole, each in a code block that starts with ``# file: NAME``
(the docs tests write them into a scratch folder and run them). Golden trains the presets
among them from those same blocks: `guide_folder` writes every ``# file:`` block of the
`GUIDE_PAGES` into a folder, so that the file a page shows is the file golden trains, and
the page is their one source. The folder is named by the files' contents, so every process
that asks (a golden runner's pool, xdist's workers collecting the learning tests) finds the
same one, and a changed page gets a new one.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from tests.docs.blocks import DOCS, blocks
from tests.docs.run_blocks import file_name, is_preset

GUIDE_PAGES = (DOCS / "writing-agents.md",)
"""The pages whose ``# file:`` blocks include presets that declare a validation."""
PREFIX = "coach-guide-"
"""How the name of a folder of the guide's files begins (the rest is of their contents)."""


def guide_files() -> dict[str, str]:
    """Every ``# file: NAME`` block of the guide pages, by name, as the docs tests write it."""
    files: dict[str, str] = {}
    for page in GUIDE_PAGES:
        for block in blocks(page):
            name = file_name(block) if block.language == "python" else None
            if name is not None:
                assert name not in files, f"{page}: two blocks write {name}"
                files[name] = block.text
    return files


def guide_folder() -> Path:
    """A folder that holds the guide's files (`guide_files`), named by their contents."""
    files = guide_files()
    digest = hashlib.sha256()
    for name, text in sorted(files.items()):
        digest.update(f"{name}\0{text}\0".encode())
    folder = Path(tempfile.gettempdir()) / f"{PREFIX}{digest.hexdigest()[:16]}"
    if not folder.is_dir():
        # Written aside, then renamed into place whole: a process that looks at the same
        # moment sees no folder or a complete one.
        scratch = Path(tempfile.mkdtemp(prefix=f"{PREFIX}new-", dir=folder.parent))
        for name, text in files.items():
            (scratch / name).write_text(text)
        try:
            scratch.rename(folder)
        except OSError:  # another process made it first
            shutil.rmtree(scratch, ignore_errors=True)
    return folder


def guide_presets() -> dict[str, str]:
    """The guide's preset files, by name (their stem): their paths in `guide_folder`."""
    folder = guide_folder()
    return {
        Path(name).stem: str(folder / name)
        for name, text in sorted(guide_files().items())
        if name.endswith(".py") and is_preset(text)
    }


def is_guide_preset(path: str) -> bool:
    """Whether ``path`` is a guide's preset file in a folder `guide_folder` made (of this
    page, or of the page as it was when a run began)."""
    file = Path(path)
    return file.suffix == ".py" and file.parent.name.startswith(PREFIX)
