"""The value-based family: determinism per agent, Double DQN's bootstrap, bootstrap masks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.bootstrapped_dqn import BootstrappedDQNAgent, BootstrappedDQNAgentParameters
from coach.agents.categorical_dqn import CategoricalDQNAgentParameters
from coach.agents.ddqn import DDQNAgentParameters
from coach.agents.dqn import DQNAgent, DQNAgentParameters
from coach.agents.n_step_q import NStepQAgentParameters
from coach.agents.q_learning import double_q_target_values, greedy_target_values
from coach.agents.qr_dqn import QRDQNAgentParameters
from coach.agents.rainbow import RainbowAgentParameters
from coach.core.action_masks import ACTION_MASK
from coach.core.run_phase import RunPhase
from coach.core.types import Batch, EnvResponse
from coach.networks.heads import QHeadParameters

OBSERVATION = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (4,), np.float32)})
ACTIONS = spaces.Discrete(2)
FAMILY = [
    DQNAgentParameters,
    DDQNAgentParameters,
    NStepQAgentParameters,
    CategoricalDQNAgentParameters,
    QRDQNAgentParameters,
    RainbowAgentParameters,
    BootstrappedDQNAgentParameters,
]


def build(params_class: type, seed: int, num_envs: int = 2) -> DQNAgent:
    params = params_class()
    params.memory.max_size = 500
    params.network_wrappers["main"].middleware.scheme = [16]
    return params.agent_class()(params, OBSERVATION, ACTIONS, num_envs, seed=seed)  # type: ignore[no-any-return]


def drive(agent: DQNAgent, steps: int) -> list[float]:
    """Act, observe a scripted environment, train: the agent's own numbers only."""
    rng = np.random.default_rng(123)
    observation = {"observation": rng.uniform(-1, 1, (2, 4)).astype(np.float32)}
    zeros = np.zeros(2)
    agent.reset(
        EnvResponse(observation, zeros.astype(np.float32), zeros > 0, zeros > 0, observation,
                    zeros, zeros.astype(np.int64))
    )  # fmt: skip
    losses = []
    for t in range(steps):
        agent.phase = RunPhase.HEATUP if t < 40 else RunPhase.TRAIN
        info = agent.act()
        nxt = {"observation": rng.uniform(-1, 1, (2, 4)).astype(np.float32)}
        done = np.array([t % 7 == 6, t % 11 == 10])
        response = EnvResponse(
            nxt, np.asarray(info.action, np.float32), done & (t % 2 == 0), done & (t % 2 == 1),
            nxt, zeros, zeros.astype(np.int64),
        )  # fmt: skip
        agent.observe(response)
        if agent.phase is RunPhase.TRAIN:
            losses.append(agent.learner.learn(agent.memory.sample(16))["q_loss"])  # type: ignore[union-attr]
    return losses


@pytest.mark.parametrize("params_class", FAMILY, ids=lambda c: c.__name__)
def test_same_seed_same_numbers(params_class: type) -> None:
    first, second = build(params_class, 7), build(params_class, 7)
    losses = drive(first, 70)
    assert losses == drive(second, 70) and all(np.isfinite(losses))
    pairs = zip(
        first.q_network.online.parameters(), second.q_network.online.parameters(), strict=True
    )
    for a, b in pairs:
        assert torch.equal(a, b)
    assert drive(build(params_class, 8), 70) != losses


def test_double_q_values_the_online_choice_with_the_target() -> None:
    agent = build(DDQNAgentParameters, 0)
    assert isinstance(agent, DQNAgent) and agent.algorithm.double_q
    with torch.no_grad():  # make the online net prefer action 1 and the target value action 0
        online, target = agent.q_network.online.heads[0], agent.q_network.target.heads[0]  # type: ignore[union-attr]
        online.weight.zero_(), online.bias.copy_(torch.tensor([0.0, 1.0]))
        target.weight.zero_(), target.bias.copy_(torch.tensor([5.0, 2.0]))
    states = {"observation": torch.zeros(3, 4)}
    values = agent.action_values
    double = double_q_target_values(agent.q_network, values, states)
    torch.testing.assert_close(double, torch.full((3,), 2.0))
    greedy = greedy_target_values(agent.q_network, values, states)
    torch.testing.assert_close(greedy, torch.full((3,), 5.0))


