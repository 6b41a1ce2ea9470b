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
from typing import Any

import numpy as np
import torch

from coach import validation as check
from coach.agents.acting import Policy
from coach.agents.agent import AgentParameters
from coach.agents.critics import (
    ActorCriticAlgorithmParameters,
    ContinuousActorCritic,
    actor_network,
    critic_network,
    critic_steps,
    frozen,
    soft_update,
    with_action,
)
from coach.agents.learning import td_targets
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Batch, Observation
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    NetworkParameters,
)


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
        default_factory=lambda: {
            "actor": actor_network([400, 300], 1e-3),
            "critic": critic_network([400, 300], 1e-3),
        }
    )
    """The ``actor`` and the ``critic``."""

    def validate(self) -> None:
        check.component("memory", self.memory, "ExperienceReplayParameters()", optional=False)
        AgentParameters.validate(self)

    def agent_class(self) -> type[ContinuousActorCritic]:
        return DDPGAgent


class DeterministicPolicy(Policy):
    """Acts with a deterministic actor's actions, with the exploration's noise in training
    (none while the level above tests a subgoal).

    Args:
        actor: The actor network (a ``policy`` head).
        **kwargs: `Policy`'s arguments.
    """

    def __init__(self, actor: NetworkWrapper, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.actor = actor

    def actions(self, state: Observation) -> np.ndarray:
        """The actor's actions for a batch of states, before exploration."""
        with torch.no_grad():
            return self.actor(self.tensors(state))["policy"].cpu().numpy()

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        actions = self.actions(state)
        if self.exploration is not None:
            actions = self.exploration.get_action(
                actions, phase if self.explore else RunPhase.EVALUATE
            )
        return ActionInfo(action=actions.astype(self.action_space.dtype, copy=False))


class DDPGAgent(ContinuousActorCritic):
    """DDPG: deterministic actor, one critic, target copies of both."""

    params: DDPGAgentParameters

    def make_policy(self) -> Policy:
        return DeterministicPolicy(self.networks["actor"], **self.policy_arguments())

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """``Q'(s', mu'(s'))`` (B,): the target critic at the target actor's actions."""
        inputs = with_action(next_states, self.actor.target_predict(next_states)["policy"])
        return self.critics[0].target_predict(inputs)["q"]

    def learn_from_batch(self, batch: Batch) -> dict[str, float]:
        algorithm = self.params.algorithm
        b = batch.map(lambda a: torch.as_tensor(a, device=self.device))
        # The critic regresses on the one-step TD target.
        with torch.no_grad():
            next_values = self.bootstrap_values(b.next_states)
            target = td_targets(b.rewards, algorithm.discount, b.terminated, next_values)
        inputs = with_action(b.states, b.actions.float())
        losses, q = critic_steps(self.critics, self.critic_names, inputs, target)
        self.critic_updates += 1
        # The actor climbs the critic: maximize Q(s, mu(s)); the critic takes no gradient.
        with frozen(self.critics):
            actions = self.actor(b.states)["policy"]
            actor_loss = -self.critics[0](with_action(b.states, actions))["q"].mean()
            self.actor.train_step(actor_loss)
        soft_update([self.actor, *self.critics], algorithm.tau)
        return {**losses, "q_mean": q.mean().item(), "actor_loss": actor_loss.item()}


__all__ = [
    "DDPGAgent",
    "DDPGAgentParameters",
    "DDPGAlgorithmParameters",
    "DeterministicPolicy",
    "actor_network",
    "critic_network",
    "with_action",
]
