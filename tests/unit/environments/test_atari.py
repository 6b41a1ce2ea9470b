"""Unit tests for coach/environments/atari.py, on real ALE games."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from coach.environments.atari import AtariEnvironmentParameters, AtariGame
from coach.environments.gym_environment import GymEnvironment
from coach.environments.levels import resolve_level
from coach.errors import CoachError


def _game(**overrides: object) -> AtariGame:
    env = AtariEnvironmentParameters(**overrides).make_env()  # type: ignore[arg-type]
    assert isinstance(env, AtariGame)
    return env


def test_a_step_is_frame_skip_frames_max_pooled_over_the_last_two() -> None:
    game = _game(level="breakout", noop_max=0, repeat_action_probability=0.0)
    reference = gym.make(
        resolve_level("atari", "breakout"),
        frameskip=1,
        repeat_action_probability=0.0,
        obs_type="grayscale",
    )
    game.reset(seed=3)
    reference.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        action = int(rng.integers(0, 4))
        total, frames = 0.0, []
        for _ in range(4):
            frame, reward, *_ = reference.step(action)
            total += float(reward)
            frames.append(frame)
        observation, reward, terminated, truncated, _ = game.step(action)
        np.testing.assert_array_equal(observation, np.maximum(frames[-2], frames[-1]))
        assert reward == total and not terminated and not truncated
    assert game.ale.getEpisodeFrameNumber() == 160


def test_noop_starts_take_between_one_and_noop_max_frames() -> None:
    game = _game(level="pong", noop_max=30)
    counts = set()
    for seed in range(8):
        game.reset(seed=seed)
        counts.add(game.ale.getEpisodeFrameNumber())
    assert counts <= set(range(1, 31)) and len(counts) > 3


@pytest.mark.parametrize(("full", "actions"), [(False, 4), (True, 18)])
def test_minimal_or_full_action_set(full: bool, actions: int) -> None:
    game = _game(level="breakout", full_action_space=full)
    assert game.action_space == gym.spaces.Discrete(actions)


def test_sticky_actions_and_observation_types_reach_ale() -> None:
    game = _game(level="pong", repeat_action_probability=0.25, obs_type="rgb")
    assert game.ale.getFloat("repeat_action_probability") == pytest.approx(0.25)
    observation, _ = game.reset(seed=0)
    assert observation.shape == (210, 160, 3) and game.observation_space.shape == (210, 160, 3)
    assert _game(level="pong").reset(seed=0)[0].shape == (210, 160)


def test_episodes_are_truncated_after_max_episode_frames() -> None:
    game = _game(level="pong", noop_max=0, max_episode_frames=100)
    game.reset(seed=0)
    steps = 0
    for steps in range(1, 30):  # noqa: B007 - the count is the point
        *_, terminated, truncated, _ = game.step(0)
        if truncated:
            break
    assert truncated and not terminated and steps == 25


def test_terminal_on_life_loss_ends_the_episode_and_the_game_goes_on() -> None:
    game = _game(level="breakout", terminal_on_life_loss=True, repeat_action_probability=0.0)
    game.reset(seed=0)
    lives = game.ale.lives()
    for _ in range(2000):
        *_, terminated, _, info = game.step(1)  # FIRE, then the ball is missed
        if terminated:
            break
    assert terminated and info["lives"] == lives - 1 and not game.game_over
    frame_number = game.ale.getEpisodeFrameNumber()
    game.reset()
    assert game.ale.lives() == lives - 1  # the same game, one life fewer
    assert game.ale.getEpisodeFrameNumber() > frame_number


def test_without_terminal_on_life_loss_an_episode_is_a_whole_game() -> None:
    game = _game(level="breakout", repeat_action_probability=0.0)
    game.reset(seed=0)
    for _ in range(5000):
        *_, terminated, _, info = game.step(1)
        if terminated:
            break
    assert terminated and info["lives"] == 0 and game.game_over
    game.reset()
    assert game.ale.lives() == 5


def test_a_batch_of_games_saves_and_restores_its_episodes() -> None:
    params = AtariEnvironmentParameters(
        level="pong", num_envs=2, repeat_action_probability=0.0, terminal_on_life_loss=True
    )
    original, copy = params.build(), params.build()
    assert isinstance(original, GymEnvironment)  # the sync adapter: its episodes can be saved
    original.reset(seed=1)
    copy.reset(seed=2)
    for _ in range(30):
        original.step(np.array([2, 3]))
    state = original.state_dict()
    assert state is not None
    copy.load_state_dict(state)
    for _ in range(30):
        a, b = original.step(np.array([3, 2])), copy.step(np.array([3, 2]))
        np.testing.assert_array_equal(a.observation["observation"], b.observation["observation"])
        np.testing.assert_array_equal(a.reward, b.reward)
    assert [e.lives for e in copy.envs] == [e.lives for e in original.envs]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"obs_type": "ram"}, "obs_type"), ({"frame_skip": 0}, "frame_skip"),
     ({"level": "breakot"}, "did you mean breakout")],
)  # fmt: skip
def test_wrong_settings_are_refused(changes: dict[str, object], message: str) -> None:
    with pytest.raises(CoachError, match=message):
        AtariEnvironmentParameters(**changes).make_env()  # type: ignore[arg-type]


def test_max_episode_steps_is_refused_where_an_atari_game_counts_frames() -> None:
    from coach.environments.atari import AtariEnvironmentParameters
    from coach.validation import InvalidParameter

    params = AtariEnvironmentParameters(level="pong", max_episode_steps=1000)
    with pytest.raises(InvalidParameter, match="max_episode_frames"):
        params.validate()


@pytest.mark.parametrize("terminal_on_life_loss", [False, True])
def test_a_reset_in_the_middle_of_a_life_starts_a_new_game(terminal_on_life_loss: bool) -> None:
    # An evaluation starts fresh episodes wherever training left the games; only a reset
    # after a lost life's episode goes on with the game.
    game = _game(
        level="breakout",
        terminal_on_life_loss=terminal_on_life_loss,
        repeat_action_probability=0.0,
        noop_max=0,
    )
    game.reset(seed=0)
    for _ in range(2000):
        *_, terminated, _, info = game.step(1)
        if terminated or info["lives"] < 5:
            break
    assert info["lives"] == 4 and not game.game_over
    for _ in range(10):
        game.step(0)
    game.reset()
    assert game.ale.lives() == 5 and game.ale.getEpisodeFrameNumber() == 0
