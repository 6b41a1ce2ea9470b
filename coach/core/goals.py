"""Goals: how a goal-based task rewards reaching a goal, and when a goal counts as reached.

Hindsight replay uses it to reward relabeled steps without the environment, and the levels of
a hierarchy below the top use it for the reward of the goals the level above sets them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coach import validation as check
from coach.errors import CoachError
from coach.validation import InvalidParameter

_DISTANCES = ("euclidean", "max_abs")


@dataclass(slots=True, kw_only=True)
class GoalReward:
    """How a goal-based task rewards reaching an achieved goal when a desired one was asked.

    It lets a hindsight memory recompute the reward of a relabeled step without the
    environment. A goal is reached when ``distance(achieved, desired) <= threshold``.
    """

    distance: str = "euclidean"
    """``"euclidean"`` (L2 norm of the difference) or ``"max_abs"`` (its largest |entry|)."""
    threshold: float = 0.0
    """Reached when the distance is at most this (0: only an exact match, as in BitFlip)."""
    reached_reward: float = 0.0
    """The reward of a step that ends with the goal reached."""
    not_reached_reward: float = -1.0
    """The reward of any other step."""
    terminate_when_reached: bool = True
    """Reaching the goal ends the episode (relabeled steps that reach it are terminal)."""
    dimension_thresholds: list[float] | None = None
    """Per goal entry instead: reached when every ``|achieved_i - desired_i|`` is at most
    its threshold (PendulumWithGoals: angle entries 0.075, velocity 0.75)."""

    def __post_init__(self) -> None:
        try:
            self.validate()
        except InvalidParameter as error:
            raise error.under("GoalReward") from None

    def validate(self) -> None:
        check.one_of("distance", self.distance, _DISTANCES)
        check.number("threshold", self.threshold, 0)
        for i, threshold in enumerate(self.dimension_thresholds or []):
            check.number(f"dimension_thresholds.{i}", threshold, 0)
        check.number("reached_reward", self.reached_reward)
        check.number("not_reached_reward", self.not_reached_reward)

    def distances(self, achieved: np.ndarray, desired: np.ndarray) -> np.ndarray:
        """The distance of each pair, shape (N,), for goals of shape (N, *goal_shape)."""
        # In float64: differences of int8 or uint8 goals would wrap around.
        difference = np.asarray(achieved, dtype=np.float64) - np.asarray(desired, np.float64)
        if difference.ndim == 0:
            raise CoachError("GoalReward needs goals with a leading batch axis, got scalars")
        difference = difference.reshape(difference.shape[0], -1)
        if self.distance == "euclidean":
            return np.sqrt(np.square(difference).sum(axis=1))
        return np.abs(difference).max(axis=1, initial=0.0)

    def reached(self, achieved: np.ndarray, desired: np.ndarray) -> np.ndarray:
        """Whether each achieved goal reaches its desired goal, shape (N,), bool."""
        if self.dimension_thresholds is None:
            return self.distances(achieved, desired) <= self.threshold
        difference = np.asarray(achieved, dtype=np.float64) - np.asarray(desired, np.float64)
        difference = np.abs(difference.reshape(difference.shape[0], -1))
        thresholds = np.asarray(self.dimension_thresholds, dtype=np.float64)
        if thresholds.shape != difference.shape[1:]:
            raise CoachError(
                f"GoalReward has {len(thresholds)} dimension thresholds for goals of "
                f"{difference.shape[1]} entries"
            )
        return np.all(difference <= thresholds, axis=1)

    def reward(self, achieved: np.ndarray, desired: np.ndarray) -> np.ndarray:
        """The reward of each pair, shape (N,), float32."""
        return np.where(
            self.reached(achieved, desired), self.reached_reward, self.not_reached_reward
        ).astype(np.float32)
