"""Unit tests for coach/batch/recording.py: what a dataset logs of heatup's behaviour, and
the behaviour keys kept when not every episode logs them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from coach.batch.episodes import Episode
from coach.batch.recording import EpisodeRecorder, shared_behaviour
from coach.core.action_masks import ACTION_MASK
from coach.core.run_phase import RunPhase
from tests.masked_game import MaskedGame


def _heatup_probabilities(extras: dict[str, np.ndarray]) -> np.ndarray:
    """The action probabilities a recorder logs of one heatup step in each copy of a one-step
    masked game, given the action record's ``extras``; (copies, actions)."""
    game = MaskedGame(length=1)
    agent = SimpleNamespace(action_space=game.action_space, policy=SimpleNamespace())
    level: Any = SimpleNamespace(agent=agent, observers=[])
    environment: Any = SimpleNamespace(num_envs=game.num_envs, dict_observations=True)
    recorder = EpisodeRecorder(level, environment, [RunPhase.HEATUP])
    response = game.reset()
    recorder.on_reset(response, RunPhase.HEATUP)
    action = response.observation[ACTION_MASK].argmax(axis=1)  # a legal one
    info: Any = SimpleNamespace(env_action=action, extras=extras, log_prob=None)
    recorder.on_step(info, game.step(action), RunPhase.HEATUP)
    return np.stack([e.behaviour["action_probabilities"][0] for e in recorder.episodes])


def test_heatup_logs_the_probabilities_acting_gave_under_an_action_mask() -> None:
    # What `Policy.act` gives in heatup with a mask: uniform among each row's legal actions.
    legal = np.array([[1, 0, 1, 0], [0, 0, 0, 1], [0, 1, 1, 1]]) / np.array([[2], [1], [3]])
    np.testing.assert_array_equal(_heatup_probabilities({"action_probabilities": legal}), legal)


def test_heatup_without_a_mask_logs_uniform_probabilities_over_every_action() -> None:
    np.testing.assert_array_equal(_heatup_probabilities({}), np.full((3, 4), 0.25))


def test_a_behaviour_key_some_episodes_lack_is_dropped_from_every_episode() -> None:
    def episode(**behaviour: np.ndarray) -> Episode:
        steps = len(next(iter(behaviour.values()), np.zeros(2)))
        return Episode(
            observations=np.zeros((steps + 1, 1)), actions=np.zeros((steps, 1)),
            rewards=np.zeros(steps), terminations=np.zeros(steps, bool),
            truncations=np.zeros(steps, bool), behaviour=behaviour,
        )  # fmt: skip

    heatup = episode(action_log_prob=np.full(2, -1.4), other=np.ones(2))
    trained = episode(other=np.zeros(2))
    kept, dropped = shared_behaviour([heatup, trained])
    assert dropped == ["action_log_prob"]
    assert [sorted(e.behaviour) for e in kept] == [["other"], ["other"]]
    assert sorted(heatup.behaviour) == ["action_log_prob", "other"]  # the recorder's own kept
    assert shared_behaviour([trained, trained]) == ([trained, trained], [])
