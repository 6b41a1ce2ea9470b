"""Double DQN (van Hasselt et al., 2016, "Deep Reinforcement Learning with Double Q-learning").

The online network picks the next action, the target network values it: the max over noisy
estimates no longer feeds its own overestimate back into the targets. It is DQN with
``algorithm.double_q`` on (`coach.agents.dqn.DQNAgent`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coach.agents.dqn import DQNAgent, DQNAgentParameters
from coach.agents.q_learning import DQNAlgorithmParameters, QAgent


@dataclass(slots=True, kw_only=True)
class DDQNAgentParameters(DQNAgentParameters):
    """DQN's parameters, bootstrapping with double Q-learning."""

    algorithm: DQNAlgorithmParameters = field(
        default_factory=lambda: DQNAlgorithmParameters(double_q=True)
    )
    """The algorithm's parameters (``double_q`` on)."""

    def agent_class(self) -> type[QAgent]:
        return DQNAgent
