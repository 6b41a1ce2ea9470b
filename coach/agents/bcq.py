"""Discrete batch-constrained Q-learning, DDQN-BCQ (Fujimoto et al., 2019, "Benchmarking
Batch Deep Reinforcement Learning Algorithms").

Q-learning from a fixed dataset overestimates the actions the dataset never took: nothing
corrects their values. BCQ learns a model of the dataset's behaviour, G(a|s), a classifier
trained on the logged actions, and only lets the policy choose among the actions that G
finds likely enough: a with G(a|s) / max_b G(b|s) >= ``threshold``. Both the bootstrap action
of the (double) Q target and the acting policy are restricted this way. ``threshold`` 0 is
plain DDQN; 1 is close to imitating the dataset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from coach import validation as check
from coach.agents.ddqn import DDQNAgent, DDQNAgentParameters
from coach.agents.dqn import BatchDQNAlgorithmParameters
from coach.core.types import Batch
from coach.errors import CoachError
from coach.networks.heads import CategoricalPolicyHeadParameters
from coach.networks.parameters import NetworkParameters


@dataclass(slots=True, kw_only=True)
class DDQNBCQAlgorithmParameters(BatchDQNAlgorithmParameters):
    """DDQN's parameters and the batch constraint."""

    threshold: float = 0.3
    """Actions whose behaviour probability is below this fraction of the most likely
    action's are ruled out."""
    imitation_logit_penalty: float = 0.01
    """L2 penalty on the behaviour model's logits (keeps them from running off)."""

    def validate(self) -> None:
        BatchDQNAlgorithmParameters.validate(self)
        check.number("threshold", self.threshold, 0, 1)
        check.number("imitation_logit_penalty", self.imitation_logit_penalty, 0)


@dataclass(slots=True, kw_only=True)
class DDQNBCQAgentParameters(DDQNAgentParameters):
    """A DDQN agent with a behaviour model (``imitation``) that constrains its actions."""

    algorithm: DDQNBCQAlgorithmParameters = field(default_factory=DDQNBCQAlgorithmParameters)
    """The algorithm's parameters."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {
            "main": NetworkParameters(create_target_network=True),
            "imitation": NetworkParameters(heads=[CategoricalPolicyHeadParameters(name="logits")]),
        }
    )
    """The Q network (``main``) and the behaviour model (``imitation``, action logits)."""

    def agent_class(self) -> type[DDQNBCQAgent]:
        return DDQNBCQAgent


class DDQNBCQAgent(DDQNAgent):
    """DDQN restricted to the actions its behaviour model finds likely."""

    params: DDQNBCQAgentParameters

    def __init__(self, params: DDQNBCQAgentParameters, *args: Any, **kwargs: Any) -> None:
        shared = "logits" in [h.name for h in params.network_wrappers["main"].heads]
        if not shared and "imitation" not in params.network_wrappers:
            raise CoachError(
                "DDQN-BCQ needs a behaviour model: an 'imitation' network, or a 'logits' head "
                "on its 'main' network"
            )
        super().__init__(params, *args, **kwargs)
        self.shared = shared
        """The behaviour model is a head of the Q network (Fujimoto et al.'s form)."""
        self.imitation = self.q_network if shared else self.networks["imitation"]

    def allowed(self, states: dict[str, torch.Tensor]) -> torch.Tensor:
        """The actions the constraint lets through (B, A) bool: at least the most likely."""
        with torch.no_grad():
            probabilities = torch.softmax(self.imitation(states)["logits"], dim=1)
        best = probabilities.max(dim=1, keepdim=True).values
        return probabilities >= self.params.algorithm.threshold * best

    def acting_values(
        self, q_values: torch.Tensor, states: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        return q_values.masked_fill(~self.allowed(states), float("-inf"))

    def bootstrap_values(self, next_states: dict[str, torch.Tensor]) -> torch.Tensor:
        """Q_target(s', a*) for the best allowed a* under the online network."""
        online = self.action_values(self.q_network(next_states))
        best = self.acting_values(online, next_states).argmax(dim=1, keepdim=True)
        target = self.action_values(self.q_network.target_predict(next_states))
        return target.gather(1, best).squeeze(1)

    def learn_from_batch(self, batch: Batch) -> dict[str, float]:
        if self.shared:
            return self._learn_shared(batch)
        losses = super().learn_from_batch(batch)
        states = {k: torch.as_tensor(v, device=self.device) for k, v in batch.states.items()}
        actions = torch.as_tensor(batch.actions, device=self.device).long() - self.action_offset
        loss, imitation = self._imitation_loss(self.imitation(states)["logits"], actions)
        self.imitation.train_step(loss)
        return {**losses, "imitation_loss": imitation}

    def _imitation_loss(
        self, logits: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, float]:
        """The behaviour model's loss on the logged actions (cross entropy plus the logit
        penalty), and the cross entropy alone, for the logs."""
        imitation = F.cross_entropy(logits, actions)
        penalty = self.params.algorithm.imitation_logit_penalty * logits.pow(2).mean()
        return imitation + penalty, imitation.item()

    def _learn_shared(self, batch: Batch) -> dict[str, float]:
        """One step on the TD loss and the imitation loss of the one network."""
        b = batch.map(lambda a: torch.as_tensor(a, device=self.device))
        actions = (b.actions - self.action_offset).long()
        outputs = self.q_network(b.states)
        q = self.action_values(outputs).gather(1, actions[:, None]).squeeze(1)
        rows, td_errors, q_taken = self.regression(
            q, b, b.extras.get("discount", self.params.algorithm.discount)
        )
        imitation_loss, imitation = self._imitation_loss(outputs["logits"], actions)
        td_loss = self.replay_loss(rows, td_errors, b)
        self.q_network.train_step(td_loss + imitation_loss)
        return {
            "q_loss": td_loss.item(),
            "q_mean": q_taken.mean().item(),
            "td_error": td_errors.mean().item(),
            "imitation_loss": imitation,
        }