def test_bootstrap_masks_decide_which_heads_learn() -> None:
    agent = build(BootstrappedDQNAgentParameters, 0)
    assert isinstance(agent, BootstrappedDQNAgent)
    rng = np.random.default_rng(0)
    mask = np.zeros((8, 10), np.float32)
    mask[:, 3] = 1.0  # only head 3 sees these transitions
    batch = Batch(
        states={"observation": rng.uniform(-1, 1, (8, 4)).astype(np.float32)},
        actions=rng.integers(0, 2, 8),
        rewards=np.ones(8, np.float32),
        next_states={"observation": rng.uniform(-1, 1, (8, 4)).astype(np.float32)},
        terminated=np.zeros(8, bool),
        truncated=np.zeros(8, bool),
        extras={"mask": mask},
    )
    heads = agent.q_network.online.heads[0].heads  # type: ignore[index]
    before = [h.advantage.weight.detach().clone() for h in heads]  # type: ignore[union-attr]
    agent.learner.learn(batch)
    changed = [not torch.equal(b, h.advantage.weight) for b, h in zip(before, heads, strict=True)]  # type: ignore[union-attr]
    assert changed == [k == 3 for k in range(10)]


def test_dueling_head_centres_advantages() -> None:
    head = QHeadParameters(dueling=True).build(8, spaces.Discrete(3))
    x = torch.randn(5, 8)
    q = head(x)
    value = head.value(x)  # type: ignore[operator]
    torch.testing.assert_close(q.mean(dim=1, keepdim=True), value)


def test_prioritized_memory_gets_td_errors_and_weighs_the_loss() -> None:
    agent = build(RainbowAgentParameters, 0)
    memory = agent.memory
    assert memory is not None and hasattr(memory, "sum_tree")
    drive(agent, 45)  # 40 heatup steps, then a few training steps
    batch = memory.sample(8)
    assert batch.weights is not None and (batch.weights <= 1.0).all()
    before = memory.sum_tree.total()  # type: ignore[attr-defined]
    agent.learner.learn(batch)
    # The sampled rows now carry priorities from their TD errors, not the initial maximum.
    assert memory.sum_tree.total() != before  # type: ignore[attr-defined]
    leaves = memory.sum_tree[batch.indices]  # type: ignore[attr-defined]
    assert not np.allclose(leaves, memory.max_priority)  # type: ignore[attr-defined]


def test_every_bootstrapped_head_bootstraps_from_its_best_legal_next_action() -> None:
    observations = spaces.Dict(
        {
            "observation": spaces.Box(-1.0, 1.0, (4,), np.float32),
            ACTION_MASK: spaces.Box(0, 1, (3,), np.int8),
        }
    )
    params = BootstrappedDQNAgentParameters()
    params.network_wrappers["main"].middleware.scheme = [16]
    params.algorithm.discount = 0.9
    agent = params.agent_class()(params, observations, spaces.Discrete(3), 1, seed=0)
    assert isinstance(agent, BootstrappedDQNAgent) and agent.q_network.target is not None
    rng = np.random.default_rng(2)
    next_states = rng.uniform(-1, 1, (6, 4)).astype(np.float32)
    with torch.no_grad():
        next_q = agent.q_network.target({"observation": torch.as_tensor(next_states)})["q"]
    next_q = next_q.numpy().astype(np.float64)  # (6, K, 3)
    # Rows 0-2 rule out the action most heads rank first; row 3 ends in a state with no
    # legal action; row 4 has none legal and goes on (every action counts).
    masks = np.ones((6, 3), np.int8)
    favourite = np.array([np.bincount(r.argmax(axis=1), minlength=3).argmax() for r in next_q])
    masks[np.arange(3), favourite[:3]] = 0
    masks[3:5] = 0
    terminated = np.array([False, False, False, True, False, False])
    batch = Batch(
        states={"observation": rng.uniform(-1, 1, (6, 4)).astype(np.float32)},
        actions=rng.integers(0, 3, 6),
        rewards=rng.normal(0.0, 1.0, 6).astype(np.float32),
        next_states={"observation": next_states, ACTION_MASK: masks},
        terminated=terminated,
        truncated=np.zeros(6, bool),
        extras={
            "mask": np.ones((6, params.network_wrappers["main"].heads[0].num_heads), np.float32)
        },  # type: ignore[attr-defined]
    )
    batch.states[ACTION_MASK] = np.ones((6, 3), np.int8)
    legal = masks.astype(bool)
    legal[3:5] = True

    def loss_for(allowed: np.ndarray) -> float:
        best = np.where(allowed[:, None, :], next_q, -np.inf).max(axis=2)  # (6, K)
        targets = batch.rewards[:, None] + 0.9 * np.where(terminated[:, None], 0.0, best)
        with torch.no_grad():
            heads = agent.q_network.online(
                {"observation": torch.as_tensor(batch.states["observation"])}
            )["q"]
        q = heads.numpy()[np.arange(6), :, batch.actions]  # (6, K)
        d = q - targets
        return float(np.mean(np.where(np.abs(d) < 1.0, 0.5 * d**2, np.abs(d) - 0.5)))

    expected = loss_for(legal)
    assert abs(expected - loss_for(np.ones_like(legal))) > 1e-4  # the masks matter
    loss = agent.learner.learn(batch)["q_loss"]  # type: ignore[union-attr]
    assert loss == pytest.approx(expected, rel=1e-5)
