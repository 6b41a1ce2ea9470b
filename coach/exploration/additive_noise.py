"""Gaussian noise added to continuous actions, then clipped into the box.

The exploration of TD3 (Fujimoto et al., 2018, "Addressing Function Approximation Error in
Actor-Critic Methods") and of the re-tuned DDPG there: ``a = clip(mu(s) + N(0, std^2))``, the
standard deviation following a schedule of the training env steps. As in Intel Coach, the
scheduled value is by default a fraction of the action range (0.1 is a tenth of
``high - low``, per dimension); TD3's absolute 0.1 is ``noise_as_percentage_from_action_space
= False``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.exploration_policy import ExplorationPolicy
from coach.schedules import LinearSchedule, Schedule


def bounded_box(action_space: spaces.Space[Any], name: str) -> spaces.Box:
    """``action_space`` as a Box with finite bounds, or a CoachError naming what was given."""
    if not isinstance(action_space, spaces.Box):
        raise CoachError(f"{name} needs a Box (continuous) action space, got {action_space}")
    if not (np.all(np.isfinite(action_space.low)) and np.all(np.isfinite(action_space.high))):
        raise CoachError(
            f"{name} needs a Box action space with finite bounds (its noise and clipping are "
            f"set by them), got {action_space}"
        )
    return action_space


def check_actions(action_values: np.ndarray, space: spaces.Box, name: str) -> np.ndarray:
    """The batch of actions ``(B, *space.shape)`` as float64, or a CoachError on a bad shape."""
    actions = np.asarray(action_values, dtype=np.float64)
    if actions.ndim != len(space.shape) + 1 or actions.shape[1:] != space.shape:
        raise CoachError(
            f"{name} takes a batch of actions of shape (B, {', '.join(map(str, space.shape))}) "
            f"for the space {space}, got shape {actions.shape}"
        )
    return actions


@dataclass(slots=True, kw_only=True)
class AdditiveNoiseParameters:
    """Gaussian noise on the policy's actions, clipped into the action box."""

    noise_schedule: Schedule = field(default_factory=lambda: LinearSchedule(0.1, 0.1, 50_000))
    """The noise's standard deviation as a function of the environment steps taken in
    training (a fraction of the action range, or absolute: see below)."""
    evaluation_noise: float = 0.0
    """The standard deviation while evaluating (0: the policy's actions, deterministic)."""
    noise_as_percentage_from_action_space: bool = True
    """True: the values above are fractions of ``high - low`` (per dimension); False: they
    are in the action's own units."""

    def validate(self) -> None:
        check.schedule("noise_schedule", self.noise_schedule, 0)
        check.number("evaluation_noise", self.evaluation_noise, 0)

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> AdditiveNoise:
        return AdditiveNoise(
            action_space,
            rng,
            self.noise_schedule,
            self.evaluation_noise,
            self.noise_as_percentage_from_action_space,
        )


class AdditiveNoise(ExplorationPolicy):
    """``clip(action + N(0, std^2), low, high)``, independently per env and dimension.

    Differs from Intel Coach's ``AdditiveNoise`` in that the result is clipped into the box
    (Coach left that to the environment), ``evaluation_noise`` is applied in evaluation (the
    last Coach release ignored it there) and defaults to 0 rather than 0.05, and a standard
    deviation given by the agent along with its actions is not taken (an agent with a
    stochastic policy samples it itself).

    Args:
        action_space: A ``spaces.Box`` with finite bounds.
        rng: Generator of the noise.
        noise_schedule: The standard deviation after a number of training env steps.
        evaluation_noise: The standard deviation in evaluation.
        noise_as_percentage_from_action_space: Whether the two are fractions of the range.
    """

    def __init__(
        self,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        noise_schedule: Schedule,
        evaluation_noise: float = 0.0,
        noise_as_percentage_from_action_space: bool = True,
    ) -> None:
        self.box = bounded_box(action_space, self.name)
        super().__init__(action_space, rng)
        self.noise_schedule = noise_schedule
        self.evaluation_noise = evaluation_noise
        self.noise_as_percentage_from_action_space = noise_as_percentage_from_action_space
        self.low = self.box.low.astype(np.float64)
        self.high = self.box.high.astype(np.float64)

    @property
    def noise(self) -> float:
        """The scheduled noise at the current step (before scaling by the range)."""
        return self.noise_schedule.value(self.steps)

    name = "additive noise exploration"
    """How errors name the policy."""

    def std(self, noise: float) -> np.ndarray:
        """The standard deviation per action dimension for a noise value."""
        if self.noise_as_percentage_from_action_space:
            return noise * (self.box.high.astype(np.float64) - self.box.low)
        return np.full(self.box.shape, noise)

    def perturb(self, actions: np.ndarray, std: np.ndarray) -> np.ndarray:
        """The actions with noise of standard deviation ``std`` (before clipping)."""
        return actions + std * self.rng.standard_normal(actions.shape)

    def get_action(self, action_values: np.ndarray, phase: RunPhase) -> np.ndarray:
        actions = check_actions(action_values, self.box, self.name)
        if phase is RunPhase.EVALUATE:
            noise = self.evaluation_noise
        else:
            noise = self.noise
            self.steps += len(actions)
        if noise > 0.0:
            actions = self.perturb(actions, self.std(noise))
        return np.clip(actions, self.low, self.high).astype(self.box.dtype, copy=False)

    def values(self) -> dict[str, float]:
        return {"noise": self.noise}

    def evaluation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low, self.high
