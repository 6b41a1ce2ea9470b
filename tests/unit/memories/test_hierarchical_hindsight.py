"""Unit tests for coach/memories/hierarchical_hindsight.py.

Step ``t`` of an episode proposes the subgoal ``[100 + t, 0, 0]`` (never reached) and its
next state achieves ``[t + 1, 0, 0]``; the desired goal ``NEVER`` is reached by no step.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.goals import GoalReward
from coach.core.types import Transition
from coach.errors import CoachError
from coach.memories.hierarchical_hindsight import (
    HierarchicalHindsightExperienceReplay,
    HierarchicalHindsightExperienceReplayParameters,
)

GOAL_SPACE = spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32)
OBSERVATION_SPACE = spaces.Dict(
    {
        "observation": spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32),
        "achieved_goal": GOAL_SPACE,
        "desired_goal": GOAL_SPACE,
    }
)
ACTION_SPACE = spaces.Box(-1000.0, 1000.0, shape=(3,), dtype=np.float32)
NEVER = np.array([-1.0, -1.0, -1.0], dtype=np.float32)


def _memory(k: int = 2, capacity: int = 1000) -> HierarchicalHindsightExperienceReplay:
    params = HierarchicalHindsightExperienceReplayParameters(
        max_size=capacity,
        hindsight_transitions_per_regular_transition=k,
        goal_reward=GoalReward(distance="max_abs", threshold=0.1),
    )
    return params.build(OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0))


def _step(t: int, last: bool) -> dict:
    """The arguments of `store` for step ``t`` of one env's episode."""
    achieved = np.array([[t, 0, 0]], dtype=np.float32)
    reached = np.array([[t + 1, 0, 0]], dtype=np.float32)
    return {
        "state": {
            "observation": np.array([[0, t]], dtype=np.float32),
            "achieved_goal": achieved,
            "desired_goal": NEVER[None],
        },
        "action": np.array([[100 + t, 0, 0]], dtype=np.float32),
        "reward": np.array([-1.0], dtype=np.float32),
        "next_state": {
            "observation": np.array([[0, t + 1]], dtype=np.float32),
            "achieved_goal": reached,
            "desired_goal": NEVER[None],
        },
        "terminated": np.array([False]),
        "truncated": np.array([last]),
    }


def _episode(memory: HierarchicalHindsightExperienceReplay, length: int) -> None:
    for t in range(length):
        memory.store(Transition(**_step(t, t == length - 1)))


def test_every_row_has_the_subgoal_reached_as_its_action() -> None:
    memory = _memory(k=2)
    _episode(memory, 5)
    assert len(memory) == 5 * 3
    batch = memory.get(np.arange(len(memory)))
    np.testing.assert_array_equal(batch.actions, batch.next_states["achieved_goal"])
    # The episode's steps in order, then two hindsight goal copies per step.
    np.testing.assert_array_equal(batch.actions[:5, 0], [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(batch.actions[5:, 0], np.repeat([1, 2, 3, 4, 5], 2))
    assert not np.any(batch.actions >= 100)  # no proposed subgoal left


def test_hindsight_goal_copies_are_relabeled_and_rewarded_for_the_new_goal() -> None:
    memory = _memory(k=2)
    _episode(memory, 5)
    batch = memory.get(np.arange(5, 15))
    goals = batch.next_states["desired_goal"]
    steps = np.repeat(np.arange(5), 2)
    # "future": a goal reached at the copy's step or later.
    assert np.all(goals[:, 0] >= steps + 1) and np.all(goals[:, 0] <= 5)
    reached = goals[:, 0] == steps + 1
    np.testing.assert_array_equal(batch.rewards, np.where(reached, 0.0, -1.0))
    np.testing.assert_array_equal(batch.terminated, reached)


def test_subgoal_penalties_are_stored_at_once_as_proposed() -> None:
    memory = _memory(k=2)
    memory.store(Transition(**_step(0, False)))  # an open episode: nothing stored yet
    assert len(memory) == 0
    step = _step(0, False)
    memory.store_subgoal_penalty(step["state"], step["action"], -10.0, step["next_state"])
    assert len(memory) == 1  # no relabeled copies, no waiting for the episode's end
    batch = memory.get(np.arange(1))
    np.testing.assert_array_equal(batch.actions, [[100, 0, 0]])
    np.testing.assert_array_equal(batch.rewards, [-10.0])
    assert batch.terminated.tolist() == [True] and batch.truncated.tolist() == [False]
    np.testing.assert_array_equal(batch.next_states["desired_goal"], NEVER[None])


def test_the_state_round_trip_keeps_the_actions_and_the_open_episode() -> None:
    memory = _memory(k=2)
    _episode(memory, 3)
    memory.store(Transition(**_step(0, False)))
    step = _step(7, False)
    memory.store_subgoal_penalty(step["state"], step["action"], -10.0, step["next_state"])
    restored = _memory(k=2, capacity=500)
    restored.load_state_dict(memory.state_dict())
    assert len(restored) == len(memory) == 3 * 3 + 1
    np.testing.assert_array_equal(
        restored.get(np.arange(len(restored))).actions, memory.get(np.arange(len(memory))).actions
    )
    restored.store(Transition(**_step(1, True)))  # the open episode ends: its two steps and copies
    assert len(restored) == 10 + 2 * 3
    np.testing.assert_array_equal(restored.get(np.arange(10, 12)).actions[:, 0], [1, 2])


@pytest.mark.parametrize(
    "action_space",
    [spaces.Box(-2.0, 2.0, shape=(1,), dtype=np.float32), spaces.Discrete(4)],
    ids=["torque", "discrete"],
)
def test_an_action_space_that_is_not_the_goal_space_is_refused(action_space: spaces.Space) -> None:
    params = HierarchicalHindsightExperienceReplayParameters()
    with pytest.raises(CoachError, match=r"must be a Box of its shape.*bottom level"):
        params.build(OBSERVATION_SPACE, action_space, np.random.default_rng(0))
