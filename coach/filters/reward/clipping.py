"""Clip rewards into a range."""

from __future__ import annotations

import math

import numpy as np

from coach.errors import CoachError
from coach.filters.filter import RewardFilter


class RewardClippingFilter(RewardFilter):
    """Clips every reward into ``[clipping_low, clipping_high]``; the rewards come out as
    float32.

    DQN clips Atari rewards to ``(-1, 1)`` so that one learning rate fits every game (Mnih
    et al. 2015, "Human-level control through deep reinforcement learning").

    Args:
        clipping_low: The smallest reward let through (``-inf`` for no lower bound).
        clipping_high: The largest reward let through (``inf`` for no upper bound).
    """

    def __init__(self, clipping_low: float = -math.inf, clipping_high: float = math.inf) -> None:
        low, high = _number(clipping_low, "clipping_low"), _number(clipping_high, "clipping_high")
        if not low <= high:
            raise CoachError(
                f"RewardClippingFilter: clipping_low {low} is above clipping_high {high}"
            )
        self.clipping_low = low
        self.clipping_high = high

    def __repr__(self) -> str:
        return f"RewardClippingFilter({self.clipping_low!r}, {self.clipping_high!r})"

    def filter(self, reward: np.ndarray, update: bool = True) -> np.ndarray:
        # Clipped in float64, where any float bound is exact, then cast: a new array.
        reward = np.asarray(reward, dtype=np.float64)
        return np.clip(reward, self.clipping_low, self.clipping_high).astype(np.float32)


def _number(value: object, name: str) -> float:
    """``value`` as a float, refusing what is not a real number (booleans, strings, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise CoachError(f"RewardClippingFilter: {name} must be a number, got {value!r}")
    if math.isnan(value):
        raise CoachError(f"RewardClippingFilter: {name} must be a number, got nan")
    return float(value)
