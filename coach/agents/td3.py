"""Twin Delayed DDPG (Fujimoto, van Hoof and Meger, "Addressing Function Approximation Error
in Actor-Critic Methods", ICML 2018).

DDPG with three changes against the critic's overestimation: two critics, the target being
the smaller of their target copies; target policy smoothing, clipped Gaussian noise on the
target actor's action; and delayed policy updates, the actor and every target network
moving once per ``policy_delay`` critic steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from coach import validation as check
from coach.agents.acting import DeterministicPolicy, Policy
from coach.agents.critics import (
    ActorCriticAlgorithmParameters,
    ActorCriticLearner,
    ContinuousActorCritic,
    ContinuousActorCriticAgentParameters,
    continuous_actor_critic_networks,
    soft_update,
    with_action,
)
from coach.agents.learning import Learner, on_device
from coach.core.types import Batch
from coach.networks.parameters import NetworkParameters


@dataclass(slots=True, kw_only=True)
class TD3AlgorithmParameters(ActorCriticAlgorithmParameters):
    """TD3's algorithm parameters (the paper's): the family's, and the three changes."""

    policy_delay: int = 2
    """Critic steps per actor step (and per soft update of the targets)."""
    target_policy_noise: float = 0.2
    """Std of the noise on the target action, as a fraction of half the action range."""
    target_noise_clip: float = 0.5
    """That noise is clipped to this, as a fraction of half the action range."""

    def validate(self) -> None:
        ActorCriticAlgorithmParameters.validate(self)
        check.whole("policy_delay", self.policy_delay, 1)
        check.number("target_policy_noise", self.target_policy_noise, 0)
        check.number("target_noise_clip", self.target_noise_clip, 0)


@dataclass(slots=True, kw_only=True)
class TD3AgentParameters(ContinuousActorCriticAgentParameters):
    """A TD3 agent: the family's defaults (those of Fujimoto et al.'s re-tuned DDPG, which
    TD3 is measured against) with twin critics, target smoothing and delayed actor
    updates."""

    algorithm: TD3AlgorithmParameters = field(default_factory=TD3AlgorithmParameters)
    """The algorithm's parameters."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: continuous_actor_critic_networks(("critic_1", "critic_2"))
    )
    """The ``actor`` and the twin critics ``critic_1`` and ``critic_2``."""

    def agent_class(self) -> type[TD3Agent]:
        return TD3Agent


class TD3Agent(ContinuousActorCritic):
    """TD3: twin critics, smoothed targets, delayed actor and target updates."""

    params: TD3AgentParameters

    critic_names = ("critic_1", "critic_2")

    def make_policy(self) -> Policy:
        return DeterministicPolicy(self.networks["actor"], **self.policy_arguments())

    def make_learner(self) -> Learner:
        return TD3Learner(**self.learner_arguments())


class TD3Learner(ActorCriticLearner):
    """TD3's update: both critics on the clipped double-Q target at smoothed target actions;
    every ``policy_delay`` critic steps, the actor up the first critic and the targets a
    step closer."""

    algorithm: TD3AlgorithmParameters

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.half_range = (self.high - self.low) / 2
        self.actor_updates = 0
        """Gradient steps taken by the actor (one per ``policy_delay`` critic steps)."""

    def next_actions(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """The target actor's actions with clipped Gaussian noise, kept in the bounds."""
        algorithm = self.algorithm
        actions = self.actor.target_predict(next_states)["policy"]
        noise = torch.randn(actions.shape, generator=self.torch_generator, device=self.device)
        clip = algorithm.target_noise_clip
        noise = (noise * algorithm.target_policy_noise).clamp(-clip, clip) * self.half_range
        return torch.maximum(torch.minimum(actions + noise, self.high), self.low)

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """The smaller of the twin target critics at the smoothed target actions, (B,)."""
        return self.critics.target_min(with_action(next_states, self.next_actions(next_states)))

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        algorithm = self.algorithm
        b = on_device(batch, self.device)
        losses = self.regress_critics(b)  # both on the clipped double-Q target
        # Every policy_delay critic steps: the actor climbs the first critic, targets follow.
        if self.critic_updates % algorithm.policy_delay == 0:
            losses["actor_loss"] = self.climb_first_critic(b.states)
            self.actor_updates += 1
            soft_update([self.actor], algorithm.tau)
            self.critics.update_target(algorithm.tau)
        return losses

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "actor_updates": self.actor_updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.actor_updates = int(state["actor_updates"])
