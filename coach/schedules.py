"""Schedules: a value as a function of a step count (epsilon, learning rate, beta, ...).

A schedule is a pure function of the step it is asked about, so the owner keeps only the
count, and a checkpoint restores a schedule by restoring that count.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass


class Schedule(ABC):
    """A value that changes with the number of steps taken."""

    @abstractmethod
    def value(self, step: int) -> float:
        """The value after ``step`` steps."""

    def __call__(self, step: int) -> float:
        return self.value(step)


@dataclass(slots=True)
class ConstantSchedule(Schedule):
    """The same value at every step."""

    initial_value: float
    """The value."""

    def value(self, step: int) -> float:
        return self.initial_value


@dataclass(slots=True)
class LinearSchedule(Schedule):
    """From ``initial_value`` to ``final_value`` in a straight line over ``decay_steps``."""

    initial_value: float
    """The value at step 0."""
    final_value: float
    """The value from ``decay_steps`` on."""
    decay_steps: int
    """How many steps the change takes."""

    def __post_init__(self) -> None:
        if self.decay_steps < 0:
            raise ValueError(f"decay_steps must be >= 0, got {self.decay_steps}")

    def value(self, step: int) -> float:
        if step >= self.decay_steps:
            return self.final_value
        fraction = step / self.decay_steps
        return self.initial_value + fraction * (self.final_value - self.initial_value)


@dataclass(slots=True)
class ExponentialSchedule(Schedule):
    """``initial_value * decay_rate ** step``, never past ``final_value``."""

    initial_value: float
    """The value at step 0."""
    final_value: float
    """The bound the value decays (or grows) towards and stops at."""
    decay_rate: float
    """The factor applied per step."""

    def __post_init__(self) -> None:
        if self.decay_rate <= 0:
            raise ValueError(f"decay_rate must be > 0, got {self.decay_rate}")

    def value(self, step: int) -> float:
        raw = self.initial_value * math.pow(self.decay_rate, step)
        if self.decay_rate < 1:
            return max(raw, self.final_value)
        return min(raw, self.final_value)


@dataclass(slots=True)
class PieceWiseSchedule(Schedule):
    """Schedules one after another, each for a number of steps; the last one runs on.

    Example: ``PieceWiseSchedule([(ConstantSchedule(1.0), 1000), (LinearSchedule(1.0, 0.1,
    9000), 9000), (ConstantSchedule(0.1), 0)])``. Each piece counts its steps from its own
    start.
    """

    pieces: list[tuple[Schedule, int]]
    """(schedule, number of steps it lasts) pairs."""

    def __post_init__(self) -> None:
        if not self.pieces:
            raise ValueError("PieceWiseSchedule needs at least one piece")
        # Step units are accepted for the durations and kept as plain counts.
        self.pieces = [(s, int(getattr(n, "num_steps", n))) for s, n in self.pieces]

    def value(self, step: int) -> float:
        start = 0
        for schedule, duration in self.pieces[:-1]:
            if step < start + duration:
                return schedule.value(step - start)
            start += duration
        return self.pieces[-1][0].value(step - start)
