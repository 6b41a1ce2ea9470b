"""PendulumWithGoalsEnv: the API checks, goal-reaching logic, dynamics, seeding, rendering."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import coach_environments  # noqa: F401  (registers the ids)
from coach_environments import PendulumWithGoalsEnv

STANDING = np.array([1.0, 0.0, 0.0], dtype=np.float32)
HANGING = np.array([-1.0, 0.0, 0.0], dtype=np.float32)
ZERO = np.zeros(1, dtype=np.float32)


def _posed(theta: float, theta_dot: float = 0.0, goal=STANDING, **kwargs) -> PendulumWithGoalsEnv:
    env = PendulumWithGoalsEnv(**kwargs)
    env.reset(seed=0)
    env.set_state({"theta": theta, "theta_dot": theta_dot, "goal": goal, "steps": 0})
    return env


@pytest.mark.parametrize(
    "kwargs", [{}, {"random_goals_instead_of_standing_goal": True, "frameskip": 3}]
)
def test_check_env_passes_on_the_registered_id(kwargs):
    env = gym.make("coach/PendulumWithGoals-v0", **kwargs)
    with warnings.catch_warnings():
        # check_env reports most problems as warnings only, so they fail the test here; all
        # but its advice to normalise the action space, which stays [-2, 2] as in Coach and
        # Pendulum-v1.
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*symmetric and normalized space")
        check_env(env.unwrapped)
    assert isinstance(env.unwrapped, PendulumWithGoalsEnv)
    assert env.spec is not None and env.spec.max_episode_steps is None  # no TimeLimit


def test_coach_defaults_and_spaces():
    env = PendulumWithGoalsEnv()
    np.testing.assert_allclose(env.goal_reaching_thresholds, [0.075, 0.075, 0.75])
    assert (env.goal_reached_reward, env.goal_not_reached_penalty) == (0.0, -1.0)
    assert env.terminate_on_goal_reaching and env.time_limit == 1000 and env.frameskip == 1
    assert not env.random_goals_instead_of_standing_goal
    assert env.action_space == spaces.Box(-2.0, 2.0, (1,), np.float32)
    assert isinstance(env.observation_space, spaces.Dict)
    assert set(env.observation_space.spaces) == {"observation", "achieved_goal", "desired_goal"}
    high = np.array([1.0, 1.0, 8.0], dtype=np.float32)
    for space in env.observation_space.spaces.values():
        assert space == spaces.Box(-high, high, dtype=np.float32)


def test_standing_still_upright_reaches_the_standing_goal():
    env = _posed(theta=0.0)  # the unstable equilibrium: no torque keeps it there exactly
    obs, reward, terminated, truncated, info = env.step(ZERO)
    np.testing.assert_array_equal(obs["achieved_goal"], STANDING)
    assert (reward, terminated, truncated, info["is_success"]) == (0.0, True, False, 1.0)


def test_reaching_the_goal_need_not_terminate():
    env = _posed(theta=0.0, terminate_on_goal_reaching=False)
    _, reward, terminated, _, info = env.step(ZERO)
    assert (reward, terminated, info["is_success"]) == (0.0, False, 1.0)


def test_hanging_is_far_from_the_standing_goal():
    env = _posed(theta=np.pi)
    _, reward, terminated, truncated, info = env.step(ZERO)
    assert (reward, terminated, truncated, info["is_success"]) == (-1.0, False, False, 0.0)


@pytest.mark.parametrize(
    ("offset", "reached"),
    [
        ([0.0, 0.0, 0.0], True),
        ([0.07, -0.07, 0.7], True),  # within every threshold
        ([0.075, -0.075, 0.75], True),  # on every threshold, as in Coach
        ([0.08, 0.0, 0.0], False),  # cos beyond 0.075
        ([0.0, -0.08, 0.0], False),  # sin beyond 0.075
        ([0.0, 0.0, -0.8], False),  # theta_dot beyond 0.75
    ],
)
def test_goal_reached_when_every_dimension_is_within_its_threshold(offset, reached):
    env = PendulumWithGoalsEnv()
    goal = np.zeros(3, dtype=np.float32)  # exact distances, even on the thresholds
    reward = env.compute_reward(np.array(offset, dtype=np.float32), goal, {})
    assert reward == (0.0 if reached else -1.0)


def test_episodes_are_truncated_at_the_time_limit():
    env = _posed(theta=np.pi, time_limit=4)
    truncations = [env.step(ZERO)[3] for _ in range(4)]
    assert truncations == [False, False, False, True]


def test_compute_reward_agrees_with_the_step_rewards_on_a_batch():
    # Released near the bottom with the hanging goal: it swings through the goal (reached)
    # and out to where sin theta is beyond the threshold (not reached), both in one batch.
    env = _posed(theta=np.pi - 0.15, goal=HANGING, terminate_on_goal_reaching=False)
    achieved, desired, rewards, successes = [], [], [], []
    for _ in range(60):
        obs, reward, _, _, info = env.step(ZERO)
        achieved.append(obs["achieved_goal"])
        desired.append(obs["desired_goal"])
        rewards.append(reward)
        successes.append(info["is_success"])
    batch = env.compute_reward(np.stack(achieved), np.stack(desired), None)
    assert batch.shape == (60,)
    np.testing.assert_array_equal(batch, rewards)
    np.testing.assert_array_equal(np.array(successes) == 1.0, batch == 0.0)
    assert {0.0, -1.0} <= set(rewards)


@pytest.mark.parametrize("frameskip", [1, 3])
def test_dynamics_follow_gymnasium_pendulum(frameskip):
    env = _posed(theta=2.0, theta_dot=-1.0, frameskip=frameskip)
    reference = gym.make("Pendulum-v1").unwrapped
    reference.reset(seed=0)
    reference.state = np.array([2.0, -1.0])
    for torque in (0.5, -1.25, 3.0, -3.0):  # the last two beyond the torque limit
        obs = env.step(np.array([torque], dtype=np.float32))[0]
        for _ in range(frameskip):
            expected = reference.step(np.array([torque], dtype=np.float32))[0]
        np.testing.assert_allclose(obs["observation"], expected, rtol=1e-6, atol=1e-6)


def test_episodes_start_away_from_upright_and_goals_follow_coach():
    standing, random = (
        PendulumWithGoalsEnv(),
        PendulumWithGoalsEnv(random_goals_instead_of_standing_goal=True),
    )
    goals = []
    for seed in range(20):
        obs, _ = standing.reset(seed=seed)
        cos_theta, _, theta_dot = obs["observation"]
        assert cos_theta <= np.cos(np.pi / 4) + 1e-6 and abs(theta_dot) <= 0.05
        np.testing.assert_array_equal(obs["desired_goal"], STANDING)
        goal = random.reset(seed=seed)[0]["desired_goal"]
        assert goal[0] >= np.cos(np.pi / 8) - 1e-6 and abs(goal[2]) <= 0.2
        np.testing.assert_allclose(np.hypot(goal[0], goal[1]), 1.0, rtol=1e-6)
        goals.append(goal)
    assert len({goal[1] for goal in goals}) == len({goal[2] for goal in goals}) == 20


def test_seeding_is_deterministic():
    def trajectory(seed: int) -> list[np.ndarray]:
        env = PendulumWithGoalsEnv(random_goals_instead_of_standing_goal=True, frameskip=2)
        env.action_space.seed(seed)
        obs, _ = env.reset(seed=seed)
        out = [obs["observation"], obs["desired_goal"]]
        for _ in range(10):
            out.append(env.step(env.action_space.sample())[0]["observation"])
        return out

    for a, b in zip(trajectory(7), trajectory(7), strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(trajectory(7)[0], trajectory(8)[0])


def test_returned_observations_are_never_mutated():
    env = PendulumWithGoalsEnv()
    first, _ = env.reset(seed=0)
    kept = {key: value.copy() for key, value in first.items()}
    second = env.step(np.array([1.0], dtype=np.float32))[0]
    env.step(np.array([1.0], dtype=np.float32))
    for key in kept:
        np.testing.assert_array_equal(first[key], kept[key])
    assert not np.shares_memory(second["observation"], second["achieved_goal"])


def test_get_state_and_set_state_continue_the_episode():
    env = PendulumWithGoalsEnv(random_goals_instead_of_standing_goal=True)
    env.reset(seed=2)
    env.step(np.array([1.0], dtype=np.float32))
    saved = env.get_state()
    after = env.step(np.array([-0.5], dtype=np.float32))
    env.reset(seed=99)
    env.set_state(saved)
    again = env.step(np.array([-0.5], dtype=np.float32))
    for key in after[0]:
        np.testing.assert_array_equal(after[0][key], again[0][key])


def test_render_draws_the_pendulum_and_the_goal():
    assert PendulumWithGoalsEnv.metadata["render_modes"] == ["rgb_array"]
    env = _posed(theta=np.pi / 2, render_mode="rgb_array")  # pointing left
    image = env.render()
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8
    height, width, channels = image.shape
    assert channels == 3 and height == width
    # Points halfway along a rod (the frame spans 2.2 rod lengths each way from the centre).
    middle, half_rod = height // 2, width // 9
    left, right = image[middle, middle - half_rod], image[middle, middle + half_rod]
    assert tuple(left) != (255, 255, 255) and tuple(right) == (255, 255, 255)
    top = image[middle - half_rod, middle]  # the standing goal
    assert tuple(top) != (255, 255, 255) and tuple(top) != tuple(left)

    env.set_state({"theta": -np.pi / 2, "theta_dot": 0.0, "goal": STANDING, "steps": 0})
    assert tuple(env.render()[middle, middle + half_rod]) == tuple(left)


def test_render_without_a_mode_returns_none():
    env = _posed(theta=0.0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="goal_reaching_thresholds"):
        PendulumWithGoalsEnv(goal_reaching_thresholds=[0.1, 0.1])
    with pytest.raises(ValueError, match="time_limit"):
        PendulumWithGoalsEnv(time_limit=0)
    with pytest.raises(ValueError, match="frameskip"):
        PendulumWithGoalsEnv(frameskip=0)
    with pytest.raises(ValueError, match="render_mode"):
        PendulumWithGoalsEnv(render_mode="human")
