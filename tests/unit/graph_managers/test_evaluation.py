"""Unit tests for coach/graph_managers/evaluation.py: collecting an evaluation's episodes."""

from __future__ import annotations

import numpy as np

from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.core.types import EnvResponse
from coach.graph_managers.evaluation import EvaluationEpisodes, EvaluationResult


def _response(
    ended: list[bool], returns: list[float], infos: list[dict[str, float]]
) -> EnvResponse:
    done = np.array(ended)
    zeros = np.zeros(len(ended))
    observation = {"observation": zeros}
    return EnvResponse(
        observation, zeros, done, np.zeros_like(done), {"observation": zeros + 1},
        np.array(returns), np.full(len(ended), 2), infos=infos,
    )  # fmt: skip


def test_an_episode_budget_is_split_evenly_over_the_copies() -> None:
    episodes = EvaluationEpisodes(EnvironmentEpisodes(5), num_envs=3)
    assert episodes.quota == [1, 2, 2]
    # Copy 0 ends two episodes before the others end one: its second one is not counted.
    assert not episodes.record(_response([True, False, False], [1.0, 0, 0], [{}, {}, {}]))
    assert not episodes.record(_response([True, True, True], [2.0, 3.0, 4.0], [{}, {}, {}]))
    assert episodes.record(_response([False, True, True], [0, 5.0, 6.0], [{}, {}, {}]))
    assert episodes.rewards == [1.0, 3.0, 4.0, 5.0, 6.0]
    assert episodes.lengths == [2] * 5


def test_a_step_budget_counts_every_finished_episode_and_never_ends_by_itself() -> None:
    episodes = EvaluationEpisodes(EnvironmentSteps(5), num_envs=2)
    for _ in range(3):
        assert not episodes.record(_response([True, True], [1.0, 2.0], [{}, {}]))
    assert episodes.rewards == [1.0, 2.0] * 3


def test_evaluations_of_a_goal_based_environment_count_successes() -> None:
    episodes = EvaluationEpisodes(EnvironmentEpisodes(3), num_envs=2)
    both = [True, True]
    assert not episodes.record(_response(both, [5, 5], [{"is_success": 1.0}, {"is_success": 0.0}]))
    assert episodes.record(_response(both, [5, 5], [{"is_success": True}, {"is_success": 1.0}]))
    # Copy 0 runs 1 episode of the 3 and copy 1 runs 2: the third report of copy 0 is left.
    assert episodes.successes == [1.0, 0.0, 1.0]
    assert EvaluationEpisodes(EnvironmentSteps(5), 1).successes == []


def test_mean_reward_and_success_rate_of_a_result() -> None:
    result = EvaluationResult(0, [0.0, -1.0], [1, 2], [1.0, 0.0])
    assert result.mean_reward == -0.5
    assert result.success_rate == 0.5
    assert np.isnan(EvaluationResult(0, [0.0], [1]).success_rate)
    assert np.isnan(EvaluationResult(0, [], []).mean_reward)
