"""BitFlipEnv: the API checks, a scripted episode, HER's compute_reward, seeding, rendering."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import coach_environments
from coach_environments import BitFlipEnv


def _bits(text: str) -> np.ndarray:
    return np.array([int(c) for c in text], dtype=np.int8)


def _posed(bits: str, goal: str, **kwargs) -> BitFlipEnv:
    """An env reset once, then put at ``bits`` with goal ``goal`` (strings of 0/1)."""
    env = BitFlipEnv(n_bits=len(bits), **kwargs)
    env.reset(seed=0)
    env.set_state({"bits": _bits(bits), "goal": _bits(goal), "steps": 0})
    return env


# (Not n_bits=1: its default one-step episodes trip check_env's "truncates after 1 step".)
@pytest.mark.parametrize("kwargs", [{}, {"n_bits": 2}, {"n_bits": 5, "max_steps": 2}])
def test_check_env_passes_on_the_registered_id(kwargs):
    env = gym.make("coach/BitFlip-v0", **kwargs)
    with warnings.catch_warnings():
        # check_env reports most problems as warnings only.
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    assert isinstance(env.unwrapped, BitFlipEnv)
    assert env.spec is not None and env.spec.max_episode_steps is None  # no TimeLimit


def test_registration_survives_a_second_import():
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium warns when an id is registered again
        importlib.reload(coach_environments)
    assert "coach/BitFlip-v0" in gym.registry


def test_spaces():
    env = BitFlipEnv(n_bits=7)
    assert env.action_space == spaces.Discrete(7)
    assert isinstance(env.observation_space, spaces.Dict)
    assert set(env.observation_space.spaces) == {"observation", "achieved_goal", "desired_goal"}
    for space in env.observation_space.spaces.values():
        assert space == spaces.MultiBinary(7)
    assert env.max_steps == 7
    assert BitFlipEnv().n_bits == 20


def test_reset_observation_and_goal_differs_from_start():
    env = BitFlipEnv(n_bits=1)
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        np.testing.assert_array_equal(obs["achieved_goal"], obs["observation"])
        assert not np.array_equal(obs["observation"], obs["desired_goal"])


def test_flipping_exactly_the_differing_bits_reaches_the_goal():
    env = BitFlipEnv(n_bits=12, max_steps=24)
    obs, _ = env.reset(seed=5)
    differing = np.flatnonzero(obs["observation"] != obs["desired_goal"])
    assert len(differing) >= 2
    for i, bit in enumerate(differing):
        obs, reward, terminated, truncated, info = env.step(int(bit))
        last = i == len(differing) - 1
        assert reward == (0.0 if last else -1.0)
        assert terminated is last
        assert not truncated
        assert info["is_success"] == float(last)
    np.testing.assert_array_equal(obs["observation"], obs["desired_goal"])
    np.testing.assert_array_equal(obs["achieved_goal"], obs["desired_goal"])


def test_a_wrong_flip_costs_and_the_episode_truncates_after_max_steps():
    env = _posed("0000", "0011", max_steps=3)
    for step in range(1, 4):
        obs, reward, terminated, truncated, info = env.step(0)  # bit 0 already matched
        assert reward == -1.0
        assert not terminated
        assert truncated is (step == 3)
        assert info["is_success"] == 0.0
    np.testing.assert_array_equal(obs["observation"], [1, 0, 0, 0])


def test_max_steps_defaults_to_n_bits():
    env = _posed("00000", "00011")
    truncations = [env.step(0)[3] for _ in range(5)]
    assert truncations == [False] * 4 + [True]


def test_rewards_are_parametrizable():
    env = _posed("01", "11", goal_reached_reward=1.0, goal_not_reached_penalty=0.0)
    assert env.step(1)[1] == 0.0
    assert env.step(1)[1] == 0.0
    _, reward, terminated, _, _ = env.step(0)
    assert (reward, terminated) == (1.0, True)


def test_compute_reward_agrees_with_the_step_rewards_on_a_batch():
    env = BitFlipEnv(n_bits=3, max_steps=50)
    rng = np.random.default_rng(0)
    achieved, desired, rewards = [], [], []
    for episode in range(10):
        env.reset(seed=episode)
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(int(rng.integers(3)))
            achieved.append(obs["achieved_goal"])
            desired.append(obs["desired_goal"])
            rewards.append(reward)
            done = terminated or truncated
    batch = env.compute_reward(np.stack(achieved), np.stack(desired), None)
    assert batch.shape == (len(rewards),)
    np.testing.assert_array_equal(batch, rewards)
    assert {0.0, -1.0} <= set(rewards)  # both outcomes were checked
    # HER's relabelling: a goal equal to what was achieved always pays the goal reward.
    np.testing.assert_array_equal(env.compute_reward(np.stack(achieved), np.stack(achieved), {}), 0)


def test_seeding_is_deterministic():
    def trajectory(seed: int) -> list[np.ndarray]:
        env = BitFlipEnv(n_bits=20)
        obs, _ = env.reset(seed=seed)
        out = [obs["observation"], obs["desired_goal"]]
        for action in (3, 7, 3, 11):
            out.append(env.step(action)[0]["observation"])
        return out

    for a, b in zip(trajectory(42), trajectory(42), strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(trajectory(42)[0], trajectory(43)[0])


def test_returned_observations_are_never_mutated():
    env = BitFlipEnv(n_bits=6)
    first, _ = env.reset(seed=1)
    kept = {key: value.copy() for key, value in first.items()}
    second = env.step(0)[0]
    env.step(1)
    for key in kept:
        np.testing.assert_array_equal(first[key], kept[key])
    assert not np.shares_memory(second["observation"], second["achieved_goal"])


def test_get_state_and_set_state_continue_the_episode():
    env = BitFlipEnv(n_bits=8)
    env.reset(seed=3)
    env.step(2)
    saved = env.get_state()
    after = env.step(5)
    env.step(6)
    env.set_state(saved)
    again = env.step(5)
    np.testing.assert_array_equal(after[0]["observation"], again[0]["observation"])
    assert after[1:4] == again[1:4]


def test_render_modes():
    assert set(BitFlipEnv.metadata["render_modes"]) == {"ansi", "rgb_array"}
    text = _posed("0110", "0111", render_mode="ansi").render()
    assert isinstance(text, str) and text.startswith("0110") and "0111" in text

    image = _posed("0110", "0111", render_mode="rgb_array").render()
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8
    assert image.shape[2] == 3 and image.shape[1] == 4 * image.shape[0] // 2
    cell = image.shape[0] // 2
    centre = cell // 2
    assert (image[centre, centre] == 0).all()  # bit 0 is 0: black
    assert (image[centre, cell + centre] == 255).all()  # bit 1 is 1: white
    assert image[cell + centre, centre, 1] > image[cell + centre, centre, 0]  # match: green
    assert image[cell + centre, 3 * cell + centre, 0] > 0  # mismatch: red
    assert image[cell + centre, 3 * cell + centre, 1] == 0


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="n_bits"):
        BitFlipEnv(n_bits=0)
    with pytest.raises(ValueError, match="max_steps"):
        BitFlipEnv(max_steps=0)
    with pytest.raises(ValueError, match="render_mode"):
        BitFlipEnv(render_mode="human")
    env = BitFlipEnv(n_bits=4)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(4)
