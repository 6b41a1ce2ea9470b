"""Unit tests for coach/filters/action/box_discretization.py."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.action.box_discretization import BoxDiscretization
from coach.filters.action.clip_to_bounds import ActionClipToBounds
from coach.filters.action.linear_box_to_box import LinearBoxToBoxMap
from coach.filters.pipeline import OutputFilter


def _box(low: Any, high: Any, dtype: type, shape: tuple[int, ...] = ()) -> spaces.Box:
    """A Box of ``dtype`` with bounds given as numbers (broadcast to ``shape``) or arrays."""
    low, high = np.asarray(low, dtype), np.asarray(high, dtype)
    shape = np.broadcast_shapes(low.shape, high.shape, shape)
    return spaces.Box(np.broadcast_to(low, shape), np.broadcast_to(high, shape), dtype=dtype)


# (environment space, bins, force_int_bins, every grid point in order, worked out by hand)
CASES = [
    pytest.param(
        _box([0, 10], [1, 20], np.float32),
        [3, 2],
        False,
        [[0, 10], [0, 20], [0.5, 10], [0.5, 20], [1, 10], [1, 20]],
        id="2-dims-3x2-bins",
    ),
    pytest.param(
        _box(-1, 1, np.float64, (1,)), 5, False, [[-1], [-0.5], [0], [0.5], [1]], id="1-dim-5"
    ),
    pytest.param(
        _box([[0, 0], [0, 0]], [[1, 2], [3, 4]], np.float32),
        [2, 1, 1, 2],
        False,
        [[[0, 0], [0, 0]], [[0, 0], [0, 4]], [[1, 0], [0, 0]], [[1, 0], [0, 4]]],
        id="2x2-box-one-bin-pins-low",
    ),
    pytest.param(
        _box(-2, 2, np.float32, (2,)),
        3,
        False,
        [[-2, -2], [-2, 0], [-2, 2], [0, -2], [0, 0], [0, 2], [2, -2], [2, 0], [2, 2]],
        id="one-count-for-every-dim",
    ),
    pytest.param(  # Coach's own example: 5 bins over 0..10 are 0, 2, 5, 7, 10
        _box(0, 10, np.int64, (1,)), 5, True, [[0], [2], [5], [7], [10]], id="int-box-coach"
    ),
    pytest.param(  # linspace(-3, 2, 3) = -3, -0.5, 2, rounded down (Coach truncated to 0)
        _box(-3, 2, np.int32, (2,)),
        [2, 3],
        True,
        [[-3, -3], [-3, -1], [-3, 2], [2, -3], [2, -1], [2, 2]],
        id="int-box-negative",
    ),
    pytest.param(
        _box(0, 4, np.float32, (1,)), 4, True, [[0], [1], [2], [4]], id="float-box-int-bins"
    ),
]


@pytest.mark.parametrize(("env_space", "bins", "force_int", "points"), CASES)
def test_the_agent_acts_in_one_discrete_action_per_grid_point(
    env_space: spaces.Box, bins: int | list[int], force_int: bool, points: list
) -> None:
    agent_space = BoxDiscretization(bins, force_int_bins=force_int).input_space(env_space)
    assert isinstance(agent_space, spaces.Discrete)
    assert agent_space.n == len(points) and agent_space.start == 0


@pytest.mark.parametrize(("env_space", "bins", "force_int", "points"), CASES)
def test_every_index_maps_to_its_grid_point(
    env_space: spaces.Box, bins: int | list[int], force_int: bool, points: list
) -> None:
    f = BoxDiscretization(bins, force_int_bins=force_int)
    f.input_space(env_space)
    out = f.filter(np.arange(len(points)))
    assert out.dtype == env_space.dtype
    assert out.shape == (len(points), *env_space.shape)
    assert np.array_equal(out, np.array(points, dtype=env_space.dtype))
    assert all(env_space.contains(action) for action in out)


@pytest.mark.parametrize(("env_space", "bins", "force_int", "points"), CASES)
def test_a_batch_maps_row_by_row_and_leaves_its_input_alone(
    env_space: spaces.Box, bins: int | list[int], force_int: bool, points: list
) -> None:
    f = BoxDiscretization(bins, force_int_bins=force_int)
    f.input_space(env_space)
    last = len(points) - 1
    action = np.array([last, 0, last, 1])
    out = f.filter(action)
    expected = np.array(points, dtype=env_space.dtype)[[last, 0, last, 1]]
    assert np.array_equal(out, expected)
    assert action.tolist() == [last, 0, last, 1]
    out[...] = 99  # the result is the caller's: the table behind it stays as it was
    assert np.array_equal(f.filter(action), expected)


@pytest.mark.parametrize(("env_space", "bins", "force_int", "points"), CASES)
def test_the_environment_space_is_not_mutated(
    env_space: spaces.Box, bins: int | list[int], force_int: bool, points: list
) -> None:
    before = copy.deepcopy(env_space)
    BoxDiscretization(bins, force_int_bins=force_int).input_space(env_space)
    assert env_space == before
    assert np.array_equal(env_space.low, before.low)
    assert np.array_equal(env_space.high, before.high)


@pytest.mark.parametrize(("env_space", "bins", "force_int", "points"), CASES)
def test_bound_through_an_output_filter_gives_the_same_actions(
    env_space: spaces.Box, bins: int | list[int], force_int: bool, points: list
) -> None:
    pipeline = OutputFilter(action_filters=[BoxDiscretization(bins, force_int_bins=force_int)])
    assert pipeline.bind(env_space) == spaces.Discrete(len(points))
    out = pipeline.filter(np.arange(len(points))[::-1])
    assert np.array_equal(out, np.array(points, dtype=env_space.dtype)[::-1])


def test_a_chain_discretizes_the_agent_box_of_the_next_filter() -> None:
    env_space = _box(0, 10, np.float32, (1,))
    discretization = BoxDiscretization(3)
    pipeline = OutputFilter(
        action_filters=[discretization, LinearBoxToBoxMap(-1, 1), ActionClipToBounds()]
    )
    assert pipeline.bind(env_space) == spaces.Discrete(3)
    # the grid is over LinearBoxToBoxMap's [-1, 1]: -1, 0, 1, mapped to 0, 5, 10
    assert discretization.points is not None
    assert discretization.points.ravel().tolist() == [-1, 0, 1]
    out = pipeline.filter(np.array([0, 1, 2]))
    assert out.tolist() == [[0.0], [5.0], [10.0]] and out.dtype == np.float32


@pytest.mark.parametrize(
    ("env_space", "bins", "force_int", "match"),
    [
        (spaces.Discrete(3), 3, False, "needs a Box action space"),
        (spaces.MultiBinary(2), 3, False, "needs a Box action space"),
        (spaces.Box(-np.inf, np.inf, (2,)), 3, False, "bounded on both sides"),
        (_box([0, -np.inf], [1, 1], np.float32), 3, False, "bounded on both sides"),
        (_box(0, 1, np.float32, (2,)), [2, 2, 2], False, r"one bin count per dimension.*\(2\)"),
        (_box(0, 1, np.float32, (2, 2)), [2, 2], False, r"one bin count per dimension.*\(4\)"),
        (_box(0, 10, np.int64, (1,)), 3, False, "needs force_int_bins=True"),
        (_box(0.5, 2, np.float32, (1,)), 2, True, "needs a Box of integer bounds"),
        (_box(-2, 1, np.int64, (1,)), 5, True, r"5 integer values in dimension 0.*only 4"),
        (_box(0, 1, np.float32, (4,)), 50, False, "6250000 actions"),
    ],
)
def test_refuses_a_space_it_cannot_discretize_naming_both(
    env_space: spaces.Space, bins: int | list[int], force_int: bool, match: str
) -> None:
    with pytest.raises(CoachError, match=match) as error:
        BoxDiscretization(bins, force_int_bins=force_int).input_space(env_space)
    assert "BoxDiscretization" in str(error.value)
    assert str(env_space) in str(error.value)


@pytest.mark.parametrize("bins", [0, -2, [], [2, 0], 2.5, [2, 1.0], True, "3", None])
def test_refuses_nonsense_bin_counts(bins: Any) -> None:
    with pytest.raises(CoachError, match="BoxDiscretization: num_bins_per_dimension"):
        BoxDiscretization(bins)


def test_refuses_a_force_int_bins_that_is_not_a_bool() -> None:
    with pytest.raises(CoachError, match="force_int_bins must be True or False, got 'yes'"):
        BoxDiscretization(3, force_int_bins="yes")  # type: ignore[arg-type]


def test_filter_before_binding_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="before input_space"):
        BoxDiscretization(3).filter(np.array([0]))


@pytest.mark.parametrize(("env_space", "bins", "force_int", "points"), CASES)
def test_repr_reproduces_the_filter(
    env_space: spaces.Box, bins: int | list[int], force_int: bool, points: list
) -> None:
    f = BoxDiscretization(bins, force_int_bins=force_int)
    twin = eval(repr(f), {"BoxDiscretization": BoxDiscretization})
    assert repr(twin) == repr(f)
    assert twin.input_space(env_space) == f.input_space(env_space)
    assert f.points is not None and np.array_equal(twin.points, f.points)


def test_repr_reads_like_the_construction() -> None:
    assert repr(BoxDiscretization([3, 2])) == "BoxDiscretization([3, 2], force_int_bins=False)"
    assert repr(BoxDiscretization(5, True)) == "BoxDiscretization(5, force_int_bins=True)"


def test_keeps_no_state() -> None:
    f = BoxDiscretization(2)
    f.input_space(_box(0, 1, np.float32, (1,)))
    assert f.state_dict() == {}
    f.load_state_dict({})
    assert f.filter(np.array([1])).tolist() == [[1.0]]
