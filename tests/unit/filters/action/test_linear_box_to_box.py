"""Unit tests for coach/filters/action/linear_box_to_box.py."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.action.clip_to_bounds import ActionClipToBounds
from coach.filters.action.linear_box_to_box import LinearBoxToBoxMap
from coach.filters.pipeline import OutputFilter


def _box(low: Any, high: Any, dtype: type, shape: tuple[int, ...] = ()) -> spaces.Box:
    """A Box of ``dtype`` with bounds given as numbers (broadcast to ``shape``) or arrays."""
    low, high = np.asarray(low, dtype), np.asarray(high, dtype)
    shape = np.broadcast_shapes(low.shape, high.shape, shape)
    return spaces.Box(np.broadcast_to(low, shape), np.broadcast_to(high, shape), dtype=dtype)


# (agent low, agent high, environment space, agent actions, their environment actions
# worked out by hand)
CASES = [
    pytest.param(
        -1.0,
        1.0,
        _box(0, 10, np.float32, (1,)),
        [[-1], [0], [1], [0.5]],
        [[0], [5], [10], [7.5]],
        id="tanh-to-0..10",
    ),
    pytest.param(  # Coach's example: [-42, -10] onto [10, 32]
        -42,
        -10,
        _box(10, 32, np.float64, (1,)),
        [[-42], [-10], [-26]],
        [[10], [32], [21]],
        id="coach-example",
    ),
    pytest.param(
        [[-1, -1], [0, 0]],
        [[1, 1], [1, 2]],
        _box([[0, -5], [-1, 2]], [[4, 5], [1, 4]], np.float32),
        [[[-1, -1], [0, 0]], [[1, 1], [1, 2]], [[0, 0], [0.5, 1]]],
        [[[0, -5], [-1, 2]], [[4, 5], [1, 4]], [[2, 0], [0, 3]]],
        id="2x2-per-element",
    ),
    pytest.param(
        [0, -2],
        [1, 2],
        _box([-1, 0], [1, 100], np.float64),
        [[0.25, 1], [1, -2]],
        [[-0.5, 75], [1, 0]],
        id="per-element-1d",
    ),
    pytest.param(
        0,
        1,
        _box([-0.1, 0.2], [0.3, 0.7], np.float32),
        [[0, 0], [1, 1]],
        [[-0.1, 0.2], [0.3, 0.7]],
        id="inexact-float32-bounds",
    ),
    pytest.param(  # -0.1 + (0.3 - -0.1) is 0.30000000000000004 in float64, not 0.3
        0,
        1,
        _box([-0.1, 0.2], [0.3, 0.7], np.float64),
        [[0, 0], [1, 1]],
        [[-0.1, 0.2], [0.3, 0.7]],
        id="inexact-float64-bounds",
    ),
]


@pytest.mark.parametrize(("low", "high", "env_space", "actions", "expected"), CASES)
def test_the_agent_acts_in_a_box_of_its_bounds_and_the_environments_shape(
    low: Any, high: Any, env_space: spaces.Box, actions: list, expected: list
) -> None:
    agent_space = LinearBoxToBoxMap(low, high).input_space(env_space)
    assert isinstance(agent_space, spaces.Box)
    assert agent_space.shape == env_space.shape and agent_space.dtype == env_space.dtype
    assert np.array_equal(
        agent_space.low, np.broadcast_to(np.asarray(low, env_space.dtype), env_space.shape)
    )
    assert np.array_equal(
        agent_space.high, np.broadcast_to(np.asarray(high, env_space.dtype), env_space.shape)
    )


@pytest.mark.parametrize(("low", "high", "env_space", "actions", "expected"), CASES)
def test_actions_map_linearly_onto_the_environment_box(
    low: Any, high: Any, env_space: spaces.Box, actions: list, expected: list
) -> None:
    f = LinearBoxToBoxMap(low, high)
    f.input_space(env_space)
    action = np.array(actions, dtype=env_space.dtype)
    out = f.filter(action)
    assert out.dtype == env_space.dtype and out.shape == action.shape
    np.testing.assert_allclose(out, np.array(expected, dtype=env_space.dtype), rtol=1e-6)
    assert all(env_space.contains(a) for a in out)
    assert np.array_equal(action, np.array(actions, dtype=env_space.dtype))  # left alone
    assert not np.shares_memory(out, action)


@pytest.mark.parametrize(("low", "high", "env_space", "actions", "expected"), CASES)
def test_the_agents_bounds_land_exactly_on_the_environments(
    low: Any, high: Any, env_space: spaces.Box, actions: list, expected: list
) -> None:
    f = LinearBoxToBoxMap(low, high)
    agent_space = f.input_space(env_space)
    assert isinstance(agent_space, spaces.Box)
    out = f.filter(np.stack([agent_space.low, agent_space.high]))
    assert np.array_equal(out[0], env_space.low) and np.array_equal(out[1], env_space.high)
    samples = np.stack([agent_space.sample() for _ in range(50)])
    assert all(env_space.contains(a) for a in f.filter(samples))


def test_actions_outside_the_agents_box_are_mapped_not_clipped() -> None:
    f = LinearBoxToBoxMap(-1.0, 1.0)
    f.input_space(_box(0, 10, np.float32, (1,)))
    assert f.filter(np.array([[2.0], [-3.0]])).tolist() == [[15.0], [-10.0]]


@pytest.mark.parametrize(("low", "high", "env_space", "actions", "expected"), CASES)
def test_the_environment_space_is_not_mutated(
    low: Any, high: Any, env_space: spaces.Box, actions: list, expected: list
) -> None:
    before = copy.deepcopy(env_space)
    agent_space = LinearBoxToBoxMap(low, high).input_space(env_space)
    assert env_space == before and agent_space is not env_space
    assert np.array_equal(env_space.low, before.low)
    assert np.array_equal(env_space.high, before.high)


@pytest.mark.parametrize(("low", "high", "env_space", "actions", "expected"), CASES)
def test_bound_through_an_output_filter_gives_the_same_actions(
    low: Any, high: Any, env_space: spaces.Box, actions: list, expected: list
) -> None:
    direct = LinearBoxToBoxMap(low, high)
    pipeline = OutputFilter(action_filters=[LinearBoxToBoxMap(low, high)])
    assert pipeline.bind(env_space) == direct.input_space(env_space)
    action = np.array(actions, dtype=env_space.dtype)
    assert np.array_equal(pipeline.filter(action), direct.filter(action))


def test_a_chain_with_clipping_keeps_every_action_in_the_environment_box() -> None:
    env_space = _box([0, -4], [10, 4], np.float32)
    pipeline = OutputFilter(action_filters=[LinearBoxToBoxMap(-1, 1), ActionClipToBounds()])
    agent_space = pipeline.bind(env_space)
    assert agent_space == _box(-1, 1, np.float32, (2,))
    out = pipeline.filter(np.array([[2.0, -3.0], [0.0, 0.5], [-1.0, 1.0]], dtype=np.float32))
    assert out.tolist() == [[10.0, -4.0], [5.0, 2.0], [0.0, 4.0]]
    assert out.dtype == np.float32 and all(env_space.contains(a) for a in out)


@pytest.mark.parametrize(
    ("low", "high", "env_space", "match"),
    [
        (-1, 1, spaces.Discrete(3), "needs a Box action space of float dtype"),
        (-1, 1, _box(0, 10, np.int64, (1,)), "needs a Box action space of float dtype"),
        (-1, 1, spaces.Box(-np.inf, np.inf, (2,)), "bounded on both sides"),
        (-1, 1, _box([0, 0], [1, np.inf], np.float32), "bounded on both sides"),
        ([-1, -1, -1], 1, _box(0, 1, np.float32, (2,)), r"input_space_low of shape \(3,\)"),
        (-1, [[1, 1]], _box(0, 1, np.float32, (2,)), r"input_space_high of shape \(1, 2\)"),
        (0, [1, 1], _box(0, 1, np.float32, (2, 2)), r"input_space_high of shape \(2,\)"),
        (1.0, 1.00000001, _box(0, 1, np.float32, (1,)), "too close to tell apart"),
    ],
)
def test_refuses_a_space_it_cannot_map_onto_naming_both(
    low: Any, high: Any, env_space: spaces.Space, match: str
) -> None:
    with pytest.raises(CoachError, match=match) as error:
        LinearBoxToBoxMap(low, high).input_space(env_space)
    assert "LinearBoxToBoxMap" in str(error.value)
    assert str(env_space) in str(error.value)


@pytest.mark.parametrize(
    ("low", "high", "match"),
    [
        (1, -1, "must be below"),
        (1, 1, "must be below"),
        ([0, 2], [1, 1], "must be below"),
        (np.nan, 1, "input_space_low must be finite numbers"),
        (-1, np.inf, "input_space_high must be finite numbers"),
        ("-1", 1, "input_space_low must be finite numbers"),
        (-1, [True], "input_space_high must be finite numbers"),
        ([0, [1, 2]], 3, "input_space_low must be finite numbers"),
        ([0, 0], [1, 1, 1], "do not match"),
    ],
)
def test_refuses_nonsense_bounds(low: Any, high: Any, match: str) -> None:
    with pytest.raises(CoachError, match=f"LinearBoxToBoxMap: .*{match}"):
        LinearBoxToBoxMap(low, high)


def test_filter_before_binding_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="before input_space"):
        LinearBoxToBoxMap(-1, 1).filter(np.zeros((1, 1)))


@pytest.mark.parametrize(("low", "high", "env_space", "actions", "expected"), CASES)
def test_repr_reproduces_the_filter(
    low: Any, high: Any, env_space: spaces.Box, actions: list, expected: list
) -> None:
    f = LinearBoxToBoxMap(low, high)
    twin = eval(repr(f), {"LinearBoxToBoxMap": LinearBoxToBoxMap})
    assert repr(twin) == repr(f)
    assert twin.input_space(env_space) == f.input_space(env_space)
    action = np.array(actions, dtype=env_space.dtype)
    assert np.array_equal(twin.filter(action), f.filter(action))


def test_repr_reads_like_the_construction() -> None:
    assert repr(LinearBoxToBoxMap(-1, 1)) == "LinearBoxToBoxMap(-1.0, 1.0)"
    assert repr(LinearBoxToBoxMap([0, -2], [1, 2])) == "LinearBoxToBoxMap([0.0, -2.0], [1.0, 2.0])"


def test_keeps_no_state() -> None:
    f = LinearBoxToBoxMap(-1, 1)
    f.input_space(_box(0, 2, np.float32, (1,)))
    assert f.state_dict() == {}
    f.load_state_dict({})
    assert f.filter(np.array([[0.0]])).tolist() == [[1.0]]
