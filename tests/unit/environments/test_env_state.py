"""The episodes in flight of classic control environments survive a save and restore."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from coach.environments.env_state import get_env_state, set_env_state
from coach.environments.parameters import GymEnvironmentParameters

LEVELS = ["CartPole-v1", "Pendulum-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0"]


def trajectory(env: gym.Env, actions: list[object]) -> list[tuple[list[float], float, bool, bool]]:
    out = []
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        out.append((np.asarray(obs).round(6).tolist(), float(reward), terminated, truncated))
        if terminated or truncated:
            obs, _ = env.reset()
    return out


@pytest.mark.parametrize("level", LEVELS)
def test_a_restored_environment_continues_identically(level: str) -> None:
    original = gym.make(level, max_episode_steps=60)
    original.reset(seed=1)
    original.action_space.seed(1)
    actions = [original.action_space.sample() for _ in range(120)]
    before = trajectory(original, actions[:40])
    ends = [i for i, (_, _, terminated, truncated) in enumerate(before) if terminated or truncated]
    state = get_env_state(original)
    assert state is not None and state["family"] == "classic_control"
    assert state["elapsed_steps"] == [40 - (ends[-1] + 1 if ends else 0)]

    copy = gym.make(level, max_episode_steps=60)
    copy.reset(seed=99)  # a different episode, overwritten by the restore
    set_env_state(copy, state)
    # Both run into the time limit at step 60 and reset from the same generator state.
    assert trajectory(copy, actions[40:]) == trajectory(original, actions[40:])


@pytest.mark.parametrize(
    ("level", "kwargs", "family"),
    [
        ("HalfCheetah-v5", {}, "mujoco"),
        # Without sticky actions: ALE's saved state leaves out the last action they repeat.
        ("ALE/Pong-v5", {"repeat_action_probability": 0.0}, "atari"),
    ],
)
def test_mujoco_and_atari_episodes_continue_identically(
    level: str, kwargs: dict[str, float], family: str
) -> None:
    import ale_py

    gym.register_envs(ale_py)
    original = gym.make(level, max_episode_steps=1000, **kwargs)
    original.reset(seed=2)
    original.action_space.seed(2)
    actions = [original.action_space.sample() for _ in range(60)]
    trajectory(original, actions[:30])
    state = get_env_state(original)
    assert state is not None and state["family"] == family

    copy = gym.make(level, max_episode_steps=1000, **kwargs)
    copy.reset(seed=7)
    set_env_state(copy, state)
    assert trajectory(copy, actions[30:]) == trajectory(original, actions[30:])


def test_atari_with_sticky_actions_continues_its_episode() -> None:
    import ale_py

    gym.register_envs(ale_py)
    original = gym.make("ALE/Breakout-v5")
    original.reset(seed=2)
    for _ in range(40):
        original.step(1)
    copy = gym.make("ALE/Breakout-v5")
    copy.reset(seed=7)
    set_env_state(copy, get_env_state(original))  # type: ignore[arg-type]
    frame = original.unwrapped.ale.getEpisodeFrameNumber()  # type: ignore[attr-defined]
    assert frame == 160 and copy.unwrapped.ale.getEpisodeFrameNumber() == frame  # type: ignore[attr-defined]


def test_environments_without_saveable_state_say_so() -> None:
    class Opaque(gym.Env):
        observation_space = gym.spaces.Box(-1, 1, (1,))
        action_space = gym.spaces.Discrete(2)

    assert get_env_state(Opaque()) is None


def test_the_adapter_saves_every_copy_and_its_returns() -> None:
    params = GymEnvironmentParameters(level="CartPole-v1", num_envs=3)
    env = params.build()
    env.reset(seed=0)
    for _ in range(7):
        env.step(np.array([0, 1, 1]))
    state = env.state_dict()
    assert state is not None and len(state["envs"]) == 3 and state["lengths"] == [7, 7, 7]
    other = params.build()
    other.load_state_dict(state)
    a, b = env.step(np.array([1, 0, 1])), other.step(np.array([1, 0, 1]))
    np.testing.assert_array_equal(a.observation["observation"], b.observation["observation"])
    np.testing.assert_array_equal(a.episode_length, b.episode_length)
