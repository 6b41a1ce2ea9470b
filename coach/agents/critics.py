"""What the off-policy actor-critic agents share (DDPG, TD3, SAC and HAC): networks built
alike, critics that read the action as an input, and the pieces of their updates as
functions.

Each algorithm derives from `ContinuousActorCritic` directly and writes its own
`learn_from_batch`, top to bottom: none inherits another's (HAC is DDPG's, level by level).
The critic reads the action as one more input (an ``"action"`` input embedder), so one
`NetworkParameters` describes it like any other network.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach import validation as check
from coach.agents.agent import Agent, AgentParameters, AlgorithmParameters
from coach.agents.learning import td_targets
from coach.core.types import Batch
from coach.errors import CoachError
from coach.networks.heads import DeterministicPolicyHeadParameters, HeadParameters, VHeadParameters
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
class ActorCriticAlgorithmParameters(AlgorithmParameters):
    """What the off-policy actor-critics share (SB3's defaults: a gradient step per env step
    on batches of 256)."""

    batch_size: int = 256
    """Transitions per gradient step."""
    tau: float = 0.005
    """How far the target networks move towards the online ones after each gradient step."""

    def validate(self) -> None:
        AlgorithmParameters.validate(self)
        check.number("tau", self.tau, 0, 1, low_open=True)


# -- the pieces of an update ----------------------------------------------------------------


def with_action(states: dict[str, torch.Tensor], actions: torch.Tensor) -> dict[str, torch.Tensor]:
    """A critic's inputs: the states and the actions (under ``"action"``)."""
    return {**states, "action": actions}


@contextmanager
def frozen(networks: list[NetworkWrapper]) -> Iterator[None]:
    """The networks' weights take no gradient inside (an actor's step through the critics)."""
    for network in networks:
        network.online.requires_grad_(False)
    try:
        yield
    finally:
        for network in networks:
            network.online.requires_grad_(True)


def soft_update(networks: list[NetworkWrapper], tau: float) -> None:
    """Every target moves ``tau`` of the way to its online network (Polyak averaging)."""
    for network in networks:
        network.update_target(tau)


# -- the family's shared agent ----------------------------------------------------------------


class ContinuousActorCritic(Agent):
    """An ``actor`` and the critics named by ``critic_names`` on a 1-d Box of actions.

    Attributes:
        actor: The actor network.
        critics: The critics, in the order of ``critic_names``.
        low, high: The action bounds, on the agent's device.
        critic_updates: Gradient steps taken by the critics.
    """

    critic_names: tuple[str, ...] = ("critic",)
    """The critics the agent trains."""

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

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """The value of the next states the critics' targets bootstrap from, (B,)."""
        raise NotImplementedError(f"{type(self).__name__} does not bootstrap")

    def regress_critics(self, b: Batch) -> dict[str, float]:
        """One gradient step of every critic on the squared error to the one-step TD target
        ``r + discount * bootstrap_values(s')``; each one's loss (``<name>_loss``) and the
        last one's mean Q(s, a) (``q_mean``)."""
        with torch.no_grad():
            next_values = self.bootstrap_values(b.next_states)
            target = td_targets(
                b.rewards, self.params.algorithm.discount, b.terminated, next_values
            )
        inputs = with_action(b.states, b.actions.float())
        losses = {}
        for name, critic in zip(self.critic_names, self.critics, strict=True):
            q = critic(inputs)["q"]
            loss = F.mse_loss(q, target)
            critic.train_step(loss)
            losses[f"{name}_loss"] = loss.item()
        self.critic_updates += 1
        losses["q_mean"] = q.detach().mean().item()
        return losses

    def climb_first_critic(self, states: dict[str, torch.Tensor]) -> float:
        """One gradient step of a deterministic actor up the first critic, maximizing
        ``Q(s, mu(s))``; the critics take no gradient. Returns the actor's loss."""
        with frozen(self.critics):
            actions = self.actor(states)["policy"]
            loss = -self.critics[0](with_action(states, actions))["q"].mean()
            self.actor.train_step(loss)
        return loss.item()

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        state = super().state_dict(include_memory)
        state["counters"]["critic_updates"] = self.critic_updates
        return state
