"""Exploration with an ensemble of Q heads: bootstrapped heads and UCB.

Both take the values of every head, shape (B, heads, A).

- `Bootstrapped` (Osband et al., 2016, "Deep Exploration via Bootstrapped DQN"): each env
  follows one head, drawn at random for each episode, greedily; deep exploration comes from
  the heads disagreeing. Evaluation acts on the ensemble's mean. An ``epsilon_schedule``
  makes the followed head e-greedy, as the original Coach's bootstrapped exploration was.
- `UCB` (Chen et al., 2017, "UCB Exploration via Q-Ensembles"): the action maximizing
  mean + c * std over the heads. Evaluation acts on the mean.

Neither picks an action at random unless an epsilon says so: with an action mask, the
illegal actions' values are -inf in every head, and every argmax (and a random action) passes
them over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.e_greedy import with_random_actions
from coach.exploration.exploration_policy import ExplorationPolicy, uniform_integers
from coach.schedules import Schedule


def _check(action_space: spaces.Space[Any], name: str) -> int:
    if not isinstance(action_space, spaces.Discrete):
        raise CoachError(f"{name} exploration needs a Discrete action space, got {action_space}")
    return int(action_space.start)


@dataclass(slots=True, kw_only=True)
class BootstrappedParameters:
    """One head per episode, followed greedily (or e-greedily)."""

    num_heads: int = 10
    """How many heads there are to choose from (the network's)."""
    epsilon_schedule: Schedule | None = None
    """Epsilon over the training env steps, for a random action in place of the followed
    head's with that probability, as the original Coach's bootstrapped exploration (an
    e-greedy one) took it; ``None`` (Osband et al.'s) follows the head greedily."""

    def validate(self) -> None:
        check.whole("num_heads", self.num_heads, 1)
        if self.epsilon_schedule is not None:
            check.schedule("epsilon_schedule", self.epsilon_schedule, 0, 1)

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> Bootstrapped:
        return Bootstrapped(action_space, rng, self.num_heads, self.epsilon_schedule)


class Bootstrapped(ExplorationPolicy):
    """Greedy on a head drawn per env and per episode; the ensemble mean in evaluation."""

    def __init__(
        self,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        num_heads: int,
        epsilon_schedule: Schedule | None = None,
    ) -> None:
        self.start = _check(action_space, "Bootstrapped")
        super().__init__(action_space, rng)
        self.num_heads = num_heads
        self.epsilon_schedule = epsilon_schedule
        self.heads = np.zeros(0, dtype=np.int64)

    def get_action(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        if action_values.ndim != 3 or action_values.shape[1] != self.num_heads:
            raise CoachError(
                f"bootstrapped exploration takes values of shape (B, {self.num_heads}, A), "
                f"got {action_values.shape}"
            )
        if phase is RunPhase.EVALUATE:
            return action_values.mean(axis=1).argmax(axis=1) + self.start
        count = len(action_values)
        if self.rows is not None:  # some copies: each follows its own head
            needed = int(self.rows.max()) + 1 if count else 0
            if len(self.heads) < needed:  # copies not seen before draw theirs
                drawn = uniform_integers(self.rng, self.num_heads, needed - len(self.heads))
                self.heads = np.concatenate([self.heads, drawn])
            heads = self.heads[self.rows]
        else:
            if len(self.heads) != count:
                self.heads = uniform_integers(self.rng, self.num_heads, count)
            heads = self.heads
        followed = action_values[np.arange(count), heads]
        actions = followed.argmax(axis=1)
        if self.epsilon_schedule is not None:
            epsilon = self.epsilon_schedule.value(self.steps)
            actions = with_random_actions(actions, followed, epsilon, self.rng, self.masked)
        self.steps += count
        return actions + self.start

    def values(self) -> dict[str, float]:
        if self.epsilon_schedule is None:
            return {}
        return {"epsilon": self.epsilon_schedule.value(self.steps)}

    def episode_ended(self, env_mask: np.ndarray) -> None:
        if len(self.heads) < len(env_mask):  # slots: copies that never acted have no head
            env_mask = env_mask[: len(self.heads)]
        if len(self.heads) == len(env_mask) and env_mask.any():
            self.heads[env_mask] = uniform_integers(self.rng, self.num_heads, int(env_mask.sum()))

    def state_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "heads": self.heads.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        self.heads = np.asarray(state["heads"], dtype=np.int64)


@dataclass(slots=True, kw_only=True)
class UCBParameters:
    """The action with the highest mean + c * std over the heads."""

    c: float = 1.0
    """Weight of the heads' disagreement."""

    def validate(self) -> None:
        check.number("c", self.c, 0)

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> UCB:
        return UCB(action_space, rng, self.c)


class UCB(ExplorationPolicy):
    """Upper confidence bound over an ensemble of Q heads."""

    def __init__(self, action_space: spaces.Space[Any], rng: np.random.Generator, c: float) -> None:
        self.start = _check(action_space, "UCB")
        super().__init__(action_space, rng)
        self.c = c

    def get_action(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        if action_values.ndim != 3:
            raise CoachError(
                f"UCB exploration takes the values of every head, (B, heads, A), got "
                f"{action_values.shape}: use it with a bootstrapped (ensemble) agent"
            )
        mean = action_values.mean(axis=1)
        if phase is RunPhase.EVALUATE:
            return mean.argmax(axis=1) + self.start
        self.steps += len(action_values)
        if self.masked:
            # The spread of -inf values is nan, which argmax would pick: an illegal action
            # keeps its -inf, the legal ones get their bound.
            legal = np.isfinite(mean)
            spread = np.where(legal[:, None, :], action_values, 0.0).std(axis=1)
            bound = np.where(legal, mean + self.c * spread, -np.inf)
            return bound.argmax(axis=1) + self.start
        return (mean + self.c * action_values.std(axis=1)).argmax(axis=1) + self.start
