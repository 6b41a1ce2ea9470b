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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from coach import validation as check
from coach.agents.acting import Policy, QPolicy
from coach.agents.learning import Learner, td_targets
from coach.agents.q_learning import (
    BatchDQNAlgorithmParameters,
    QAgent,
    QAgentParameters,
    QLearner,
    double_q_target_values,
    regression_rows,
    replay_mean,
)
from coach.core.action_masks import legal_only
from coach.core.types import Batch
from coach.errors import CoachError
from coach.networks.heads import CategoricalPolicyHeadParameters
from coach.networks.network_wrapper import NetworkWrapper
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
class DDQNBCQAgentParameters(QAgentParameters):
    """A DDQN-BCQ agent: the value family's defaults (e-greedy, uniform replay), double
    Q-learning on the dataset (``algorithm.double_q``, on by default), and a behaviour model
    (``imitation``) that constrains its actions."""

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


class DDQNBCQAgent(QAgent):
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
        """The actions the constraint lets through (B, A) bool: at least the most likely
        (legal) one. The behaviour model's probabilities are over the legal actions."""
        with torch.no_grad():
            logits = legal_only(self.imitation(states)["logits"], states)
            probabilities = torch.softmax(logits, dim=1)
        best = probabilities.max(dim=1, keepdim=True).values
        return probabilities >= self.params.algorithm.threshold * best

    def acting_values(
        self, q_values: torch.Tensor, states: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        """The Q-values of the allowed actions; -inf for the others."""
        return q_values.masked_fill(~self.allowed(states), float("-inf"))

    def make_policy(self) -> Policy:
        return QPolicy(
            self.networks["main"],
            self.action_values,
            constraint=self.acting_values,
            **self.policy_arguments(),
        )

    def make_learner(self) -> Learner:
        shared = "logits" in [h.name for h in self.params.network_wrappers["main"].heads]
        return DDQNBCQLearner(
            imitation=self.networks["main" if shared else "imitation"],
            allowed_values=self.acting_values,
            **self.learner_arguments(),
        )


class DDQNBCQLearner(QLearner):
    """DDQN-BCQ's update: double Q-learning over the allowed actions, and the behaviour
    model's cross entropy on the logged actions.

    Args:
        imitation: The behaviour model: the Q network itself (a ``logits`` head on it) or
            a network of its own.
        allowed_values: The Q-values of the actions the behaviour model allows, -inf for
            the others, given Q-values (B, A) and the states.
        **kwargs: `QLearner`'s arguments.
    """

    algorithm: DDQNBCQAlgorithmParameters

    def __init__(
        self,
        imitation: NetworkWrapper,
        allowed_values: Callable[[torch.Tensor, dict[str, torch.Tensor]], torch.Tensor],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.imitation = imitation
        self.shared = imitation is self.q_network
        self.allowed_values = allowed_values

    def learn(self, batch: Batch) -> dict[str, float]:
        algorithm = self.algorithm
        b = self.sampled(batch)
        actions = (b.actions - self.action_offset).long()
        discount = b.extras.get("discount", algorithm.discount)
        outputs = self.q_network(b.states)
        q = self.action_values(outputs).gather(1, actions[:, None]).squeeze(1)
        with torch.no_grad():
            if algorithm.double_q:  # Q_target(s', the online network's best allowed a')
                next_values = double_q_target_values(
                    self.q_network, self.action_values, b.next_states, allowed=self.allowed_values
                )
            else:  # max over the allowed a' of Q_target(s', a')
                target_q = self.action_values(self.q_network.target_predict(b.next_states))
                allowed = self.allowed_values(legal_only(target_q, b.next_states), b.next_states)
                next_values = allowed.max(dim=1).values
            target = td_targets(b.rewards, discount, b.terminated, next_values)
        rows = regression_rows(q, target, algorithm.loss, algorithm.huber_delta)
        td_errors = (q - target).detach().abs()
        td_loss = replay_mean(rows, td_errors, b, self.priorities)
        # The behaviour model: cross entropy on the logged actions (among the legal ones),
        # its logits kept small.
        logits = outputs["logits"] if self.shared else self.imitation(b.states)["logits"]
        imitation = F.cross_entropy(legal_only(logits, b.states), actions)
        imitation_loss = imitation + algorithm.imitation_logit_penalty * logits.pow(2).mean()
        if self.shared:  # one network, one step on both losses
            self.q_network.train_step(td_loss + imitation_loss)
        else:
            self.q_network.train_step(td_loss)
            self.imitation.train_step(imitation_loss)
        return {
            "q_loss": td_loss.item(),
            "q_mean": q.detach().mean().item(),
            "td_error": td_errors.mean().item(),
            "imitation_loss": imitation.item(),
        }
