"""Unit tests for coach/filters/action/box_masking.py."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.action.box_masking import BoxMasking
from coach.filters.action.clip_to_bounds import ActionClipToBounds
from coach.filters.action.linear_box_to_box import LinearBoxToBoxMap
from coach.filters.pipeline import OutputFilter


def _box(low: Any, high: Any, dtype: type, shape: tuple[int, ...] = ()) -> spaces.Box:
    """A Box of ``dtype`` with bounds given as numbers (broadcast to ``shape``) or arrays."""
    low, high = np.asarray(low, dtype), np.asarray(high, dtype)
    shape = np.broadcast_shapes(low.shape, high.shape, shape)
    return spaces.Box(np.broadcast_to(low, shape), np.broadcast_to(high, shape), dtype=dtype)


# (mask low, mask high, environment space, the agent box's high (its low is 0), agent
# actions, their environment actions worked out by hand)
CASES = [
    pytest.param(  # Coach's example: [10, 32] masked to [20, 25]: the agent acts in [0, 5]
        20,
        25,
        _box(10, 32, np.float32, (1,)),
        [5],
        [[0], [3], [5], [1.5]],
        [[20], [23], [25], [21.5]],
        id="coach-example",
    ),
    pytest.param(
        [[0, -1], [2, 0]],
        [[1, 1], [2, 0.5]],
        _box(-2, 3, np.float64, (2, 2)),
        [[1, 2], [0, 0.5]],
        [[[0.5, 2], [0, 0.25]], [[0, 0], [0, 0]]],
        [[[0.5, 1], [2, 0.25]], [[0, -1], [2, 0]]],
        id="2x2-per-element",
    ),
    pytest.param(
        [2, 0, 5],
        [4, 10, 5],
        _box(0, 10, np.int64, (3,)),
        [2, 10, 0],
        [[1, 10, 0], [0, 0, 0], [2, 5, 0]],
        [[3, 10, 5], [2, 0, 5], [4, 5, 5]],
        id="int-box",
    ),
    pytest.param(
        -3,
        -1,
        _box(-np.inf, 0, np.float32, (1,)),
        [2],
        [[2], [0], [0.5]],
        [[-1], [-3], [-2.5]],
        id="half-unbounded-env",
    ),
    pytest.param(
        0.5,
        1,
        _box([-1, 0], [1, 5], np.float32),
        [0.5, 0.5],
        [[0.25, 0.5], [0, 0]],
        [[0.75, 1], [0.5, 0.5]],
        id="one-mask-for-every-element",
    ),
]


@pytest.mark.parametrize(("low", "high", "env_space", "width", "actions", "expected"), CASES)
def test_the_agent_acts_in_a_box_from_zero_to_the_width_of_the_mask(
    low: Any,
    high: Any,
    env_space: spaces.Box,
    width: list,
    actions: list,
    expected: list,
) -> None:
    agent_space = BoxMasking(low, high).input_space(env_space)
    assert isinstance(agent_space, spaces.Box)
    assert agent_space.shape == env_space.shape and agent_space.dtype == env_space.dtype
    assert np.array_equal(agent_space.low, np.zeros(env_space.shape))
    assert np.array_equal(
        agent_space.high, np.broadcast_to(np.array(width, env_space.dtype), env_space.shape)
    )


@pytest.mark.parametrize(("low", "high", "env_space", "width", "actions", "expected"), CASES)
def test_actions_are_shifted_by_the_masks_low_bound(
    low: Any,
    high: Any,
    env_space: spaces.Box,
    width: list,
    actions: list,
    expected: list,
) -> None:
    f = BoxMasking(low, high)
    f.input_space(env_space)
    action = np.array(actions, dtype=env_space.dtype)
    out = f.filter(action)
    assert out.dtype == env_space.dtype and out.shape == action.shape
    assert np.array_equal(out, np.array(expected, dtype=env_space.dtype))
    assert all(env_space.contains(a) for a in out)
    assert np.array_equal(action, np.array(actions, dtype=env_space.dtype))  # left alone
    assert not np.shares_memory(out, action)


@pytest.mark.parametrize(("low", "high", "env_space", "width", "actions", "expected"), CASES)
def test_every_action_of_the_agents_box_lands_in_the_mask(
    low: Any,
    high: Any,
    env_space: spaces.Box,
    width: list,
    actions: list,
    expected: list,
) -> None:
    f = BoxMasking(low, high)
    agent_space = f.input_space(env_space)
    assert isinstance(agent_space, spaces.Box)
    agent_space.seed(0)
    samples = np.stack([agent_space.sample() for _ in range(50)])
    out = f.filter(np.concatenate([samples, [agent_space.low, agent_space.high]]))
    mask = spaces.Box(
        np.broadcast_to(np.asarray(low, env_space.dtype), env_space.shape),
        np.broadcast_to(np.asarray(high, env_space.dtype), env_space.shape),
        dtype=env_space.dtype,
    )
    assert all(mask.contains(a) and env_space.contains(a) for a in out)
    assert np.array_equal(out[-2], mask.low) and np.array_equal(out[-1], mask.high)


def test_actions_are_shifted_not_scaled_nor_clipped() -> None:
    f = BoxMasking(20, 25)
    f.input_space(_box(10, 32, np.float32, (1,)))
    # outside the agent's [0, 5], the shift goes on: 7 -> 27, -15 -> 5 (outside [10, 32])
    assert f.filter(np.array([[7.0], [-15.0]])).tolist() == [[27.0], [5.0]]


@pytest.mark.parametrize(("low", "high", "env_space", "width", "actions", "expected"), CASES)
def test_the_environment_space_is_not_mutated(
    low: Any,
    high: Any,
    env_space: spaces.Box,
    width: list,
    actions: list,
    expected: list,
) -> None:
    before = copy.deepcopy(env_space)
    agent_space = BoxMasking(low, high).input_space(env_space)
    assert env_space == before and agent_space is not env_space
    assert np.array_equal(env_space.low, before.low)
    assert np.array_equal(env_space.high, before.high)


@pytest.mark.parametrize(("low", "high", "env_space", "width", "actions", "expected"), CASES)
def test_bound_through_an_output_filter_gives_the_same_actions(
    low: Any,
    high: Any,
    env_space: spaces.Box,
    width: list,
    actions: list,
    expected: list,
) -> None:
    pipeline = OutputFilter(action_filters=[BoxMasking(low, high)])
    agent_space = pipeline.bind(env_space)
    assert agent_space == BoxMasking(low, high).input_space(env_space)
    out = pipeline.filter(np.array(actions, dtype=env_space.dtype))
    assert np.array_equal(out, np.array(expected, dtype=env_space.dtype))


def test_a_chain_maps_a_tanh_policy_onto_the_mask() -> None:
    env_space = _box(10, 32, np.float32, (1,))
    pipeline = OutputFilter(action_filters=[LinearBoxToBoxMap(-1, 1), BoxMasking(20, 25)])
    assert pipeline.bind(env_space) == _box(-1, 1, np.float32, (1,))
    out = pipeline.filter(np.array([[-1.0], [0.0], [1.0]], dtype=np.float32))
    assert out.tolist() == [[20.0], [22.5], [25.0]] and out.dtype == np.float32


def test_a_chain_with_clipping_keeps_actions_in_the_environment_box() -> None:
    env_space = _box(-2, 0.5, np.float32, (1,))
    pipeline = OutputFilter(action_filters=[BoxMasking(-1, 0.5), ActionClipToBounds()])
    assert pipeline.bind(env_space) == _box(0, 1.5, np.float32, (1,))
    out = pipeline.filter(np.array([[2.0], [-3.0], [1.0]], dtype=np.float32))
    assert out.tolist() == [[0.5], [-2.0], [0.0]]


@pytest.mark.parametrize(
    ("low", "high", "env_space", "match"),
    [
        (0, 1, spaces.Discrete(3), "needs a Box action space to mask"),
        (0, 1, spaces.MultiDiscrete([2, 2]), "needs a Box action space to mask"),
        (-2, 0, _box(-1, 1, np.float32, (1,)), "within the bounds"),
        (0, 2, _box(-1, 1, np.float32, (1,)), "within the bounds"),
        ([0, -3], [1, 0], _box(-1, 1, np.float32, (2,)), "within the bounds"),
        (0.5, 2, _box(0, 10, np.int64, (1,)), "integer bounds"),
        ([0, 0, 0], 1, _box(-1, 1, np.float32, (2,)), r"masked_target_space_low of shape \(3,\)"),
        (0, [1, 1], _box(-1, 1, np.float32, (2, 2)), r"masked_target_space_high of shape \(2,\)"),
    ],
)
def test_refuses_a_space_it_cannot_mask_naming_both(
    low: Any, high: Any, env_space: spaces.Space, match: str
) -> None:
    with pytest.raises(CoachError, match=match) as error:
        BoxMasking(low, high).input_space(env_space)
    assert "BoxMasking" in str(error.value)
    assert str(env_space) in str(error.value)


@pytest.mark.parametrize(
    ("low", "high", "match"),
    [
        (1, -1, "is above"),
        ([0, 2], [1, 1], "is above"),
        (np.nan, 1, "masked_target_space_low must be finite numbers"),
        (0, np.inf, "masked_target_space_high must be finite numbers"),
        (None, 1, "masked_target_space_low must be finite numbers"),
        (0, "1", "masked_target_space_high must be finite numbers"),
        ([[0], [1, 2]], 3, "masked_target_space_low must be finite numbers"),
        ([0, 0], [1, 1, 1], "do not match"),
    ],
)
def test_refuses_nonsense_masks(low: Any, high: Any, match: str) -> None:
    with pytest.raises(CoachError, match=f"BoxMasking: .*{match}"):
        BoxMasking(low, high)


def test_a_mask_of_zero_width_pins_the_action() -> None:
    f = BoxMasking(0.5, 0.5)
    assert f.input_space(_box(0, 1, np.float64, (1,))) == _box(0, 0, np.float64, (1,))
    assert f.filter(np.array([[0.0]])).tolist() == [[0.5]]


def test_filter_before_binding_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="before input_space"):
        BoxMasking(0, 1).filter(np.zeros((1, 1)))


@pytest.mark.parametrize(("low", "high", "env_space", "width", "actions", "expected"), CASES)
def test_repr_reproduces_the_filter(
    low: Any,
    high: Any,
    env_space: spaces.Box,
    width: list,
    actions: list,
    expected: list,
) -> None:
    f = BoxMasking(low, high)
    twin = eval(repr(f), {"BoxMasking": BoxMasking})
    assert repr(twin) == repr(f)
    assert twin.input_space(env_space) == f.input_space(env_space)
    action = np.array(actions, dtype=env_space.dtype)
    assert np.array_equal(twin.filter(action), f.filter(action))


def test_repr_reads_like_the_construction() -> None:
    assert repr(BoxMasking(20, 25)) == "BoxMasking(20.0, 25.0)"
    assert repr(BoxMasking([0, 1], [2, 3])) == "BoxMasking([0.0, 1.0], [2.0, 3.0])"


def test_keeps_no_state() -> None:
    f = BoxMasking(1, 2)
    f.input_space(_box(0, 2, np.float32, (1,)))
    assert f.state_dict() == {}
    f.load_state_dict({})
    assert f.filter(np.array([[0.5]])).tolist() == [[1.5]]
