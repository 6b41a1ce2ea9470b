"""Bootstrapped DQN (Osband et al., 2016, "Deep Exploration via Bootstrapped DQN").

K Q heads share a torso. Each stored transition carries a bootstrap mask, one Bernoulli(p)
draw per head, and head k learns only from the transitions its mask includes, so the heads
become a posterior-like ensemble. Acting follows one head per episode (or the UCB of the
ensemble); evaluation acts on the ensemble's mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach import validation as check
from coach.agents.acting import Policy, QPolicy
from coach.agents.dqn import DQNAgentParameters, DQNAlgorithmParameters
from coach.agents.learning import Learner
from coach.agents.q_learning import QAgent, QLearner, replay_mean
from coach.core.action_masks import ACTION_MASK, MASKED_FILL, masked_values
from coach.core.types import ActionInfo, Batch, Transition
from coach.errors import CoachError
from coach.exploration.ensemble import BootstrappedParameters
from coach.exploration.exploration_policy import ExplorationParameters
from coach.networks.heads import BootstrappedQHeadParameters
from coach.networks.parameters import NetworkParameters
from coach.validation import InvalidParameter


@dataclass(slots=True, kw_only=True)
class BootstrappedDQNAlgorithmParameters(DQNAlgorithmParameters):
    """Bootstrapped DQN's algorithm parameters."""

    bootstrap_probability: float = 0.5
    """The chance that a head learns from a given transition."""

    def validate(self) -> None:
        DQNAlgorithmParameters.validate(self)
        check.number("bootstrap_probability", self.bootstrap_probability, 0, 1)
        if self.n_step != 1:
            raise InvalidParameter(
                "n_step", "must be 1 (Bootstrapped DQN stores one-step transitions)", self.n_step
            )


@dataclass(slots=True, kw_only=True)
class BootstrappedDQNAgentParameters(DQNAgentParameters):
    """A Bootstrapped DQN agent."""

    algorithm: BootstrappedDQNAlgorithmParameters = field(
        default_factory=BootstrappedDQNAlgorithmParameters
    )
    """The algorithm's parameters."""
    exploration: ExplorationParameters | None = field(default_factory=BootstrappedParameters)
    """A head per episode (`BootstrappedParameters`) or `UCBParameters`."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {
            "main": NetworkParameters(
                heads=[BootstrappedQHeadParameters()], create_target_network=True
            )
        }
    )
    """The Q network (``main``) with a `BootstrappedQHeadParameters` head."""

    def agent_class(self) -> type[BootstrappedDQNAgent]:
        return BootstrappedDQNAgent


class BootstrappedDQNAgent(QAgent):
    """DQN with K masked Q heads."""

    params: BootstrappedDQNAgentParameters

    def __init__(self, params: BootstrappedDQNAgentParameters, *args: Any, **kwargs: Any) -> None:
        head = params.network_wrappers["main"].heads[0]
        if not isinstance(head, BootstrappedQHeadParameters):
            raise CoachError(f"{type(self).__name__} needs a BootstrappedQHeadParameters head")
        self.num_heads = head.num_heads
        super().__init__(params, *args, **kwargs)

    def memory_extras(self) -> dict[str, spaces.Space]:
        return {"mask": spaces.Box(0.0, 1.0, shape=(self.num_heads,), dtype=np.float32)}

    def action_values(self, outputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The ensemble's mean Q-values (B, A)."""
        return outputs["q"].mean(dim=1)

    def make_policy(self) -> Policy:
        # The exploration picks a head (or counts on their spread, UCB): every head's values.
        return QPolicy(
            self.networks["main"],
            lambda outputs: outputs["q"],  # (B, K, A)
            ensemble=True,
            **self.policy_arguments(),
        )

    def store(self, step: Transition, info: ActionInfo, rows: np.ndarray | None = None) -> None:
        if self.memory is None:
            return
        # Each head learns from the steps its own coin flips keep (a bootstrap of the data).
        p = self.params.algorithm.bootstrap_probability
        masks = (self.rng.random((len(step), self.num_heads)) < p).astype(np.float32)
        step.extras["mask"] = masks
        self.memory.store(step)

    def make_learner(self) -> Learner:
        return BootstrappedDQNLearner(num_heads=self.num_heads, **self.learner_arguments())


class BootstrappedDQNLearner(QLearner):
    """Bootstrapped DQN's update: every head regressed on its own target, on the rows its
    mask keeps.

    Args:
        num_heads: The Q heads, K.
        **kwargs: `QLearner`'s arguments.
    """

    def __init__(self, num_heads: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_heads = num_heads

    def learn(self, batch: Batch) -> dict[str, float]:
        algorithm = self.algorithm
        b = self.sampled(batch)
        actions = (b.actions - self.action_offset).long()
        heads = self.q_network(b.states)["q"]  # (B, K, A)
        index = actions[:, None, None].expand(-1, self.num_heads, 1)
        q = heads.gather(2, index).squeeze(2)  # (B, K)
        with torch.no_grad():
            next_q = self.q_network.target_predict(b.next_states)["q"]  # (B, K, A)
            mask = b.next_states.get(ACTION_MASK)
            if mask is not None:  # every head's max runs over the legal next actions
                next_q = masked_values(next_q, mask[:, None], MASKED_FILL)
            next_q = next_q.max(dim=2).values
            not_terminal = 1.0 - b.terminated.float()
            target = b.rewards[:, None] + (algorithm.discount * not_terminal)[:, None] * next_q
        per_head = F.huber_loss(q, target, delta=algorithm.huber_delta, reduction="none")
        # Each head learns from its own bootstrap sample: the masked mean over heads.
        mask = b.extras["mask"]
        kept = mask.sum(dim=1).clamp(min=1.0)
        rows = (per_head * mask).sum(dim=1) / kept
        td_errors = ((q - target).abs() * mask).sum(dim=1).detach() / kept
        loss = replay_mean(rows, td_errors, b, self.priorities)
        self.q_network.train_step(loss)
        return {
            "q_loss": loss.item(),
            "q_mean": q.detach().mean(dim=1).mean().item(),
            "td_error": td_errors.mean().item(),
        }
