"""The exploration interface, and uniform random actions (used during heatup)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.errors import CoachError


def uniform_integers(rng: np.random.Generator, n: int, count: int) -> np.ndarray:
    """``count`` integers uniform in ``[0, n)``.

    Scaling a uniform float is four times faster than ``rng.integers`` for the small batches
    acting draws (its bias is below 2**-52 of a bucket for any ``n`` an action space has).
    """
    return (rng.random(count) * n).astype(np.int64)


def greedy_probabilities(action_values: np.ndarray) -> np.ndarray:
    """Probability 1 on each row's argmax (the first of ties), shape (B, A)."""
    probabilities = np.zeros(action_values.shape, dtype=np.float64)
    probabilities[np.arange(len(action_values)), action_values.argmax(axis=1)] = 1.0
    return probabilities


def uniform_behaviour(space: spaces.Space[Any], count: int) -> dict[str, np.ndarray]:
    """What a dataset logs of uniform random actions (heatup): the probability of every
    action (Discrete), or the log density of the action drawn (a bounded Box)."""
    if isinstance(space, spaces.Discrete):
        return {"action_probabilities": np.full((count, int(space.n)), 1.0 / int(space.n))}
    if isinstance(space, spaces.Box):
        log_volume = float(np.sum(np.log(space.high.astype(np.float64) - space.low)))
        return {"action_log_prob": np.full(count, -log_volume)}
    return {}


def random_actions(space: spaces.Space[Any], count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` uniform random actions from ``space``, drawn with ``rng``."""
    if isinstance(space, spaces.Discrete):
        actions = uniform_integers(rng, int(space.n), count)
        return actions + space.start if space.start else actions
    if isinstance(space, spaces.Box):
        if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
            raise CoachError(f"cannot draw uniform random actions from an unbounded {space}")
        return rng.uniform(space.low, space.high, size=(count, *space.shape)).astype(space.dtype)
    if isinstance(space, spaces.MultiDiscrete):
        return space.start + rng.integers(0, space.nvec, size=(count, *space.nvec.shape))
    if isinstance(space, spaces.MultiBinary):
        return rng.integers(0, 2, size=(count, *space.shape), dtype=space.dtype)
    raise CoachError(f"no random actions for the action space {space}")


@runtime_checkable
class ExplorationParameters(Protocol):
    """What an agent's ``exploration`` parameters are: something that builds its policy."""

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> ExplorationPolicy:
        """The exploration policy over ``action_space``, drawing with ``rng``."""
        ...


class ExplorationPolicy(ABC):
    """Turns what a policy computed into the actions taken, by run phase.

    The policy keeps the count of exploratory steps it was asked for; its schedules are
    functions of that count, so a checkpoint restores the policy by restoring the count.
    """

    def __init__(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> None:
        self.action_space = action_space
        self.rng = rng
        self.steps = 0
        self.masked = False
        """The values it is given mark illegal actions with -inf (an action mask,
        `coach.core.action_masks`): a discrete policy picks its random actions among the
        actions of finite value only. Set once by the policy that gives it such values."""
        self.rows: np.ndarray | None = None
        """The copies the next `get_action` is for (``None``: every copy, in order): a
        multi-agent level's slots whose ids decide. Set by the policy before each step."""

    @abstractmethod
    def get_action(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        """The actions for a batch, given what the policy computed (e.g. Q-values (B, A))."""

    def action_probabilities(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        """The probability (B, A) of every action under this policy in ``phase``, as
        `get_action` would draw them next: what a dataset logs of its behaviour policy."""
        raise CoachError(
            f"{type(self).__name__} does not give the probabilities of its actions; record "
            f"datasets with e-greedy or Boltzmann exploration"
        )

    def values(self) -> dict[str, float]:
        """Current values of the policy's schedules, for logging."""
        return {}

    def evaluation_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The bounds (low, high) into which `get_action` clips a continuous policy's actions
        in evaluation, where it does (``None``: it leaves them as they are, noise aside):
        what an exported greedy policy clips into too."""
        return None

    def episode_ended(self, env_mask: np.ndarray) -> None:  # noqa: B027 - an optional hook
        """The envs where ``env_mask`` is true start new episodes (per-episode choices)."""

    def state_dict(self) -> dict[str, Any]:
        return {"steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
