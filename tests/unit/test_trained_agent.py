"""Unit tests for coach/trained_agent.py: `load_agent` on real short runs (DQN on CartPole,
an LSTM Clipped PPO on CartPole without velocities in 8 copies, TD3 on Pendulum) acts as the
run's own evaluation acts. The reference is the restored level stepping its environment in
evaluation, the agent observing each response itself; fed the same observations and episode
starts, `TrainedAgent.act` answers the same actions, a hidden state per copy and all."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import coach
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.export.files import restore_level
from coach.trained_agent import TrainedAgent, load_agent
from tests.integration.coach_cli import TINY, experiment
from tests.integration.coach_cli import coach as run_coach

pytestmark = pytest.mark.xdist_group("trained_agent")  # the runs are made once


def _steps(name: str, steps: int) -> list[str]:
    return ["-cp", f"schedule.{name}=EnvironmentSteps({steps})"]


RUNS = {
    "CartPole_DQN": [
        *_steps("heatup_steps", 300), *_steps("improve_steps", 600),
        *_steps("steps_between_evaluation_periods", 100_000),
        "-cp", "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(64)",
        "-cp", "agent.algorithm.num_consecutive_training_steps=16",
    ],
    "CartPoleNoVel_RecurrentPPO": [
        *_steps("improve_steps", 512), *_steps("steps_between_evaluation_periods", 100_000),
    ],
    "Pendulum_TD3": [
        *_steps("heatup_steps", 200), *_steps("improve_steps", 200),
        *_steps("steps_between_evaluation_periods", 100_000),
    ],
}  # fmt: skip
"""Short runs: a few hundred env steps and a few dozen gradient steps each."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each preset's run folder, made by the ``coach`` command."""
    root = tmp_path_factory.mktemp("trained")
    for name, budget in RUNS.items():
        done = run_coach("-p", name, "-q", "-ep", str(root), *budget, cwd=root)
        assert done.returncode == 0, done.stderr
    return {name: experiment(root, name) for name in RUNS}


@dataclass
class Rollout:
    """What the run's own evaluation saw and did, step by step (every copy at once)."""

    observations: list[dict[str, np.ndarray]]
    episode_starts: list[np.ndarray]
    actions: list[np.ndarray]


def evaluation_rollout(run: Path, steps: int, seed: int = 5) -> Rollout:
    """The restored level acting in its own environment in evaluation for ``steps`` steps,
    the agent observing each response itself (as ``coach --evaluate`` runs)."""
    level = restore_level(run)
    try:
        level.phase = RunPhase.EVALUATE
        response = level.reset(seed)
        rollout = Rollout([], [], [])
        for _ in range(steps):
            rollout.observations.append({k: v.copy() for k, v in response.observation.items()})
            rollout.episode_starts.append(response.episode_started.copy())
            response = level.step()
            info = level.agent.last_info
            assert info is not None
            rollout.actions.append(np.array(info.env_action))
        return rollout
    finally:
        level.close()


@pytest.mark.parametrize("name", list(RUNS))
def test_it_acts_as_the_runs_own_evaluation(name: str, runs: dict[str, Path]) -> None:
    rollout = evaluation_rollout(runs[name], steps=120)
    with load_agent(runs[name]) as agent:
        got = [
            agent.act(observation, episode_start=starts)
            for observation, starts in zip(
                rollout.observations, rollout.episode_starts, strict=True
            )
        ]
    for step, (mine, theirs) in enumerate(zip(got, rollout.actions, strict=True)):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-6, err_msg=f"step {step}")
    if name != "Pendulum_TD3":  # its episodes are 200 steps long
        assert any(starts.any() for starts in rollout.episode_starts[1:])  # new episodes


def test_the_first_observation_after_load_or_reset_begins_an_episode(
    runs: dict[str, Path],
) -> None:
    rollout = evaluation_rollout(runs["CartPoleNoVel_RecurrentPPO"], steps=30)
    with load_agent(runs["CartPoleNoVel_RecurrentPPO"]) as agent:
        for _ in range(2):  # after the load, then after reset(): the same actions
            got = [
                agent.act(observation, episode_start=starts & (step > 0))
                for step, (observation, starts) in enumerate(
                    zip(rollout.observations, rollout.episode_starts, strict=True)
                )
            ]
            for mine, theirs in zip(got, rollout.actions, strict=True):
                np.testing.assert_array_equal(mine, theirs)
            agent.reset()


