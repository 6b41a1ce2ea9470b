"""Unit tests for coach/filters/action/clip_to_bounds.py."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.action.box_masking import BoxMasking
from coach.filters.action.clip_to_bounds import ActionClipToBounds
from coach.filters.pipeline import OutputFilter


def _box(low: Any, high: Any, dtype: type, shape: tuple[int, ...] = ()) -> spaces.Box:
    """A Box of ``dtype`` with bounds given as numbers (broadcast to ``shape``) or arrays."""
    low, high = np.asarray(low, dtype), np.asarray(high, dtype)
    shape = np.broadcast_shapes(low.shape, high.shape, shape)
    return spaces.Box(np.broadcast_to(low, shape), np.broadcast_to(high, shape), dtype=dtype)


# (environment space, agent actions, the clipped actions worked out by hand)
CASES = [
    pytest.param(
        _box(-1, 1, np.float32, (1,)),
        [[2.0], [-3.0], [0.5], [1.0]],
        [[1.0], [-1.0], [0.5], [1.0]],
        id="1d",
    ),
    pytest.param(
        _box([[0, -2], [1, 1]], [[1, 2], [3, 1]], np.float64),
        [[[-1, 5], [2, 0]], [[0.5, -2.5], [4, 1]]],
        [[[0, 2], [2, 1]], [[0.5, -2], [3, 1]]],
        id="2x2",
    ),
    pytest.param(
        _box([-np.inf, 0], [0, np.inf], np.float32),
        [[5, -5], [-1e6, 1e6]],
        [[0, 0], [-1e6, 1e6]],
        id="half-unbounded",
    ),
    pytest.param(
        _box(0, 10, np.int64, (3,)),
        [[-1, 5, 11], [0, 10, 3]],
        [[0, 5, 10], [0, 10, 3]],
        id="int",
    ),
]


@pytest.mark.parametrize(("env_space", "actions", "expected"), CASES)
def test_the_agent_acts_in_a_copy_of_the_environments_box(
    env_space: spaces.Box, actions: list, expected: list
) -> None:
    before = copy.deepcopy(env_space)
    agent_space = ActionClipToBounds().input_space(env_space)
    assert isinstance(agent_space, spaces.Box)
    assert agent_space == env_space and agent_space is not env_space
    assert agent_space.dtype == env_space.dtype and agent_space.shape == env_space.shape
    assert not np.shares_memory(agent_space.low, env_space.low)
    assert env_space == before


@pytest.mark.parametrize(("env_space", "actions", "expected"), CASES)
def test_actions_are_clipped_into_the_bounds(
    env_space: spaces.Box, actions: list, expected: list
) -> None:
    f = ActionClipToBounds()
    f.input_space(env_space)
    action = np.array(actions, dtype=env_space.dtype)
    out = f.filter(action)
    assert out.dtype == env_space.dtype and out.shape == action.shape
    assert np.array_equal(out, np.array(expected, dtype=env_space.dtype))
    assert all(env_space.contains(a) for a in out)
    assert np.array_equal(action, np.array(actions, dtype=env_space.dtype))  # left alone
    assert not np.shares_memory(out, action)


@pytest.mark.parametrize(("env_space", "actions", "expected"), CASES)
def test_float64_actions_of_a_gaussian_policy_come_out_in_the_boxs_dtype(
    env_space: spaces.Box, actions: list, expected: list
) -> None:
    f = ActionClipToBounds()
    f.input_space(env_space)
    out = f.filter(np.array(actions, dtype=np.float64))
    assert out.dtype == env_space.dtype
    assert all(env_space.contains(a) for a in out)


def test_actions_inside_the_box_pass_unchanged() -> None:
    env_space = _box([-1, 0], [1, 5], np.float32)
    env_space.seed(0)
    action = np.stack([env_space.sample() for _ in range(50)])
    f = ActionClipToBounds()
    f.input_space(env_space)
    assert np.array_equal(f.filter(action), action)


@pytest.mark.parametrize(("env_space", "actions", "expected"), CASES)
def test_bound_through_an_output_filter_gives_the_same_actions(
    env_space: spaces.Box, actions: list, expected: list
) -> None:
    pipeline = OutputFilter(action_filters=[ActionClipToBounds()])
    assert pipeline.bind(env_space) == env_space
    out = pipeline.filter(np.array(actions, dtype=env_space.dtype))
    assert np.array_equal(out, np.array(expected, dtype=env_space.dtype))


def test_a_chain_clips_what_the_filter_before_it_emits() -> None:
    env_space = _box(-2, 0.5, np.float64, (2,))
    pipeline = OutputFilter(action_filters=[BoxMasking(-1, 0.5), ActionClipToBounds()])
    assert pipeline.bind(env_space) == _box(0, 1.5, np.float64, (2,))
    out = pipeline.filter(np.array([[2.0, -3.0], [1.0, 0.25]]))
    assert out.tolist() == [[0.5, -2.0], [0.0, -0.75]]


@pytest.mark.parametrize(
    "env_space",
    [spaces.Discrete(3), spaces.Discrete(3, start=1), spaces.MultiBinary(2)],
    ids=str,
)
def test_refuses_a_space_that_is_not_a_box_naming_both(env_space: spaces.Space) -> None:
    with pytest.raises(CoachError, match="ActionClipToBounds needs a Box action space") as e:
        ActionClipToBounds().input_space(env_space)
    assert str(env_space) in str(e.value)


def test_filter_before_binding_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="before input_space"):
        ActionClipToBounds().filter(np.zeros((1, 1)))


def test_repr_and_state() -> None:
    f = ActionClipToBounds()
    assert repr(f) == "ActionClipToBounds()"
    assert isinstance(eval(repr(f), {"ActionClipToBounds": ActionClipToBounds}), ActionClipToBounds)
    f.input_space(_box(-1, 1, np.float32, (1,)))
    assert f.state_dict() == {}
    f.load_state_dict({})
    assert f.filter(np.array([[3.0]])).tolist() == [[1.0]]
