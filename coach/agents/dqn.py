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

from coach.agents.learning import Learner
from coach.agents.q_learning import (
    BatchDQNAlgorithmParameters,
    DQNAlgorithmParameters,
    QAgent,
    QAgentParameters,
    QLearner,
    regress_q,
    taken_q,
    td_target,
)
from coach.core.types import Batch


@dataclass(slots=True, kw_only=True)
class DQNAgentParameters(QAgentParameters):
    """A DQN agent: e-greedy exploration, uniform replay, one Q network with a target copy
    (the value family's defaults, `QAgentParameters`)."""

    algorithm: DQNAlgorithmParameters = field(default_factory=DQNAlgorithmParameters)
    """The algorithm's parameters."""

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
