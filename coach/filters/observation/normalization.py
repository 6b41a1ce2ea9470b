"""Normalize observations by running statistics."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ObservationFilter
from coach.filters.running_stats import RunningMeanStd


class ObservationNormalizationFilter(ObservationFilter):
    """Standardizes every element of a Box observation by the running mean and variance of
    that element over all observations seen in heatup and training, then clips it.

    The output is ``clip((x - mean) / sqrt(var + epsilon), -clip, clip)`` as float32, as in
    Stable-Baselines3's ``VecNormalize``. The statistics are updated with each batch before
    it is normalized, and only when ``filter`` is called with ``update=True``: evaluation
    sees them frozen.

    Args:
        clip: The bound on the absolute value of a normalized element; positive.
        epsilon: Added to the variance so that a constant element does not divide by zero;
            positive.
    """

    def __init__(self, clip: float = 5.0, epsilon: float = 1e-8) -> None:
        if not clip > 0:
            raise CoachError(f"ObservationNormalizationFilter: clip must be positive, got {clip}")
        if not epsilon > 0:
            raise CoachError(
                f"ObservationNormalizationFilter: epsilon must be positive (it keeps a constant "
                f"element from dividing by zero), got {epsilon}"
            )
        self.clip = clip
        self.epsilon = epsilon
        self.stats: RunningMeanStd | None = None
        """The running statistics, made when the filter learns its input's shape."""

    def __repr__(self) -> str:
        return f"ObservationNormalizationFilter(clip={self.clip}, epsilon={self.epsilon})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(input_space, spaces.Box):
            raise CoachError(
                f"ObservationNormalizationFilter needs a Box observation, got {input_space}"
            )
        if self.stats is None or self.stats.shape != input_space.shape:
            self.stats = RunningMeanStd(input_space.shape)  # else keep what was loaded
        return spaces.Box(-self.clip, self.clip, shape=input_space.shape, dtype=np.float32)

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        if self.stats is None:
            raise CoachError(
                "ObservationNormalizationFilter was used before output_space told it its input"
            )
        if update:
            self.stats.update(observation)
        normalized = (observation - self.stats.mean) / np.sqrt(self.stats.var + self.epsilon)
        return np.clip(normalized, -self.clip, self.clip).astype(np.float32)

    def state_dict(self) -> dict[str, Any]:
        return {} if self.stats is None else self.stats.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not state:
            return
        if self.stats is None:  # loaded before being bound: the state knows the shape
            self.stats = RunningMeanStd(np.shape(state["mean"]))
        self.stats.load_state_dict(state)
