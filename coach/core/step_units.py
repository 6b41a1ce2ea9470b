"""Typed step units: budgets and periods say what they count.

A phase of 1,000 environment steps and one of 1,000 training steps are different things, so
units compare and add only with their own kind: ``EnvironmentSteps(5) < TrainingSteps(9)``
raises ``TypeError`` instead of quietly comparing two integers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class StepUnit:
    """A number of steps of one kind."""

    num_steps: int
    """How many steps."""

    def __post_init__(self) -> None:
        if isinstance(self.num_steps, bool) or not isinstance(self.num_steps, int):
            raise TypeError(f"{type(self).__name__} takes a whole number, got {self.num_steps!r}")
        if self.num_steps < 0:
            raise ValueError(f"{type(self).__name__} takes a count >= 0, got {self.num_steps}")

    def _same_unit(self, other: Any) -> int:
        if type(other) is not type(self):
            raise TypeError(
                f"{type(self).__name__} can only be combined with {type(self).__name__}, "
                f"not with {type(other).__name__}"
            )
        return int(other.num_steps)

    def __add__(self, other: Any) -> StepUnit:
        return type(self)(self.num_steps + self._same_unit(other))

    def __sub__(self, other: Any) -> StepUnit:
        return type(self)(self.num_steps - self._same_unit(other))

    def __mul__(self, factor: int) -> StepUnit:
        if isinstance(factor, bool) or not isinstance(factor, int):
            raise TypeError(f"{type(self).__name__} can only be multiplied by a whole number")
        return type(self)(self.num_steps * factor)

    __rmul__ = __mul__

    def __lt__(self, other: Any) -> bool:
        return self.num_steps < self._same_unit(other)

    def __le__(self, other: Any) -> bool:
        return self.num_steps <= self._same_unit(other)

    def __gt__(self, other: Any) -> bool:
        return self.num_steps > self._same_unit(other)

    def __ge__(self, other: Any) -> bool:
        return self.num_steps >= self._same_unit(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.num_steps})"


class EnvironmentSteps(StepUnit):
    """Steps of the real environment, summed over its parallel copies."""

    __slots__ = ()


class EnvironmentEpisodes(StepUnit):
    """Completed episodes of the real environment, summed over its parallel copies."""

    __slots__ = ()


class TrainingSteps(StepUnit):
    """Gradient steps of the agents."""

    __slots__ = ()


class Epochs(StepUnit):
    """Passes over a batch-RL dataset (`coach.batch.graph_manager`)."""

    __slots__ = ()
