"""Policy gradients: REINFORCE with a learned baseline (Williams, 1992; Sutton and Barto,
2018, section 13.4).

The gradient of E[log pi(a|s) (G - b(s))], with G the discounted return and b(s) a learned
state value. Blocks are long (whole episodes, typically), lambda = 1 makes G the Monte
Carlo return (bootstrapped from V only where a block or a time limit cuts an episode), and
one gradient step is taken per block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coach.agents.learning import Clock, Learner
from coach.agents.on_policy import OnPolicyAgent, OnPolicyAgentParameters
from coach.agents.on_policy_learning import (
    LossTotals,
    OnPolicyAlgorithmParameters,
    OnPolicyLearner,
    approx_kl,
    value_error,
)
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
    """REINFORCE with a baseline, and A2C: the log-likelihood of each action weighted by its
    advantage, ``-E[log pi(a|s) A] + c_v (V - R)^2 - c_e H``, on every full block."""

    def make_learner(self) -> Learner:
        return PolicyGradientsLearner(**self.learner_arguments())


class PolicyGradientsLearner(OnPolicyLearner):
    """The policy-gradient update: every epoch over the block's minibatches, one step on
    ``-E[log pi(a|s) A] + c_v (V - R)^2 - c_e H``."""

    def learn_block(self, clock: Clock) -> tuple[int, dict[str, float]]:
        algorithm = self.algorithm
        self.compute_advantages()
        losses = LossTotals()
        for _ in range(algorithm.epochs):
            for minibatch in self.minibatches():
                view = self.evaluate(minibatch)  # the current networks on its rows
                b, log_prob, advantages = view.rows, view.log_prob, view.advantages
                policy_loss = -(log_prob * advantages).mean()
                value_loss = value_error(view.values, b.extras["returns"])
                entropy = view.distribution.entropy().mean()
                self.descend(policy_loss, value_loss, entropy)
                losses.add(
                    policy_loss=policy_loss.item(),
                    value_loss=value_loss.item(),
                    entropy=entropy.item(),
                    approx_kl=approx_kl(log_prob, b.extras["log_prob"]),
                )
        return losses.steps, losses.means()
