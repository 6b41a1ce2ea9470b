"""`coach.extension`, the public API an agent of one's own is written from: each name is the
very object Coach's own agents are written from (not a copy or a wrapper), documented, and
on the API reference page, under a stability note."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import coach.extension as extension

DOCS_EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"


def test_every_name_is_coachs_own_object_and_documented() -> None:
    for name in extension.__all__:
        value = getattr(extension, name)
        home = value.__name__ if inspect.ismodule(value) else value.__module__
        assert home.startswith("coach.") and home != "coach.extension", name
        if not inspect.ismodule(value):
            assert getattr(importlib.import_module(home), name) is value, name
        assert inspect.getdoc(value), f"{name} has no docstring"
    assert sorted(extension.__all__) == extension.__all__


def test_the_module_states_what_stays_stable() -> None:
    doc = inspect.getdoc(extension) or ""
    assert "Stability: from Coach 0.1" in doc
    assert "what is not named here may change without notice" in doc


def test_the_api_page_documents_every_name() -> None:
    sys.path.insert(0, str(DOCS_EXT))
    try:
        from reference_pages import api_page
    finally:
        sys.path.remove(str(DOCS_EXT))
    page = api_page()
    assert "## Writing an agent: `coach.extension`" in page
    import coach

    for name in extension.__all__:
        value = getattr(extension, name)
        if name in coach.__all__:  # its entry is the coach section's
            assert f".. autoclass:: coach.{name}\n" in page and f"`{name}`" in page, name
            continue
        if inspect.ismodule(value):
            assert f".. autofunction:: {value.__name__}.number\n" in page
        else:
            assert f":: {value.__module__}.{value.__qualname__}\n" in page, name  # or :no-index:
