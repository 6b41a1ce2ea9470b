"""Local Minari datasets: round trips on real gymnasium environments, transitions and
refusals. Episodes are recorded here by stepping the environments, and loaded data
is compared with that recording."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from coach.batch.checks import check_spaces
from coach.batch.datasets import (
    Episode,
    load_dataset,
    transitions,
    write_dataset,
)
from coach.errors import CoachError

Policy = Callable[[np.random.Generator], tuple[Any, dict[str, Any]]]
"""Draws an action and what the behaviour policy logs about it."""


@pytest.fixture(autouse=True)
def minari_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own Minari root; nothing is written under the home directory."""
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


def stack(values: list[Any]) -> np.ndarray | dict[str, np.ndarray]:
    if isinstance(values[0], dict):
        return {k: np.stack([v[k] for v in values]) for k in values[0]}
    return np.stack(values)


def record(env: gym.Env, policy: Policy, num_episodes: int, seed: int) -> list[Episode]:
    """Step ``env`` with ``policy`` for whole episodes, as a recorder would."""
    rng = np.random.default_rng(seed)
    episodes = []
    for i in range(num_episodes):
        observation, _ = env.reset(seed=seed + i)
        observations, actions, rewards, terms, truncs = [observation], [], [], [], []
        logged: list[dict[str, Any]] = []
        done = False
        while not done:
            action, behaviour = policy(rng)
            observation, reward, terminated, truncated, _ = env.step(action)
            observations.append(observation)
            actions.append(action)
            rewards.append(reward)
            terms.append(terminated)
            truncs.append(truncated)
            logged.append(behaviour)
            done = terminated or truncated
        episodes.append(
            Episode(
                observations=stack(observations),
                actions=np.array(actions),
                rewards=np.array(rewards, dtype=np.float64),
                terminations=np.array(terms),
                truncations=np.array(truncs),
                behaviour={k: np.stack([b[k] for b in logged]) for k in logged[0]},
            )
        )
    env.close()
    return episodes


def discrete_policy(rng: np.random.Generator) -> tuple[Any, dict[str, Any]]:
    """A random policy whose action probabilities change every step."""
    p = rng.uniform(0.2, 0.8)
    action = int(rng.choice(2, p=[p, 1 - p]))
    return action, {"action_probabilities": np.array([p, 1 - p], dtype=np.float32)}


def gaussian_policy(rng: np.random.Generator) -> tuple[Any, dict[str, Any]]:
    sample = rng.normal(size=1)
    log_prob = -0.5 * sample[0] ** 2 - 0.5 * np.log(2 * np.pi)
    action = np.clip(sample, -2.0, 2.0).astype(np.float32)
    return action, {"action_log_prob": np.float32(log_prob)}


class WithGoal(gym.ObservationWrapper):
    """CartPole with a Dict observation {"observation", "desired_goal"}."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = spaces.Dict(
            {
                "observation": env.observation_space,
                "desired_goal": spaces.Box(-1.0, 1.0, (2,), np.float32),
            }
        )

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": observation, "desired_goal": np.tanh(observation[:2])}


@pytest.fixture(scope="module")
def cartpole() -> list[Episode]:
    """Three CartPole episodes ended by the pole, then one cut by a 10-step TimeLimit."""
    episodes = record(gym.make("CartPole-v1"), discrete_policy, 3, seed=0)
    episodes += record(gym.make("CartPole-v1", max_episode_steps=10), discrete_policy, 1, 100)
    assert [bool(e.terminations[-1]) for e in episodes] == [True, True, True, False]
    assert [bool(e.truncations[-1]) for e in episodes] == [False, False, False, True]
    return episodes


@pytest.fixture(scope="module")
def pendulum() -> list[Episode]:
    return record(gym.make("Pendulum-v1", max_episode_steps=15), gaussian_policy, 2, seed=1)


def cartpole_spaces() -> tuple[spaces.Space, spaces.Space]:
    env = gym.make("CartPole-v1")
    return env.observation_space, env.action_space


def observations(episode: Episode, key: str | None = None) -> np.ndarray:
    """An episode's observations, or those under ``key`` for a Dict space."""
    if isinstance(episode.observations, dict):
        assert key is not None
        return episode.observations[key]
    return episode.observations


