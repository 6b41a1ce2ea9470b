"""Schedules: a value as a function of a step count (epsilon, learning rate, beta, ...).

A schedule is a pure function of the step it is asked about, so the owner keeps only the
count, and a checkpoint restores a schedule by restoring that count.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, cast

from coach.core.step_units import StepUnit


class Schedule(ABC):
    """A value that changes with the number of steps taken."""

    @abstractmethod
    def value(self, step: int) -> float:
        """The value after ``step`` steps."""

    def __call__(self, step: int) -> float:
        return self.value(step)

    def bounds(self) -> tuple[float, float] | None:
        """The smallest and the largest value the schedule takes (``None``: not known), for
        the parameters that check their schedules' range (an epsilon stays in [0, 1])."""
        return None


def _finite(cls: type, field: str, value: object) -> None:
    """Schedules are built from override text too: refuse a value that is not a number
    (``TypeError``) or not finite (``ValueError``) before it reaches a run."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{cls.__name__}'s {field} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{cls.__name__}'s {field} must be finite, got {value!r}")


@dataclass(slots=True)
class ConstantSchedule(Schedule):
    """The same value at every step."""

    initial_value: float
    """The value."""

    def __post_init__(self) -> None:
        _finite(type(self), "initial_value", self.initial_value)

    def value(self, step: int) -> float:
        return self.initial_value

    def bounds(self) -> tuple[float, float]:
        return (self.initial_value, self.initial_value)


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
        _finite(type(self), "initial_value", self.initial_value)
        _finite(type(self), "final_value", self.final_value)
        if isinstance(self.decay_steps, bool) or not isinstance(self.decay_steps, int):
            raise TypeError(f"decay_steps must be a whole number, got {self.decay_steps!r}")
        if self.decay_steps < 0:
            raise ValueError(f"decay_steps must be >= 0, got {self.decay_steps}")

    def value(self, step: int) -> float:
        if step >= self.decay_steps:
            return self.final_value
        fraction = step / self.decay_steps
        return self.initial_value + fraction * (self.final_value - self.initial_value)

    def bounds(self) -> tuple[float, float]:
        return (
            min(self.initial_value, self.final_value),
            max(self.initial_value, self.final_value),
        )


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
        _finite(type(self), "initial_value", self.initial_value)
        _finite(type(self), "final_value", self.final_value)
        _finite(type(self), "decay_rate", self.decay_rate)
        if self.decay_rate <= 0:
            raise ValueError(f"decay_rate must be > 0, got {self.decay_rate}")

    def value(self, step: int) -> float:
        raw = self.initial_value * math.pow(self.decay_rate, step)
        if self.decay_rate < 1:
            return max(raw, self.final_value)
        return min(raw, self.final_value)

    def bounds(self) -> tuple[float, float]:
        # The value starts at initial_value and moves towards final_value, never past it.
        return (
            min(self.initial_value, self.final_value),
            max(self.initial_value, self.final_value),
        )


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
        if not isinstance(self.pieces, list | tuple) or not self.pieces:
            raise ValueError(
                "PieceWiseSchedule needs at least one piece: a list of (schedule, steps)"
            )
        pieces = []
        for piece in self.pieces:
            if not (isinstance(piece, list | tuple) and len(piece) == 2):
                raise TypeError(f"a PieceWiseSchedule piece is (schedule, steps), got {piece!r}")
            schedule, duration = piece
            duration = cast(Any, duration)  # whatever a preset wrote
            # Step units are accepted for the durations and kept as plain counts.
            if isinstance(duration, StepUnit):
                duration = duration.num_steps
            if not isinstance(schedule, Schedule):
                raise TypeError(f"a PieceWiseSchedule piece starts with a schedule, got {piece!r}")
            if isinstance(duration, bool) or not isinstance(duration, int) or duration < 0:
                raise ValueError(f"a piece lasts a whole number of steps >= 0, got {piece!r}")
            pieces.append((schedule, duration))
        self.pieces = pieces

    def value(self, step: int) -> float:
        start = 0
        for schedule, duration in self.pieces[:-1]:
            if step < start + duration:
                return schedule.value(step - start)
            start += duration
        return self.pieces[-1][0].value(step - start)

    def bounds(self) -> tuple[float, float] | None:
        ranges = [schedule.bounds() for schedule, _ in self.pieces]
        known = [r for r in ranges if r is not None]
        if len(known) < len(ranges):
            return None
        return (min(low for low, _ in known), max(high for _, high in known))
