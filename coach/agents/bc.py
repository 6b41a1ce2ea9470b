"""Behavioral cloning: a policy fitted to a dataset's actions, by supervised learning.

For discrete actions the network's ``logits`` head is a classifier trained with the cross
entropy of the logged actions, and the agent takes the most likely action (among the legal
ones, where the observations carry an action mask: `coach.core.action_masks`). For continuous
actions a deterministic ``policy`` head (inside the action box) is regressed onto the logged
actions with a squared error, and the agent takes its output. Cloning learns only what the
dataset's policy did: it is the baseline the batch-RL agents must beat on mixed-quality data,
and the right tool on expert data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach import validation as check
from coach.agents.acting import Policy
from coach.agents.agent import Agent
from coach.agents.algorithm import AlgorithmParameters
from coach.agents.learning import Learner
from coach.agents.parameters import AgentParameters
from coach.core.action_masks import ACTION_MASK, legal_only, masked_values
from coach.core.run_phase import RunPhase
from coach.core.spaces import first_action
from coach.core.types import ActionInfo, Batch, Observation
from coach.errors import CoachError
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.memories.memory import MemoryParameters
from coach.networks.heads import (
    CategoricalPolicyHeadParameters,
    DeterministicPolicyHeadParameters,
)
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import NetworkParameters


@dataclass(slots=True, kw_only=True)
class BCAgentParameters(AgentParameters):
    """A cloning agent: one network, a classifier (``logits`` head, discrete actions) or a
    regressor (``policy`` head, a Box of actions)."""

    algorithm: AlgorithmParameters = field(default_factory=AlgorithmParameters)
    """Batch size (discount and playing steps are unused)."""
    memory: MemoryParameters | None = field(default_factory=ExperienceReplayParameters)
    """Holds the dataset."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {
            "main": NetworkParameters(heads=[CategoricalPolicyHeadParameters(name="logits")])
        }
    )
    """The policy (``main``): a ``logits`` head for discrete actions, a deterministic
    ``policy`` head for continuous ones."""

    def validate(self) -> None:
        check.component("memory", self.memory, "ExperienceReplayParameters()", optional=False)
        check.keys("network_wrappers", self.network_wrappers, ("main",))
        AgentParameters.validate(self)

    def agent_class(self) -> type[BCAgent]:
        return BCAgent


def continuous_bc_network() -> NetworkParameters:
    """The network of a cloning agent for a Box of actions."""
    return NetworkParameters(heads=[DeterministicPolicyHeadParameters(name="policy")])


class ClonedPolicy(Policy):
    """Acts as the cloned behaviour would, greedily: the most likely action of a ``logits``
    head (discrete actions) or the regressed action of a ``policy`` head (a Box).

    Args:
        network: The cloning network.
        head: Its head to act on.
        **kwargs: `Policy`'s arguments.
    """

    def __init__(self, network: NetworkWrapper, head: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.network = network
        self.head = head
        self.action_offset = first_action(self.action_space)

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        inputs = self.tensors(state)
        with torch.no_grad():
            out = self.network(inputs)[self.head]
        if self.head == "logits":
            if self.action_mask:  # the most likely of the legal actions
                out = masked_values(out, inputs[ACTION_MASK], -torch.inf)
            action = out.argmax(dim=1).cpu().numpy() + self.action_offset
            return ActionInfo(action=action, action_values=out.cpu().numpy())
        return ActionInfo(action=out.cpu().numpy().astype(self.action_space.dtype))

    def greedy(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        out: torch.Tensor = self.network(inputs)[self.head]
        if self.head != "logits":
            return out
        if self.action_mask:
            out = masked_values(out, inputs[ACTION_MASK], -torch.inf)
        return out.argmax(dim=1) + self.action_offset


class BCAgent(Agent):
    """Imitates the dataset's actions."""

    def __init__(self, params: BCAgentParameters, *args: Any, **kwargs: Any) -> None:
        super().__init__(params, *args, **kwargs)
        names = [h.name for h in params.network_wrappers["main"].heads]
        if self.head() not in names:
            kind = "discrete" if isinstance(self.action_space, spaces.Discrete) else "continuous"
            raise CoachError(
                f"behavioral cloning of {kind} actions needs a {self.head()!r} head in its "
                f"'main' network, which has {names}"
            )

    def head(self) -> str:
        """The head that gives the actions: ``logits`` for discrete ones, else ``policy``."""
        return "logits" if isinstance(self.action_space, spaces.Discrete) else "policy"

    def make_policy(self) -> Policy:
        return ClonedPolicy(self.networks["main"], self.head(), **self.policy_arguments())

    def make_learner(self) -> Learner:
        return BCLearner(head=self.head(), **self.learner_arguments())


class BCLearner(Learner):
    """Behavioral cloning's update: the cross entropy of the logged discrete actions, or the
    squared error to the logged continuous ones.

    Args:
        head: The head that gives the actions: ``logits`` or ``policy``.
        **kwargs: `Learner`'s arguments.
    """

    def __init__(self, head: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.network = self.networks["main"]
        self.head = head
        self.discrete = isinstance(self.action_space, spaces.Discrete)
        self.action_offset = first_action(self.action_space)

    def learn(self, batch: Batch) -> dict[str, float]:
        states = self.tensors(batch.states)
        out = self.network(states)[self.head]
        actions = torch.as_tensor(np.asarray(batch.actions), device=self.device)
        if self.discrete:
            logits = legal_only(out, states)  # a classifier among the legal actions
            loss = F.cross_entropy(logits, actions.long() - self.action_offset)
            accuracy = (logits.argmax(dim=1) == actions.long() - self.action_offset).float().mean()
            self.network.train_step(loss)
            return {"bc_loss": loss.item(), "accuracy": accuracy.item()}
        loss = F.mse_loss(out, actions.float())
        self.network.train_step(loss)
        return {"bc_loss": loss.item()}