def assert_same_array(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def assert_same_episodes(loaded: list[Episode], recorded: list[Episode]) -> None:
    assert len(loaded) == len(recorded)
    for got, want in zip(loaded, recorded, strict=True):
        if isinstance(want.observations, dict):
            assert isinstance(got.observations, dict)
            assert set(got.observations) == set(want.observations)
            for key, array in want.observations.items():
                assert_same_array(got.observations[key], array)
        else:
            assert isinstance(got.observations, np.ndarray)
            assert_same_array(got.observations, want.observations)
        assert_same_array(got.actions, want.actions)
        assert_same_array(got.rewards, want.rewards.astype(np.float64))
        assert_same_array(got.terminations, want.terminations.astype(bool))
        assert_same_array(got.truncations, want.truncations.astype(bool))
        assert set(got.behaviour) == set(want.behaviour)
        for key, array in want.behaviour.items():
            assert_same_array(got.behaviour[key], array)


@pytest.mark.parametrize("how", ["id", "id without version", "path", "str path", "data dir"])
def test_cartpole_round_trip(cartpole: list[Episode], how: str) -> None:
    observation_space, action_space = cartpole_spaces()
    path = write_dataset(
        "cartpole/random-v0",
        cartpole,
        observation_space,
        action_space,
        "CartPole-v1",
        algorithm_name="Random",
        description="recorded by test_datasets with a seeded random policy",
        author="tester",
    )
    sources: dict[str, str | Path] = {
        "id": "cartpole/random-v0",
        "id without version": "cartpole/random",
        "path": path,
        "str path": str(path),
        "data dir": path / "data",
    }
    dataset = load_dataset(sources[how])

    assert_same_episodes(dataset.episodes, cartpole)
    assert dataset.name == "cartpole/random-v0" and dataset.path == path
    assert dataset.num_episodes == 4
    assert dataset.total_steps == sum(len(e.rewards) for e in cartpole)
    assert dataset.metadata["total_steps"] == dataset.total_steps
    assert all(
        e.behaviour["action_probabilities"].shape == (len(e.rewards), 2) for e in dataset.episodes
    )
    assert dataset.observation_space == observation_space
    assert dataset.action_space == action_space
    assert dataset.env_id == "CartPole-v1"
    assert dataset.metadata["description"] == (
        "recorded by test_datasets with a seeded random policy"
    )
    assert dataset.metadata["algorithm_name"] == "Random"
    assert "tester" in dataset.metadata["author"]


def test_pendulum_round_trip(pendulum: list[Episode]) -> None:
    env = gym.make("Pendulum-v1")
    write_dataset("pendulum/random", pendulum, env.observation_space, env.action_space)
    dataset = load_dataset("pendulum/random-v0")

    assert_same_episodes(dataset.episodes, pendulum)
    assert dataset.total_steps == 30 and dataset.env_id is None
    assert all(e.actions.shape == (15, 1) and e.actions.dtype == np.float32 for e in pendulum)
    assert [e.behaviour["action_log_prob"].shape for e in dataset.episodes] == [(15,), (15,)]
    assert dataset.action_space == env.action_space


def test_dict_observations_round_trip_and_keep_their_keys() -> None:
    env = WithGoal(gym.make("CartPole-v1"))
    episodes = record(env, discrete_policy, 2, seed=2)
    write_dataset("goals/cartpole-v3", episodes, env.observation_space, env.action_space)
    dataset = load_dataset("goals/cartpole")

    assert dataset.name == "goals/cartpole-v3"
    assert_same_episodes(dataset.episodes, episodes)
    check_spaces(dataset, env.observation_space, env.action_space)
    columns = transitions(dataset, observation_key="ignored for a Dict space")
    assert set(columns["state"]) == set(columns["next_state"]) == {"observation", "desired_goal"}
    for key in ("observation", "desired_goal"):
        recorded = [observations(e, key) for e in episodes]
        assert_same_array(columns["state"][key], np.concatenate([o[:-1] for o in recorded]))
        assert_same_array(columns["next_state"][key], np.concatenate([o[1:] for o in recorded]))


def test_transitions_line_up_with_the_episodes(cartpole: list[Episode]) -> None:
    write_dataset("cartpole/random", cartpole, *cartpole_spaces())
    columns = transitions(load_dataset("cartpole/random"), observation_key="obs")

    lengths = [len(e.rewards) for e in cartpole]
    n = sum(lengths)
    assert set(columns["state"]) == set(columns["next_state"]) == {"obs"}
    state, next_state = columns["state"]["obs"], columns["next_state"]["obs"]
    assert state.shape == next_state.shape == (n, 4)
    starts = np.zeros(n, dtype=bool)
    starts[[0, *np.cumsum(lengths)[:-1]]] = True
    assert_same_array(columns["episode_starts"], starts)
    within = ~starts[1:]  # rows t, t + 1 of the same episode
    np.testing.assert_array_equal(next_state[:-1][within], state[1:][within])
    assert_same_array(state, np.concatenate([observations(e)[:-1] for e in cartpole]))
    assert_same_array(next_state, np.concatenate([observations(e)[1:] for e in cartpole]))
    assert_same_array(columns["action"], np.concatenate([e.actions for e in cartpole]))
    rewards = np.concatenate([e.rewards for e in cartpole]).astype(np.float32)
    assert_same_array(columns["reward"], rewards)
    assert_same_array(columns["terminated"], np.concatenate([e.terminations for e in cartpole]))
    assert_same_array(columns["truncated"], np.concatenate([e.truncations for e in cartpole]))
    assert columns["terminated"].sum() == 3 and columns["truncated"].sum() == 1
    probabilities = np.concatenate([e.behaviour["action_probabilities"] for e in cartpole])
    assert list(columns["extras"]) == ["action_probabilities"]
    assert_same_array(columns["extras"]["action_probabilities"], probabilities)


def test_an_id_without_version_loads_the_newest_local_version(cartpole: list[Episode]) -> None:
    first = write_dataset("cartpole/random", cartpole[:1], *cartpole_spaces())
    write_dataset("cartpole/random-v2", cartpole[:2], *cartpole_spaces())
    write_dataset("cartpole/random-v10", cartpole, *cartpole_spaces())
    assert first.name == "random-v0"
    newest = load_dataset("cartpole/random")
    assert newest.name == "cartpole/random-v10" and newest.num_episodes == 4
    assert load_dataset("cartpole/random-v2").num_episodes == 2


def test_an_existing_id_is_refused_and_kept(cartpole: list[Episode]) -> None:
    write_dataset("cartpole/random", cartpole, *cartpole_spaces())
    with pytest.raises(CoachError, match="'cartpole/random-v0' already exists"):
        write_dataset("cartpole/random-v0", cartpole[:1], *cartpole_spaces())
    assert load_dataset("cartpole/random").num_episodes == 4


@pytest.mark.parametrize("name", ["cart pole", "../escape", "/abs/path-v0", "cartpole/"])
def test_an_invalid_id_is_refused(cartpole: list[Episode], name: str) -> None:
    with pytest.raises(CoachError, match="is not a Minari dataset id"):
        write_dataset(name, cartpole, *cartpole_spaces())


def test_no_episodes_are_refused(minari_root: Path) -> None:
    with pytest.raises(CoachError, match="no episodes"):
        write_dataset("cartpole/empty", [], *cartpole_spaces())
    assert not (minari_root / "cartpole" / "empty-v0").exists()


def test_an_unknown_id_names_close_matches_and_the_root(
    cartpole: list[Episode], minari_root: Path
) -> None:
    write_dataset("cartpole/random-v0", cartpole, *cartpole_spaces())
    with pytest.raises(CoachError) as refused:
        load_dataset("cartpole/randm")
    message = str(refused.value)
    assert "did you mean cartpole/random" in message and str(minari_root) in message
    with pytest.raises(CoachError, match="did you mean cartpole/random-v0"):
        load_dataset("cartpole/random-v1")


def test_a_missing_path_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "dataset"
    with pytest.raises(CoachError, match="does not exist") as refused:
        load_dataset(missing)
    assert str(missing) in str(refused.value)


def drop_last(array: np.ndarray) -> np.ndarray:
    return array[:-1]


@pytest.mark.parametrize(
    ("field", "change", "got", "expected"),
    [
        ("actions", lambda e: dataclasses.replace(e, actions=e.actions[:, 0]), "(15,)", "(15, 1)"),
        (
            "observations",
            lambda e: dataclasses.replace(e, observations=drop_last(e.observations)),
            "(15, 3)",
            "(16, 3)",
        ),
        (
            "terminations",
            lambda e: dataclasses.replace(e, terminations=drop_last(e.terminations)),
            "(14,)",
            "(15,)",
        ),
        (
            "behaviour['action_log_prob']",
            lambda e: dataclasses.replace(
                e, behaviour={"action_log_prob": drop_last(e.behaviour["action_log_prob"])}
            ),
            "(14,)",
            "(15, ...)",
        ),
    ],
)
def test_an_episode_that_does_not_fit_is_refused(
    pendulum: list[Episode],
    minari_root: Path,
    field: str,
    change: Callable[[Episode], Episode],
    got: str,
    expected: str,
) -> None:
    env = gym.make("Pendulum-v1")
    episodes = [pendulum[0], change(pendulum[1])]
    with pytest.raises(CoachError) as refused:
        write_dataset("pendulum/bad", episodes, env.observation_space, env.action_space)
    message = str(refused.value)
    assert "episode 1 " in message and f"{field} of shape {got}" in message
    assert expected in message
    assert not (minari_root / "pendulum" / "bad-v0").exists()


@pytest.mark.parametrize("pattern", ["*.hdf5", "metadata.json"])
def test_a_corrupted_file_is_refused_with_its_path(cartpole: list[Episode], pattern: str) -> None:
    path = write_dataset("cartpole/random", cartpole, *cartpole_spaces())
    (damaged,) = (path / "data").glob(pattern)
    damaged.write_bytes(b"\x00not a dataset\xff" * 64)
    for source in ("cartpole/random", path):
        with pytest.raises(CoachError) as refused:
            load_dataset(source)
        assert str(damaged) in str(refused.value)


def test_a_relative_minari_root_is_written_and_read_like_an_absolute_one(
    cartpole: list[Episode], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MINARI_DATASETS_PATH", "relative_root")
    path = write_dataset("cartpole/random", cartpole, *cartpole_spaces())
    assert (tmp_path / path / "data").is_dir()
    assert os.environ["MINARI_DATASETS_PATH"] == "relative_root"  # left as it was given
    assert len(load_dataset("cartpole/random").episodes) == len(cartpole)
