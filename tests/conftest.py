"""Test-suite wide settings for the parallel suite (``make test`` runs ``pytest -n N --dist
loadgroup``, N one more than the cores):

- tests that start or join a Ray runtime run one after another in a single worker, since Ray
  runtimes on one machine share ports and ``--ray-address auto`` finds whichever is up (the
  fuzz tests never start one: their generated options leave ``--backend ray`` out);
- tests that share a module- or session-scoped fixture of the suite's own (a run made once and
  read by several tests) run in one worker, so that the fixture is made once, not once per
  worker that takes one of them."""

from __future__ import annotations

import re

import pytest

_RAY = re.compile(r"(?<![a-z])ray(?![a-z])")


def _in_ray_group(item: pytest.Item) -> bool:
    nodeid = item.nodeid.lower()
    return bool(_RAY.search(nodeid))


def _shared_fixture(item: pytest.Item) -> str | None:
    """The first module- or session-scoped fixture of the suite's own that ``item`` uses."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in sorted(info.name2fixturedefs):
        for definition in info.name2fixturedefs[name]:
            own = getattr(definition.func, "__module__", "").startswith("tests.")
            if own and definition.scope in ("module", "session"):
                return f"{definition.baseid or 'tests'}::{name}"
    return None


# First: pytest-xdist's own hook reads the marks to put each test in its group.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _in_ray_group(item):
            item.add_marker(pytest.mark.xdist_group("ray"))
        elif item.get_closest_marker("xdist_group") is None:
            shared = _shared_fixture(item)
            if shared is not None:
                item.add_marker(pytest.mark.xdist_group(shared))
    # Longest first: a group is one worker's for as long as all its tests take (the Ray group
    # minutes, a shared fixture's tens of seconds), so the groups are handed out first, the
    # Ray group before them, and the single tests fill the workers around them instead of a
    # group starting late and the others waiting for it at the end.
    items.sort(key=_order)  # stable: collection order kept within each kind


def _order(item: pytest.Item) -> int:
    if _in_ray_group(item):
        return 0
    return 1 if item.get_closest_marker("xdist_group") is not None else 2
