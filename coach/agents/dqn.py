"""Deep Q-Network (Mnih et al., 2015, "Human-level control through deep reinforcement learning").

Q-learning with a replay memory and a target network: each gradient step regresses
Q(s, a) towards r + discount * max_a' Q_target(s', a'), where the bootstrap term is dropped
only for terminal transitions (a time-limit truncation still bootstraps). With
``double_q`` the online network picks the next action and the target network values it
(Double DQN); with ``n_step`` the targets sum n rewards first (`coach.agents.q_learning`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from coach import validation as check
from coach.agents.learning import Learner
from coach.agents.parameters import AgentParameters
from coach.agents.q_learning import (
    BatchDQNAlgorithmParameters,
    DQNAlgorithmParameters,
    QAgent,
    QLearner,
    regress_q,
    taken_q,
    td_target,
)
from coach.core.types import Batch
from coach.exploration.e_greedy import EGreedyParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.parameters import NetworkParameters


@dataclass(slots=True, kw_only=True)
class DQNAgentParameters(AgentParameters):
    """A DQN agent: e-greedy exploration, uniform replay, one Q network with a target copy."""

    algorithm: DQNAlgorithmParameters = field(default_factory=DQNAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = field(default_factory=EGreedyParameters)
    """Exploration (e-greedy by default; anything whose policy maps Q-values to actions)."""
    memory: MemoryParameters | None = field(default_factory=ExperienceReplayParameters)
    """The replay memory (uniform, or prioritized)."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {"main": NetworkParameters(create_target_network=True)}
    )
    """The Q network (``main``)."""

    def validate(self) -> None:
        check.component("exploration", self.exploration, "EGreedyParameters()", optional=False)
        check.component("memory", self.memory, "ExperienceReplayParameters()", optional=False)
        check.keys("network_wrappers", self.network_wrappers, ("main",))
        AgentParameters.validate(self)

    def agent_class(self) -> type[QAgent]:
        return DQNAgent


class DQNAgent(QAgent):
    """Deep Q-Network (and Double DQN, n-step Q-learning): TD regression of Q(s, a)."""

    params: DQNAgentParameters

    def make_learner(self) -> Learner:
        return DQNLearner(**self.learner_arguments())


class DQNLearner(QLearner):
    """DQN's update: Q(s, a) regressed on the (double, n-step) TD target."""

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        b = self.sampled(batch)
        q, _ = taken_q(self, b)
        with torch.no_grad():
            target = td_target(self, b)  # r + g^k * max (or double) Q'(s'), per row
        return regress_q(self, b, q, target)


__all__ = [
    "BatchDQNAlgorithmParameters",
    "DQNAgent",
    "DQNAgentParameters",
    "DQNAlgorithmParameters",
    "DQNLearner",
]
