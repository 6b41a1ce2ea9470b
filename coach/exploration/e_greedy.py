"""Epsilon-greedy exploration over discrete actions (Mnih et al., 2015)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.action_masks import legal_probabilities, legal_random_actions
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.exploration_policy import (
    ExplorationPolicy,
    greedy_probabilities,
    uniform_integers,
)
from coach.schedules import LinearSchedule, Schedule


def with_random_actions(
    greedy: np.ndarray,
    action_values: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    masked: bool,
) -> np.ndarray:
    """``greedy`` with each action replaced, with probability ``epsilon``, by one drawn
    uniformly (among the actions whose values are finite, under an action mask); nothing is
    drawn at an epsilon of 0."""
    if epsilon <= 0.0:
        return greedy
    count = len(greedy)
    explore = rng.random(count) < epsilon
    random = (
        legal_random_actions(np.isfinite(action_values), rng)
        if masked
        else uniform_integers(rng, action_values.shape[1], count)
    )
    return np.where(explore, random, greedy)


@dataclass(slots=True, kw_only=True)
class EGreedyParameters:
    """Random action with probability epsilon, else the greedy one."""

    epsilon_schedule: Schedule = field(default_factory=lambda: LinearSchedule(1.0, 0.01, 50_000))
    """Epsilon as a function of the environment steps taken in training."""
    evaluation_epsilon: float = 0.0
    """Epsilon while evaluating."""

    def validate(self) -> None:
        check.schedule("epsilon_schedule", self.epsilon_schedule, 0, 1)
        check.number("evaluation_epsilon", self.evaluation_epsilon, 0, 1)

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> EGreedy:
        return EGreedy(action_space, rng, self.epsilon_schedule, self.evaluation_epsilon)


class EGreedy(ExplorationPolicy):
    """Per env, a uniform random action with probability epsilon, else the argmax; with an
    action mask (`masked`), uniform among the actions whose values are finite.

    Args:
        action_space: A ``spaces.Discrete`` action space.
        rng: Generator for the coin flips and the random actions.
        epsilon_schedule: Epsilon after a number of training env steps.
        evaluation_epsilon: Epsilon in evaluation (0 is greedy).
    """

    def __init__(
        self,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        epsilon_schedule: Schedule,
        evaluation_epsilon: float = 0.0,
    ) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise CoachError(f"e-greedy needs a Discrete action space, got {action_space}")
        super().__init__(action_space, rng)
        self.num_actions = int(action_space.n)
        self.start = int(action_space.start)
        self.epsilon_schedule = epsilon_schedule
        self.evaluation_epsilon = evaluation_epsilon

    @property
    def epsilon(self) -> float:
        return self.epsilon_schedule.value(self.steps)

    def get_action(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        count = len(action_values)
        greedy = action_values.argmax(axis=1)
        if phase is RunPhase.EVALUATE:
            epsilon = self.evaluation_epsilon
        else:
            epsilon = self.epsilon
            self.steps += count
        greedy = with_random_actions(greedy, action_values, epsilon, self.rng, self.masked)
        return greedy + self.start if self.start else greedy

    def action_probabilities(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        epsilon = self.evaluation_epsilon if phase is RunPhase.EVALUATE else self.epsilon
        greedy = greedy_probabilities(action_values)
        if self.masked:  # the random share goes to the legal actions (finite values) alone
            return (1.0 - epsilon) * greedy + epsilon * legal_probabilities(
                np.isfinite(action_values)
            )
        return (1.0 - epsilon) * greedy + epsilon / self.num_actions

    def values(self) -> dict[str, float]:
        return {"epsilon": self.epsilon}
