"""The head of Direct Future Prediction (Dosovitskiy and Koltun, "Learning to Act by
Predicting the Future", ICLR 2017): for every action, the changes of every measurement at
every temporal offset, split like a dueling network into an expectation over actions and
each action's centred deviation from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from gymnasium import spaces
from torch import nn

from coach import validation as check
from coach.errors import CoachError
from coach.networks.heads import HeadParameters


class FutureMeasurementsHead(nn.Module):
    """Predictions (B, A, size): an expectation stream (B, 1, size) plus an action stream
    (B, A, size) minus its mean over the actions."""

    def __init__(
        self, in_features: int, actions: int, size: int, hidden: int, activation: type[nn.Module]
    ) -> None:
        super().__init__()
        self.actions, self.size = actions, size
        self.expectation = nn.Sequential(
            nn.Linear(in_features, hidden), activation(), nn.Linear(hidden, size)
        )
        self.action = nn.Sequential(
            nn.Linear(in_features, hidden), activation(), nn.Linear(hidden, actions * size)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        expectation: torch.Tensor = self.expectation(x).unsqueeze(1)
        action: torch.Tensor = self.action(x).view(-1, self.actions, self.size)
        return expectation + action - action.mean(dim=1, keepdim=True)


@dataclass(slots=True, kw_only=True)
class FutureMeasurementsHeadParameters(HeadParameters):
    """DFP's predictions of future measurement changes: output (B, A, size), ``size`` the
    measurements times the temporal offsets (the DFP agent sets it)."""

    name: str = "future"
    """The name the head's output is returned under."""
    size: int | None = None
    """Predicted numbers per action; ``None`` until the agent sets it from its measurements
    and offsets."""
    hidden: int = 256
    """Units of each stream's hidden layer."""
    activation: str = "leaky_relu"
    """The hidden layers' activation."""

    def validate(self) -> None:
        from coach.networks.model import ACTIVATIONS  # the model imports the heads

        HeadParameters.validate(self)
        if self.size is not None:
            check.whole("size", self.size, 1)
        check.whole("hidden", self.hidden, 1)
        check.one_of("activation", self.activation, sorted(ACTIVATIONS))

    def build(self, in_features: int, action_space: spaces.Space[Any]) -> nn.Module:
        from coach.networks.model import ACTIVATIONS

        if not isinstance(action_space, spaces.Discrete):
            raise CoachError(
                f"a future measurements head needs discrete actions, got {action_space}"
            )
        if self.size is None:
            raise CoachError("a future measurements head's size is set by the DFP agent")
        return FutureMeasurementsHead(
            in_features, int(action_space.n), self.size, self.hidden, ACTIVATIONS[self.activation]
        )


__all__ = ["FutureMeasurementsHead", "FutureMeasurementsHeadParameters"]
