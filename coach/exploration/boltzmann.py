"""Boltzmann (softmax) exploration over discrete actions.

Actions are drawn with probabilities softmax(Q / temperature): close values are tried about
equally, clearly worse ones rarely. The temperature follows a schedule of the training env
steps; evaluation is greedy, or softmax at ``evaluation_temperature`` (a stochastic policy
to record a dataset with: its randomness is where its values are close).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.exploration_policy import ExplorationPolicy, greedy_probabilities
from coach.schedules import LinearSchedule, Schedule


@dataclass(slots=True, kw_only=True)
class BoltzmannParameters:
    """Softmax exploration with a scheduled temperature."""

    temperature_schedule: Schedule = field(
        default_factory=lambda: LinearSchedule(1.0, 0.01, 50_000)
    )
    """The temperature as a function of the environment steps taken in training."""
    evaluation_temperature: float = 0.0
    """The temperature while evaluating; 0 is greedy."""

    def validate(self) -> None:
        check.schedule("temperature_schedule", self.temperature_schedule, 0)
        check.number("evaluation_temperature", self.evaluation_temperature, 0)

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> Boltzmann:
        return Boltzmann(action_space, rng, self.temperature_schedule, self.evaluation_temperature)


class Boltzmann(ExplorationPolicy):
    """Draws each env's action from softmax(values / temperature); an action of value -inf
    (ruled out by an action mask) has probability 0.

    Args:
        action_space: A ``spaces.Discrete`` action space.
        rng: Generator of the draws.
        temperature_schedule: Temperature after a number of training env steps (> 0).
    """

    def __init__(
        self,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        temperature_schedule: Schedule,
        evaluation_temperature: float = 0.0,
    ) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise CoachError(
                f"Boltzmann exploration needs a Discrete action space, got {action_space}"
            )
        if evaluation_temperature < 0:
            raise CoachError(f"evaluation_temperature must be >= 0, got {evaluation_temperature}")
        super().__init__(action_space, rng)
        self.start = int(action_space.start)
        self.temperature_schedule = temperature_schedule
        self.evaluation_temperature = evaluation_temperature

    @property
    def temperature(self) -> float:
        return max(self.temperature_schedule.value(self.steps), 1e-8)

    def probabilities(
        self, action_values: np.ndarray, temperature: float | None = None
    ) -> np.ndarray:
        """softmax(values / temperature) per row, computed stably."""
        logits = action_values / (temperature or self.temperature)
        logits = logits - logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        return weights / weights.sum(axis=1, keepdims=True)

    def action_probabilities(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        if phase is RunPhase.EVALUATE:
            if self.evaluation_temperature == 0:
                return greedy_probabilities(action_values)
            return self.probabilities(action_values, self.evaluation_temperature)
        return self.probabilities(action_values)

    def get_action(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        evaluating = phase is RunPhase.EVALUATE
        if evaluating and self.evaluation_temperature == 0:
            return action_values.argmax(axis=1) + self.start
        # The probabilities a dataset logs of this step, drawn from before the clock moves on.
        probabilities = self.action_probabilities(action_values, phase)
        cumulative = probabilities.cumsum(axis=1)
        if not evaluating:
            self.steps += len(action_values)
        draws = self.rng.random((len(action_values), 1))
        # The first action whose cumulative probability passes the draw (inverse CDF).
        actions = np.minimum((draws > cumulative).sum(axis=1), action_values.shape[1] - 1)
        if self.masked:
            # A draw past the rounded total falls on the last action, which may be illegal
            # (probability 0): such a row takes its most likely action instead.
            stray = probabilities[np.arange(len(actions)), actions] == 0.0
            if stray.any():
                actions[stray] = probabilities[stray].argmax(axis=1)
        return actions + self.start

    def values(self) -> dict[str, float]:
        return {"temperature": self.temperature}
