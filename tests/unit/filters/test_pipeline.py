"""Unit tests for coach/filters/pipeline.py and coach/filters/filter.py."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ActionFilter, Filter, ObservationFilter, RewardFilter
from coach.filters.pipeline import InputFilter, OutputFilter

# -- filters defined for the tests --------------------------------------------------------


class Scale(ObservationFilter):
    """Multiplies a Box observation by a factor; the output space is a new Box."""

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def output_space(self, input_space: spaces.Space) -> spaces.Space:
        if not isinstance(input_space, spaces.Box):
            raise CoachError(f"Scale needs a Box, got {input_space}")
        low, high = input_space.low * self.factor, input_space.high * self.factor
        return spaces.Box(np.minimum(low, high), np.maximum(low, high), dtype=input_space.dtype)

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        return observation * self.factor


class Shift(ObservationFilter):
    def __init__(self, offset: float) -> None:
        self.offset = offset

    def output_space(self, input_space: spaces.Space) -> spaces.Space:
        assert isinstance(input_space, spaces.Box)
        return spaces.Box(
            input_space.low + self.offset, input_space.high + self.offset, dtype=input_space.dtype
        )

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        return observation + self.offset


class RunningCount(ObservationFilter):
    """A stateful filter: counts the rows it has seen, and which envs started episodes."""

    def __init__(self) -> None:
        self.count = 0
        self.starts: list[list[int]] = []

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        if update:
            self.count += len(observation)
        return observation

    def start_episodes(self, observation: np.ndarray, rows: np.ndarray) -> np.ndarray:
        self.starts.append(rows.tolist())
        return observation + 100

    def state_dict(self) -> dict[str, Any]:
        return {"count": self.count}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.count = state["count"]


class AddReward(RewardFilter):
    def __init__(self, amount: float) -> None:
        self.amount = amount

    def filter(self, reward: np.ndarray, update: bool = True) -> np.ndarray:
        return reward + self.amount


class ScaleReward(RewardFilter):
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def filter(self, reward: np.ndarray, update: bool = True) -> np.ndarray:
        return reward * self.factor


class RewardSum(RewardFilter):
    """A stateful reward filter: keeps the sum of what it has seen."""

    def __init__(self) -> None:
        self.total = 0.0

    def filter(self, reward: np.ndarray, update: bool = True) -> np.ndarray:
        if update:
            self.total += float(reward.sum())
        return reward

    def state_dict(self) -> dict[str, Any]:
        return {"total": self.total}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.total = state["total"]


class DiscreteToBox(ActionFilter):
    """The agent picks one of ``n`` evenly spaced points of a 1-d Box env action space."""

    def __init__(self, n: int = 3) -> None:
        self.n = n
        self.points: np.ndarray | None = None
        self.calls = 0

    def input_space(self, output_space: spaces.Space) -> spaces.Space:
        if not isinstance(output_space, spaces.Box) or output_space.shape != (1,):
            raise CoachError(f"DiscreteToBox drives a Box of shape (1,), got {output_space}")
        self.points = np.linspace(output_space.low[0], output_space.high[0], self.n)
        return spaces.Discrete(self.n)

    def filter(self, action: np.ndarray) -> np.ndarray:
        assert self.points is not None
        self.calls += 1
        return self.points[action][:, None].astype(np.float32)

    def state_dict(self) -> dict[str, Any]:
        return {"calls": self.calls}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.calls = state["calls"]


class HalveBox(ActionFilter):
    """Halves a Box action; the agent's Box is twice as wide as the environment's."""

    def input_space(self, output_space: spaces.Space) -> spaces.Space:
        assert isinstance(output_space, spaces.Box)
        return spaces.Box(output_space.low * 2, output_space.high * 2, dtype=output_space.dtype)

    def filter(self, action: np.ndarray) -> np.ndarray:
        return action / 2


OBSERVATION_SPACE = spaces.Dict(
    {
        "observation": spaces.Box(
            np.array([-1.0, 0.0], np.float32), np.array([1.0, 2.0], np.float32)
        ),
        "goal": spaces.Box(-5.0, 5.0, shape=(1,), dtype=np.float32),
    }
)


def _observation() -> dict[str, np.ndarray]:
    return {
        "observation": np.array([[0.5, 1.0], [-1.0, 2.0]], dtype=np.float32),
        "goal": np.array([[3.0], [4.0]], dtype=np.float32),
    }


# -- the base filters ---------------------------------------------------------------------


@pytest.mark.parametrize("filter_class", [Filter, ObservationFilter, RewardFilter, ActionFilter])
def test_base_filters_keep_no_state(filter_class: type[Filter]) -> None:
    f = filter_class()
    assert f.state_dict() == {}
    f.load_state_dict({})
    if isinstance(f, RewardFilter):
        f.reset(np.array([True]))
    assert f.state_dict() == {}


def test_an_observation_filter_without_history_starts_episodes_like_it_filters() -> None:
    counter = RunningCount()
    scale = Scale(3.0)
    assert np.array_equal(scale.start_episodes(np.ones(2), np.array([0, 4])), np.full(2, 3.0))
    ObservationFilter.start_episodes(counter, np.ones((1, 2)), np.array([1]))
    assert counter.count == 0  # statistics stay frozen for first observations


def test_base_filters_are_identities() -> None:
    x = np.arange(4.0)
    box = spaces.Box(-1.0, 1.0, shape=(2,))
    assert ObservationFilter().filter(x) is x
    assert ObservationFilter().output_space(box) is box
    assert RewardFilter().filter(x) is x
    assert ActionFilter().filter(x) is x
    assert ActionFilter().input_space(box) is box


# -- empty pipelines ----------------------------------------------------------------------


def test_an_empty_input_filter_is_the_identity() -> None:
    pipeline = InputFilter()
    observation = _observation()
    reward = np.array([1.0, -1.0])
    assert pipeline.filter_observation(observation) is observation
    assert pipeline.filter_reward(reward) is reward
    bound = pipeline.bind(OBSERVATION_SPACE)
    assert bound == OBSERVATION_SPACE
    assert pipeline.state_dict() == {}


def test_an_empty_output_filter_is_the_identity() -> None:
    pipeline = OutputFilter()
    action = np.array([0, 2])
    space = spaces.Discrete(3)
    assert pipeline.filter(action) is action
    assert pipeline.bind(space) is space
    assert pipeline.state_dict() == {}


# -- observation filters ------------------------------------------------------------------


def test_an_observation_filter_applies_to_its_key_only() -> None:
    pipeline = InputFilter(observation_filters={"observation": [Scale(2.0)]})
    observation = _observation()
    original = copy.deepcopy(observation)

    filtered = pipeline.filter_observation(observation)

    np.testing.assert_array_equal(filtered["observation"], [[1.0, 2.0], [-2.0, 4.0]])
    assert filtered["goal"] is observation["goal"]
    # The input dictionary and its arrays are left as they were.
    assert filtered is not observation
    np.testing.assert_array_equal(observation["observation"], original["observation"])
    assert set(observation) == {"observation", "goal"}


def test_bind_computes_the_filtered_space_and_leaves_the_given_one_alone() -> None:
    given = copy.deepcopy(OBSERVATION_SPACE)
    pipeline = InputFilter(observation_filters={"observation": [Scale(2.0)], "goal": [Scale(-1.0)]})

    bound = pipeline.bind(given)

    np.testing.assert_array_equal(bound["observation"].low, [-2.0, 0.0])
    np.testing.assert_array_equal(bound["observation"].high, [2.0, 4.0])
    np.testing.assert_array_equal(bound["goal"].low, [-5.0])
    np.testing.assert_array_equal(bound["goal"].high, [5.0])
    assert given == OBSERVATION_SPACE
    np.testing.assert_array_equal(given["observation"].low, [-1.0, 0.0])
    np.testing.assert_array_equal(given["observation"].high, [1.0, 2.0])
    assert bound["observation"] is not given["observation"]


def test_observation_filters_apply_in_order() -> None:
    scale_then_shift = InputFilter(observation_filters={"goal": [Scale(2.0), Shift(1.0)]})
    shift_then_scale = InputFilter(observation_filters={"goal": [Shift(1.0), Scale(2.0)]})
    np.testing.assert_array_equal(
        scale_then_shift.filter_observation(_observation())["goal"], [[7.0], [9.0]]
    )
    np.testing.assert_array_equal(
        shift_then_scale.filter_observation(_observation())["goal"], [[8.0], [10.0]]
    )
    bound = scale_then_shift.bind(OBSERVATION_SPACE)
    np.testing.assert_array_equal(bound["goal"].low, [-9.0])
    np.testing.assert_array_equal(bound["goal"].high, [11.0])


def test_bind_rejects_filters_for_missing_keys() -> None:
    pipeline = InputFilter(
        observation_filters={"observation": [Scale(2.0)], "desired_goal": [Scale(2.0)]}
    )
    with pytest.raises(CoachError) as error:
        pipeline.bind(OBSERVATION_SPACE)
    message = str(error.value)
    assert "desired_goal" in message
    assert "['goal', 'observation']" in message


def test_bind_passes_on_a_filter_refusing_its_space() -> None:
    space = spaces.Dict({"observation": spaces.Discrete(4)})
    with pytest.raises(CoachError, match="Scale needs a Box"):
        InputFilter(observation_filters={"observation": [Scale(2.0)]}).bind(space)


# -- reward filters -----------------------------------------------------------------------


def test_reward_filters_apply_in_order() -> None:
    reward = np.array([1.0, -2.0, 0.0])
    add_then_scale = InputFilter(reward_filters=[AddReward(1.0), ScaleReward(10.0)])
    scale_then_add = InputFilter(reward_filters=[ScaleReward(10.0), AddReward(1.0)])
    np.testing.assert_array_equal(add_then_scale.filter_reward(reward), [20.0, -10.0, 10.0])
    np.testing.assert_array_equal(scale_then_add.filter_reward(reward), [11.0, -19.0, 1.0])
    np.testing.assert_array_equal(reward, [1.0, -2.0, 0.0])


# -- action filters -----------------------------------------------------------------------


def test_output_filter_bind_returns_the_agent_space_and_filter_maps_actions() -> None:
    env_space = spaces.Box(-2.0, 2.0, shape=(1,), dtype=np.float32)
    pipeline = OutputFilter(action_filters=[DiscreteToBox(3)])

    agent_space = pipeline.bind(env_space)

    assert agent_space == spaces.Discrete(3)
    env_actions = pipeline.filter(np.array([0, 1, 2, 2]))
    np.testing.assert_array_equal(env_actions, [[-2.0], [0.0], [2.0], [2.0]])
    assert all(env_space.contains(a) for a in env_actions)


def test_action_filters_bind_from_the_environment_and_filter_from_the_agent() -> None:
    env_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
    # Agent -> DiscreteToBox -> HalveBox -> environment.
    pipeline = OutputFilter(action_filters=[DiscreteToBox(5), HalveBox()])

    agent_space = pipeline.bind(env_space)

    assert agent_space == spaces.Discrete(5)
    # DiscreteToBox saw HalveBox's agent-side space, [-2, 2].
    np.testing.assert_array_equal(pipeline.action_filters[0].points, [-2.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(pipeline.filter(np.array([0, 2, 4])), [[-1.0], [0.0], [1.0]])


def test_output_filter_bind_passes_on_a_refused_space() -> None:
    with pytest.raises(CoachError, match="DiscreteToBox drives a Box"):
        OutputFilter(action_filters=[DiscreteToBox()]).bind(spaces.Discrete(2))


# -- state and resets ---------------------------------------------------------------------


def test_update_false_leaves_statistics_untouched() -> None:
    counter = RunningCount()
    pipeline = InputFilter(observation_filters={"observation": [counter]})
    pipeline.filter_observation(_observation())
    pipeline.filter_observation(_observation(), update=False)
    assert counter.count == 2


def test_start_episodes_reaches_every_observation_filter_in_order() -> None:
    first, second = RunningCount(), RunningCount()
    pipeline = InputFilter(
        observation_filters={"observation": [first, Scale(2.0)], "goal": [second]}
    )
    observation = {k: v[[1]] for k, v in _observation().items()}
    out = pipeline.start_episodes(observation, np.array([1]))
    assert first.starts == [[1]] and second.starts == [[1]]
    assert np.array_equal(out["observation"], (observation["observation"] + 100) * 2)
    assert np.array_equal(out["goal"], observation["goal"] + 100)


class EpisodeReturn(RewardFilter):
    """Per-env history: the return of the running episode."""

    def __init__(self) -> None:
        self.returns = np.zeros(2)

    def filter(self, reward: np.ndarray, update: bool = True) -> np.ndarray:
        self.returns += reward
        return reward

    def reset(self, env_mask: np.ndarray) -> None:
        self.returns[env_mask] = 0.0


def test_end_episodes_reaches_the_reward_filters() -> None:
    episode_return = EpisodeReturn()
    pipeline = InputFilter(reward_filters=[episode_return])
    pipeline.filter_reward(np.array([1.0, 2.0]))
    pipeline.end_episodes(np.array([True, False]))
    assert episode_return.returns.tolist() == [0.0, 2.0]


def test_input_filter_state_dict_round_trip() -> None:
    def pipeline() -> InputFilter:
        return InputFilter(
            observation_filters={"observation": [Scale(2.0), RunningCount()]},
            reward_filters=[AddReward(1.0), RewardSum()],
        )

    source = pipeline()
    for _ in range(3):
        source.filter_observation(_observation())
        source.filter_reward(np.array([1.0, 2.0]))
    state = source.state_dict()
    assert state == {"0": {}, "1": {"count": 6}, "2": {}, "3": {"total": 15.0}}

    restored = pipeline()
    restored.load_state_dict(state)
    assert restored.observation_filters["observation"][1].count == 6
    assert restored.reward_filters[1].total == 15.0
    assert restored.state_dict() == state


def test_output_filter_state_dict_round_trip() -> None:
    env_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
    source = OutputFilter(action_filters=[DiscreteToBox(3), HalveBox()])
    source.bind(env_space)
    source.filter(np.array([0]))
    source.filter(np.array([1]))
    state = source.state_dict()
    assert state == {"0": {"calls": 2}, "1": {}}

    restored = OutputFilter(action_filters=[DiscreteToBox(3), HalveBox()])
    restored.load_state_dict(state)
    assert restored.action_filters[0].calls == 2
