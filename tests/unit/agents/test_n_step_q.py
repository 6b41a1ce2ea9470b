"""Unit tests for coach/agents/n_step_q.py's n-step Q-learning from rollout blocks (the
asynchronous algorithm's update): its targets written out by hand, its gradient step, what
the block keeps, and determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from coach.agents.n_step_q import (
    RolloutNStepQAgent,
    RolloutNStepQAgentParameters,
    RolloutNStepQLearner,
)
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, EnvResponse, Transition
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.memories.rollout import Rollout
from coach.parameter_tree import validate_parameters
from coach.parameters import set_parameter
from tests.unit.agents.seeded import after_run, main_weights, short_schedule

OBSERVATION_SPACE = spaces.Dict(
    {"observation": spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32)}
)
T = 5


def _agent(horizon: str = "n_step", discount: float = 0.5) -> RolloutNStepQAgent:
    params = RolloutNStepQAgentParameters()
    params.algorithm.discount = discount
    params.algorithm.targets_horizon = horizon
    params.network_wrappers["main"].middleware.scheme = [16]
    agent = RolloutNStepQAgent(params, OBSERVATION_SPACE, spaces.Discrete(3), 1, seed=0)
    agent.phase = RunPhase.TRAIN
    return agent


def _fill(agent: RolloutNStepQAgent, terminated_at: int | None = None) -> np.ndarray:
    """Store a block of T steps of one copy; the states, (T + 1, 4)."""
    rng = np.random.default_rng(1)
    states = rng.uniform(-1, 1, (T + 1, 4)).astype(np.float32)
    for t in range(T):
        step = Transition(
            {"observation": states[t : t + 1]},
            np.array([t % 3]),
            np.array([1.0 + t], dtype=np.float32),
            {"observation": states[t + 1 : t + 2]},
            np.array([t == terminated_at]),
            np.array([False]),
            {},
        )
        agent.store(step, ActionInfo(action=step.action))
    return states


def _target_max(agent: RolloutNStepQAgent, states: np.ndarray) -> np.ndarray:
    assert agent.q_network.target is not None
    with torch.no_grad():
        q = agent.q_network.target({"observation": torch.as_tensor(states)})["q"]
    return q.max(dim=1).values.numpy().astype(np.float64)


@pytest.mark.parametrize("terminated_at", [None, 2])
def test_n_step_targets_sum_the_rewards_to_the_blocks_end(terminated_at: int | None) -> None:
    agent = _agent()
    states = _fill(agent, terminated_at)
    learner, rollout = agent.learner, agent.memory
    assert isinstance(learner, RolloutNStepQLearner)
    learner.compute_targets()
    assert isinstance(rollout, Rollout) and rollout.returns is not None
    # R = max_a Q_target(s_T, a), then R = r_t + 0.5 R backwards, restarting at a terminal.
    expected, running = [], _target_max(agent, states[T:])[0]
    for t in reversed(range(T)):
        running = (1.0 + t) + (0.0 if t == terminated_at else 0.5 * running)
        expected.append(running)
    np.testing.assert_allclose(rollout.returns[:, 0], expected[::-1], rtol=1e-6)


def test_one_step_targets_bootstrap_every_step() -> None:
    agent = _agent("one_step")
    states = _fill(agent, terminated_at=3)
    assert isinstance(agent.learner, RolloutNStepQLearner)
    agent.learner.compute_targets()
    assert isinstance(agent.memory, Rollout) and agent.memory.returns is not None
    next_values = _target_max(agent, states[1:])
    expected = [(1.0 + t) + (0.0 if t == 3 else 0.5 * next_values[t]) for t in range(T)]
    np.testing.assert_allclose(agent.memory.returns[:, 0], expected, rtol=1e-6)


def test_a_full_block_is_one_gradient_step_and_is_cleared() -> None:
    agent = _agent()
    assert agent.train() == 0  # nothing stored
    before = [p.detach().clone() for p in agent.q_network.online.parameters()]
    _fill(agent)
    assert agent.train() == 1 and agent.training_steps == 1
    after = list(agent.q_network.online.parameters())
    assert all(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert isinstance(agent.memory, Rollout) and len(agent.memory) == 0


def test_heatup_stores_nothing_and_a_reset_cuts_the_block() -> None:
    agent = _agent()
    agent.phase = RunPhase.HEATUP
    _fill(agent)
    assert isinstance(agent.memory, Rollout) and len(agent.memory) == 0
    agent.phase = RunPhase.TRAIN
    states = _fill(agent)[:1]
    agent.memory.clear()
    agent.store(  # one step, then new episodes begin
        Transition({"observation": states}, np.array([1]), np.array([1.0], dtype=np.float32),
                   {"observation": states}, np.array([False]), np.array([False]), {}),
        ActionInfo(action=np.array([1])),
    )  # fmt: skip
    zero = np.zeros(1, dtype=np.float32)
    flags = np.zeros(1, dtype=bool)
    agent.reset(
        EnvResponse({"observation": states}, zero, flags, flags, {"observation": states}, zero,
                    np.zeros(1, dtype=np.int64))
    )  # fmt: skip
    # Its steps bootstrap from their successors rather than run on into the new episodes.
    assert agent.memory.columns["truncated"][0, 0] and len(agent.memory) == 1


def test_the_horizon_is_the_block() -> None:
    params = RolloutNStepQAgentParameters()
    set_parameter({"agent": params}, "agent.algorithm.n_step", "3")
    with pytest.raises(CoachError, match="n_step must be 1"):
        validate_parameters({"agent": params})
    params = RolloutNStepQAgentParameters()
    set_parameter({"agent": params}, "agent.algorithm.targets_horizon", "'two_step'")
    with pytest.raises(CoachError, match="targets_horizon must be one of"):
        validate_parameters({"agent": params})


def test_the_same_seed_learns_the_same_weights(tmp_path: Path) -> None:
    params = RolloutNStepQAgentParameters()
    params.network_wrappers["main"].middleware.scheme = [16]
    environment = GymEnvironmentParameters(level="CartPole-v1", num_envs=2)
    runs = [
        after_run(params, environment, short_schedule(), 3, tmp_path / str(i), main_weights)
        for i in range(2)
    ]
    (steps, weights), (again, other) = runs
    assert steps == again == 300 // (T * 2) and torch.equal(weights, other)
