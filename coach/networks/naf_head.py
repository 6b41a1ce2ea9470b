"""The precision head of normalized advantage functions (Gu et al., 2016, "Continuous Deep
Q-Learning with Model-based Acceleration").

NAF writes Q(s, a) = V(s) + A(s, a) with an advantage quadratic in the action,

    A(s, a) = -1/2 (a - mu(s))^T P(s) (a - mu(s)),    P(s) = L(s) L(s)^T,

where ``L(s)`` is lower triangular with a positive diagonal (the exponential of the
network's numbers there), so ``P(s)`` is positive definite and ``mu(s)`` maximizes Q. A NAF
network has three heads on one torso: ``mu`` (a `DeterministicPolicyHeadParameters`, so
acting and export read it as any deterministic policy), ``V`` (a `VHeadParameters`) and
``L`` (`PrecisionHeadParameters`, here); `naf_advantage` and `naf_q` combine them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from gymnasium import spaces
from torch import nn

from coach.errors import CoachError
from coach.networks.heads import HeadParameters, run_layer


class PrecisionHead(nn.Module):
    """``L(s)``, output (B, D, D): the D (D + 1) / 2 numbers of a linear layer laid out row
    by row in a lower triangle, the diagonal's exponentiated."""

    def __init__(self, in_features: int, dimensions: int) -> None:
        super().__init__()
        self.dimensions = dimensions
        self.linear = nn.Linear(in_features, dimensions * (dimensions + 1) // 2)
        rows, columns = torch.tril_indices(dimensions, dimensions)
        self.rows: torch.Tensor
        self.columns: torch.Tensor
        self.diagonal: torch.Tensor
        self.register_buffer("rows", rows, persistent=False)
        self.register_buffer("columns", columns, persistent=False)
        self.register_buffer("diagonal", rows == columns, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        entries = run_layer(self.linear, x)
        # exp of the diagonal alone: an off-diagonal number large enough to overflow would
        # otherwise send 0 * inf = nan back through the branch torch.where drops.
        exponentiated = torch.where(self.diagonal, entries, 0.0).exp()
        entries = torch.where(self.diagonal, exponentiated, entries)
        # The batch size as the tensor's own (symbolic when traced): ``len(x)`` would be a
        # number, and an exported policy's batch axis fixed at the example's.
        factor = entries.new_zeros(entries.shape[0], self.dimensions, self.dimensions)
        factor[:, self.rows, self.columns] = entries
        return factor


@dataclass(slots=True, kw_only=True)
class PrecisionHeadParameters(HeadParameters):
    """NAF's ``L(s)``: the lower-triangular factor of the advantage's precision matrix
    ``P = L L^T`` over a 1-d Box action space, output (B, D, D)."""

    name: str = "precision"
    """The name the head's output is returned under."""

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        if not isinstance(action_space, spaces.Box) or len(action_space.shape) != 1:
            raise CoachError(f"a precision head needs a 1-d Box action space, got {action_space}")
        return PrecisionHead(in_features, action_space.shape[0])


def naf_advantage(mu: torch.Tensor, factor: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """``A(s, a) = -1/2 (a - mu)^T L L^T (a - mu)`` (B,), from ``mu`` (B, D), ``L`` (B, D, D)
    and the actions (B, D): ``-1/2 ||L^T (a - mu)||^2``."""
    projected = torch.einsum("bij,bi->bj", factor, actions - mu)  # L^T (a - mu)
    return -0.5 * projected.square().sum(dim=1)


def naf_q(outputs: dict[str, torch.Tensor], actions: torch.Tensor) -> torch.Tensor:
    """Q(s, a) = V(s) + A(s, a), (B,), from a NAF network's outputs (``policy`` for mu, ``v``,
    ``precision``)."""
    return outputs["v"] + naf_advantage(outputs["policy"], outputs["precision"], actions)


__all__ = ["PrecisionHead", "PrecisionHeadParameters", "naf_advantage", "naf_q"]
