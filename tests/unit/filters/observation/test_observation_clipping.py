"""Unit tests for coach/filters/observation/clipping.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.clipping import ObservationClippingFilter

BOXES = [
    spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32),
    spaces.Box(-5.0, 5.0, shape=(2, 2), dtype=np.float64),
    spaces.Box(0, 255, shape=(4, 4), dtype=np.uint8),
]


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_values_are_clipped_into_the_range(space: spaces.Box) -> None:
    f = ObservationClippingFilter(-1.0, 2.0)
    out_space = f.output_space(space)
    batch = np.stack([space.sample() for _ in range(5)])
    batch.flat[0] = space.high.flat[0] if np.isfinite(space.high.flat[0]) else 1e6
    out = f.filter(batch)
    assert np.array_equal(out, np.clip(batch, -1.0, 2.0))
    assert out.dtype == space.dtype and out.shape == batch.shape
    assert all(out_space.contains(row) for row in out)


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_output_space_is_the_clipped_box_and_the_input_is_untouched(space: spaces.Box) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationClippingFilter(-1.0, 2.0).output_space(space)
    assert isinstance(out_space, spaces.Box)
    assert out_space.shape == space.shape and out_space.dtype == space.dtype
    assert np.all(out_space.low == np.clip(space.low, -1.0, 2.0))
    assert np.all(out_space.high == np.clip(space.high, -1.0, 2.0))
    assert space == before and out_space is not space


@pytest.mark.parametrize(
    "space", [spaces.Discrete(3), spaces.MultiBinary(4), spaces.Dict({})], ids=str
)
def test_refuses_a_space_that_is_not_a_box_naming_both(space: spaces.Space) -> None:
    with pytest.raises(CoachError, match=r"ObservationClippingFilter needs a Box.*got"):
        ObservationClippingFilter(-1.0, 1.0).output_space(space)


def test_refuses_an_empty_range() -> None:
    with pytest.raises(CoachError, match="above"):
        ObservationClippingFilter(1.0, -1.0)


def test_keeps_no_state() -> None:
    f = ObservationClippingFilter(-1.0, 1.0)
    assert f.state_dict() == {}
    f.load_state_dict({})
    first = f.start_episodes(np.array([[3.0, -3.0]]), np.array([0]))
    assert first.tolist() == [[1.0, -1.0]]
