"""The batch-RL agents (BC, BCQ, CQL): determinism per agent, over a whole batch run.

Two runs on the same seed over the same dataset give the same losses, the same weights, the
same off-policy estimates and the same evaluation rewards; another seed gives other ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from benchmarks.batch_rl import record_random_dataset
from coach.agents.agent import AgentParameters
from coach.agents.bc import BCAgentParameters
from coach.agents.bcq import DDQNBCQAgentParameters
from coach.agents.cql import CQLAgentParameters
from coach.batch.graph_manager import BatchRLGraphManager, BatchRLParameters, batch_schedule
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset

DATASET = "test/cartpole-random-v0"


@pytest.fixture()
def minari_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


def _cartpole(params: AgentParameters) -> BatchRLGraphManager:
    for network in params.network_wrappers.values():
        network.middleware.scheme = [32]
    params.algorithm.batch_size = 64
    return BatchRLGraphManager(
        params,
        GymEnvironmentParameters(level="CartPole-v1"),
        batch_schedule(2, evaluation_episodes=2),
        BatchRLParameters(dataset=DATASET),
    )


def _pendulum_bc() -> BatchRLGraphManager:
    """Pendulum_BC (continuous actions), over a random dataset under its dataset's name."""
    graph = load_preset("Pendulum_BC").graph_manager
    assert isinstance(graph, BatchRLGraphManager)
    graph.schedule_params = batch_schedule(2, evaluation_episodes=2)
    return graph


GRAPHS = {
    "BC": lambda: _cartpole(BCAgentParameters()),
    "BC continuous": _pendulum_bc,
    "BCQ": lambda: _cartpole(DDQNBCQAgentParameters()),
    "CQL": lambda: _cartpole(CQLAgentParameters()),
}


def _run(make: Any, seed: int) -> tuple[list[Any], list[float], list[torch.Tensor]]:
    """Two epochs and an evaluation on ``seed``: the losses and off-policy estimates of each
    epoch, the evaluation's rewards, and the weights of every network."""
    graph = make()
    graph.create_graph(RunContext(seed=seed))
    try:
        epochs = [(graph.train_epoch(), graph.off_policy_evaluation()) for _ in range(2)]
        rewards = graph.evaluate(graph.schedule_params.evaluation_steps).rewards
        agent = graph.levels[0].agent
        assert agent.training_steps > 0
        weights = [
            p.detach().clone() for net in agent.networks.values() for p in net.online.parameters()
        ]
    finally:
        graph.close()
    return epochs, rewards, weights


@pytest.mark.parametrize("name", list(GRAPHS))
def test_same_seed_same_numbers(name: str, minari_root: Path) -> None:
    record_random_dataset(GRAPHS[name](), 600)
    first, second, other = _run(GRAPHS[name], 0), _run(GRAPHS[name], 0), _run(GRAPHS[name], 1)
    losses = [epoch[0] for epoch in first[0]]
    assert all(np.isfinite(v) for epoch in losses for v in epoch.values()) and losses[0]
    np.testing.assert_equal(first[:2], second[:2])  # an estimate may be nan: equal to nan
    assert all(torch.equal(a, b) for a, b in zip(first[2], second[2], strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(first[2], other[2], strict=True))
    assert [epoch[0] for epoch in other[0]] != losses
