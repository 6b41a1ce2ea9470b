"""Unit tests for coach/filters/observation/stacking.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.spaces import StackedFrames
from coach.errors import CoachError
from coach.filters.observation.stacking import ObservationStackingFilter
from coach.filters.pipeline import InputFilter

BOXES = [
    spaces.Box(0, 255, shape=(4, 3), dtype=np.uint8),
    spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32),
    spaces.Box(0.0, 1.0, shape=(3, 2, 2), dtype=np.float64),
]


def _frames(space: spaces.Box, count: int, num_envs: int) -> list[np.ndarray]:
    """``count`` batches of distinct frames inside ``space``: frame t of env i is filled with
    10 t + i (over 255 for float spaces)."""
    scale = 1 if space.dtype == np.uint8 else 1 / 255
    return [
        np.stack([np.full(space.shape, (10 * t + i) * scale, dtype=space.dtype)
                  for i in range(num_envs)])
        for t in range(count)
    ]  # fmt: skip


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_output_space_is_a_stack_of_the_input(space: spaces.Box) -> None:
    before = copy.deepcopy(space)
    out = ObservationStackingFilter(3).output_space(space)
    assert isinstance(out, StackedFrames) and isinstance(out, spaces.Box)
    assert out.shape == (3, *space.shape) and out.dtype == space.dtype
    assert out.stack_size == 3 and out.frame_space == space
    assert np.all(out.low[2] == space.low) and np.all(out.high[0] == space.high)
    assert space == before


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_stacks_the_last_frames_oldest_first_padding_with_the_first(space: spaces.Box) -> None:
    f = ObservationStackingFilter(3)
    out_space = f.output_space(space)
    frames = _frames(space, 5, num_envs=2)
    first = f.start_episodes(frames[0], np.array([0, 1]))
    np.testing.assert_array_equal(first, np.stack([frames[0]] * 3, axis=1))
    outputs = [f.filter(frame) for frame in frames[1:]]
    np.testing.assert_array_equal(outputs[0], np.stack([frames[0], frames[0], frames[1]], 1))
    np.testing.assert_array_equal(outputs[3], np.stack([frames[2], frames[3], frames[4]], 1))
    assert all(out_space.contains(row) for row in outputs[3])


def test_an_episode_start_restarts_only_its_envs_and_earlier_stacks_stay_intact() -> None:
    space = BOXES[0]
    f = ObservationStackingFilter(2)
    f.output_space(space)
    frames = _frames(space, 4, num_envs=3)
    f.start_episodes(frames[0], np.arange(3))
    before = f.filter(frames[1])
    kept = before.copy()
    first = f.start_episodes(frames[2][[1]], np.array([1]))
    np.testing.assert_array_equal(first[0], np.stack([frames[2][1]] * 2))
    after = f.filter(frames[3])
    np.testing.assert_array_equal(after[1], np.stack([frames[2][1], frames[3][1]]))
    np.testing.assert_array_equal(after[0], np.stack([frames[1][0], frames[3][0]]))
    np.testing.assert_array_equal(before, kept)  # a stack handed out is never written again


def test_evaluation_moves_the_history_on_too() -> None:
    f = ObservationStackingFilter(2)
    f.output_space(BOXES[1])
    frames = _frames(BOXES[1], 3, num_envs=1)
    f.start_episodes(frames[0], np.array([0]))
    out = f.filter(frames[1], update=False)
    np.testing.assert_array_equal(out, np.stack([frames[0], frames[1]], 1))


@pytest.mark.parametrize(
    "space", [spaces.Discrete(3), spaces.MultiBinary(2), spaces.Dict({})], ids=str
)
def test_refuses_a_space_that_is_not_a_box_naming_both(space: spaces.Space) -> None:
    with pytest.raises(CoachError, match=r"ObservationStackingFilter needs a Box.*got"):
        ObservationStackingFilter(4).output_space(space)


def test_refuses_a_stack_of_nothing_and_a_step_before_the_first_observation() -> None:
    with pytest.raises(CoachError, match="stack_size >= 1"):
        ObservationStackingFilter(0)
    f = ObservationStackingFilter(2)
    f.output_space(BOXES[1])
    with pytest.raises(CoachError, match="before the first observations"):
        f.filter(np.zeros((1, 2), np.float32))


def test_state_round_trip_continues_the_stacks() -> None:
    space = BOXES[0]
    source = ObservationStackingFilter(3)
    source.output_space(space)
    frames = _frames(space, 4, num_envs=2)
    source.start_episodes(frames[0], np.arange(2))
    source.filter(frames[1])
    restored = ObservationStackingFilter(3)
    restored.output_space(space)
    restored.load_state_dict(copy.deepcopy(source.state_dict()))
    np.testing.assert_array_equal(restored.filter(frames[2]), source.filter(frames[2]))
    assert ObservationStackingFilter(3).state_dict() == {"history": None}


def test_through_an_input_filter() -> None:
    pipeline = InputFilter(observation_filters={"observation": [ObservationStackingFilter(4)]})
    bound = pipeline.bind(spaces.Dict({"observation": BOXES[0]}))
    assert bound["observation"].shape == (4, 4, 3)
    frames = _frames(BOXES[0], 2, num_envs=1)
    first = pipeline.start_episodes({"observation": frames[0]}, np.array([0]))
    assert first["observation"].shape == (1, 4, 4, 3)
    out = pipeline.filter_observation({"observation": frames[1]})
    np.testing.assert_array_equal(out["observation"][0, -1], frames[1][0])
