"""Rainbow (Hessel et al., 2018, "Rainbow: Combining Improvements in Deep RL").

C51's distributional loss with double Q-learning, n-step returns, prioritized replay (the
cross-entropy as priority), a dueling categorical head and noisy layers for exploration, so
acting is greedy on the noisy network and no epsilon is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coach.agents.categorical_dqn import (
    CategoricalDQNAgent,
    CategoricalDQNAgentParameters,
    CategoricalDQNAlgorithmParameters,
)
from coach.exploration.e_greedy import EGreedyParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.memories.memory import MemoryParameters
from coach.memories.prioritized_experience_replay import PrioritizedExperienceReplayParameters
from coach.networks.heads import CategoricalQHeadParameters
from coach.networks.parameters import NetworkParameters
from coach.schedules import ConstantSchedule


@dataclass(slots=True, kw_only=True)
class RainbowAlgorithmParameters(CategoricalDQNAlgorithmParameters):
    """Rainbow's algorithm parameters."""

    double_q: bool = True
    """Pick the bootstrap action with the online network."""
    n_step: int = 3
    """Rewards summed before bootstrapping."""


@dataclass(slots=True, kw_only=True)
class RainbowAgentParameters(CategoricalDQNAgentParameters):
    """A Rainbow agent."""

    algorithm: RainbowAlgorithmParameters = field(default_factory=RainbowAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = field(
        default_factory=lambda: EGreedyParameters(epsilon_schedule=ConstantSchedule(0.0))
    )
    """Greedy acting: the noisy layers explore."""
    memory: MemoryParameters | None = field(default_factory=PrioritizedExperienceReplayParameters)
    """Prioritized replay."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {
            "main": NetworkParameters(
                heads=[CategoricalQHeadParameters(dueling=True, noisy=True)],
                create_target_network=True,
            )
        }
    )
    """A dueling, noisy categorical Q network (``main``)."""

    def agent_class(self) -> type[CategoricalDQNAgent]:
        return CategoricalDQNAgent
