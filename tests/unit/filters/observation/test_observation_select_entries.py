"""Unit tests for coach/filters/observation/select_entries.py."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.select_entries import ObservationSelectEntriesFilter
from coach.filters.pipeline import InputFilter

CARTPOLE = spaces.Box(
    np.array([-4.8, -np.inf, -0.42, -np.inf], np.float32),
    np.array([4.8, np.inf, 0.42, np.inf], np.float32),
)


def test_keeps_cartpoles_positions_with_their_bounds() -> None:
    f = ObservationSelectEntriesFilter([0, 2])
    space = f.output_space(CARTPOLE)
    assert space.shape == (2,) and space.dtype == np.float32
    np.testing.assert_array_equal(space.low, CARTPOLE.low[[0, 2]])
    np.testing.assert_array_equal(space.high, CARTPOLE.high[[0, 2]])
    batch = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = f.filter(batch)
    np.testing.assert_array_equal(out, [[0, 2], [4, 6], [8, 10]])
    assert not np.shares_memory(out, batch)
    np.testing.assert_array_equal(f.start_episodes(batch[:1], np.array([2])), [[0, 2]])


def test_order_and_negative_indices_and_stacked_frames() -> None:
    f = ObservationSelectEntriesFilter([-1, 1])
    stacked = spaces.Box(-1.0, 1.0, (3, 4), np.float32)  # 3 stacked vectors of 4
    assert f.output_space(stacked).shape == (3, 2)
    batch = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(f.filter(batch)[0, 0], [3, 1])


def test_the_given_space_is_not_changed() -> None:
    before = CARTPOLE.low.copy()
    ObservationSelectEntriesFilter([1]).output_space(CARTPOLE)
    np.testing.assert_array_equal(CARTPOLE.low, before)


@pytest.mark.parametrize(
    ("indices", "message"),
    [
        ([], "at least one"),
        ("02", "list of entry indices"),
        ([0, 1.5], "integer"),
        ([True], "integer"),
    ],
)
def test_bad_indices_are_refused_when_made(indices: object, message: str) -> None:
    with pytest.raises(CoachError, match=message):
        ObservationSelectEntriesFilter(indices)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("indices", "space", "message"),
    [
        ([4], CARTPOLE, r"\[4\] are outside the last axis of 4 entries"),
        ([0, -4], CARTPOLE, "name some entry twice"),
        ([0], spaces.Discrete(3), "needs a Box observation"),
    ],
)
def test_spaces_it_cannot_take_are_refused_naming_both(
    indices: list[int], space: spaces.Space, message: str
) -> None:
    with pytest.raises(CoachError, match=message):
        ObservationSelectEntriesFilter(indices).output_space(space)


def test_a_pomdp_in_a_preset_is_one_filter() -> None:
    pipeline = InputFilter(
        observation_filters={"observation": [ObservationSelectEntriesFilter([0, 2])]}
    )
    space = pipeline.bind(spaces.Dict({"observation": CARTPOLE}))
    assert space["observation"].shape == (2,)
    out = pipeline.filter_observation({"observation": np.ones((2, 4), np.float32)})
    assert out["observation"].shape == (2, 2)
