"""The batch-RL agents (BC, BCQ, CQL): determinism per agent, over a whole batch run, and
their choices under action masks.

Two runs on the same seed over the same dataset give the same losses, the same weights, the
same off-policy estimates and the same evaluation rewards; another seed gives other ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from benchmarks.batch_rl import record_random_dataset
from coach.agents.bc import BCAgentParameters
from coach.agents.bcq import DDQNBCQAgentParameters
from coach.agents.cql import CQLAgentParameters
from coach.agents.parameters import AgentParameters
from coach.batch.graph_manager import BatchRLGraphManager, BatchRLParameters, batch_schedule
from coach.core.action_masks import ACTION_MASK
from coach.core.run_phase import RunPhase
from coach.core.types import Batch
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset
from tests.masked_game import ACTIONS, masked_observations

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


# -- action masks: every choice and soft maximum over the legal actions -------------------------

MASKS = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [0, 0, 0, 0]], dtype=np.int8)
"""Three states: actions 0, 2 and 3 legal; action 2 alone; none (every action counts)."""
LEGAL = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], dtype=bool)


def _masked(params: AgentParameters, seed: int = 0) -> Any:
    for network in params.network_wrappers.values():
        network.middleware.scheme = [16]
    return params.agent_class()(params, masked_observations(), spaces.Discrete(ACTIONS), 1, seed)


def _masked_batch(seed: int = 0) -> Batch:
    rng = np.random.default_rng(seed)
    return Batch(
        states={"observation": rng.random((3, ACTIONS), np.float32), ACTION_MASK: MASKS},
        actions=np.array([3, 2, 1]),  # legal ones
        rewards=rng.normal(0.0, 1.0, 3).astype(np.float32),
        next_states={"observation": rng.random((3, ACTIONS), np.float32), ACTION_MASK: MASKS},
        terminated=np.array([False, False, True]),
        truncated=np.zeros(3, bool),
    )


def test_cql_pushes_down_the_soft_maximum_of_the_legal_actions_only() -> None:
    params = CQLAgentParameters()
    params.algorithm.loss = "mse"
    params.algorithm.discount = 0.0  # the targets are the rewards: the penalty alone is new
    agent = _masked(params)
    batch = _masked_batch()
    with torch.no_grad():
        q = agent.q_network.online(agent.policy.tensors(batch.states))["q"].double().numpy()
    taken = q[np.arange(3), batch.actions]
    soft_max = np.log(np.where(LEGAL, np.exp(q), 0.0).sum(axis=1))  # over the legal actions
    expected = np.mean((taken - batch.rewards) ** 2 + params.algorithm.alpha * (soft_max - taken))
    unmasked = np.mean((taken - batch.rewards) ** 2 + np.log(np.exp(q).sum(axis=1)) - taken)
    assert abs(expected - unmasked) > 1e-3
    assert agent.learner.learn(batch)["q_loss"] == pytest.approx(expected, rel=1e-5)


def test_bcq_allows_legal_actions_only_and_always_the_likeliest_legal_one() -> None:
    params = DDQNBCQAgentParameters()
    params.algorithm.threshold = 0.5
    agent = _masked(params)
    imitation = agent.imitation.online.heads[0]
    with torch.no_grad():  # the behaviour model finds action 1 most likely: it is illegal
        imitation.weight.zero_()
        imitation.bias.copy_(torch.tensor([1.0, 3.0, 0.5, -2.0]))
    states = agent.policy.tensors(_masked_batch().states)
    allowed = agent.allowed(states).numpy()
    # Among the legal actions of row 0, 0 (e^1) and 2 (e^0.5, over half of e^1) pass the
    # threshold; row 1 has action 2 alone; in row 2, with every action legal, 1 alone does.
    np.testing.assert_array_equal(allowed, [[1, 0, 1, 0], [0, 0, 1, 0], [0, 1, 0, 0]])
    action = agent.policy.act(_masked_batch().states, RunPhase.EVALUATE).action
    assert action[0] in (0, 2) and action[1:].tolist() == [2, 1]
    imitation_loss = agent.learner.learn(_masked_batch())["imitation_loss"]
    logits = np.where(LEGAL, [1.0, 3.0, 0.5, -2.0], -np.inf)
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    assert imitation_loss == pytest.approx(-np.mean(log_p[np.arange(3), [3, 2, 1]]), rel=1e-5)


def test_bc_clones_the_logged_actions_among_the_legal_ones() -> None:
    agent = _masked(BCAgentParameters())
    logits_head = agent.networks["main"].online.heads[0]
    with torch.no_grad():  # the classifier prefers the illegal action 1
        logits_head.weight.zero_()
        logits_head.bias.copy_(torch.tensor([1.0, 3.0, 0.5, -2.0]))
    batch = _masked_batch()
    assert agent.policy.act(batch.states, RunPhase.EVALUATE).action.tolist() == [0, 2, 1]
    logits = np.where(LEGAL, [1.0, 3.0, 0.5, -2.0], -np.inf)
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    losses = agent.learner.learn(batch)
    assert losses["bc_loss"] == pytest.approx(-np.mean(log_p[np.arange(3), [3, 2, 1]]), rel=1e-5)
    assert losses["accuracy"] == pytest.approx(2 / 3)  # row 0's likeliest legal one is 0


@pytest.mark.parametrize("double_q", [True, False])
def test_bcq_bootstraps_from_the_allowed_actions_with_or_without_double_q(double_q: bool) -> None:
    params = DDQNBCQAgentParameters()
    params.algorithm.loss = "mse"
    params.algorithm.double_q = double_q
    agent = _masked(params)
    with torch.no_grad():  # the online network moves away from its target copy
        for weight in agent.q_network.online.parameters():
            weight.add_(torch.randn_like(weight, generator=torch.Generator().manual_seed(1)))
    batch = _masked_batch()
    states = agent.policy.tensors(batch.states)
    next_states = agent.policy.tensors(batch.next_states)
    with torch.no_grad():
        q = agent.q_network.online(states)["q"].double().numpy()
        online = agent.q_network.online(next_states)["q"].double().numpy()
        target = agent.q_network.target_predict(next_states)["q"].double().numpy()
        allowed = agent.allowed(next_states).numpy()
    best = np.where(allowed, online, -np.inf).argmax(axis=1)
    double = target[np.arange(3), best]  # the target's value of the online's best allowed
    greedy = np.where(allowed, target, -np.inf).max(axis=1)
    assert np.abs(double - greedy)[~batch.terminated].max() > 1e-3  # the two tell apart
    next_values = double if double_q else greedy
    targets = batch.rewards + params.algorithm.discount * next_values * ~batch.terminated
    expected = np.mean((q[np.arange(3), batch.actions] - targets) ** 2)
    assert agent.learner.learn(batch)["q_loss"] == pytest.approx(expected, rel=1e-5)
