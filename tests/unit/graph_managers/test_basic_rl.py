"""The basic graph: one DQN agent on CartPole, built from parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from coach.agents.dqn import DQNAgent, DQNAgentParameters
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, TrainingSteps
from coach.environments.gym_environment import GymEnvironmentParameters
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters


def small_graph(num_envs: int = 1) -> BasicRLGraphManager:
    agent = DQNAgentParameters()
    agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(4)
    agent.algorithm.num_consecutive_training_steps = 2
    agent.memory.max_size = 1000
    return BasicRLGraphManager(
        agent,
        GymEnvironmentParameters(level="CartPole-v1", num_envs=num_envs),
        ScheduleParameters(
            heatup_steps=EnvironmentSteps(100),
            improve_steps=EnvironmentSteps(200),
            steps_between_evaluation_periods=EnvironmentSteps(100),
            evaluation_steps=EnvironmentEpisodes(2),
        ),
    )


def test_parameters_roots() -> None:
    graph = small_graph()
    assert set(graph.parameters()) == {"agent", "environment", "schedule"}


@pytest.mark.parametrize("num_envs", [1, 4])
def test_training_budget_in_gradient_steps(num_envs: int) -> None:
    graph = small_graph(num_envs).create_graph(RunContext(seed=0))
    agent = graph.top_level.agent
    assert isinstance(agent, DQNAgent)
    graph.heatup(EnvironmentSteps(100))
    assert len(agent.memory) == 100 and agent.training_steps == 0  # type: ignore[arg-type]
    graph.train_and_act(TrainingSteps(10))
    # Rounds of 2 gradient steps every 4 env steps: the phase ends on the round that
    # reaches 10 (with 4 envs one step is a round, so it may overshoot by a round).
    assert 10 <= agent.training_steps <= 10 + 2
    assert agent.training_env_steps == pytest.approx(agent.training_rounds * 4, abs=num_envs)


def test_improve_writes_the_experiment_folder(tmp_path: Path) -> None:
    graph = small_graph().create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True))
    graph.improve()
    graph.close()
    assert len(graph.evaluations) == 2
    assert (tmp_path / "progress.csv").exists() and (tmp_path / "log.txt").exists()
    runs = sorted(p.name for p in (tmp_path / "tensorboard").iterdir())
    assert runs == ["graph", "main_level.agent"]
