"""Unit tests for coach/environments/async_environment.py: the copies in subprocesses.

The async adapter must answer exactly as the sync one does, so most tests run both on the
same seeds and actions and compare every field. Real gymnasium environments throughout: the
point is what crosses the process boundary.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Iterator
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector.utils import batch_space

from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.core.types import EnvResponse
from coach.environments.async_environment import AsyncGymEnvironment
from coach.environments.environment import Environment
from coach.environments.gym_environment import GymEnvironment
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset

LEVELS: dict[str, dict[str, Any]] = {
    "cartpole": {"level": "CartPole-v1", "max_episode_steps": 20},
    "goals": {"level": "coach/PendulumWithGoals-v0", "kwargs": {"time_limit": 15}},
    "pendulum": {"level": "Pendulum-v1", "max_episode_steps": 20},
}
"""The environments compared: discrete, dict observations with goals, continuous."""


def _params(name: str, vectorization: str = "sync", **overrides: Any) -> GymEnvironmentParameters:
    return GymEnvironmentParameters(
        vectorization=vectorization, **{"num_envs": 3, **LEVELS[name], **overrides}
    )


def _children() -> set[BaseProcess]:
    return set(multiprocessing.active_children())


@pytest.fixture(scope="module", params=list(LEVELS))
def pair(request: pytest.FixtureRequest) -> Iterator[tuple[Environment, Environment]]:
    """An async environment and a sync one of the same parameters, shared by the module."""
    env, sync = _params(request.param, "async").build(), _params(request.param).build()
    yield env, sync
    env.close()
    sync.close()


def _assert_same(response: EnvResponse, expected: EnvResponse) -> None:
    assert set(response.observation) == set(expected.observation)
    for key, value in expected.observation.items():
        np.testing.assert_array_equal(response.observation[key], value)
        np.testing.assert_array_equal(
            response.next_observation[key], expected.next_observation[key]
        )
        assert response.observation[key].dtype == value.dtype
    for name in ("reward", "terminated", "truncated", "episode_return", "episode_length"):
        np.testing.assert_array_equal(getattr(response, name), getattr(expected, name), name)
        assert getattr(response, name).dtype == getattr(expected, name).dtype, name
    np.testing.assert_array_equal(response.episode_started, expected.episode_started)
    for key, value in expected.next_observation.items():
        np.testing.assert_array_equal(response.next_observation[key], value, key)
    assert response.infos == expected.infos


def test_builds_by_vectorization(pair: tuple[Environment, Environment]) -> None:
    env, sync = pair
    assert isinstance(env, AsyncGymEnvironment) and isinstance(sync, GymEnvironment)
    assert env.observation_space == sync.observation_space
    assert env.action_space == sync.action_space
    assert env.num_envs == sync.num_envs == 3
    assert env.state_dict() is None


def test_answers_as_the_sync_adapter_does(pair: tuple[Environment, Environment]) -> None:
    env, sync = pair
    actions = batch_space(sync.action_space, 3)
    actions.seed(0)
    steps_before, episodes_before = env.total_steps, env.total_episodes
    sync_steps_before, sync_episodes_before = sync.total_steps, sync.total_episodes
    ended = 0
    # Several episodes, a reset in the middle of them, and an unseeded reset that continues
    # each copy's generator.
    for seed, steps in ((7, 45), (11, 23), (None, 30)):
        _assert_same(env.reset(seed), sync.reset(seed))
        np.testing.assert_array_equal(env.action_space.sample(), sync.action_space.sample())
        for _ in range(steps):
            action = actions.sample()
            response = env.step(action)
            _assert_same(response, sync.step(action))
            ended += int(response.done.sum())
    assert ended >= 6
    assert env.total_steps - steps_before == sync.total_steps - sync_steps_before == 3 * 98
    assert env.total_episodes - episodes_before == ended
    assert sync.total_episodes - sync_episodes_before == ended


def test_both_keep_their_promise_of_fresh_observations(
    pair: tuple[Environment, Environment],
) -> None:
    """Agents keep these environments' observations as their state without a copy
    (`Environment.fresh_observations`): no later step or reset may write them."""
    for env in pair:
        assert env.fresh_observations
        kept, ended = [], 0
        response = env.reset(seed=3)
        for _ in range(60):  # past several episode ends (time limits of 15 and 20)
            arrays = [*response.observation.values(), *response.next_observation.values()]
            kept.append([(array, array.copy()) for array in arrays])
            response = env.step(np.stack([env.action_space.sample() for _ in range(3)]))
            ended += int(response.done.sum())
        env.reset()
        assert ended > 0
        for arrays in kept:
            for array, values in arrays:
                np.testing.assert_array_equal(array, values)


def test_next_observation_is_the_observation_until_an_episode_ends() -> None:
    env = _params("cartpole", "async", num_envs=2, max_episode_steps=3).build()
    try:
        env.reset(seed=0)
        for _ in range(2):
            response = env.step(np.array([0, 1]))
            assert not response.done.any()
            assert not response.episode_started.any()
        response = env.step(np.array([0, 1]))
        np.testing.assert_array_equal(response.truncated, [True, True])
        np.testing.assert_array_equal(response.episode_started, [True, True])
        final, first = response.next_observation["observation"], response.observation["observation"]
        assert not np.array_equal(final, first)
        assert np.all(np.abs(first) <= 0.05)  # a fresh CartPole episode
        np.testing.assert_array_equal(response.episode_length, [3, 3])
        assert env.step(np.array([0, 1])).episode_length.tolist() == [1, 1]
    finally:
        env.close()


def test_the_info_of_an_ending_step_is_the_copys_own() -> None:
    env = _params("goals", "async").build()
    try:
        env.reset(seed=0)
        response = env.step(np.zeros((3, 1), dtype=np.float32))
        assert response.infos == [{"is_success": 0.0}] * 3
        for _ in range(14):
            response = env.step(np.zeros((3, 1), dtype=np.float32))
        assert response.truncated.all()
        # What the episode's last step said, not gymnasium's final_* bookkeeping.
        assert response.infos == [{"is_success": 0.0}] * 3
        assert all(type(info["is_success"]) is float for info in response.infos)
    finally:
        env.close()


def test_render_is_copy_zeros_frame() -> None:
    env = _params("cartpole", "async", num_envs=2, render_mode="rgb_array").build()
    sync = _params("cartpole", num_envs=2, render_mode="rgb_array").build()
    try:
        env.reset(seed=3)
        sync.reset(seed=3)
        frame = env.render()  # type: ignore[attr-defined]
        assert frame.ndim == 3
        np.testing.assert_array_equal(frame, sync.render())  # type: ignore[attr-defined]
    finally:
        env.close()
        sync.close()


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"level": "NoSuchEnvironment-v0"}, "NoSuchEnvironment-v0"),
        ({"kwargs": {"no_such_argument": 1}}, "CartPole-v1.*no_such_argument"),
    ],
)
def test_an_environment_that_cannot_be_made_raises_coach_error(
    overrides: dict[str, Any], fragment: str
) -> None:
    before = _children()
    with pytest.raises(CoachError, match=fragment):
        _params("cartpole", "async", **overrides).build()
    assert _children() <= before


def test_an_id_only_this_process_registered_fails_in_the_subprocess_as_coach_error() -> None:
    # Registered here at run time: this process makes the copy, a fresh subprocess cannot.
    level = "CoachTestRegisteredHereOnly-v0"
    gym.register(level, entry_point="gymnasium.envs.classic_control.cartpole:CartPoleEnv")
    before = _children()
    try:
        with pytest.raises(CoachError, match=rf"{level}.*in a subprocess.*doesn't exist"):
            GymEnvironmentParameters(level=level, num_envs=2, vectorization="async").build()
    finally:
        del gym.registry[level]
    assert _children() <= before


def test_close_ends_the_subprocesses() -> None:
    before = _children()
    env = _params("pendulum", "async").build()
    env.reset(seed=0)
    assert len(_children() - before) == 3
    env.close()
    assert _children() <= before


def test_a_dropped_environment_ends_its_subprocesses() -> None:
    before = _children()
    env = _params("pendulum", "async").build()
    env.reset(seed=0)
    del env
    gc.collect()
    assert _children() <= before


def test_a_preset_runs_with_async_copies(tmp_path: Path) -> None:
    preset = load_preset("CartPole_DQN")
    env_params = preset.graph_manager.parameters()["environment"]
    env_params.vectorization = "async"
    env_params.num_envs = 2
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    try:
        assert isinstance(graph.environment, AsyncGymEnvironment)
        graph.heatup(EnvironmentSteps(200))
        graph.train_and_act(EnvironmentSteps(200))
        result = graph.evaluate(EnvironmentEpisodes(2))
        assert len(result.rewards) == 2
        assert graph.env_steps >= 400
    finally:
        graph.close()
