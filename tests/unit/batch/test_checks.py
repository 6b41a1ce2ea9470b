"""coach/dataset_checks.py: a dataset recorded in other spaces than the environment's is
refused with both named; Box bounds match up to a float32 rounding, Discrete by n and start.
(What `write_dataset` refuses, through `check_supported` and `episode_misfit`, is tested with
the writing in test_datasets.py.)"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from coach.batch.checks import check_spaces
from coach.batch.datasets import load_dataset, write_dataset
from coach.batch.episodes import Dataset, Episode
from coach.errors import CoachError


@pytest.fixture(autouse=True)
def minari_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


def random_episode(env: gym.Env, seed: int) -> Episode:
    """One CartPole episode of random actions, as the environment gave it."""
    observation, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    observations, actions, rewards, terminations, truncations = [observation], [], [], [], []
    while not (terminations and (terminations[-1] or truncations[-1])):
        action = env.action_space.sample()
        observation, reward, terminated, truncated, _ = env.step(action)
        observations.append(observation)
        actions.append(action)
        rewards.append(reward)
        terminations.append(terminated)
        truncations.append(truncated)
    return Episode(
        observations=np.stack(observations),
        actions=np.asarray(actions),
        rewards=np.asarray(rewards),
        terminations=np.asarray(terminations),
        truncations=np.asarray(truncations),
    )


def test_check_spaces_refuses_another_environment_naming_both() -> None:
    cartpole = gym.make("CartPole-v1")
    observation_space, action_space = cartpole.observation_space, cartpole.action_space
    episodes = [random_episode(cartpole, seed) for seed in range(2)]
    write_dataset("cartpole/random", episodes, observation_space, action_space)
    dataset = load_dataset("cartpole/random")
    acrobot = gym.make("Acrobot-v1")

    with pytest.raises(CoachError) as refused:
        check_spaces(dataset, acrobot.observation_space, acrobot.action_space)
    message = str(refused.value)
    assert "'cartpole/random-v0'" in message
    assert f"observations {observation_space} but the environment's are " in message
    assert str(acrobot.observation_space) in message
    assert f"actions {action_space} but the environment's are {acrobot.action_space}" in message
    check_spaces(dataset, observation_space, action_space)


def in_spaces(observation_space: spaces.Space, action_space: spaces.Space) -> Dataset:
    return Dataset("made/up-v0", Path("."), [], observation_space, action_space, None, {})


def test_check_spaces_box_bounds_and_discrete_start() -> None:
    low = np.array([-0.1, -np.inf, 0.3])
    box = spaces.Box(low, 1.7, (3,), np.float64)
    rounded = spaces.Box(low.astype(np.float32).astype(np.float64), 1.7, (3,), np.float64)
    assert not np.array_equal(box.low, rounded.low)
    dataset = in_spaces(box, spaces.Discrete(2))

    check_spaces(dataset, rounded, spaces.Discrete(2))
    other_bounds = spaces.Box(low, 1.7001, (3,), np.float64)
    refused: list[tuple[spaces.Space, spaces.Space]] = [
        (other_bounds, spaces.Discrete(2)),
        (spaces.Box(low.astype(np.float32), 1.7, (3,), np.float32), spaces.Discrete(2)),
        (box, spaces.Discrete(2, start=1)),
        (box, spaces.Discrete(3)),
    ]
    for observation_space, action_space in refused:
        with pytest.raises(CoachError, match="but the environment's are"):
            check_spaces(dataset, observation_space, action_space)
