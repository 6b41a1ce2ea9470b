"""ExplorationChainEnv: the API checks, the rewards at both ends, truncation, encodings."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import coach_environments  # noqa: F401  (registers the ids)
from coach_environments import ChainObservation, ExplorationChainEnv

LEFT, RIGHT = ExplorationChainEnv.LEFT, ExplorationChainEnv.RIGHT


@pytest.mark.parametrize("observation_type", list(ChainObservation))
def test_check_env_passes_on_the_registered_id(observation_type):
    env = gym.make("coach/ExplorationChain-v0", observation_type=observation_type)
    with warnings.catch_warnings():
        # check_env reports most problems as warnings only.
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    assert isinstance(env.unwrapped, ExplorationChainEnv)
    assert env.spec is not None and env.spec.max_episode_steps is None  # no TimeLimit


def test_coach_defaults_and_spaces():
    env = ExplorationChainEnv()
    assert (env.chain_length, env.start_state, env.max_steps) == (16, 1, 16 + 7)
    assert env.observation_type is ChainObservation.THERMOMETER
    assert (env.left_state_reward, env.right_state_reward) == (1 / 1000, 1.0)
    assert env.action_space == spaces.Discrete(2)
    assert env.observation_space == spaces.Box(0.0, 1.0, (16,), np.float32)
    index = ExplorationChainEnv(chain_length=10, observation_type="state_index")
    assert index.observation_space == spaces.Box(0.0, 9.0, (1,), np.float32)


def test_walking_right_reaches_the_large_reward_and_stays_there():
    env = ExplorationChainEnv(chain_length=6, start_state=1, max_steps=20)
    env.reset(seed=0)
    rewards = [env.step(RIGHT)[1] for _ in range(4)]  # states 2, 3, 4, 5
    assert rewards == [0.0, 0.0, 0.0, 1.0]
    _, reward, terminated, truncated, info = env.step(RIGHT)  # pushing against the end
    assert (reward, terminated, truncated, info["state"]) == (1.0, False, False, 5)


def test_success_is_reaching_the_last_state_and_lasts_the_episode():
    env = ExplorationChainEnv(chain_length=5, start_state=1, max_steps=10)
    assert env.reset(seed=0)[1]["is_success"] == 0.0
    successes = [env.step(action)[4]["is_success"] for action in (RIGHT, RIGHT, RIGHT, LEFT, LEFT)]
    assert successes == [0.0, 0.0, 1.0, 1.0, 1.0]  # states 2, 3, 4 (the last), 3, 2
    assert env.reset()[1]["is_success"] == 0.0  # a new episode starts without it


def test_walking_left_reaches_the_small_reward_and_stays_there():
    env = ExplorationChainEnv(chain_length=6, start_state=2)
    env.reset(seed=0)
    assert env.step(LEFT)[1] == 0.0  # state 1
    for _ in range(2):  # state 0, then pushing against the end
        _, reward, terminated, _, info = env.step(LEFT)
        assert (reward, terminated, info["state"]) == (1 / 1000, False, 0)


def test_rewards_are_parametrizable():
    env = ExplorationChainEnv(chain_length=4, start_state=1, left_state_reward=-2.0)
    env.reset()
    assert env.step(LEFT)[1] == -2.0


def test_episodes_are_truncated_after_max_steps_and_never_terminate():
    env = ExplorationChainEnv(chain_length=5)
    for _ in range(2):  # the counter restarts with reset
        env.reset(seed=1)
        ends = [env.step(RIGHT)[2:4] for _ in range(5 + 7)]
        assert ends == [(False, False)] * 11 + [(False, True)]


@pytest.mark.parametrize(
    ("observation_type", "expected"),
    [
        (ChainObservation.ONE_HOT, [0, 0, 0, 1, 0]),
        (ChainObservation.THERMOMETER, [1, 1, 1, 1, 0]),
        (ChainObservation.STATE_INDEX, [3]),
        ("one_hot", [0, 0, 0, 1, 0]),
        ("thermometer", [1, 1, 1, 1, 0]),
        (ChainObservation.TIMED_ONE_HOT, np.eye(5 * 13)[2 * 5 + 3]),
    ],
)
def test_observation_encodings(observation_type, expected):
    env = ExplorationChainEnv(chain_length=5, start_state=1, observation_type=observation_type)
    obs, _ = env.reset(seed=0)
    env.step(RIGHT)
    obs = env.step(RIGHT)[0]  # state 3
    assert obs.dtype == np.float32
    np.testing.assert_array_equal(obs, np.array(expected, dtype=np.float32))
    assert obs in env.observation_space


def test_the_start_encodes_start_state():
    env = ExplorationChainEnv(chain_length=8, start_state=5, observation_type="one_hot")
    obs, info = env.reset(seed=0)
    assert np.flatnonzero(obs).tolist() == [5] and info["state"] == 5


def test_seeded_resets_and_steps_are_deterministic():
    def trajectory() -> list[tuple]:
        env = ExplorationChainEnv(chain_length=6)
        obs, _ = env.reset(seed=3)
        steps = [env.step(a) for a in (RIGHT, RIGHT, LEFT, RIGHT, LEFT, LEFT, LEFT)]
        return [obs.tolist()] + [(o.tolist(), r, te, tr) for o, r, te, tr, _ in steps]

    assert trajectory() == trajectory()


def test_returned_observations_are_never_mutated():
    env = ExplorationChainEnv(chain_length=6, observation_type="one_hot")
    first, _ = env.reset(seed=0)
    kept = first.copy()
    env.step(RIGHT)
    env.step(RIGHT)
    np.testing.assert_array_equal(first, kept)


def test_get_state_and_set_state_continue_the_episode():
    env = ExplorationChainEnv(chain_length=5, max_steps=6)
    env.reset(seed=0)
    for _ in range(3):
        env.step(RIGHT)  # states 2, 3, 4: the last, a success
    saved = env.get_state()
    after = [env.step(LEFT)[1:5] for _ in range(3)]  # truncated at the third
    env.reset(seed=0)
    env.set_state(saved)
    assert [env.step(LEFT)[1:5] for _ in range(3)] == after
    assert after[-1][2] and after[-1][3]["is_success"] == 1.0


def test_render_modes():
    env = ExplorationChainEnv(chain_length=5, render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == ".@..."
    env.step(RIGHT)
    assert env.render() == "..@.."

    env = ExplorationChainEnv(chain_length=5, start_state=2, render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3
    cell = image.shape[0]
    assert image.shape == (cell, 5 * cell, 3)
    centres = image[cell // 2, cell // 2 :: cell]
    assert (centres[2] == 255).all()  # the agent
    assert (centres[1] == 0).all() and (centres[3] == 0).all()
    assert centres[4].sum() > centres[0].sum() > 0  # the large reward drawn brighter


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="chain_length"):
        ExplorationChainEnv(chain_length=3)
    with pytest.raises(ValueError, match="start_state"):
        ExplorationChainEnv(chain_length=4, start_state=4)
    with pytest.raises(ValueError, match="max_steps"):
        ExplorationChainEnv(max_steps=0)
    with pytest.raises(ValueError, match="thermometer"):
        ExplorationChainEnv(observation_type="binary")
    env = ExplorationChainEnv()
    env.reset()
    with pytest.raises(ValueError, match="action"):
        env.step(2)


def test_a_mapped_chain_moves_right_by_a_fixed_random_action_per_state():
    env = ExplorationChainEnv(chain_length=12, start_state=0, max_steps=40, action_mapping_seed=3)
    again = ExplorationChainEnv(chain_length=12, action_mapping_seed=3)
    other = ExplorationChainEnv(chain_length=12, action_mapping_seed=4)
    assert (env.right_action == again.right_action).all()  # the seed names the chain
    assert (env.right_action != other.right_action).any()
    assert 0 < env.right_action.sum() < 12  # both actions move right somewhere
    env.reset(seed=0)
    for state in range(11):  # the mapped right action walks the whole chain
        assert env.step(env.right_action[state])[4]["state"] == state + 1
    assert env.step(1 - env.right_action[11])[4]["state"] == 10  # the other one goes back
    repeated = ExplorationChainEnv(chain_length=12, start_state=0, action_mapping_seed=3)
    for action in (0, 1):  # no single action walks the chain
        repeated.reset(seed=0)
        states = [repeated.step(action)[4]["state"] for _ in range(19)]
        assert max(states) < 11


def test_the_timed_one_hot_marks_the_step_and_the_state():
    env = ExplorationChainEnv(
        chain_length=5, start_state=1, max_steps=4, observation_type="timed_one_hot"
    )
    assert env.observation_space == spaces.Box(0.0, 1.0, (5 * 5,), np.float32)
    obs, _ = env.reset(seed=0)
    seen = [np.flatnonzero(obs).tolist()]
    for action in (RIGHT, RIGHT, LEFT):  # states 2, 3, 2 at steps 1, 2, 3
        obs = env.step(action)[0]
        assert obs in env.observation_space and obs.sum() == 1.0
        seen.append(np.flatnonzero(obs).tolist())
    assert seen == [[0 * 5 + 1], [1 * 5 + 2], [2 * 5 + 3], [3 * 5 + 2]]


def test_a_timed_chain_terminates_at_its_time_limit_instead_of_truncating():
    env = ExplorationChainEnv(chain_length=5, max_steps=6, observation_type="timed_one_hot")
    env.reset(seed=0)
    ends = [env.step(LEFT)[2:4] for _ in range(6)]
    assert ends == [(False, False)] * 5 + [(True, False)]
    saved_mid_episode = ExplorationChainEnv(
        chain_length=5, max_steps=6, observation_type="timed_one_hot"
    )
    saved_mid_episode.reset(seed=0)
    saved_mid_episode.step(RIGHT)
    state = saved_mid_episode.get_state()
    env.reset(seed=0)
    env.set_state(state)
    np.testing.assert_array_equal(env.step(RIGHT)[0], saved_mid_episode.step(RIGHT)[0])
