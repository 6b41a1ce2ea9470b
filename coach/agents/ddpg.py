"""Deep Deterministic Policy Gradient (Lillicrap et al., 2016).

A deterministic actor ``mu(s)`` and a critic ``Q(s, a)``, each with a target copy that follows
it slowly (``target = tau * online + (1 - tau) * target`` after every gradient step). The
critic regresses on ``r + discount * Q'(s', mu'(s'))`` (no bootstrap past a termination,
one past a truncation); the actor climbs the critic, ``maximize Q(s, mu(s))``. Acting adds
exploration noise (Ornstein-Uhlenbeck or Gaussian) to ``mu(s)`` in training, none in
evaluation.

The critic reads the action as one more input (`coach.agents.critics`, which also holds
the family's bases and the pieces DDPG shares with TD3, SAC and Wolpertinger). DDPG's
update is a function, `ddpg_update`, which a HAC level's learner calls too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from coach.agents.acting import DeterministicPolicy, Policy
from coach.agents.critics import (
    ActorCriticAlgorithmParameters,
    ActorCriticLearner,
    ContinuousActorCritic,
    ContinuousActorCriticAgentParameters,
    Critics,
    actor_network,
    critic_network,
    soft_update,
    with_action,
)
from coach.agents.learning import Learner, on_device
from coach.core.types import Batch
from coach.networks.network_wrapper import NetworkWrapper


@dataclass(slots=True, kw_only=True)
class DDPGAlgorithmParameters(ActorCriticAlgorithmParameters):
    """DDPG's algorithm parameters (SB3's defaults: a gradient step per env step on batches
    of 256)."""


@dataclass(slots=True, kw_only=True)
class DDPGAgentParameters(ContinuousActorCriticAgentParameters):
    """A DDPG agent: Gaussian exploration noise, uniform replay, an actor and a critic of
    400 and 300 units (Fujimoto et al.'s re-tuned DDPG), each with a target copy (the
    family's defaults, `ContinuousActorCriticAgentParameters`)."""

    algorithm: DDPGAlgorithmParameters = field(default_factory=DDPGAlgorithmParameters)
    """The algorithm's parameters."""

    def agent_class(self) -> type[ContinuousActorCritic]:
        return DDPGAgent


class DDPGAgent(ContinuousActorCritic):
    """DDPG: deterministic actor, one critic, target copies of both."""

    params: DDPGAgentParameters

    def make_policy(self) -> Policy:
        return DeterministicPolicy(self.networks["actor"], **self.policy_arguments())

    def make_learner(self) -> Learner:
        return DDPGLearner(**self.learner_arguments())


def target_actor_values(
    actor: NetworkWrapper, critics: Critics, next_states: dict[str, torch.Tensor]
) -> torch.Tensor:
    """``Q'(s', mu'(s'))`` (B,): the target critic at the target actor's actions (the
    smallest of the target critics', where there are several)."""
    inputs = with_action(next_states, actor.target_predict(next_states)["policy"])
    return critics.target_min(inputs)


def ddpg_update(learner: ActorCriticLearner, b: Batch) -> dict[str, float | torch.Tensor]:
    """DDPG's gradient step on a batch on the learner's device: the critic on the one-step TD
    target from the learner's `bootstrap_values`, the actor up the critic, both targets a
    step closer. A HAC level learns by it too, with targets of its own
    (`coach.agents.hac.HACLearner`)."""
    tau = learner.algorithm.tau
    losses = learner.regress_critics(b)  # the critic on the one-step TD target
    losses["actor_loss"] = learner.climb_first_critic(b.states)  # maximize Q(s, mu(s))
    soft_update([learner.actor], tau)
    learner.critics.update_target(tau)
    return losses


class DDPGLearner(ActorCriticLearner):
    """DDPG's update (`ddpg_update`): the critic on the one-step TD target through the target
    actor and critic, the actor up the critic, both targets a step closer."""

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """``Q'(s', mu'(s'))`` (B,): the target critic at the target actor's actions."""
        return target_actor_values(self.actor, self.critics, next_states)

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        return ddpg_update(self, on_device(batch, self.device))


__all__ = [
    "DDPGAgent",
    "DDPGAgentParameters",
    "DDPGAlgorithmParameters",
    "DDPGLearner",
    "DeterministicPolicy",
    "actor_network",
    "critic_network",
    "ddpg_update",
    "target_actor_values",
    "with_action",
]
