"""Deep Deterministic Policy Gradient (Lillicrap et al., 2016).

A deterministic actor ``mu(s)`` and a critic ``Q(s, a)``, each with a target copy that follows
it slowly (``target = tau * online + (1 - tau) * target`` after every gradient step). The
critic regresses on ``r + discount * Q'(s', mu'(s'))`` (no bootstrap past a termination,
one past a truncation); the actor climbs the critic, ``maximize Q(s, mu(s))``. Acting adds
exploration noise (Ornstein-Uhlenbeck or Gaussian) to ``mu(s)`` in training, none in
evaluation.

The critic reads the action as one more input (`coach.agents.critics`, which also holds
what DDPG shares with TD3, SAC and HAC).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from coach import validation as check
from coach.agents.acting import DeterministicPolicy, Policy
from coach.agents.critics import (
    ActorCriticAlgorithmParameters,
    ActorCriticLearner,
    ContinuousActorCritic,
    actor_network,
    continuous_actor_critic_networks,
    critic_network,
    soft_update,
    with_action,
)
from coach.agents.learning import Learner, on_device
from coach.agents.parameters import AgentParameters
from coach.core.types import Batch
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.parameters import NetworkParameters


@dataclass(slots=True, kw_only=True)
class DDPGAlgorithmParameters(ActorCriticAlgorithmParameters):
    """DDPG's algorithm parameters (SB3's defaults: a gradient step per env step on batches
    of 256)."""


@dataclass(slots=True, kw_only=True)
class DDPGAgentParameters(AgentParameters):
    """A DDPG agent: Gaussian exploration noise, uniform replay, an actor and a critic of
    400 and 300 units (Fujimoto et al.'s re-tuned DDPG), each with a target copy."""

    algorithm: DDPGAlgorithmParameters = field(default_factory=DDPGAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = field(default_factory=AdditiveNoiseParameters)
    """Noise added to the actor's actions in training (Gaussian, or `OUProcessParameters`)."""
    memory: MemoryParameters | None = field(default_factory=ExperienceReplayParameters)
    """The replay memory."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=continuous_actor_critic_networks
    )
    """The ``actor`` and the ``critic``."""

    def validate(self) -> None:
        check.component("memory", self.memory, "ExperienceReplayParameters()", optional=False)
        AgentParameters.validate(self)

    def agent_class(self) -> type[ContinuousActorCritic]:
        return DDPGAgent


class DDPGAgent(ContinuousActorCritic):
    """DDPG: deterministic actor, one critic, target copies of both."""

    params: DDPGAgentParameters

    def make_policy(self) -> Policy:
        return DeterministicPolicy(self.networks["actor"], **self.policy_arguments())

    def make_learner(self) -> Learner:
        return DDPGLearner(**self.learner_arguments())


class DDPGLearner(ActorCriticLearner):
    """DDPG's update: the critic on the one-step TD target through the target actor and
    critic, the actor up the critic, both targets a step closer."""

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """``Q'(s', mu'(s'))`` (B,): the target critic at the target actor's actions."""
        inputs = with_action(next_states, self.actor.target_predict(next_states)["policy"])
        return self.critics.target_min(inputs)  # the one critic's

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        b = on_device(batch, self.device)
        losses = self.regress_critics(b)  # the critic on the one-step TD target
        losses["actor_loss"] = self.climb_first_critic(b.states)  # maximize Q(s, mu(s))
        soft_update([self.actor], self.algorithm.tau)
        self.critics.update_target(self.algorithm.tau)
        return losses


__all__ = [
    "DDPGAgent",
    "DDPGAgentParameters",
    "DDPGAlgorithmParameters",
    "DDPGLearner",
    "DeterministicPolicy",
    "actor_network",
    "critic_network",
    "with_action",
]
