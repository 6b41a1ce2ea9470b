"""What the off-policy actor-critic agents share (DDPG, TD3, SAC, Wolpertinger and HAC's
levels): networks built alike, critics that read the action as an input, the pieces of their
updates as functions, and the family's bases: parameters
(`ActorCriticAlgorithmParameters`, `ContinuousActorCriticAgentParameters`), agent
(`ContinuousActorCritic`) and learner (`ActorCriticLearner`).

Each algorithm's parameters, agent and learner derive from these bases directly, and its
`learn` is the update, top to bottom: none inherits another algorithm's class. What two
algorithms share is a function (a HAC level learns by DDPG's update,
`coach.agents.ddpg.ddpg_update`, with its own bootstrap).
The critic reads the action as one more input (an ``"action"`` input embedder), so one
`NetworkParameters` describes it like any other network.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from coach import validation as check
from coach.agents.acting import action_bounds
from coach.agents.agent import Agent
from coach.agents.algorithm import AlgorithmParameters
from coach.agents.learning import Learner, td_targets
from coach.agents.parameters import AgentParameters
from coach.core.types import Batch
from coach.errors import CoachError
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.ensemble import NetworkEnsemble
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


def continuous_actor_critic_networks(
    critics: tuple[str, ...] = ("critic",),
) -> dict[str, NetworkParameters]:
    """The continuous actor-critics' networks (Fujimoto et al.'s re-tuned DDPG): an
    ``actor`` and the named critics, each of 400 and 300 units with Adam at 1e-3 and a
    target copy. (The on-policy agents' separate actor and critic, V-valued, are
    `coach.agents.on_policy.actor_critic_networks`.)"""
    networks = {"actor": actor_network([400, 300], 1e-3)}
    networks.update({name: critic_network([400, 300], 1e-3) for name in critics})
    return networks


@dataclass(slots=True, kw_only=True)
class ActorCriticAlgorithmParameters(AlgorithmParameters):
    """What the off-policy actor-critics share (SB3's defaults: a gradient step per env step
    on batches of 256)."""

    batch_size: int = 256
    """Transitions per gradient step."""
    tau: float = 0.005
    """How far the target networks move towards the online ones after each gradient step."""
    stack_critics: bool = False
    """Run the critics (TD3's and SAC's twins) as one stacked network: one batched matrix
    product per layer for all of them, one optimizer step, one target update
    (`coach.networks.ensemble`). Fewer kernels, which pays on a GPU; the same arithmetic on
    a CPU. The numbers differ from separate critics' in the last bits, so it is off by
    default; its checkpoints hold the networks ``actor`` and ``critics``."""

    def validate(self) -> None:
        AlgorithmParameters.validate(self)
        check.number("tau", self.tau, 0, 1, low_open=True)


@dataclass(slots=True, kw_only=True)
class ContinuousActorCriticAgentParameters(AgentParameters):
    """What an off-policy actor-critic agent's parameters start from, the base of each
    algorithm's: Gaussian exploration noise, uniform replay, an actor and a critic of 400
    and 300 units (Fujimoto et al.'s re-tuned DDPG), each with a target copy. An algorithm
    changes what it does differently (TD3 its twin critics, SAC its own exploration and
    networks, a HAC level its hindsight memory)."""

    abstract: ClassVar[bool] = True

    algorithm: ActorCriticAlgorithmParameters = field(
        default_factory=ActorCriticAlgorithmParameters
    )
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


STACKED_CRITICS = "critics"
"""The name of the stacked critics among an agent's networks (``stack_critics``)."""


class Critics:
    """An actor-critic learner's critics as its update uses them, a network each.

    Args:
        names: The critics' names, in order (their losses are ``<name>_loss``).
        networks: The critics.
    """

    def __init__(self, names: tuple[str, ...], networks: list[NetworkWrapper]) -> None:
        self.names = names
        self.networks = networks

    def target_min(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The smallest of the target critics' values (the one critic's), (B,)."""
        values = (critic.target_predict(inputs)["q"] for critic in self.networks)
        return functools.reduce(torch.minimum, values)

    def online_min(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The smallest of the critics' values, (B,)."""
        return functools.reduce(torch.minimum, (critic(inputs)["q"] for critic in self.networks))

    def first(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The first critic's values, (B,)."""
        return self.networks[0](inputs)["q"]

    def regress(
        self, inputs: dict[str, torch.Tensor], target: torch.Tensor
    ) -> dict[str, float | torch.Tensor]:
        """A gradient step of each critic on its squared error to ``target``; each one's loss
        (``<name>_loss``) and the last one's mean value (``q_mean``)."""
        losses: dict[str, float | torch.Tensor] = {}
        for name, critic in zip(self.names, self.networks, strict=True):
            q = critic(inputs)["q"]
            loss = F.mse_loss(q, target)
            critic.train_step(loss)
            losses[f"{name}_loss"] = loss.detach()
        losses["q_mean"] = q.detach().mean()
        return losses

    def update_target(self, tau: float) -> None:
        soft_update(self.networks, tau)

    def frozen(self) -> AbstractContextManager[None]:
        """The critics take no gradient inside (an actor's step through them)."""
        return frozen(self.networks)


class StackedCritics(Critics):
    """`Critics` run as one stacked network (``stack_critics``): each call evaluates all of
    them in one batched product per layer, each regression step is one optimizer step."""

    def __init__(self, names: tuple[str, ...], ensemble: NetworkEnsemble) -> None:
        super().__init__(names, [ensemble])
        self.ensemble = ensemble

    def target_min(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.ensemble.target_predict(inputs)["q"].amin(0)

    def online_min(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.ensemble(inputs)["q"].amin(0)

    def first(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.ensemble.member(0, inputs)["q"]  # the first critic alone

    def regress(
        self, inputs: dict[str, torch.Tensor], target: torch.Tensor
    ) -> dict[str, float | torch.Tensor]:
        q = self.ensemble(inputs)["q"]  # (N, B)
        each = (q - target).square().mean(1)  # every critic's squared error
        self.ensemble.train_step(each.sum())  # the sum: each critic's gradient is its own
        losses: dict[str, float | torch.Tensor] = {
            f"{name}_loss": loss for name, loss in zip(self.names, each.detach(), strict=True)
        }
        losses["q_mean"] = q[-1].detach().mean()
        return losses


# -- the family's shared agent ----------------------------------------------------------------


class ContinuousActorCritic(Agent):
    """An ``actor`` and the critics named by ``critic_names`` on a 1-d Box of actions; its
    learner is an `ActorCriticLearner`.

    Attributes:
        actor: The actor network.
        low, high: The action bounds, on the agent's device.
    """

    critic_names: tuple[str, ...] = ("critic",)
    """The critics the agent trains."""

    def __init__(self, params: AgentParameters, *args: Any, **kwargs: Any) -> None:
        missing = {"actor", *self.critic_names} - set(params.network_wrappers)
        if missing:
            raise CoachError(
                f"{type(self).__name__} needs the networks actor and "
                f"{', '.join(self.critic_names)}; missing {sorted(missing)}"
            )
        super().__init__(params, *args, **kwargs)
        self.actor = self.networks["actor"]
        self.low, self.high = action_bounds(self.action_space, self.device, type(self).__name__)

    def arrange_networks(self, networks: dict[str, NetworkWrapper]) -> dict[str, NetworkWrapper]:
        """The critics as one stacked network (`STACKED_CRITICS`) where ``stack_critics``."""
        algorithm = self.params.algorithm
        if not (isinstance(algorithm, ActorCriticAlgorithmParameters) and algorithm.stack_critics):
            return networks
        if len(self.critic_names) < 2:
            raise CoachError(
                f"{type(self).__name__} has one critic: stack_critics stacks several (TD3, SAC)"
            )
        members = [networks.pop(name) for name in self.critic_names]
        networks[STACKED_CRITICS] = NetworkEnsemble(members)
        return networks

    def load_state_dict(self, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
        stacked = STACKED_CRITICS in state["networks"]
        if stacked != (STACKED_CRITICS in self.networks):
            raise CoachError(
                f"the checkpoint's critics are {'' if stacked else 'not '}stacked: load it into "
                f"an agent with algorithm.stack_critics={stacked} (-cp "
                f"agent.algorithm.stack_critics={stacked} for a preset of one agent)"
            )
        super().load_state_dict(state, episodes_in_flight)

    def learner_arguments(self) -> dict[str, Any]:
        """`Agent.learner_arguments`, the algorithm and the critics' names."""
        return {
            **super().learner_arguments(),
            "algorithm": self.params.algorithm,
            "critic_names": self.critic_names,
            "bounds": action_bounds(self.action_space, self.device, type(self).__name__),
        }


class ActorCriticLearner(Learner):
    """What the family's learners share: the critics' regression on the one-step TD target
    from the subclass's `bootstrap_values` (`regress_critics`) and a deterministic actor's
    climb up the first critic (`climb_first_critic`).

    Args:
        algorithm: The algorithm's parameters.
        critic_names: The critics to train, in order.
        bounds: The action bounds, low and high, on the learner's device.
        **kwargs: `Learner`'s arguments.

    Attributes:
        actor: The actor network.
        critics: The critics, in the order of ``critic_names``.
        low, high: The action bounds, on the learner's device.
        critic_updates: Gradient steps taken by the critics.
    """

    def __init__(
        self,
        algorithm: ActorCriticAlgorithmParameters,
        critic_names: tuple[str, ...],
        bounds: tuple[torch.Tensor, torch.Tensor],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.algorithm = algorithm
        self.critic_names = critic_names
        self.actor = self.networks["actor"]
        stacked = self.networks.get(STACKED_CRITICS)
        self.critics = (
            StackedCritics(critic_names, stacked)
            if isinstance(stacked, NetworkEnsemble)
            else Critics(critic_names, [self.networks[n] for n in critic_names])
        )
        self.low, self.high = bounds
        self.critic_updates = 0
        """Gradient steps taken by the critics."""

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """The value of the next states the critics' targets bootstrap from, (B,)."""
        raise NotImplementedError(f"{type(self).__name__} does not bootstrap")

    def regress_critics(self, b: Batch) -> dict[str, float | torch.Tensor]:
        """One gradient step of every critic on the squared error to the one-step TD target
        ``r + discount * bootstrap_values(s')``; each one's loss (``<name>_loss``) and the
        last one's mean Q(s, a) (``q_mean``)."""
        with torch.no_grad():
            next_values = self.bootstrap_values(b.next_states)
            target = td_targets(b.rewards, self.algorithm.discount, b.terminated, next_values)
        losses = self.critics.regress(with_action(b.states, b.actions.float()), target)
        self.critic_updates += 1
        return losses

    def climb_first_critic(self, states: dict[str, torch.Tensor]) -> torch.Tensor:
        """One gradient step of a deterministic actor up the first critic, maximizing
        ``Q(s, mu(s))``; the critics take no gradient. Returns the actor's loss."""
        with self.critics.frozen():
            actions = self.actor(states)["policy"]
            loss = -self.critics.first(with_action(states, actions)).mean()
            self.actor.train_step(loss)
        return loss.detach()

    def state_dict(self) -> dict[str, Any]:
        return {"critic_updates": self.critic_updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.critic_updates = int(state["critic_updates"])
