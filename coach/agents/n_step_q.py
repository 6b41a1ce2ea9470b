"""N-step Q-learning: DQN whose targets sum n rewards before they bootstrap.

The n-step transitions are built before they reach the memory (see
`coach.memories.n_step`), so a replayed row carries its own return and discount g^k, correct
across terminations and truncations inside the window (Sutton and Barto, 2018, ch. 7).
Double Q-learning is on by default, as most n-step learners use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coach.agents.dqn import DQNAgent, DQNAgentParameters, DQNAlgorithmParameters
from coach.agents.q_learning import QAgent


@dataclass(slots=True, kw_only=True)
class NStepQAlgorithmParameters(DQNAlgorithmParameters):
    """DQN's algorithm parameters with n-step returns."""

    n_step: int = 3
    """Rewards summed before bootstrapping."""
    double_q: bool = True
    """Bootstrap with double Q-learning."""


@dataclass(slots=True, kw_only=True)
class NStepQAgentParameters(DQNAgentParameters):
    """An n-step double Q-learning agent."""

    algorithm: NStepQAlgorithmParameters = field(default_factory=NStepQAlgorithmParameters)
    """The algorithm's parameters."""

    def agent_class(self) -> type[QAgent]:
        return DQNAgent
