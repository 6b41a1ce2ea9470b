"""An agent composes an acting side (its `Policy`) and a learning side (its `Learner`): an agent
built to act only has the first alone, acts exactly like a learning agent of the same seed,
and is what rollout workers run; the learner keeps its own state in checkpoints."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from coach.agents.acting import Policy
from coach.agents.agent import Agent
from coach.agents.learning import Learner
from coach.core.run_phase import RunPhase
from coach.core.types import EnvResponse
from coach.parallel.worker import Outbox, RolloutWorker, WorkerSpec
from coach.presets import load_preset

FAMILIES = [
    "CartPole_DQN",
    "CartPole_C51",
    "CartPole_QR_DQN",
    "CartPole_Rainbow",
    "CartPole_Bootstrapped_DQN",
    "CartPole_ClippedPPO",
    "CartPole_PPO",
    "CartPole_A2C",
    "Pendulum_ClippedPPO",
    "Pendulum_DDPG",
    "Pendulum_TD3",
    "Pendulum_SAC",
]


def _agent(name: str, learns: bool, seed: int = 3) -> tuple[Agent, EnvResponse]:
    graph = load_preset(name).graph_manager
    environment = graph.env_params.build()
    try:
        agent = graph.agent_params.agent_class()(
            graph.agent_params,
            environment.observation_space,
            environment.action_space,
            environment.num_envs,
            seed=seed,
            learns=learns,
        )
        response = environment.reset(0)
    finally:
        environment.close()
    return agent, response


@pytest.mark.parametrize("name", FAMILIES)
def test_an_acting_only_agent_has_the_policy_and_nothing_of_learning(name: str) -> None:
    agent, _ = _agent(name, learns=False)
    assert isinstance(agent.policy, Policy)
    assert agent.learner is None and agent.memory is None
    for network in agent.networks.values():
        assert network.optimizer is None and network.target is None
    assert agent.train() == 0


@pytest.mark.parametrize("name", FAMILIES)
def test_an_acting_only_agent_acts_like_the_learning_agent_of_its_seed(name: str) -> None:
    acting, response = _agent(name, learns=False)
    learning, _ = _agent(name, learns=True)
    assert isinstance(learning.learner, Learner)
    for network in learning.networks.values():
        assert network.optimizer is not None
    for agent in (acting, learning):
        agent.phase = RunPhase.TRAIN
        agent.reset(response)
    for _ in range(5):  # exploring: the same draws from the same generators
        a, b = acting.act(), learning.act()
        np.testing.assert_array_equal(a.action, b.action)
    for agent in (acting, learning):
        agent.phase = RunPhase.EVALUATE
    np.testing.assert_array_equal(acting.act().action, learning.act().action)


@pytest.mark.parametrize("name", ["CartPole_DQN", "CartPole_ClippedPPO", "Pendulum_SAC"])
def test_a_rollout_worker_builds_the_acting_side_alone(name: str) -> None:
    graph = load_preset(name).graph_manager
    worker = RolloutWorker(WorkerSpec(graph.acting_graph(), seed=1, rank=1))
    try:
        agent = worker.agent
        assert agent.learner is None and isinstance(agent.memory, Outbox)
        assert all(net.optimizer is None for net in agent.networks.values())
        block = worker.collect(32, RunPhase.TRAIN)
        assert block.env_steps >= 32 and len(block.agents[agent.name].widths) > 0
    finally:
        worker.close()


def test_the_learners_state_travels_in_the_checkpoint() -> None:
    agent, _ = _agent("Pendulum_SAC", learns=True)
    other, _ = _agent("Pendulum_SAC", learns=True, seed=4)
    learner = agent.learner
    assert learner is not None
    with torch.no_grad():
        learner.log_alpha.fill_(-1.5)  # type: ignore[attr-defined]
    learner.critic_updates = 7  # type: ignore[attr-defined]
    other.load_state_dict(agent.state_dict())
    assert other.learner is not None
    assert other.learner.state_dict()["critic_updates"] == 7
    assert float(other.learner.log_alpha.detach()) == -1.5  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["CartPole_ClippedPPO", "Pendulum_ClippedPPO"])
def test_an_on_policy_agent_evaluates_by_its_mode_or_by_samples_when_told(name: str) -> None:
    graph = load_preset(name).graph_manager
    environment = graph.env_params.build()
    try:
        response = environment.reset(0)
        actions = {}
        for deterministic in (True, False):
            graph.agent_params.algorithm.deterministic_evaluation = deterministic
            agent = graph.agent_params.agent_class()(
                graph.agent_params,
                environment.observation_space,
                environment.action_space,
                environment.num_envs,
                seed=3,
                learns=False,
            )
            agent.phase = RunPhase.EVALUATE
            agent.reset(response)
            actions[deterministic] = {agent.act().action.tobytes() for _ in range(40)}
    finally:
        environment.close()
    assert len(actions[True]) == 1  # the mode, each time
    assert len(actions[False]) > 1  # an untrained policy's samples of the same state
