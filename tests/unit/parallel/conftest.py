"""A Ray runtime shared by a module's in-process Ray tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def ray_runtime() -> Iterator[Any]:
    """One local Ray runtime for the module's tests that ask for it, as Coach starts its own
    (loopback only, no dashboard): each graph joins it instead of starting and stopping one,
    a few seconds each. Shut down when the module's last test is done, so that the suite's
    next Ray test (a cluster of its own, or one that checks nothing is left) finds no runtime
    up."""
    pytest.importorskip("ray")
    from coach.parallel.ray_workers import start_ray

    ray, owns = start_ray(None, slots=8)
    yield ray
    if owns:
        ray.shutdown()


@pytest.fixture
def backend_up(request: pytest.FixtureRequest, backend: str) -> str:
    """The test's ``backend`` parameter, with the module's Ray runtime up where it is Ray."""
    if backend == "ray":
        request.getfixturevalue("ray_runtime")
    return backend
