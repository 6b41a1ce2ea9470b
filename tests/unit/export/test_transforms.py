"""Unit tests for coach/export/transforms.py: each filter's torch twin gives what the filter
gives, bit for bit and in the same dtype, and the filters without one are refused with the
reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.errors import CoachError
from coach.export.transforms import action_transform, observation_transform
from coach.filters.action import (
    ActionClipToBounds,
    BoxDiscretization,
    BoxMasking,
    FullDiscreteActionSpaceMap,
    LinearBoxToBoxMap,
    PartialDiscreteActionSpaceMap,
)
from coach.filters.filter import ActionFilter, ObservationFilter
from coach.filters.observation import (
    ObservationClippingFilter,
    ObservationCropFilter,
    ObservationMoveAxisFilter,
    ObservationNormalizationFilter,
    ObservationRGBToLuminanceFilter,
    ObservationSelectEntriesFilter,
    ObservationSqueezeFilter,
    ObservationToUInt8Filter,
)
from coach.filters.observation.stacking import ObservationStackingFilter

VECTOR = spaces.Box(-10.0, 10.0, (5,), np.float32)
IMAGE = spaces.Box(0.0, 1.0, (4, 1, 6), np.float32)


def _normalization() -> ObservationNormalizationFilter:
    f = ObservationNormalizationFilter(clip=2.0)
    f.output_space(VECTOR)
    rng = np.random.default_rng(1)
    f.filter(rng.normal(3.0, 4.0, (500, 5)).astype(np.float32))  # statistics far from 0, 1
    return f


OBSERVATION_FILTERS: dict[str, tuple[Callable[[], ObservationFilter], spaces.Box]] = {
    "normalization": (_normalization, VECTOR),
    "clipping": (lambda: ObservationClippingFilter(-0.1, 3.7), VECTOR),
    "clipping-unbounded": (lambda: ObservationClippingFilter(clipping_low=0.3), VECTOR),
    "crop": (lambda: ObservationCropFilter([1, None, 2], [3, None, None]), IMAGE),
    "move-axis": (lambda: ObservationMoveAxisFilter(-1, 0), IMAGE),
    "select-entries": (lambda: ObservationSelectEntriesFilter([4, 0, -2]), VECTOR),
    "squeeze": (lambda: ObservationSqueezeFilter(1), IMAGE),
    "to-uint8": (lambda: ObservationToUInt8Filter(-3.0, 4.5), VECTOR),
}


def _bound(make: Callable[[], Any], space: spaces.Box) -> Any:
    f = make()
    if isinstance(f, ObservationFilter) and not isinstance(f, ObservationNormalizationFilter):
        f.output_space(space)
    return f


@pytest.mark.parametrize("name", list(OBSERVATION_FILTERS))
def test_an_observation_twin_gives_what_its_filter_gives(name: str) -> None:
    make, space = OBSERVATION_FILTERS[name]
    f = _bound(make, space)
    rng = np.random.default_rng(0)
    batch = rng.uniform(-6.0, 12.0, (64, *space.shape)).astype(np.float32)
    batch[0] = 0.5  # half-way values round to even in both
    expected = f.filter(batch.copy(), update=False)
    got = observation_transform(f)(torch.from_numpy(batch)).numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_a_frozen_normalization_keeps_the_checkpointed_statistics() -> None:
    f = _normalization()
    twin = observation_transform(f)
    f.filter(np.full((10, 5), 100.0, np.float32))  # the filter moves on; the twin does not
    expected = (np.zeros((1, 5)) - twin.mean.numpy()) / twin.std.numpy()
    got = twin(torch.zeros(1, 5)).numpy()
    np.testing.assert_array_equal(got, np.clip(expected, -2.0, 2.0).astype(np.float32))


def _box(low: float = -2.0, high: float = 3.0, dtype: Any = np.float32) -> spaces.Box:
    return spaces.Box(low, high, (2,), dtype)


ACTION_FILTERS: dict[str, tuple[Callable[[], ActionFilter], spaces.Space[Any]]] = {
    "linear-map": (lambda: LinearBoxToBoxMap(-1.0, 1.0), _box()),
    "linear-map-float64": (lambda: LinearBoxToBoxMap(0.0, 0.3), _box(dtype=np.float64)),
    "clip-to-bounds": (ActionClipToBounds, _box()),
    "masking": (lambda: BoxMasking(-1.5, 0.25), _box()),
    "discretization": (lambda: BoxDiscretization([3, 4]), _box()),
    "discretization-int": (
        lambda: BoxDiscretization(3, force_int_bins=True),
        _box(0, 7, np.int64),
    ),
    "partial-map": (
        lambda: PartialDiscreteActionSpaceMap([[-1.0, 0.5], [2.0, 2.5], [0.0, 0.0]]),
        _box(),
    ),
    "partial-map-discrete": (
        lambda: PartialDiscreteActionSpaceMap([0, 3, 5]),
        spaces.Discrete(6),
    ),
    "full-map": (FullDiscreteActionSpaceMap, spaces.Discrete(4, start=-1)),
}


@pytest.mark.parametrize("name", list(ACTION_FILTERS))
def test_an_action_twin_gives_what_its_filter_gives(name: str) -> None:
    make, environment_space = ACTION_FILTERS[name]
    f = make()
    agent_space = f.input_space(environment_space)
    rng = np.random.default_rng(0)
    if isinstance(agent_space, spaces.Discrete):
        actions = rng.integers(0, int(agent_space.n), 64)  # the agents' argmax: int64
    else:  # a policy's float32, over the bounds and beyond
        low, high = agent_space.low.astype(np.float64), agent_space.high.astype(np.float64)
        width = high - low
        actions = rng.uniform(low - width / 2, high + width / 2, (64, 2)).astype(np.float32)
    expected = f.filter(actions.copy())
    got = action_transform(f)(torch.from_numpy(actions)).numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("make", "space", "reason"),
    [
        (lambda: ObservationStackingFilter(4), IMAGE, "history per environment copy"),
        (
            ObservationRGBToLuminanceFilter,
            spaces.Box(0, 255, (4, 4, 3), np.uint8),
            "OpenCV",
        ),
        (lambda: type("MyFilter", (ObservationFilter,), {})(), VECTOR, "MyFilter has no"),
    ],
)
def test_a_filter_without_a_twin_is_refused_with_the_reason(
    make: Callable[[], ObservationFilter], space: spaces.Box, reason: str
) -> None:
    f = make()
    f.output_space(space)
    with pytest.raises(CoachError, match=reason):
        observation_transform(f)


def test_an_action_filter_of_the_users_own_is_refused() -> None:
    f = type("MyActionFilter", (ActionFilter,), {})()
    with pytest.raises(CoachError, match=r"MyActionFilter has no exported form; .*LinearBox"):
        action_transform(f)
