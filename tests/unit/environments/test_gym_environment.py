"""Unit tests for coach/environments/gym_environment.py: the batched gymnasium adapter."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from toy_envs import CountingEnv

from coach.core.types import EnvResponse
from coach.environments.gym_environment import GymEnvironment
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError

CARTPOLE_THETA_LIMIT = 12 * 2 * np.pi / 360
CARTPOLE_X_LIMIT = 2.4


def _gym(level: str, num_envs: int, **kwargs: object) -> GymEnvironment:
    params = GymEnvironmentParameters(level=level, num_envs=num_envs, **kwargs)  # type: ignore[arg-type]
    env = params.build()
    assert isinstance(env, GymEnvironment)
    return env


def _cartpole(num_envs: int, **kwargs: object) -> GymEnvironment:
    return _gym("CartPole-v1", num_envs, **kwargs)


def _counting(num_envs: int, **kwargs: object) -> GymEnvironment:
    return _gym("toy_envs:CountingEnv", num_envs, **kwargs)


# -- CartPole ---------------------------------------------------------------------------------


@pytest.mark.parametrize("num_envs", [1, 3])
def test_cartpole_spaces_and_reset(num_envs: int) -> None:
    env = _cartpole(num_envs)
    assert isinstance(env.observation_space, spaces.Dict)
    assert list(env.observation_space.spaces) == ["observation"]
    assert env.observation_space["observation"].shape == (4,)
    assert env.action_space == spaces.Discrete(2)
    assert env.num_envs == num_envs

    response = env.reset(seed=0)

    assert list(response.observation) == ["observation"]
    assert response.observation["observation"].shape == (num_envs, 4)
    assert response.observation["observation"].dtype == np.float32
    np.testing.assert_array_equal(response.episode_started, np.ones(num_envs, dtype=bool))
    np.testing.assert_array_equal(response.reward, np.zeros(num_envs))
    np.testing.assert_array_equal(response.done, np.zeros(num_envs, dtype=bool))
    np.testing.assert_array_equal(response.episode_length, np.zeros(num_envs))
    assert len(response.infos) == num_envs


@pytest.mark.parametrize("num_envs", [1, 3])
def test_reset_with_the_same_seed_is_reproducible(num_envs: int) -> None:
    first = _cartpole(num_envs).reset(seed=42).observation["observation"]
    second = _cartpole(num_envs).reset(seed=42).observation["observation"]
    other = _cartpole(num_envs).reset(seed=43).observation["observation"]
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)


def test_copy_i_is_seeded_seed_plus_i() -> None:
    batched = _cartpole(3).reset(seed=10).observation["observation"]
    # The rows differ from each other...
    assert not np.array_equal(batched[0], batched[1])
    assert not np.array_equal(batched[1], batched[2])
    # ...and each is what a single copy seeded with seed + i starts from.
    for i in range(3):
        single = _cartpole(1).reset(seed=10 + i).observation["observation"]
        np.testing.assert_array_equal(batched[i], single[0])


@pytest.mark.parametrize("num_envs", [1, 3])
def test_step_returns_arrays_of_shape_b(num_envs: int) -> None:
    env = _cartpole(num_envs)
    env.reset(seed=0)
    response = env.step(np.zeros(num_envs, dtype=np.int64))
    assert isinstance(response, EnvResponse)
    assert response.observation["observation"].shape == (num_envs, 4)
    for name in ("reward", "terminated", "truncated", "episode_return", "episode_length"):
        assert getattr(response, name).shape == (num_envs,), name
    assert response.terminated.dtype == np.bool_
    assert response.truncated.dtype == np.bool_
    np.testing.assert_array_equal(response.reward, np.ones(num_envs))
    np.testing.assert_array_equal(response.episode_length, np.ones(num_envs))
    # Nothing ended, so no episode starts.
    assert not response.episode_started.any()
    assert env.total_steps == num_envs


def test_cartpole_episode_end_single_env() -> None:
    env = _cartpole(1)
    env.reset(seed=0)
    rewards: list[float] = []
    for _ in range(200):
        response = env.step(np.array([0]))
        rewards.append(float(response.reward[0]))
        if response.done[0]:
            break
    else:
        pytest.fail("pushing left for 200 steps never ended the episode")

    assert response.terminated[0] and not response.truncated[0]
    final = response.next_observation["observation"][0]
    first = response.observation["observation"][0]
    np.testing.assert_array_equal(response.episode_started, [True])
    assert not np.array_equal(final, first)
    # The finished episode's last observation is out of bounds, the new one a fresh start.
    assert abs(final[2]) > CARTPOLE_THETA_LIMIT or abs(final[0]) > CARTPOLE_X_LIMIT
    assert np.all(np.abs(first) <= 0.05)
    assert response.episode_length[0] == len(rewards)
    assert response.episode_return[0] == pytest.approx(sum(rewards))
    assert env.total_steps == len(rewards)
    assert env.total_episodes == 1

    after = env.step(np.array([1]))
    assert after.episode_length[0] == 1
    assert after.episode_return[0] == pytest.approx(after.reward[0])
    assert env.total_steps == len(rewards) + 1
    assert env.total_episodes == 1


def test_cartpole_episode_end_in_one_of_three_envs() -> None:
    env = _cartpole(3)
    env.reset(seed=0)
    lengths = np.zeros(3, dtype=np.int64)
    for _ in range(200):
        previous = env.total_steps
        response = env.step(np.zeros(3, dtype=np.int64))
        assert env.total_steps == previous + 3
        lengths += 1
        if response.done.any():
            break
    ended = response.done
    assert 0 < ended.sum() < 3, "the seeds were chosen so that the copies end at different steps"
    obs = response.observation["observation"]
    final = response.next_observation["observation"]
    for i in range(3):
        if ended[i]:
            assert not np.array_equal(obs[i], final[i])
            assert np.all(np.abs(obs[i]) <= 0.05)
        else:
            np.testing.assert_array_equal(obs[i], final[i])
    np.testing.assert_array_equal(response.episode_length, lengths)
    np.testing.assert_allclose(response.episode_return, lengths.astype(float))
    assert env.total_episodes == int(ended.sum())


def test_cartpole_time_limit_truncates_without_terminating() -> None:
    env = _cartpole(1, max_episode_steps=5)
    env.reset(seed=0)
    for t in range(4):
        response = env.step(np.array([t % 2]))
        assert not response.done[0]
    response = env.step(np.array([4 % 2]))
    assert response.truncated[0]
    assert not response.terminated[0]
    assert response.episode_length[0] == 5
    assert response.episode_return[0] == pytest.approx(5.0)
    assert env.total_episodes == 1


# -- module:Class entry points, with the counting toy environment ------------------------------


def test_entry_point_builds_the_class_with_kwargs() -> None:
    env = _counting(2, kwargs={"reward_scale": 2.0})
    assert all(isinstance(e, CountingEnv) for e in env.envs)
    assert [e.reward_scale for e in env.envs] == [2.0, 2.0]
    assert env.envs[0] is not env.envs[1]
    response = env.reset()
    np.testing.assert_array_equal(response.observation["observation"], [[0, 0], [0, 0]])
    response = env.step(np.array([0, 0]))
    np.testing.assert_array_equal(response.reward, [2.0, 2.0])


def test_any_maker_of_copies_will_do() -> None:
    made: list[CountingEnv] = []

    def make() -> CountingEnv:
        made.append(CountingEnv(reward_scale=2.0))
        return made[-1]

    env = GymEnvironment(make, num_envs=2, observation_key="counter")
    assert env.envs == made and len(made) == 2
    response = env.reset(seed=0)
    np.testing.assert_array_equal(response.observation["counter"], [[0, 0], [0, 0]])
    np.testing.assert_array_equal(env.step(np.array([0, 0])).reward, [2.0, 2.0])


def test_reset_seeds_copy_i_with_seed_plus_i_and_autoreset_unseeded() -> None:
    env = _counting(3)
    env.reset(seed=7)
    assert [e.reset_seeds for e in env.envs] == [[7], [8], [9]]
    env.step(np.array([1, 0, 0]))
    assert env.envs[0].reset_seeds == [7, None]
    assert env.envs[1].reset_seeds == [8]


def test_an_ended_row_gets_the_new_observation_and_keeps_the_final_one() -> None:
    env = _counting(3)
    env.reset(seed=0)
    env.step(np.array([0, 0, 0]))

    response = env.step(np.array([0, 1, 0]))

    np.testing.assert_array_equal(response.terminated, [False, True, False])
    np.testing.assert_array_equal(response.truncated, [False, False, False])
    np.testing.assert_array_equal(response.observation["observation"], [[0, 2], [1, 0], [0, 2]])
    np.testing.assert_array_equal(
        response.next_observation["observation"], [[0, 2], [0, 2], [0, 2]]
    )
    np.testing.assert_array_equal(response.reward, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(response.episode_return, [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(response.episode_length, [2, 2, 2])
    assert [info["t"] for info in response.infos] == [2, 2, 2]
    assert env.total_steps == 6
    assert env.total_episodes == 1

    # The ended row starts counting again; the others go on.
    response = env.step(np.array([0, 0, 0]))
    np.testing.assert_array_equal(response.episode_length, [3, 1, 3])
    np.testing.assert_array_equal(response.episode_return, [6.0, 1.0, 6.0])
    np.testing.assert_array_equal(response.observation["observation"], [[0, 3], [1, 1], [0, 3]])
    assert not response.episode_started.any()


def test_entry_point_with_max_episode_steps_truncates() -> None:
    env = _counting(2, max_episode_steps=2)
    env.reset(seed=0)
    response = env.step(np.array([0, 0]))
    assert not response.done.any()
    # Env 1 reaches its terminal action on the last allowed step: both flags are kept apart.
    response = env.step(np.array([0, 1]))
    np.testing.assert_array_equal(response.truncated, [True, True])
    np.testing.assert_array_equal(response.terminated, [False, True])
    np.testing.assert_array_equal(response.next_observation["observation"], [[0, 2], [0, 2]])
    np.testing.assert_array_equal(response.observation["observation"], [[1, 0], [1, 0]])
    assert env.total_episodes == 2


def test_observation_key_names_a_plain_observation() -> None:
    env = _counting(1, observation_key="state")
    assert list(env.observation_space.spaces) == ["state"]
    assert list(env.reset().observation) == ["state"]
    assert list(env.step(np.array([1])).next_observation) == ["state"]


def test_dict_observations_keep_their_keys() -> None:
    env = _gym("toy_envs:DictObservationEnv", 2)
    assert set(env.observation_space.spaces) == {"observation", "desired_goal"}
    assert env.observation_space["observation"].shape == (3,)
    response = env.reset(seed=0)
    assert set(response.observation) == {"observation", "desired_goal"}
    assert response.observation["observation"].shape == (2, 3)
    assert response.observation["desired_goal"].shape == (2, 2)
    response = env.step(np.array([1, 2]))
    np.testing.assert_array_equal(response.observation["observation"], np.ones((2, 3)))
    np.testing.assert_array_equal(response.observation["desired_goal"], [[1, -1], [1, -1]])
    np.testing.assert_array_equal(response.reward, [1.0, 2.0])


def test_num_envs_below_one_raises() -> None:
    with pytest.raises(CoachError, match="num_envs"):
        _cartpole(0)
