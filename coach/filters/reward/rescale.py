"""Rescale rewards by a constant factor."""

from __future__ import annotations

import math

import numpy as np

from coach.errors import CoachError
from coach.filters.filter import RewardFilter


class RewardRescaleFilter(RewardFilter):
    """Multiplies every reward by ``rescale_factor``; the rewards come out as float32.

    As in the original Coach, the factor multiplies the reward (it does not divide it):
    ``RewardRescaleFilter(1 / 100)`` shrinks rewards a hundredfold. A factor of zero would
    erase every reward and is refused; a negative factor (turning costs into rewards) is
    allowed.

    Args:
        rescale_factor: The finite, non-zero number each reward is multiplied by.
    """

    def __init__(self, rescale_factor: float) -> None:
        if isinstance(rescale_factor, bool) or not isinstance(
            rescale_factor, int | float | np.integer | np.floating
        ):
            raise CoachError(
                f"RewardRescaleFilter: rescale_factor must be a number, got {rescale_factor!r}"
            )
        if rescale_factor == 0 or not math.isfinite(rescale_factor):
            raise CoachError(
                "RewardRescaleFilter: rescale_factor must be a finite, non-zero number, "
                f"got {rescale_factor}"
            )
        self.rescale_factor = float(rescale_factor)

    def __repr__(self) -> str:
        return f"RewardRescaleFilter({self.rescale_factor!r})"

    def filter(self, reward: np.ndarray, update: bool = True) -> np.ndarray:
        # Multiplied in float64 so that a float32 reward and a factor like 0.01 do not
        # round twice; the result is a new array.
        return (np.asarray(reward, dtype=np.float64) * self.rescale_factor).astype(np.float32)
