"""PPO with an adaptive KL penalty (Schulman et al., 2017, section 4), as in Coach's PPO.

On rollout blocks (see `coach.agents.on_policy`): minimize
-E[r A] + beta * KL(pi_old || pi), r = pi / pi_old, with the KL estimated from the block's own
actions as E[(r - 1) - log r]. After each block beta doubles if the mean KL exceeded 1.5 times
``target_kl`` and halves if it stayed under ``target_kl / 1.5``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coach import validation as check
from coach.agents.learning import Clock, Learner
from coach.agents.on_policy import OnPolicyAgent, OnPolicyAgentParameters
from coach.agents.on_policy_learning import (
    LossTotals,
    OnPolicyAlgorithmParameters,
    OnPolicyLearner,
    approx_kl,
    value_error,
)


@dataclass(slots=True, kw_only=True)
class PPOAlgorithmParameters(OnPolicyAlgorithmParameters):
    """PPO's (KL penalty) algorithm parameters."""

    epochs: int = 10
    """Passes over each rollout block."""
    target_kl: float = 0.01
    """The KL divergence per block that the penalty steers towards."""
    initial_kl_coefficient: float = 1.0
    """beta at the start."""

    def validate(self) -> None:
        OnPolicyAlgorithmParameters.validate(self)
        check.number("target_kl", self.target_kl, 0, low_open=True)
        check.number("initial_kl_coefficient", self.initial_kl_coefficient, 0)


@dataclass(slots=True, kw_only=True)
class PPOAgentParameters(OnPolicyAgentParameters):
    """A PPO agent with the adaptive KL penalty."""

    algorithm: PPOAlgorithmParameters = field(default_factory=PPOAlgorithmParameters)
    """The algorithm's parameters."""

    def agent_class(self) -> type[PPOAgent]:
        return PPOAgent


class PPOAgent(OnPolicyAgent):
    """PPO with the KL-penalized surrogate."""

    params: PPOAgentParameters

    def make_learner(self) -> Learner:
        return PPOLearner(**self.learner_arguments())


class PPOLearner(OnPolicyLearner):
    """The KL-penalized surrogate, with beta adapted after every block."""

    algorithm: PPOAlgorithmParameters

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kl_coefficient = self.algorithm.initial_kl_coefficient

    def learn_block(self, clock: Clock) -> tuple[int, dict[str, float]]:
        algorithm = self.algorithm
        self.compute_advantages()
        losses = LossTotals()
        for _ in range(algorithm.epochs):
            for minibatch in self.minibatches():
                view = self.evaluate(minibatch)  # the current networks on its rows
                b, log_prob, advantages = view.rows, view.log_prob, view.advantages
                log_ratio = log_prob - b.extras["log_prob"]
                ratio = log_ratio.exp()
                kl = ((ratio - 1) - log_ratio).mean()
                policy_loss = -(ratio * advantages).mean() + self.kl_coefficient * kl
                value_loss = value_error(view.values, b.extras["returns"])
                entropy = view.distribution.entropy().mean()
                self.descend(policy_loss, value_loss, entropy)
                losses.add(
                    policy_loss=policy_loss.item(),
                    value_loss=value_loss.item(),
                    entropy=entropy.item(),
                    approx_kl=approx_kl(log_prob, b.extras["log_prob"]),
                )
        # Beta doubles when the block's mean KL overshot 1.5 x target, halves below 1 / 1.5.
        mean_kl = losses.means().get("approx_kl")
        if mean_kl is not None:
            if mean_kl > 1.5 * algorithm.target_kl:
                self.kl_coefficient *= 2.0
            elif mean_kl < algorithm.target_kl / 1.5:
                self.kl_coefficient /= 2.0
            self.log.scalar("Loss/kl_coefficient", self.kl_coefficient)
        return losses.steps, losses.means()

    def state_dict(self) -> dict[str, Any]:
        return {"kl_coefficient": self.kl_coefficient}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.kl_coefficient = float(state["kl_coefficient"])
