"""The headless browser the browser tests drive: Debian's chromium, through playwright."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium, which ``scripts/install-system-packages`` installs."""

ARGS = [
    "--headless",
    "--no-sandbox",  # root in a container has no user namespace for chromium's sandbox
    "--disable-gpu",
    # Chromium's own traffic (QUIC, component updates, sync, field trials) meets a closed
    # network here and is refused, many connections at a time: none of it is wanted.
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Chromium's flags. Playwright gives every launch a fresh profile (``--user-data-dir``)."""


def installed_chromium(what: str) -> Path:
    """The browser, or a test failure that says how to install it (the tests fail without
    it, they do not skip: the suite needs it)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: {what} needs Debian's chromium; run "
            "scripts/install-system-packages (as root, or with sudo) to install it",
            pytrace=False,
        )
    return CHROMIUM


@contextmanager
def launched(chromium: Path) -> Iterator[Any]:
    """A headless ``chromium`` launched through playwright with `ARGS`, closed after."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        pytest.fail(f"playwright is missing ({error}): run make install", pytrace=False)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
