"""The basic graph: one DQN agent on CartPole, built from parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from coach.agents.dqn import DQNAgent, DQNAgentParameters
from coach.checkpoints import find_checkpoint, load_checkpoint
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, TrainingSteps
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.evaluation import EvaluationResult
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


def test_the_best_evaluation_so_far_is_kept_as_best_pt(tmp_path: Path) -> None:
    """checkpoints/best.pt holds the policy its evaluation scored, replaced only by a
    better one, outside the latest marker and the rotation."""
    graph = small_graph()
    graph.schedule_params.improve_steps = EnvironmentSteps(1000)
    weights: list[dict[str, torch.Tensor]] = []

    def capture(result: EvaluationResult) -> bool:
        network = graph.levels[0].agent.networks["main"].online
        weights.append({k: v.clone() for k, v in network.state_dict().items()})
        return False

    graph.stop_when = capture
    graph.create_graph(RunContext(seed=0, experiment_dir=tmp_path, quiet=True))
    try:
        graph.improve()
        last = graph.save_checkpoint()
    finally:
        graph.close()
    means = [e.mean_reward for e in graph.evaluations]
    best = int(np.argmax(means))  # the first of the highest: a tie is no improvement
    assert len(set(means)) > 1, f"the evaluations should differ, got {means}"
    state = load_checkpoint(tmp_path / "checkpoints" / "best.pt")
    assert len(state["evaluations"]) == best + 1  # the run just after that evaluation
    saved = state["agents"][0]["networks"]["main"]["online"]
    for name, value in weights[best].items():
        assert torch.equal(torch.as_tensor(saved[name]), value), name
    assert find_checkpoint(tmp_path) == last  # the latest marker still names the last one
    log = (tmp_path / "log.txt").read_text()
    improvements = [m for i, m in enumerate(means) if m > max(means[:i], default=-np.inf)]
    assert log.count("best evaluation so far") == len(improvements)