def test_a_recurrent_agent_carries_its_hidden_state_from_step_to_step(
    runs: dict[str, Path],
) -> None:
    rollout = evaluation_rollout(runs["CartPoleNoVel_RecurrentPPO"], steps=60)
    with load_agent(runs["CartPoleNoVel_RecurrentPPO"]) as agent:
        assert agent.per_copy and agent.num_envs == 8
        # Every observation as the start of an episode: no memory of the steps before.
        forgetful = [
            agent.act(observation, episode_start=True) for observation in rollout.observations
        ]
    assert any(not np.array_equal(a, b) for a, b in zip(forgetful, rollout.actions, strict=True))


def test_one_observation_gets_one_action_and_a_batch_a_batch(runs: dict[str, Path]) -> None:
    with load_agent(runs["CartPole_DQN"]) as agent:
        space = agent.observation_space["observation"]
        space.seed(3)
        observations = np.stack([space.sample() for _ in range(50)]).clip(-3, 3)
        batch = agent.act(observations)  # more rows than copies: nothing is kept per copy
        assert batch.shape == (50,) and agent.num_envs == 1 and not agent.per_copy
        one_by_one = [agent.act(o) for o in observations]
        assert all(np.ndim(a) == 0 for a in one_by_one)
        np.testing.assert_array_equal(batch, one_by_one)
        assert agent.action_space.contains(int(one_by_one[0]))
        assert len(set(batch.tolist())) > 1  # it tells observations apart
        assert agent.act({"observation": observations[0]}) == one_by_one[0]  # by key too
    with load_agent(runs["Pendulum_TD3"]) as agent:
        action = agent.act(np.array([1.0, 0.0, 0.0], dtype=np.float32))
        assert action.shape == (1,) and agent.action_space.contains(action.astype(np.float32))


def test_it_plays_a_gymnasium_environment(runs: dict[str, Path]) -> None:
    # As the docs page shows it: gymnasium.make of the run's level, its observations as they
    # come; the greedy policy is a function of the observation, so two episodes of one seed
    # are the same episode.
    def episode(agent: TrainedAgent) -> list[int]:
        env = gym.make("CartPole-v1")
        observation, _ = env.reset(seed=11)
        actions = []
        done = False
        while not done:
            action = agent.act(observation)
            actions.append(int(action))
            observation, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        env.close()
        return actions

    with coach.load_agent(runs["CartPole_DQN"] / "checkpoints" / "best.pt") as agent:
        first = episode(agent)
        agent.reset()
        assert episode(agent) == first and len(first) >= 8


def test_exploring_acts_as_in_training(runs: dict[str, Path]) -> None:
    with load_agent(runs["CartPole_DQN"]) as agent:
        observation = np.zeros(4, dtype=np.float32)
        greedy = {int(agent.act(observation)) for _ in range(20)}
        explored = {int(agent.act(observation, explore=True)) for _ in range(200)}
    assert len(greedy) == 1 and explored == {0, 1}  # epsilon is still high after 600 steps


def test_what_it_cannot_take_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    with load_agent(runs["CartPoleNoVel_RecurrentPPO"]) as agent:
        with pytest.raises(CoachError, match="at most 8 rows"):
            agent.act(np.zeros((9, 4), dtype=np.float32))
        with pytest.raises(CoachError, match=r"shape \(3,\)"):
            agent.act(np.zeros(3, dtype=np.float32))
        with pytest.raises(CoachError, match="missing"):
            agent.act({"other": np.zeros(4)})
    with pytest.raises(CoachError, match="no checkpoint"):
        load_agent(tmp_path)


def test_a_multi_agent_run_is_refused(tmp_path: Path) -> None:
    one_copy = [
        "-cp", "environment.num_envs=1",
        "-cp", "agents.spread.memory.rollout_length=8",
        "-cp", "agents.spread.algorithm.batch_size=8",
    ]  # fmt: skip
    done = run_coach(
        "-p", "SimpleSpread_SharedPPO", "-q", "-ep", str(tmp_path), *TINY, *one_copy, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    with pytest.raises(CoachError, match="multi-agent"):
        load_agent(experiment(tmp_path, "SimpleSpread_SharedPPO"))
