"""Unit tests for coach/environments/parameters.py: making copies and building the adapter."""

from __future__ import annotations

import gymnasium as gym
import pytest
from toy_envs import CountingEnv

from coach.environments.gym_environment import GymEnvironment
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError


def test_build_hands_the_adapter_its_copies_and_their_observation_key() -> None:
    params = GymEnvironmentParameters(
        level="toy_envs:CountingEnv", num_envs=2, observation_key="counter"
    )
    env = params.build()
    assert isinstance(env, GymEnvironment)
    assert env.num_envs == 2
    assert all(isinstance(copy, CountingEnv) for copy in env.envs)
    assert env.envs[0] is not env.envs[1]
    assert list(env.observation_space.spaces) == ["counter"]


def test_make_env_makes_a_registered_id_with_its_time_limit_and_keywords() -> None:
    env = GymEnvironmentParameters(
        level="CartPole-v1", max_episode_steps=7, kwargs={"sutton_barto_reward": True}
    ).make_env()
    assert env.spec is not None and env.spec.id == "CartPole-v1"
    assert env.spec.max_episode_steps == 7
    assert env.unwrapped._sutton_barto_reward  # type: ignore[attr-defined]


def test_make_env_imports_an_entry_point_and_limits_its_episodes() -> None:
    env = GymEnvironmentParameters(
        level="toy_envs:CountingEnv", max_episode_steps=2, kwargs={"reward_scale": 3.0}
    ).make_env()
    assert isinstance(env, gym.wrappers.TimeLimit)
    assert isinstance(env.unwrapped, CountingEnv) and env.unwrapped.reward_scale == 3.0
    env.reset(seed=0)
    env.step(0)
    assert env.step(0)[3]  # truncated after two steps


@pytest.mark.parametrize(
    ("level", "fragment"),
    [
        ("NoSuchEnvironment-v0", "NoSuchEnvironment-v0"),
        ("no_such_module_here:Env", "no_such_module_here"),
        ("toy_envs:NoSuchClass", "NoSuchClass"),
    ],
)
def test_unknown_environments_raise_coach_error(level: str, fragment: str) -> None:
    with pytest.raises(CoachError, match=fragment):
        GymEnvironmentParameters(level=level).make_env()


@pytest.mark.parametrize(
    ("level", "kwargs", "fragment"),
    [
        ("coach/BitFlip-v0", {"n_bits": 0}, "n_bits must be at least 1"),
        ("CartPole-v1", {"no_such_argument": 1}, "no_such_argument"),
        ("toy_envs:CountingEnv", {"no_such_argument": 1}, "no_such_argument"),
    ],
)
def test_arguments_an_environment_refuses_raise_coach_error(
    level: str, kwargs: dict[str, int], fragment: str
) -> None:
    with pytest.raises(CoachError, match=fragment):
        GymEnvironmentParameters(level=level, kwargs=kwargs).make_env()


def test_an_unknown_vectorization_is_refused() -> None:
    params = GymEnvironmentParameters(level="CartPole-v1", vectorization="threads")
    with pytest.raises(CoachError, match=r'"sync", "async" or "envpool", got \'threads\''):
        params.build()
