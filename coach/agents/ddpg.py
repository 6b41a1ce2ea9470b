"""Deep Deterministic Policy Gradient (Lillicrap et al., 2016).

A deterministic actor ``mu(s)`` and a critic ``Q(s, a)``, each with a target copy that follows
it slowly (``target = tau * online + (1 - tau) * target`` after every gradient step). The
critic regresses on ``r + discount * Q'(s', mu'(s'))`` (no bootstrap past a termination,
one past a truncation); the actor climbs the critic, ``maximize Q(s, mu(s))``. Acting adds
exploration noise (Ornstein-Uhlenbeck or Gaussian) to ``mu(s)`` in training, none in
evaluation.

The critic reads the action as one more input (an ``"action"`` input embedder), so one
`NetworkParameters` describes it like any other network. TD3 (`coach.agents.td3`) builds on
this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach import validation as check
from coach.agents.agent import Agent, AgentParameters, AlgorithmParameters
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Batch, Observation
from coach.errors import CoachError
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.networks.heads import (
    DeterministicPolicyHeadParameters,
    HeadParameters,
    VHeadParameters,
)
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import (
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
)


def actor_network(
    scheme: list[int],
    learning_rate: float,
    head: HeadParameters | None = None,
    target: bool = True,
    activation: str = "relu",
) -> NetworkParameters:
    """A policy network over the observation: an MLP and a policy head (deterministic by
    default), with a target copy unless ``target`` is false (SAC's actor has none)."""
    return NetworkParameters(
        middleware=MiddlewareParameters(scheme=list(scheme), activation=activation),
        heads=[head or DeterministicPolicyHeadParameters()],
        learning_rate=learning_rate,
        create_target_network=target,
    )


def critic_network(
    scheme: list[int], learning_rate: float, activation: str = "relu"
) -> NetworkParameters:
    """A ``Q(s, a)`` network: the observation and the action, concatenated, through an MLP
    to one value (``"q"``), with a target copy."""
    return NetworkParameters(
        input_embedders={
            "observation": InputEmbedderParameters(),
            "action": InputEmbedderParameters(),
        },
        middleware=MiddlewareParameters(scheme=list(scheme), activation=activation),
        heads=[VHeadParameters(name="q")],
        learning_rate=learning_rate,
        create_target_network=True,
    )


@dataclass(slots=True, kw_only=True)
class DDPGAlgorithmParameters(AlgorithmParameters):
    """DDPG's algorithm parameters (SB3's defaults: a gradient step per env step on batches
    of 256)."""

    batch_size: int = 256
    """Transitions per gradient step."""
    tau: float = 0.005
    """How far the target networks move towards the online ones after each gradient step."""

    def validate(self) -> None:
        AlgorithmParameters.validate(self)
        check.number("tau", self.tau, 0, 1, low_open=True)


@dataclass(slots=True, kw_only=True)
class DDPGAgentParameters(AgentParameters):
    """A DDPG agent: Gaussian exploration noise, uniform replay, an actor and a critic of
    400 and 300 units (Fujimoto et al.'s re-tuned DDPG), each with a target copy."""

    algorithm: DDPGAlgorithmParameters = field(default_factory=DDPGAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: Any = field(default_factory=AdditiveNoiseParameters)
    """Noise added to the actor's actions in training (Gaussian, or `OUProcessParameters`)."""
    memory: Any = field(default_factory=ExperienceReplayParameters)
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

    def agent_class(self) -> type[DDPGAgent]:
        return DDPGAgent


def with_action(states: dict[str, torch.Tensor], actions: torch.Tensor) -> dict[str, torch.Tensor]:
    """A critic's inputs: the states and the actions (under ``"action"``)."""
    return {**states, "action": actions}


class DDPGAgent(Agent):
    """DDPG: deterministic actor, one critic, target copies of both."""

    params: DDPGAgentParameters

    critic_names: tuple[str, ...] = ("critic",)
    """The critics the agent trains (TD3 and SAC have two)."""

    def __init__(self, params: AgentParameters, *args: Any, **kwargs: Any) -> None:
        super().__init__(params, *args, **kwargs)
        space = self.action_space
        if not isinstance(space, spaces.Box) or len(space.shape) != 1:
            raise CoachError(
                f"{type(self).__name__} needs a 1-d Box action space, got {space}; a "
                f"discrete environment needs a discrete agent"
            )
        missing = {"actor", *self.critic_names} - set(self.networks)
        if missing:
            raise CoachError(
                f"{type(self).__name__} needs the networks actor and "
                f"{', '.join(self.critic_names)}; missing {sorted(missing)}"
            )
        self.actor = self.networks["actor"]
        self.critics: list[NetworkWrapper] = [self.networks[n] for n in self.critic_names]
        self.low = torch.as_tensor(space.low, dtype=torch.float32, device=self.device)
        self.high = torch.as_tensor(space.high, dtype=torch.float32, device=self.device)
        self.critic_updates = 0
        """Gradient steps taken by the critics."""

    # -- acting -----------------------------------------------------------------------------

    def policy_actions(self, state: Observation) -> np.ndarray:
        """The actor's actions for a batch of states, before exploration."""
        with torch.no_grad():
            return self.actor(self.tensors(state))["policy"].cpu().numpy()

    def choose_action(self, state: Observation) -> ActionInfo:
        actions = self.policy_actions(state)
        if self.exploration is not None:
            phase = self.phase if self.explore else RunPhase.EVALUATE
            actions = self.exploration.get_action(actions, phase)
        return ActionInfo(action=actions.astype(self.action_space.dtype, copy=False))

    # -- learning ---------------------------------------------------------------------------

    def next_actions(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """The actions the targets bootstrap from: the target actor's."""
        return self.actor.target_predict(next_states)["policy"]

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """``Q'(s', a')`` (B,): the target critic at the target actions (the smaller of the
        target critics, when there are two)."""
        inputs = with_action(next_states, self.next_actions(next_states))
        values = [critic.target_predict(inputs)["q"] for critic in self.critics]
        return values[0] if len(values) == 1 else torch.minimum(values[0], values[1])

    def train_critics(self, b: Batch) -> dict[str, float]:
        """One gradient step of every critic towards the one-step TD target."""
        with torch.no_grad():
            not_terminal = 1.0 - b.terminated.float()
            target = b.rewards + self.params.algorithm.discount * not_terminal * (
                self.bootstrap_values(b.next_states)
            )
        inputs = with_action(b.states, b.actions.float())
        losses = {}
        for name, critic in zip(self.critic_names, self.critics, strict=True):
            q = critic(inputs)["q"]
            loss = F.mse_loss(q, target)
            critic.train_step(loss)
            losses[f"{name}_loss"] = loss.item()
        losses["q_mean"] = q.detach().mean().item()
        self.critic_updates += 1
        return losses

    def actor_loss(self, states: dict[str, torch.Tensor]) -> torch.Tensor:
        """``-Q(s, mu(s))``, averaged: the actor climbs the first critic."""
        return -self.critics[0](with_action(states, self.actor(states)["policy"]))["q"].mean()

    def train_actor(self, states: dict[str, torch.Tensor]) -> float:
        """One gradient step of the actor; the critics' weights get no gradient from it."""
        for critic in self.critics:
            critic.online.requires_grad_(False)
        try:
            loss = self.actor_loss(states)
            self.actor.train_step(loss)
        finally:
            for critic in self.critics:
                critic.online.requires_grad_(True)
        return loss.item()

    def update_targets(self) -> None:
        tau = self.params.algorithm.tau
        for network in (self.actor, *self.critics):
            network.update_target(tau)

    def learn_from_batch(self, batch: Batch) -> dict[str, float]:
        b = batch.map(lambda a: torch.as_tensor(a, device=self.device))
        losses = self.train_critics(b)
        losses["actor_loss"] = self.train_actor(b.states)
        self.update_targets()
        return losses

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        state = super().state_dict(include_memory)
        state["counters"]["critic_updates"] = self.critic_updates
        return state
