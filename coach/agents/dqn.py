"""Deep Q-Network (Mnih et al., 2015, "Human-level control through deep reinforcement learning").

Q-learning with a replay memory and a target network: each gradient step regresses
Q(s, a) towards r + discount * max_a' Q_target(s', a'), where the bootstrap term is dropped
only for terminal transitions (a time-limit truncation still bootstraps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from coach.agents.agent import Agent, AgentParameters, AlgorithmParameters
from coach.core.step_units import EnvironmentSteps
from coach.core.types import ActionInfo, Batch, Observation
from coach.errors import CoachError
from coach.exploration.e_greedy import EGreedy, EGreedyParameters
from coach.memories.experience_replay import ExperienceReplayParameters
from coach.networks.parameters import NetworkParameters

LOSSES = ("huber", "mse")


@dataclass(slots=True, kw_only=True)
class DQNAlgorithmParameters(AlgorithmParameters):
    """DQN's algorithm parameters."""

    num_steps_between_copying_online_weights_to_target: EnvironmentSteps = field(
        default_factory=lambda: EnvironmentSteps(500)
    )
    """Training env steps between two copies of the online weights into the target network."""
    loss: str = "huber"
    """The TD loss: ``huber`` or ``mse``."""
    huber_delta: float = 1.0
    """Where the Huber loss turns from quadratic to linear."""


@dataclass(slots=True, kw_only=True)
class DQNAgentParameters(AgentParameters):
    """A DQN agent: e-greedy exploration, uniform replay, one Q network with a target copy."""

    algorithm: DQNAlgorithmParameters = field(default_factory=DQNAlgorithmParameters)
    """The algorithm's parameters."""
    exploration: EGreedyParameters = field(default_factory=EGreedyParameters)
    """Exploration."""
    memory: ExperienceReplayParameters = field(default_factory=ExperienceReplayParameters)
    """The replay memory."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {"main": NetworkParameters(create_target_network=True)}
    )
    """The Q network (``main``)."""

    def agent_class(self) -> type[DQNAgent]:
        return DQNAgent


class DQNAgent(Agent):
    """Deep Q-Network: e-greedy acting on Q-values, TD learning from replay."""

    params: DQNAgentParameters

    def __init__(self, params: DQNAgentParameters, *args: Any, **kwargs: Any) -> None:
        if params.algorithm.loss not in LOSSES:
            raise CoachError(f"unknown loss {params.algorithm.loss!r}; choose from {LOSSES}")
        super().__init__(params, *args, **kwargs)
        self.q_network = self.networks["main"]
        if not isinstance(self.exploration, EGreedy):
            raise CoachError("DQN acts with e-greedy exploration (EGreedyParameters)")
        self.e_greedy = self.exploration
        self.action_offset = int(getattr(self.action_space, "start", 0))
        self.target_syncs = 0

    def _tensors(self, observation: Observation) -> dict[str, torch.Tensor]:
        return {k: torch.as_tensor(v, device=self.device) for k, v in observation.items()}

    def choose_action(self, state: Observation) -> ActionInfo:
        with torch.no_grad():
            q_values = self.q_network(self._tensors(state))["q"].cpu().numpy()
        action = self.e_greedy.get_action(q_values, self.phase)
        return ActionInfo(action=action, action_values=q_values)

    def learn_from_batch(self, batch: Batch) -> dict[str, float]:
        algorithm = self.params.algorithm
        b = batch.map(lambda a: torch.as_tensor(a, device=self.device))
        actions = (b.actions - self.action_offset).long().unsqueeze(1)

        q = self.q_network(b.states)["q"].gather(1, actions).squeeze(1)
        next_q = self.q_network.target_predict(b.next_states)["q"].max(dim=1).values
        not_terminal = 1.0 - b.terminated.float()
        target = b.rewards + algorithm.discount * not_terminal * next_q

        if algorithm.loss == "huber":
            loss = F.huber_loss(q, target, delta=algorithm.huber_delta)
        else:
            loss = F.mse_loss(q, target)
        self.q_network.train_step(loss)
        return {"q_loss": loss.item(), "q_mean": q.detach().mean().item()}

    def after_training_round(self) -> None:
        period = self.params.algorithm.num_steps_between_copying_online_weights_to_target
        due = self.training_env_steps // max(period.num_steps, 1)
        if due > self.target_syncs:
            self.q_network.update_target()
            self.target_syncs = int(due)

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        state = super().state_dict(include_memory)
        state["counters"]["target_syncs"] = self.target_syncs
        return state


__all__ = ["DQNAgent", "DQNAgentParameters", "DQNAlgorithmParameters"]
