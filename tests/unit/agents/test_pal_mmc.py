"""Unit tests for coach/agents/pal.py and mmc.py: PAL's and MMC's targets by hand (through
the loss of a gradient step), MMC storing whole episodes with their returns, checkpoints and
determinism."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.mmc import MMCAgent, MMCAgentParameters
from coach.agents.pal import PALAgent, PALAgentParameters, action_gaps, pal_targets
from coach.core.types import ActionInfo, Batch, Transition
from coach.environments.parameters import GymEnvironmentParameters
from coach.memories.monte_carlo import MC_RETURN
from coach.validation import InvalidParameter
from tests.unit.agents.seeded import after_run, main_weights, short_schedule

OBSERVATIONS = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (4,), np.float32)})
ACTIONS = spaces.Discrete(3)
DISCOUNT = 0.9


def _small(
    params: PALAgentParameters | MMCAgentParameters,
) -> PALAgentParameters | MMCAgentParameters:
    params.algorithm.discount = DISCOUNT
    params.algorithm.loss = "mse"
    params.memory.max_size = 100  # type: ignore[union-attr]
    params.network_wrappers["main"].middleware.scheme = [16]
    return params


def _batch(n: int = 8, seed: int = 0) -> Batch:
    rng = np.random.default_rng(seed)
    return Batch(
        states={"observation": rng.uniform(-1, 1, (n, 4)).astype(np.float32)},
        actions=rng.integers(0, 3, n),
        rewards=rng.normal(0.0, 2.0, n).astype(np.float32),
        next_states={"observation": rng.uniform(-1, 1, (n, 4)).astype(np.float32)},
        terminated=np.arange(n) % 3 == 0,
        truncated=np.zeros(n, dtype=bool),
        extras={MC_RETURN: rng.normal(0.0, 5.0, n).astype(np.float32)},
    )


def _values(network: torch.nn.Module, observation: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        q = network({"observation": torch.as_tensor(observation)})["q"]
    return q.numpy().astype(np.float64)


def _td(agent: PALAgent | MMCAgent, b: Batch) -> np.ndarray:
    target = agent.q_network.target
    assert target is not None
    bootstrap = _values(target, b.next_states["observation"]).max(1)
    return b.rewards + DISCOUNT * np.where(b.terminated, 0.0, bootstrap)


def test_pal_targets_by_hand() -> None:
    td = torch.tensor([1.0, 2.0, 3.0])
    gap, next_gap = torch.tensor([0.0, 1.0, 2.0]), torch.tensor([0.5, 0.0, 3.0])
    terminated = torch.tensor([False, False, True])
    advantage = pal_targets(td, gap, None, terminated, 0.5)
    torch.testing.assert_close(advantage, torch.tensor([1.0, 1.5, 2.0]))
    # Persistent: max(advantage, td - alpha * next gap), advantage alone where terminated.
    persistent = pal_targets(td, gap, next_gap, terminated, 0.5)
    torch.testing.assert_close(persistent, torch.tensor([1.0, 2.0, 2.0]))
    values = torch.tensor([[1.0, 3.0, 2.0], [0.0, -1.0, 5.0]])
    torch.testing.assert_close(action_gaps(values, torch.tensor([2, 2])), torch.tensor([1.0, 0.0]))


@pytest.mark.parametrize("persistent", [True, False])
def test_a_pal_step_regresses_on_the_persistent_advantage_target(persistent: bool) -> None:
    params = _small(PALAgentParameters())
    params.algorithm.persistent = persistent
    agent = PALAgent(params, OBSERVATIONS, ACTIONS, 1, seed=0)
    b = _batch()
    online, target = agent.q_network.online, agent.q_network.target
    assert target is not None
    with torch.no_grad():  # a target apart from the online weights
        for p in target.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(1)))
    rows = np.arange(len(b))
    q = _values(online, b.states["observation"])[rows, b.actions]
    now = _values(target, b.states["observation"])
    after = _values(target, b.next_states["observation"])
    td = _td(agent, b)
    alpha = params.algorithm.pal_alpha
    expected = td - alpha * (now.max(1) - now[rows, b.actions])
    if persistent:
        carried = td - alpha * (after.max(1) - after[rows, b.actions])
        expected = np.maximum(expected, np.where(b.terminated, expected, carried))
    losses = agent.learner.learn(b)  # type: ignore[union-attr]
    assert float(losses["q_loss"]) == pytest.approx(np.mean((q - expected) ** 2), rel=1e-5)


def test_an_mmc_step_regresses_on_the_mixed_target() -> None:
    params = _small(MMCAgentParameters())
    agent = MMCAgent(params, OBSERVATIONS, ACTIONS, 1, seed=0)
    b = _batch()
    rows = np.arange(len(b))
    q = _values(agent.q_network.online, b.states["observation"])[rows, b.actions]
    rate = params.algorithm.monte_carlo_mixing_rate
    expected = (1 - rate) * _td(agent, b) + rate * b.extras[MC_RETURN]
    losses = agent.learner.learn(b)  # type: ignore[union-attr]
    assert float(losses["q_loss"]) == pytest.approx(np.mean((q - expected) ** 2), rel=1e-5)


def _step(t: int, reward: float, ended: bool) -> Transition:
    observation = np.full((1, 4), t / 10, dtype=np.float32)
    return Transition(
        {"observation": observation},
        np.array([t % 3]),
        np.array([reward], dtype=np.float32),
        {"observation": observation + 0.05},
        np.array([ended]),
        np.zeros(1, dtype=bool),
    )


def test_mmc_stores_an_episode_when_it_ends_with_its_returns() -> None:
    agent = MMCAgent(_small(MMCAgentParameters()), OBSERVATIONS, ACTIONS, 1, seed=0)
    memory = agent.memory
    assert memory is not None
    info = ActionInfo(np.array([0]))
    agent.store(_step(0, 1.0, False), info)
    agent.store(_step(1, 2.0, False), info)
    assert len(memory) == 0  # the episode is open
    agent.store(_step(2, 4.0, True), info)
    assert len(memory) == 3
    batch = memory.get(np.arange(3))  # type: ignore[attr-defined]
    np.testing.assert_allclose(batch.extras[MC_RETURN], [1 + 0.9 * 2 + 0.81 * 4, 2 + 0.9 * 4, 4])
    # An open episode travels with a checkpoint, and a restart stores it cut.
    agent.store(_step(3, 1.0, False), info)
    other = MMCAgent(_small(MMCAgentParameters()), OBSERVATIONS, ACTIONS, 1, seed=1)
    other.load_state_dict(copy.deepcopy(agent.state_dict()))
    other.store(_step(4, 1.0, True), info)
    assert len(other.memory) == 2  # type: ignore[arg-type]
    np.testing.assert_allclose(other.memory.get(np.arange(2)).extras[MC_RETURN], [1.9, 1.0])  # type: ignore[union-attr]


def test_mmc_takes_one_step_returns_only() -> None:
    params = MMCAgentParameters()
    params.algorithm.n_step = 3
    with pytest.raises(InvalidParameter, match="n_step"):
        params.algorithm.validate()


@pytest.mark.parametrize("params_class", [PALAgentParameters, MMCAgentParameters])
def test_same_seed_same_numbers(params_class: type, tmp_path: Path) -> None:
    environment = GymEnvironmentParameters(level="CartPole-v1")
    runs = []
    for i, seed in enumerate((0, 0, 1)):
        params = params_class()
        params.network_wrappers["main"].middleware.scheme = [16]
        params.algorithm.num_consecutive_training_steps = 4
        runs.append(
            after_run(params, environment, short_schedule(), seed, tmp_path / str(i), main_weights)
        )
    assert runs[0][0] > 0 and torch.equal(runs[0][1], runs[1][1])
    assert not torch.equal(runs[0][1], runs[2][1])
