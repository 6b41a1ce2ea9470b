"""Advantage actor-critic, A2C (Mnih et al., 2016, "Asynchronous Methods for Deep RL", in
its synchronous, batched form).

On each rollout block (see `coach.agents.on_policy`), one gradient step on the whole block
of ``-E[log pi(a|s) A] + c_v (V - R)^2 - c_e H`` with GAE(lambda) advantages (lambda = 1:
n-step returns bootstrapped from the block's end): the policy-gradient update
(`coach.agents.policy_gradients.PolicyGradientsAgent`) on short blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coach.agents.on_policy import OnPolicyAgentParameters
from coach.agents.on_policy_learning import OnPolicyAlgorithmParameters
from coach.agents.policy_gradients import PolicyGradientsAgent
from coach.memories.memory import MemoryParameters
from coach.memories.rollout import RolloutParameters


@dataclass(slots=True, kw_only=True)
class A2CAlgorithmParameters(OnPolicyAlgorithmParameters):
    """A2C's algorithm parameters (named for the algorithm: `ActorCriticAlgorithmParameters`
    is the off-policy actor-critics' base, `coach.agents.critics`)."""

    gae_lambda: float = 1.0
    """GAE's lambda (1: n-step returns to the end of the block)."""
    batch_size: int = 0
    """Steps per gradient step; 0 takes the whole block at once."""
    normalize_advantages: bool = False
    """Standardize the advantages of each minibatch."""


@dataclass(slots=True, kw_only=True)
class ActorCriticAgentParameters(OnPolicyAgentParameters):
    """An A2C agent."""

    algorithm: A2CAlgorithmParameters = field(default_factory=A2CAlgorithmParameters)
    """The algorithm's parameters."""
    memory: MemoryParameters | None = field(
        default_factory=lambda: RolloutParameters(rollout_length=5)
    )
    """Short rollout blocks (5 steps per env copy)."""

    def agent_class(self) -> type[PolicyGradientsAgent]:
        return PolicyGradientsAgent
