"""QR-DQN (Dabney et al., 2018, "Distributional RL with Quantile Regression").

The network gives each action ``N`` quantiles of its return at the midpoints
tau_i = (2i + 1) / 2N; they are fitted to the target quantiles r + g theta_j(s', a*) with the
quantile Huber loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from coach.agents.dqn import DQNAgentParameters, DQNAlgorithmParameters
from coach.agents.learning import Learner
from coach.agents.q_learning import QAgent, QLearner, replay_mean
from coach.core.action_masks import legal_only
from coach.core.types import Batch
from coach.errors import CoachError
from coach.networks.heads import QuantileQHeadParameters
from coach.networks.parameters import NetworkParameters


def quantile_huber_loss(
    quantiles: torch.Tensor, targets: torch.Tensor, taus: torch.Tensor, kappa: float = 1.0
) -> torch.Tensor:
    """The quantile Huber loss of each row.

    Args:
        quantiles: (B, N) predicted quantiles theta_i at ``taus``.
        targets: (B, M) target samples.
        taus: (N,) quantile levels.
        kappa: Where the Huber loss turns linear.

    Returns:
        (B,): sum over i of the mean over j of |tau_i - 1{u_ij < 0}| * Huber_kappa(u_ij) / kappa,
        with u_ij = target_j - theta_i.
    """
    shape = (*quantiles.shape, targets.shape[1])  # (B, N, M)
    # Huber_kappa(u_ij) in one fused kernel (forward and backward) over the pairs, instead
    # of a dozen elementwise passes over (B, N, M) tensors, with the same numbers as those
    # passes: it is symmetric in u, quadratic and linear agree where |u| = kappa, and kappa
    # is given as the elementwise ops would round it (the kernel's gradient multiplies by
    # the delta it is given in double precision).
    huber = F.huber_loss(
        quantiles[:, :, None].expand(shape),
        targets[:, None, :].expand(shape),
        reduction="none",
        delta=torch.tensor(kappa, dtype=quantiles.dtype).item(),
    )
    below = targets[:, None, :] < quantiles.detach()[:, :, None]  # u_ij < 0
    weight = (taus[None, :, None] - below.float()).abs()
    return (weight * huber / kappa).mean(dim=2).sum(dim=1)


@dataclass(slots=True, kw_only=True)
class QRDQNAlgorithmParameters(DQNAlgorithmParameters):
    """QR-DQN's algorithm parameters."""

    huber_delta: float = 1.0
    """kappa of the quantile Huber loss."""


@dataclass(slots=True, kw_only=True)
class QRDQNAgentParameters(DQNAgentParameters):
    """A QR-DQN agent: a quantile head, the quantile Huber loss."""

    algorithm: QRDQNAlgorithmParameters = field(default_factory=QRDQNAlgorithmParameters)
    """The algorithm's parameters."""
    network_wrappers: dict[str, NetworkParameters] = field(
        default_factory=lambda: {
            "main": NetworkParameters(heads=[QuantileQHeadParameters()], create_target_network=True)
        }
    )
    """The quantile network (``main``), with a `QuantileQHeadParameters` head."""

    def agent_class(self) -> type[QRDQNAgent]:
        return QRDQNAgent


class QRDQNAgent(QAgent):
    """QR-DQN: Q-values are the means of per-action quantiles."""

    params: QRDQNAgentParameters

    def __init__(self, params: QRDQNAgentParameters, *args: Any, **kwargs: Any) -> None:
        head = params.network_wrappers["main"].heads[0]
        if not isinstance(head, QuantileQHeadParameters):
            raise CoachError(f"{type(self).__name__} needs a QuantileQHeadParameters head")
        super().__init__(params, *args, **kwargs)

    def action_values(self, outputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return outputs["q"].mean(-1)

    def make_learner(self) -> Learner:
        head = self.params.network_wrappers["main"].heads[0]
        assert isinstance(head, QuantileQHeadParameters)
        return QRDQNLearner(num_quantiles=head.num_quantiles, **self.learner_arguments())


class QRDQNLearner(QLearner):
    """QR-DQN's update: the quantile Huber loss of Q(s, a)'s quantiles to the target's.

    Args:
        num_quantiles: Quantiles per action.
        **kwargs: `QLearner`'s arguments.
    """

    def __init__(self, num_quantiles: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        n = num_quantiles
        self.taus = (2 * torch.arange(n, device=self.device, dtype=torch.float32) + 1) / (2 * n)
        """The quantiles' midpoints, (N,)."""

    def learn(self, batch: Batch) -> dict[str, float]:
        b = self.sampled(batch)
        actions = (b.actions - self.action_offset).long()
        discount = b.extras.get("discount", self.algorithm.discount)  # g^k of n-step rows
        rows = torch.arange(len(actions), device=self.device)
        quantiles = self.q_network(b.states)["q"][rows, actions]  # (B, N)
        with torch.no_grad():
            next_q = self.q_network.target_predict(b.next_states)["q"]  # (B, A, N)
            best = legal_only(next_q.mean(-1), b.next_states).argmax(dim=1)  # a legal one
            discounts = discount * (1.0 - b.terminated.float())
            targets = b.rewards[:, None] + discounts[:, None] * next_q[rows, best]
        per_row = quantile_huber_loss(quantiles, targets, self.taus, self.algorithm.huber_delta)
        loss = replay_mean(per_row, per_row.detach(), b, self.priorities)
        self.q_network.train_step(loss)
        return {
            "q_loss": loss.item(),
            "q_mean": quantiles.detach().mean(-1).mean().item(),
            "td_error": per_row.detach().mean().item(),
        }
