"""C51, categorical DQN (Bellemare et al., 2017, "A Distributional Perspective on RL").

The network gives each action a distribution over ``num_atoms`` fixed returns z_i. The
target distribution of r + g Z(s', a*) is projected back onto the atoms, and the loss is
its cross-entropy with the predicted distribution of the action taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from coach.agents.dqn import DQNAgentParameters
from coach.agents.learning import Learner
from coach.agents.q_learning import DQNAlgorithmParameters, QAgent, QLearner, replay_mean
from coach.core.action_masks import legal_only
from coach.core.types import Batch
from coach.errors import CoachError
from coach.networks.heads import CategoricalQHeadParameters
from coach.networks.parameters import NetworkParameters


def project_distribution(
    probabilities: torch.Tensor,
    rewards: torch.Tensor,
    discounts: torch.Tensor,
    support: torch.Tensor,
) -> torch.Tensor:
    """Project the distribution of ``rewards + discounts * Z`` onto ``support``.

    Args:
        probabilities: (B, N) probabilities of Z on the atoms.
        rewards: (B,) rewards.
        discounts: (B,) discounts, zero where nothing is bootstrapped.
        support: (N,) evenly spaced atoms.

    Returns:
        (B, N) probabilities on the atoms; each atom's mass is split between its two
        neighbours in proportion to its distance from them.
    """
    atoms = support.numel()
    v_min, v_max = float(support[0]), float(support[-1])
    delta = (v_max - v_min) / (atoms - 1)
    tz = (rewards[:, None] + discounts[:, None] * support[None, :]).clamp(v_min, v_max)
    b = (tz - v_min) / delta
    lower, upper = b.floor().long(), b.ceil().long()
    # An atom that lands exactly on a support point would give both neighbours zero weight.
    lower[(upper > 0) & (lower == upper)] -= 1
    upper[(lower < atoms - 1) & (lower == upper)] += 1
    projected = torch.zeros_like(probabilities)
    projected.scatter_add_(1, lower, probabilities * (upper.float() - b))
    projected.scatter_add_(1, upper, probabilities * (b - lower.float()))
    return projected


def support(head: CategoricalQHeadParameters, device: torch.device) -> torch.Tensor:
    """The returns of a categorical head's atoms, evenly spaced, (N,)."""
    return torch.linspace(head.v_min, head.v_max, head.num_atoms, device=device)


@dataclass(slots=True, kw_only=True)
class CategoricalDQNAlgorithmParameters(DQNAlgorithmParameters):
    """C51's algorithm parameters (``double_q`` picks the bootstrap action with the online
    network, as Rainbow does)."""


@dataclass(slots=True, kw_only=True)
class CategoricalDQNAgentParameters(DQNAgentParameters):
    """A C51 agent: a categorical head, cross-entropy to the projected target."""

    algorithm: CategoricalDQNAlgorithmParameters = field(
        default_factory=CategoricalDQNAlgorithmParameters
    )
    """The algorithm's parameters."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {
            "main": NetworkParameters(
                heads=[CategoricalQHeadParameters()], create_target_network=True
            )
        }
    )
    """The distributional Q network (``main``), with a `CategoricalQHeadParameters` head."""

    def agent_class(self) -> type[CategoricalDQNAgent]:
        return CategoricalDQNAgent


class CategoricalDQNAgent(QAgent):
    """C51 (and Rainbow): Q-values are the means of per-action return distributions."""

    params: CategoricalDQNAgentParameters

    def __init__(self, params: CategoricalDQNAgentParameters, *args: Any, **kwargs: Any) -> None:
        head = params.network_wrappers["main"].heads[0]
        if not isinstance(head, CategoricalQHeadParameters):
            raise CoachError(f"{type(self).__name__} needs a CategoricalQHeadParameters head")
        super().__init__(params, *args, **kwargs)
        self.support = support(head, self.device)

    def action_values(self, outputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return (F.softmax(outputs["q"], dim=-1) * self.support).sum(-1)

    def make_learner(self) -> Learner:
        head = self.params.network_wrappers["main"].heads[0]
        assert isinstance(head, CategoricalQHeadParameters)
        return CategoricalDQNLearner(support=support(head, self.device), **self.learner_arguments())


class CategoricalDQNLearner(QLearner):
    """C51's update: the cross entropy of the predicted return distribution of Q(s, a) to
    the target distribution projected onto the support.

    Args:
        support: The atoms' returns, (N,).
        **kwargs: `QLearner`'s arguments.
    """

    algorithm: CategoricalDQNAlgorithmParameters

    def __init__(self, support: torch.Tensor, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.support = support

    def learn(self, batch: Batch) -> dict[str, float]:
        b = self.sampled(batch)
        actions = (b.actions - self.action_offset).long()
        discount = b.extras.get("discount", self.algorithm.discount)  # g^k of n-step rows
        rows = torch.arange(len(actions), device=self.device)
        log_p = F.log_softmax(self.q_network(b.states)["q"][rows, actions], dim=-1)  # (B, N)
        with torch.no_grad():
            next_outputs = self.q_network.target_predict(b.next_states)
            # The greedy next action, among the legal ones: the online network's (double Q)
            # or the target's.
            chooser = self.q_network(b.next_states) if self.algorithm.double_q else next_outputs
            best = legal_only(self.action_values(chooser), b.next_states).argmax(dim=1)
            next_p = F.softmax(next_outputs["q"][rows, best], dim=-1)
            discounts = discount * (1.0 - b.terminated.float())
            target = project_distribution(next_p, b.rewards, discounts, self.support)
        cross_entropy = -(target * log_p).sum(-1)  # per row; its value is the priority too
        loss = replay_mean(cross_entropy, cross_entropy.detach(), b, self.priorities)
        self.q_network.train_step(loss)
        q = (log_p.detach().exp() * self.support).sum(-1)
        return {
            "q_loss": loss.item(),
            "q_mean": q.mean().item(),
            "td_error": cross_entropy.detach().mean().item(),
        }
