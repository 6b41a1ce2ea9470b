"""Wolpertinger (Dulac-Arnold et al., 2015, "Deep Reinforcement Learning in Large Discrete
Action Spaces"): DDPG over embeddings of discrete actions.

Every discrete action ``i`` has an embedding ``e_i`` in ``[-1, 1]^d``: the grid point it
stands for, rescaled to the box, when the agent's output filter is a `BoxDiscretization`
(a discretized continuous task); else ``d = 1`` and the actions evenly spaced in ``[-1,
1]`` (the original Coach's). The actor proposes a proto-action ``mu(s)`` in that box (with
the exploration's noise in training); its ``k`` nearest embeddings are looked up
(`ActionNeighbours`, NEC's nearest-neighbour tables, `coach.memories.dnd_table`) and the
critic ``Q(s, e)`` chooses the best of them. Learning is DDPG's on embeddings: the critic
regresses on ``r + discount * Q'(s', e')``, ``e'`` the full policy's choice under the
target networks (the paper's; the original Coach bootstrapped from the raw proto-action),
and the actor climbs the critic at its proto-actions.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from coach import validation as check
from coach.agents.acting import Policy
from coach.agents.agent import Agent
from coach.agents.critics import (
    ActorCriticAlgorithmParameters,
    ActorCriticLearner,
    ContinuousActorCriticAgentParameters,
    continuous_actor_critic_networks,
    soft_update,
    with_action,
)
from coach.agents.learning import Learner, on_device
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, Batch, Observation
from coach.errors import CoachError
from coach.exploration.additive_noise import AdditiveNoiseParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.filters.action import BoxDiscretization
from coach.filters.pipeline import OutputFilter
from coach.memories.dnd_table import DNDTable
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import NetworkParameters

INDEX_FROM = 20_000
"""Actions from which the nearest ones are searched in a faiss index, not exactly."""
NPROBE = 16
"""Lists of that index searched per query."""


def action_embeddings(output_filter: OutputFilter, actions: int) -> np.ndarray:
    """Each discrete action's embedding, (actions, d) float32 in [-1, 1]: the points of a
    `BoxDiscretization` in the output filter, rescaled dimension by dimension onto [-1, 1]
    (a dimension of one value at 0), else one number per action, evenly spaced."""
    for action_filter in output_filter.action_filters:
        points = action_filter.points if isinstance(action_filter, BoxDiscretization) else None
        if points is not None and len(points) == actions:
            flat = points.reshape(actions, -1).astype(np.float64)
            low, high = flat.min(axis=0), flat.max(axis=0)
            span = np.where(high > low, high - low, 1.0)
            return (2 * (flat - low) / span - 1 + (high == low)).astype(np.float32)
    if actions == 1:
        return np.zeros((1, 1), dtype=np.float32)
    return np.linspace(-1.0, 1.0, actions, dtype=np.float32)[:, None]


class ActionNeighbours:
    """The embeddings of every action, searched for the nearest to proto-actions: with one
    number per action, by binary search over them sorted (exact, in O(log n)); with more,
    in NEC's nearest-neighbour table (`DNDTable`: exact up to `INDEX_FROM` actions, then a
    faiss inverted-file index whose candidates are ranked again exactly).

    Args:
        embeddings: (actions, d) float32.
        device: Where the search runs.
        seed: The seed of the faiss index's k-means (large action sets only).
    """

    def __init__(self, embeddings: np.ndarray, device: torch.device, seed: int) -> None:
        count, width = embeddings.shape
        self.embeddings = torch.as_tensor(embeddings, device=device)
        self.table: DNDTable | None = None
        if width == 1:
            self.sorted, self.order = self.embeddings[:, 0].sort(stable=True)
        else:
            self.table = DNDTable(width, count, device, INDEX_FROM, seed, NPROBE, 0.01)
            rows = torch.arange(count, device=device)
            self.table.add(self.embeddings, rows.float(), -1.0, 0.0, 0)  # row i is action i

    def nearest(self, protos: torch.Tensor, k: int) -> torch.Tensor:
        """The ``k`` actions nearest each proto-action (B, d), nearest first, ties to the
        lower action, (B, min(k, actions)); where an index finds fewer, the nearest
        repeated."""
        protos = protos.float().contiguous()
        if self.table is not None:
            rows, real = self.table.search(protos, k)
            return torch.where(real, rows, rows[:, :1])
        count = len(self.sorted)
        k = min(k, count)
        # The k nearest lie among the k sorted values on either side of the insertion point.
        width = min(2 * k, count)
        start = torch.searchsorted(self.sorted, protos[:, :1].contiguous()) - k
        window = start.clamp(0, count - width) + torch.arange(width, device=protos.device)
        actions = self.order[window].sort(dim=1).values  # candidates by action (ties)
        distances = (self.embeddings[actions, 0] - protos[:, :1]).abs()
        nearest = distances.sort(dim=1, stable=True).indices[:, :k]
        return actions.gather(1, nearest)


@dataclass(slots=True, kw_only=True)
class WolpertingerAlgorithmParameters(ActorCriticAlgorithmParameters):
    """Wolpertinger's algorithm parameters: DDPG's, and the neighbours the critic chooses
    among."""

    k: int = 1
    """The nearest actions to a proto-action that the critic chooses among."""

    def validate(self) -> None:
        ActorCriticAlgorithmParameters.validate(self)
        check.whole("k", self.k, 1)


@dataclass(slots=True, kw_only=True)
class WolpertingerAgentParameters(ContinuousActorCriticAgentParameters):
    """A Wolpertinger agent: DDPG's actor and critic (400 and 300 units) over action
    embeddings, Gaussian noise on the proto-actions, uniform replay."""

    algorithm: WolpertingerAlgorithmParameters = field(
        default_factory=WolpertingerAlgorithmParameters
    )
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = field(
        default_factory=lambda: AdditiveNoiseParameters(noise_as_percentage_from_action_space=False)
    )
    """Noise added to the proto-actions in training (in the embeddings' box)."""
    memory: MemoryParameters | None = field(default_factory=ExperienceReplayParameters)
    """The replay memory (of discrete actions)."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=continuous_actor_critic_networks
    )
    """The ``actor`` (proto-actions) and the ``critic`` (of embeddings)."""

    def agent_class(self) -> type[WolpertingerAgent]:
        return WolpertingerAgent


def choose(
    critic: Any, states: dict[str, torch.Tensor], neighbours: torch.Tensor, embeddings: Any
) -> torch.Tensor:
    """The action among each row's ``neighbours`` (B, k) with the highest ``critic`` value
    (a function of the critic's inputs, ties to the nearer), (B,)."""
    count, k = neighbours.shape
    tiled = {name: value.repeat_interleave(k, dim=0) for name, value in states.items()}
    values = critic(with_action(tiled, embeddings[neighbours.reshape(-1)])).view(count, k)
    return neighbours.gather(1, values.argmax(dim=1, keepdim=True)).squeeze(1)


class WolpertingerPolicy(Policy):
    """The actor's proto-action (with noise in training), its ``k`` nearest actions, the
    critic's best of them.

    Args:
        actor: The actor network.
        critic: The critic network.
        neighbours: The action embeddings' search.
        k: Neighbours per proto-action.
        **kwargs: `Policy`'s arguments.
    """

    def __init__(
        self,
        actor: NetworkWrapper,
        critic: NetworkWrapper,
        neighbours: ActionNeighbours,
        k: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.actor, self.critic, self.neighbours, self.k = actor, critic, neighbours, k
        self.not_exportable = "its actions come of a nearest-neighbour search over the actions"

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        inputs = self.tensors(state)
        with torch.no_grad():
            protos = self.outputs(self.actor, inputs)["policy"]
            if self.exploration is not None:
                noisy = self.exploration.get_action(protos.cpu().numpy(), phase)
                protos = torch.as_tensor(noisy, device=self.device)
            actions = self.greedy_among(inputs, protos)
        return ActionInfo(action=actions.cpu().numpy().astype(self.action_space.dtype))

    def greedy_among(self, inputs: dict[str, torch.Tensor], protos: torch.Tensor) -> torch.Tensor:
        """The critic's choice among the proto-actions' neighbours, (B,) int64."""
        neighbours = self.neighbours.nearest(protos, self.k)
        embeddings = self.neighbours.embeddings
        return choose(lambda x: self.critic(x)["q"], inputs, neighbours, embeddings)


class WolpertingerAgent(Agent):
    """Wolpertinger: a DDPG actor and critic over the embeddings of discrete actions."""

    params: WolpertingerAgentParameters

    def __init__(self, params: WolpertingerAgentParameters, *args: Any, **kwargs: Any) -> None:
        missing = {"actor", "critic"} - set(params.network_wrappers)
        if missing:
            raise CoachError(f"Wolpertinger needs the networks actor and critic; missing {missing}")
        self.neighbours: ActionNeighbours | None = None
        super().__init__(params, *args, **kwargs)

    def network_action_space(self) -> spaces.Space[Any]:
        if not isinstance(self.action_space, spaces.Discrete):
            raise CoachError(
                f"Wolpertinger chooses among discrete actions, got {self.action_space} (a "
                f"BoxDiscretization output filter discretizes a continuous task)"
            )
        embeddings = action_embeddings(self.output_filter, int(self.action_space.n))
        seed = int(self.rng.integers(2**31 - 1))
        self.neighbours = ActionNeighbours(embeddings, self.device, seed)
        width = embeddings.shape[1]
        return spaces.Box(-1.0, 1.0, (width,), np.float32)

    def make_policy(self) -> Policy:
        assert self.neighbours is not None
        return WolpertingerPolicy(
            self.networks["actor"],
            self.networks["critic"],
            self.neighbours,
            self.params.algorithm.k,
            **self.policy_arguments(),
        )

    def make_learner(self) -> Learner:
        assert self.neighbours is not None
        width = self.neighbours.embeddings.shape[1]
        bounds = (
            torch.full((width,), -1.0, device=self.device),
            torch.full((width,), 1.0, device=self.device),
        )
        return WolpertingerLearner(
            neighbours=self.neighbours,
            algorithm=self.params.algorithm,
            critic_names=("critic",),
            bounds=bounds,
            **self.learner_arguments(),
        )


class WolpertingerLearner(ActorCriticLearner):
    """DDPG's update on the taken actions' embeddings, bootstrapping from the target
    networks' full policy (proto-action, neighbours, critic's choice)."""

    algorithm: WolpertingerAlgorithmParameters

    def __init__(self, neighbours: ActionNeighbours, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.neighbours = neighbours

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """``Q'(s', e')`` (B,), ``e'`` the target critic's best of the k actions nearest the
        target actor's proto-action."""
        critic = self.critics.networks[0]
        protos = self.actor.target_predict(next_states)["policy"]
        neighbours = self.neighbours.nearest(protos, self.algorithm.k)
        embeddings = self.neighbours.embeddings
        best = choose(lambda x: critic.target_predict(x)["q"], next_states, neighbours, embeddings)
        return critic.target_predict(with_action(next_states, embeddings[best]))["q"]

    def learn(self, batch: Batch) -> dict[str, float | torch.Tensor]:
        b = on_device(batch, self.device)
        b = dataclasses.replace(b, actions=self.neighbours.embeddings[b.actions.long()])
        losses = self.regress_critics(b)  # the critic on the one-step TD target
        losses["actor_loss"] = self.climb_first_critic(b.states)  # maximize Q(s, mu(s))
        soft_update([self.actor, *self.critics.networks], self.algorithm.tau)
        return losses


__all__ = [
    "ActionNeighbours",
    "WolpertingerAgent",
    "WolpertingerAgentParameters",
    "WolpertingerAlgorithmParameters",
    "WolpertingerLearner",
    "WolpertingerPolicy",
    "action_embeddings",
]
