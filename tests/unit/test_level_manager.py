"""Level managers stack: a level is the environment of the level above."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.environments.environment import Environment
from coach.level_manager import LevelManager
from tests.toys import CountingEnvironment, scripted


@pytest.mark.parametrize("num_envs", [1, 3])
def test_two_levels_upper_action_is_lower_goal(num_envs: int) -> None:
    environment = CountingEnvironment(num_envs, length=10)
    lower_agent = scripted(1, environment, "lower")
    lower = LevelManager(
        "lower", lower_agent, environment, steps_per_action=3, action_space=spaces.Discrete(5)
    )
    upper_agent = scripted(4, lower, "upper")
    upper = LevelManager("upper", upper_agent, lower)
    upper.phase = RunPhase.TRAIN
    assert lower_agent.phase is RunPhase.TRAIN

    upper.reset(seed=0)
    response = upper.step()

    # The upper agent's action reached the lower agent as its goal, whole (a batch of goals).
    np.testing.assert_array_equal(lower_agent.goals[0], np.full(num_envs, 4))
    # The lower level ran its horizon of 3 env steps, acting its own action.
    assert len(environment.actions) == 3
    assert all((a == 1).all() for a in environment.actions)
    # One aggregated transition for the upper level: rewards summed, last observation.
    np.testing.assert_array_equal(response.reward, np.full(num_envs, 3.0))
    np.testing.assert_array_equal(response.observation["observation"][:, 0], np.full(num_envs, 3))
    assert len(upper_agent.observed) == 1 and len(lower_agent.observed) == 3


def test_lower_level_stops_at_episode_end() -> None:
    environment = CountingEnvironment(1, length=4)
    lower_agent = scripted(0, environment, "lower")
    lower = LevelManager(
        "lower", lower_agent, environment, steps_per_action=3, action_space=spaces.Discrete(5)
    )
    upper_agent = scripted(2, lower, "upper")
    upper = LevelManager("upper", upper_agent, lower)
    upper.phase = RunPhase.TRAIN
    upper.reset()

    first = upper.step()
    second = upper.step()  # the episode ends after 1 of the 3 steps
    assert first.reward[0] == 3.0 and not first.done[0]
    assert second.reward[0] == 1.0 and second.truncated[0]
    assert second.episode_return[0] == 4.0 and second.episode_length[0] == 4
    # Last observation of the finished episode vs. first of the next one.
    assert second.next_observation["observation"][0, 0] == 4.0
    assert second.observation["observation"][0, 0] == 0.0
    assert len(environment.actions) == 4


def test_level_manager_is_an_environment() -> None:
    environment = CountingEnvironment(2)
    level = LevelManager("main", scripted(0, environment, "a"), environment)
    assert isinstance(level, Environment)
    assert level.observation_space is environment.observation_space
    assert level.num_envs == 2
    level.phase = RunPhase.EVALUATE
    level.reset()
    response = level.step()
    assert response.reward.shape == (2,)
    # Evaluation stores nothing (the base agent has no memory here, and counts nothing).
    assert level.agent.env_steps == 0
