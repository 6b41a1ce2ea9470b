"""Clip observations into a range."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ObservationFilter


class ObservationClippingFilter(ObservationFilter):
    """Clips every value of a Box observation into ``[clipping_low, clipping_high]``, keeping
    its dtype.

    Args:
        clipping_low: The smallest value let through.
        clipping_high: The largest value let through.
    """

    def __init__(self, clipping_low: float = -np.inf, clipping_high: float = np.inf) -> None:
        if clipping_low > clipping_high:
            raise CoachError(
                f"ObservationClippingFilter: clipping_low {clipping_low} is above "
                f"clipping_high {clipping_high}"
            )
        self.clipping_low = clipping_low
        self.clipping_high = clipping_high

    def __repr__(self) -> str:
        return f"ObservationClippingFilter({self.clipping_low}, {self.clipping_high})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(input_space, spaces.Box):
            raise CoachError(
                f"ObservationClippingFilter needs a Box observation, got {input_space}"
            )
        low = np.clip(input_space.low, self.clipping_low, self.clipping_high)
        high = np.clip(input_space.high, self.clipping_low, self.clipping_high)
        return spaces.Box(low, high, dtype=input_space.dtype)

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        clipped = np.clip(observation, self.clipping_low, self.clipping_high)
        return clipped.astype(observation.dtype, copy=False)  # the space's dtype is kept
