"""The built site, shared by the modules that read it: `make docs` runs once per test
process (the docs-site group keeps those modules on one worker)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.docs.blocks import ROOT


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built from scratch by ``make docs`` (warnings are errors there)."""
    out = tmp_path_factory.mktemp("site") / "html"
    done = subprocess.run(
        ["make", "-s", "docs", f"DOCS_OUT={out}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"make docs failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return out
