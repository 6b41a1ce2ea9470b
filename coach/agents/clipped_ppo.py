"""Clipped PPO (Schulman et al., 2017, "Proximal Policy Optimization Algorithms").

On rollout blocks (see `coach.agents.on_policy`), epochs of minibatch updates of

    L = -E[min(r A, clip(r, 1 - eps, 1 + eps) A)] + c_v (V - R)^2 - c_e H,   r = pi / pi_old

with normalized advantages, optional value clipping, a schedule for the clip range (and the
learning rate) over training env steps, and an early stop of a block's epochs once the
approximate KL divergence passes 1.5 times ``target_kl``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

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
from coach.schedules import ConstantSchedule, Schedule


def clipped_surrogate_loss(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, clip: float
) -> torch.Tensor:
    """-E[min(r A, clip(r, 1 - clip, 1 + clip) A)] with r = exp(log_prob - old_log_prob).

    The gradient vanishes for rows whose ratio already left the trust region in the
    direction their advantage pushes (r > 1 + clip with A > 0, r < 1 - clip with A < 0).
    """
    ratio = (log_prob - old_log_prob).exp()
    return -torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages).mean()


@dataclass(slots=True, kw_only=True)
class ClippedPPOAlgorithmParameters(OnPolicyAlgorithmParameters):
    """Clipped PPO's algorithm parameters."""

    epochs: int = 10
    """Passes over each rollout block."""
    clip_range_schedule: Schedule = field(default_factory=lambda: ConstantSchedule(0.2))
    """The ratio clip range over training env steps."""
    value_clip_range: float | None = None
    """Clip the value update around the old values by this much (``None``: no clipping)."""
    target_kl: float | None = None
    """Stop the epochs of a block once the approximate KL passes 1.5 times this."""

    def validate(self) -> None:
        OnPolicyAlgorithmParameters.validate(self)
        check.schedule("clip_range_schedule", self.clip_range_schedule, 0)
        if self.value_clip_range is not None:
            check.number("value_clip_range", self.value_clip_range, 0, low_open=True)
        if self.target_kl is not None:
            check.number("target_kl", self.target_kl, 0, low_open=True)


@dataclass(slots=True, kw_only=True)
class ClippedPPOAgentParameters(OnPolicyAgentParameters):
    """A Clipped PPO agent."""

    algorithm: ClippedPPOAlgorithmParameters = field(default_factory=ClippedPPOAlgorithmParameters)
    """The algorithm's parameters (``batch_size`` is the minibatch size)."""

    def agent_class(self) -> type[ClippedPPOAgent]:
        return ClippedPPOAgent


class ClippedPPOAgent(OnPolicyAgent):
    """Clipped PPO on T x B rollout blocks."""

    params: ClippedPPOAgentParameters

    def make_learner(self) -> Learner:
        return ClippedPPOLearner(**self.learner_arguments())


class ClippedPPOLearner(OnPolicyLearner):
    """Clipped PPO's update: epochs of minibatches on the clipped surrogate, the (clipped)
    value error and the entropy bonus, stopped early past ``target_kl``."""

    algorithm: ClippedPPOAlgorithmParameters

    def learn_block(self, clock: Clock) -> tuple[int, dict[str, float]]:
        algorithm = self.algorithm
        clip = algorithm.clip_range_schedule.value(clock.training_env_steps)
        self.log.scalar("Loss/clip_range", clip)
        self.compute_advantages()
        losses = LossTotals()
        for _ in range(algorithm.epochs):
            for minibatch in self.minibatches():
                view = self.evaluate(minibatch)  # the current networks on its rows
                b, log_prob, advantages = view.rows, view.log_prob, view.advantages
                policy_loss = clipped_surrogate_loss(
                    log_prob, b.extras["log_prob"], advantages, clip
                )
                values = view.values
                returns = b.extras["returns"]
                if algorithm.value_clip_range is None:
                    value_loss = value_error(values, returns)
                else:  # the new value stays within the clip range of the logged one
                    bound = algorithm.value_clip_range
                    old = b.extras["value"]
                    clipped = old + (values - old).clamp(-bound, bound)
                    value_loss = torch.max((values - returns) ** 2, (clipped - returns) ** 2)
                    value_loss = value_loss.mean()
                entropy = view.distribution.entropy().mean()
                self.descend(policy_loss, value_loss, entropy)
                kl = approx_kl(log_prob, b.extras["log_prob"])
                losses.add(
                    policy_loss=policy_loss.item(),
                    value_loss=value_loss.item(),
                    entropy=entropy.item(),
                    approx_kl=kl,
                )
                if algorithm.target_kl is not None and kl > 1.5 * algorithm.target_kl:
                    return losses.steps, losses.means()  # far enough from the old policy
        return losses.steps, losses.means()
