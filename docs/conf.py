"""Sphinx configuration of Coach's documentation (``make docs``).

The pages are Markdown (MyST). The agent pages, the preset index, the API reference and the
benchmark pages are written at build time by ``_ext/coach_pages.py`` from the code, the
presets and ``benchmarks/results.json``; the CLI reference comes from the click command.
"""

from __future__ import annotations

import sys
from pathlib import Path

import coach

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
# The repository, last: `benchmarks.peer_learning` makes the comparison's learning table.
sys.path.append(str(DOCS.parent))

project = "Coach"
author = "The Coach developers"
copyright = "2026, the Coach developers"
# The version of the package the site documents (``coach.__version__``, as setup.cfg's).
release = coach.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_click",
    "coach_pages",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# benchmarks/peer_learning.md is generated (_ext/benchmark_pages.py) for comparison.md to
# include, not a page of its own.
exclude_patterns = ["_build", "_ext", "benchmarks/peer_learning.md", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["attrs_inline", "colon_fence", "deflist"]
myst_heading_anchors = 3

# Google-style docstrings; the attribute docstrings of the parameter dataclasses are the
# fields' documentation.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_class_signature = "separated"
# Docstrings write `name` for code, as the code's comments do.
default_role = "code"

html_theme = "furo"
html_title = f"Coach {release}"
html_static_path = ["_static"]
# Tables fit the page's column (tests/docs/test_site_browser.py measures it at 1400 px).
html_css_files = ["coach.css"]
pygments_style = "friendly"
