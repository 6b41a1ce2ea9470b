"""Unit tests for coach/filters/action/discrete_map.py."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.action.discrete_map import (
    FullDiscreteActionSpaceMap,
    PartialDiscreteActionSpaceMap,
)
from coach.filters.pipeline import OutputFilter


def _box(low: Any, high: Any, dtype: type, shape: tuple[int, ...] = ()) -> spaces.Box:
    """A Box of ``dtype`` with bounds given as numbers (broadcast to ``shape``) or arrays."""
    low, high = np.asarray(low, dtype), np.asarray(high, dtype)
    shape = np.broadcast_shapes(low.shape, high.shape, shape)
    return spaces.Box(np.broadcast_to(low, shape), np.broadcast_to(high, shape), dtype=dtype)


# -- PartialDiscreteActionSpaceMap --------------------------------------------------------

# (target actions, environment space): action i is target i
PARTIAL = [
    pytest.param([0, 3, 4], spaces.Discrete(5), id="discrete"),
    pytest.param([-1, 1, 0], spaces.Discrete(3, start=-1), id="discrete-start"),
    pytest.param([[-1.0], [0.0], [1.0]], _box(-1, 1, np.float32, (1,)), id="box-1d"),
    pytest.param(
        [[[0, 1], [2, -2]], [[-1, -1], [0, 0]]], _box(-2, 2, np.float64, (2, 2)), id="box-2x2"
    ),
    pytest.param([[0.1, 0.7], [0.3, 0.3]], _box(0, 1, np.float32, (2,)), id="box-inexact"),
    pytest.param([[1, 2], [10, 0]], _box(0, 10, np.int64, (2,)), id="int-box"),
    pytest.param([[2, 1], [0, 0]], spaces.MultiDiscrete([3, 2]), id="multi-discrete"),
    pytest.param([[1, 0, 1], [False, True, True]], spaces.MultiBinary(3), id="multi-binary"),
]


@pytest.mark.parametrize(("targets", "env_space"), PARTIAL)
def test_partial_map_agent_space_has_one_action_per_target(
    targets: list, env_space: spaces.Space
) -> None:
    agent_space = PartialDiscreteActionSpaceMap(targets).input_space(env_space)
    assert isinstance(agent_space, spaces.Discrete)
    assert agent_space.n == len(targets) and agent_space.start == 0


@pytest.mark.parametrize(("targets", "env_space"), PARTIAL)
def test_partial_map_sends_action_i_to_target_i(targets: list, env_space: spaces.Space) -> None:
    f = PartialDiscreteActionSpaceMap(targets)
    f.input_space(env_space)
    order = [len(targets) - 1, 0, len(targets) - 1, 1]
    action = np.array(order)
    out = f.filter(action)
    expected = np.array([targets[i] for i in order], dtype=env_space.dtype)
    assert out.dtype == env_space.dtype and out.shape == expected.shape == (4, *expected[0].shape)
    assert np.array_equal(out, expected)
    assert all(env_space.contains(a) for a in out)
    assert action.tolist() == order  # left alone
    out[...] = 0  # the result is the caller's: the table behind it stays as it was
    assert np.array_equal(f.filter(action)[1], np.array(targets[0], dtype=env_space.dtype))


@pytest.mark.parametrize(("targets", "env_space"), PARTIAL)
def test_partial_map_leaves_the_environment_space_alone(
    targets: list, env_space: spaces.Space
) -> None:
    before = copy.deepcopy(env_space)
    PartialDiscreteActionSpaceMap(targets).input_space(env_space)
    assert env_space == before


@pytest.mark.parametrize(("targets", "env_space"), PARTIAL)
def test_partial_map_bound_through_an_output_filter_gives_the_same_actions(
    targets: list, env_space: spaces.Space
) -> None:
    pipeline = OutputFilter(action_filters=[PartialDiscreteActionSpaceMap(targets)])
    assert pipeline.bind(env_space) == spaces.Discrete(len(targets))
    out = pipeline.filter(np.arange(len(targets)))
    assert np.array_equal(out, np.array(targets, dtype=env_space.dtype))


# (target actions, environment space, the targets the refusal names as "index: value")
INVALID = [
    pytest.param([0, 5, -1, 1.5, True], spaces.Discrete(5), ["1: 5", "2: -1", "3: 1.5", "4: True"]),
    pytest.param([0, 1, 3], spaces.Discrete(3, start=1), ["0: 0"]),
    pytest.param(
        [[0.5], [2.0], 0.5, [0.0, 0.0], [np.nan]],
        _box(-1, 1, np.float32, (1,)),
        ["1: [2.0]", "2: 0.5", "3: [0.0, 0.0]", "4: [nan]"],
    ),
    pytest.param([[1.5], [3]], _box(0, 10, np.int64, (1,)), ["0: [1.5]"]),
    pytest.param([[2, 2], [0, 1]], spaces.MultiDiscrete([3, 2]), ["0: [2, 2]"]),
    pytest.param(["a", [1]], spaces.MultiBinary(1), ["0: 'a'"]),
]


@pytest.mark.parametrize(("targets", "env_space", "named"), INVALID)
def test_partial_map_refuses_invalid_targets_naming_them_and_the_space(
    targets: list, env_space: spaces.Space, named: list[str]
) -> None:
    with pytest.raises(CoachError) as error:
        PartialDiscreteActionSpaceMap(targets).input_space(env_space)
    message = str(error.value)
    assert message.startswith("PartialDiscreteActionSpaceMap needs target actions valid")
    assert str(env_space) in message
    listed = message[message.index("; ") : message.index(" are not")]
    assert listed == "; " + ", ".join(named)


@pytest.mark.parametrize(
    "env_space",
    [
        spaces.Dict({"a": spaces.Discrete(2)}),
        spaces.Tuple([spaces.Discrete(2)]),
        spaces.Text(5),
    ],
    ids=str,
)
def test_partial_map_refuses_spaces_without_array_actions(env_space: spaces.Space) -> None:
    with pytest.raises(CoachError, match="needs an action space whose actions are arrays") as e:
        PartialDiscreteActionSpaceMap([0]).input_space(env_space)
    assert "PartialDiscreteActionSpaceMap" in str(e.value) and str(env_space) in str(e.value)


@pytest.mark.parametrize(
    ("targets", "match"),
    [
        ([], "must hold at least one action"),
        ((), "must hold at least one action"),
        ("abc", "must be a list of environment actions, got 'abc'"),
        (3, "must be a list of environment actions, got 3"),
        ([[0], [[1, 2], [3]]], r"target action 1, \[\[1, 2\], \[3\]\], is not an array"),
    ],
)
def test_partial_map_refuses_nonsense_targets(targets: Any, match: str) -> None:
    with pytest.raises(CoachError, match=f"PartialDiscreteActionSpaceMap: .*{match}"):
        PartialDiscreteActionSpaceMap(targets)


@pytest.mark.parametrize(("targets", "env_space"), PARTIAL)
def test_partial_map_repr_reproduces_the_filter(targets: list, env_space: spaces.Space) -> None:
    f = PartialDiscreteActionSpaceMap(targets)
    twin = eval(repr(f), {"PartialDiscreteActionSpaceMap": PartialDiscreteActionSpaceMap})
    assert repr(twin) == repr(f)
    assert twin.input_space(env_space) == f.input_space(env_space)
    action = np.arange(len(targets))
    assert np.array_equal(twin.filter(action), f.filter(action))


def test_partial_map_takes_an_array_of_targets_one_per_row() -> None:
    f = PartialDiscreteActionSpaceMap(np.array([[0.5, -1.0], [1.0, 0.0]]))
    assert f.input_space(_box(-1, 1, np.float32, (2,))) == spaces.Discrete(2)
    assert f.filter(np.array([1, 0])).tolist() == [[1.0, 0.0], [0.5, -1.0]]


def test_partial_map_repr_reads_like_the_construction() -> None:
    f = PartialDiscreteActionSpaceMap([np.array([0.5, 1.0]), (0, 2)])
    assert repr(f) == "PartialDiscreteActionSpaceMap([[0.5, 1.0], [0, 2]])"


def test_partial_map_before_binding_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="before input_space"):
        PartialDiscreteActionSpaceMap([0]).filter(np.array([0]))


# -- FullDiscreteActionSpaceMap -----------------------------------------------------------

# (environment space, every environment action in order)
FULL = [
    pytest.param(spaces.Discrete(4), [0, 1, 2, 3], id="start-0"),
    pytest.param(spaces.Discrete(4, start=-2), [-2, -1, 0, 1], id="start-negative"),
    pytest.param(spaces.Discrete(1, start=5), [5], id="one-action"),
    pytest.param(spaces.Discrete(3, start=np.int64(10)), [10, 11, 12], id="numpy-start"),
]


@pytest.mark.parametrize(("env_space", "env_actions"), FULL)
def test_full_map_agent_space_counts_from_zero(
    env_space: spaces.Discrete, env_actions: list[int]
) -> None:
    before = copy.deepcopy(env_space)
    agent_space = FullDiscreteActionSpaceMap().input_space(env_space)
    assert agent_space == spaces.Discrete(len(env_actions))
    assert isinstance(agent_space, spaces.Discrete) and agent_space.start == 0
    assert agent_space is not env_space and env_space == before


@pytest.mark.parametrize(("env_space", "env_actions"), FULL)
def test_full_map_sends_every_action_in_order(
    env_space: spaces.Discrete, env_actions: list[int]
) -> None:
    f = FullDiscreteActionSpaceMap()
    f.input_space(env_space)
    action = np.arange(len(env_actions))
    out = f.filter(action)
    assert out.tolist() == env_actions and out.dtype == np.int64
    assert all(env_space.contains(a) for a in out)
    assert action.tolist() == list(range(len(env_actions)))
    assert not np.shares_memory(out, action)


@pytest.mark.parametrize(("env_space", "env_actions"), FULL)
def test_full_map_bound_through_an_output_filter_gives_the_same_actions(
    env_space: spaces.Discrete, env_actions: list[int]
) -> None:
    pipeline = OutputFilter(action_filters=[FullDiscreteActionSpaceMap()])
    assert pipeline.bind(env_space) == spaces.Discrete(len(env_actions))
    assert pipeline.filter(np.arange(len(env_actions))[::-1]).tolist() == env_actions[::-1]


def test_a_partial_map_over_a_full_map_picks_among_all_actions() -> None:
    env_space = spaces.Discrete(6, start=10)
    pipeline = OutputFilter(
        action_filters=[PartialDiscreteActionSpaceMap([5, 0, 2]), FullDiscreteActionSpaceMap()]
    )
    # the partial map's targets are actions of the full map's agent space, Discrete(6)
    assert pipeline.bind(env_space) == spaces.Discrete(3)
    assert pipeline.filter(np.array([0, 1, 2, 0])).tolist() == [15, 10, 12, 15]


@pytest.mark.parametrize(
    "env_space",
    [
        _box(0, 1, np.float32, (2,)),
        spaces.MultiDiscrete([2, 3]),
        spaces.MultiBinary(2),
        spaces.Tuple([spaces.Discrete(2)]),
    ],
    ids=str,
)
def test_full_map_refuses_a_space_that_is_not_discrete_naming_both(
    env_space: spaces.Space,
) -> None:
    with pytest.raises(CoachError, match="FullDiscreteActionSpaceMap needs a Discrete") as e:
        FullDiscreteActionSpaceMap().input_space(env_space)
    assert str(env_space) in str(e.value)


def test_full_map_repr_and_state() -> None:
    f = FullDiscreteActionSpaceMap()
    assert repr(f) == "FullDiscreteActionSpaceMap()"
    assert isinstance(
        eval(repr(f), {"FullDiscreteActionSpaceMap": FullDiscreteActionSpaceMap}),
        FullDiscreteActionSpaceMap,
    )
    f.input_space(spaces.Discrete(2, start=3))
    assert f.state_dict() == {}
    f.load_state_dict({})
    assert f.filter(np.array([1])).tolist() == [4]
    partial = PartialDiscreteActionSpaceMap([1])
    assert partial.state_dict() == {}
    partial.load_state_dict({})
