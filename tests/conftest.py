"""Test-suite wide settings: tests that start or join a Ray runtime (and the CLI fuzz, which
may name one) run one after another in a single worker when the suite runs in parallel
(``make test`` runs ``pytest -n 2 --dist loadgroup``), since Ray runtimes on one machine share
ports and ``--ray-address auto`` finds whichever is up."""

from __future__ import annotations

import re

import pytest

_RAY = re.compile(r"(?<![a-z])ray(?![a-z])")


def _in_ray_group(item: pytest.Item) -> bool:
    nodeid = item.nodeid.lower()
    return bool(_RAY.search(nodeid)) or "fuzz" in nodeid


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _in_ray_group(item):
            item.add_marker(pytest.mark.xdist_group("ray"))
    # The group is the longest unit of work (minutes, on one worker): handed out first, the
    # other worker takes the rest around it instead of waiting for it at the end.
    items.sort(key=lambda item: not _in_ray_group(item))  # stable: order kept otherwise
