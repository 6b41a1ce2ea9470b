"""Quantize observations to uint8."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ObservationFilter


class ObservationToUInt8Filter(ObservationFilter):
    """Maps ``[input_low, input_high]`` linearly onto ``[0, 255]`` and stores the result as
    uint8, a quarter of the memory of float32 (worth it for image observations in a replay
    memory).

    Values outside the range are clipped into it first; the result is rounded to the nearest
    integer, so each of the 256 levels covers an equal share of the range (Coach truncated,
    which gave 255 to ``input_high`` alone).

    Args:
        input_low: The value mapped to 0.
        input_high: The value mapped to 255; above ``input_low``.
    """

    def __init__(self, input_low: float, input_high: float) -> None:
        if not (math.isfinite(input_low) and math.isfinite(input_high)):
            raise CoachError(
                f"ObservationToUInt8Filter needs a finite range, got [{input_low}, {input_high}]"
            )
        if not input_low < input_high:
            raise CoachError(
                f"ObservationToUInt8Filter: input_low {input_low} is not below "
                f"input_high {input_high}"
            )
        self.input_low = input_low
        self.input_high = input_high

    def __repr__(self) -> str:
        return f"ObservationToUInt8Filter({self.input_low}, {self.input_high})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(input_space, spaces.Box):
            raise CoachError(f"ObservationToUInt8Filter needs a Box observation, got {input_space}")
        return spaces.Box(0, 255, shape=input_space.shape, dtype=np.uint8)

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        clipped = np.clip(observation, self.input_low, self.input_high, dtype=np.float64)
        scaled = (clipped - self.input_low) * (255.0 / (self.input_high - self.input_low))
        return np.rint(scaled).astype(np.uint8)
