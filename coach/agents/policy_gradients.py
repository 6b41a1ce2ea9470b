"""Policy gradients: REINFORCE with a learned baseline (Williams, 1992; Sutton and Barto,
2018, section 13.4).

The gradient of E[log pi(a|s) (G - b(s))], with G the discounted return and b(s) a learned
state value. Blocks are long (whole episodes, typically), lambda = 1 makes G the Monte
Carlo return (bootstrapped from V only where a block or a time limit cuts an episode), and
one gradient step is taken per block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from coach.agents.on_policy import (
    OnPolicyAgent,
    OnPolicyAgentParameters,
    OnPolicyAlgorithmParameters,
)
from coach.core.types import Batch
from coach.memories.memory import MemoryParameters
from coach.memories.rollout import RolloutParameters


@dataclass(slots=True, kw_only=True)
class PolicyGradientsAlgorithmParameters(OnPolicyAlgorithmParameters):
    """REINFORCE's algorithm parameters."""

    gae_lambda: float = 1.0
    """1: Monte Carlo returns."""
    batch_size: int = 0
    """0: the whole block in one gradient step."""


@dataclass(slots=True, kw_only=True)
class PolicyGradientsAgentParameters(OnPolicyAgentParameters):
    """A REINFORCE agent with a value baseline."""

    algorithm: PolicyGradientsAlgorithmParameters = field(
        default_factory=PolicyGradientsAlgorithmParameters
    )
    """The algorithm's parameters."""
    memory: MemoryParameters | None = field(
        default_factory=lambda: RolloutParameters(rollout_length=500)
    )
    """Long blocks: whole episodes."""

    def agent_class(self) -> type[PolicyGradientsAgent]:
        return PolicyGradientsAgent


class PolicyGradientsAgent(OnPolicyAgent):
    """REINFORCE: log-likelihood weighted by the return minus the baseline."""

    def policy_loss(
        self, log_prob: torch.Tensor, batch: Batch, advantages: torch.Tensor
    ) -> torch.Tensor:
        return -(log_prob * advantages).mean()
