"""Unit tests for coach/core/goals.py: per-dimension thresholds (the other distances are
tested with the hindsight memory, tests/unit/memories/test_hindsight.py)."""

from __future__ import annotations

import numpy as np
import pytest

from coach.core.goals import GoalReward
from coach.errors import CoachError
from coach_environments.pendulum_with_goals import PendulumWithGoalsEnv


def test_dimension_thresholds_bound_each_entry() -> None:
    goals = GoalReward(dimension_thresholds=[0.075, 0.075, 0.75])
    desired = np.zeros((4, 3))
    achieved = np.array(
        [[0.07, -0.07, 0.7], [0.08, 0.0, 0.0], [0.0, 0.0, -0.8], [0.075, 0.075, 0.75]]
    )
    assert goals.reached(achieved, desired).tolist() == [True, False, False, True]
    assert goals.reward(achieved, desired).tolist() == [0.0, -1.0, -1.0, 0.0]


def test_dimension_thresholds_agree_with_pendulum_with_goals() -> None:
    env = PendulumWithGoalsEnv()
    goals = GoalReward(dimension_thresholds=list(env.goal_reaching_thresholds))
    rng = np.random.default_rng(0)
    achieved = rng.uniform(-0.2, 0.2, size=(500, 3)) * np.array([1, 1, 10])
    desired = np.zeros((500, 3))
    expected = env.compute_reward(achieved, desired, {}) == env.goal_reached_reward
    np.testing.assert_array_equal(goals.reached(achieved, desired), expected)


def test_dimension_thresholds_are_checked() -> None:
    with pytest.raises(
        CoachError, match=r"GoalReward.dimension_thresholds.1 must be >= 0, got -1.0"
    ):
        GoalReward(dimension_thresholds=[0.1, -1.0])
    with pytest.raises(CoachError, match="2 dimension thresholds for goals of 3 entries"):
        GoalReward(dimension_thresholds=[0.1, 0.1]).reached(np.zeros((1, 3)), np.zeros((1, 3)))
