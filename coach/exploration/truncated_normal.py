"""Continuous actions drawn from a normal around the policy's, truncated to the bounds.

Unlike clipped additive noise, which piles the out-of-bounds mass onto the bounds, the
truncated normal spreads it over the inside: near a bound the draws shift inwards, and no
action sits exactly on a bound more often than any other point. The standard deviation
follows a schedule of the training env steps, as a fraction of the action range by default.
Intel Coach's ``TruncatedNormal`` is the reference (there with ``scipy.stats.truncnorm``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from numpy.typing import ArrayLike

from coach import validation as check
from coach.errors import CoachError
from coach.exploration.additive_noise import AdditiveNoise
from coach.schedules import LinearSchedule, Schedule


def _ndtr(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF, accurate far into the left tail.

    Through ``erfc``: ``0.5 * (1 + erf)`` (and ``torch.special.ndtr``, which rounds below
    about -8) loses the tail to cancellation, where a truncation far out needs it.
    """
    return (0.5 * torch.erfc(torch.from_numpy(x) * -math.sqrt(0.5))).numpy()


def _ndtri(p: np.ndarray) -> np.ndarray:
    """The inverse of the standard normal CDF."""
    return torch.special.ndtri(torch.from_numpy(p)).numpy()


def sample_truncated_normal(
    rng: np.random.Generator,
    mean: ArrayLike,
    std: ArrayLike,
    low: ArrayLike,
    high: ArrayLike,
) -> np.ndarray:
    """Draws of ``N(mean, std^2)`` restricted to ``[low, high]``, elementwise (broadcast).

    Inverse CDF: one uniform per draw, mapped through ``Phi^-1`` between ``Phi`` of the
    standardized bounds. Intervals in the right half are mirrored into the left one, where
    ``Phi`` keeps its relative precision; an interval so far in the tail that its mass
    underflows (over ~37 standard deviations out) gives its nearer bound, where the
    truncated distribution concentrates. ``std`` must be positive.
    """
    mean, std, low, high = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (mean, std, low, high))
    )
    a = (low - mean) / std
    b = (high - mean) / std
    mirror = a + b > 0.0
    left = np.where(mirror, -b, a)
    right = np.where(mirror, -a, b)
    cdf_left, cdf_right = _ndtr(left), _ndtr(right)
    p = cdf_left + rng.random(mean.shape) * (cdf_right - cdf_left)
    z = np.where(cdf_right > cdf_left, _ndtri(p), right)
    z = np.clip(z, left, right)  # rounding in Phi^-1 may step just past a bound
    z = np.where(mirror, -z, z)
    return np.clip(mean + std * z, low, high)


@dataclass(slots=True, kw_only=True)
class TruncatedNormalParameters:
    """Normal draws around the policy's actions, truncated to the action box."""

    noise_schedule: Schedule = field(default_factory=lambda: LinearSchedule(0.1, 0.1, 50_000))
    """The normal's standard deviation as a function of the environment steps taken in
    training (a fraction of the action range, or absolute: see below)."""
    evaluation_noise: float = 0.0
    """The standard deviation while evaluating (0: the policy's actions, deterministic)."""
    clip_low: float | None = None
    """A lower truncation bound inside the box (None: the box's low)."""
    clip_high: float | None = None
    """An upper truncation bound inside the box (None: the box's high)."""
    noise_as_percentage_from_action_space: bool = True
    """True: the noise values are fractions of ``high - low`` of the box (per dimension);
    False: they are in the action's own units."""

    def validate(self) -> None:
        check.schedule("noise_schedule", self.noise_schedule, 0)
        check.number("evaluation_noise", self.evaluation_noise, 0)
        if self.clip_low is not None:
            check.number("clip_low", self.clip_low)
        if self.clip_high is not None:
            check.number("clip_high", self.clip_high, self.clip_low, low_open=True)

    def build(self, action_space: spaces.Space[Any], rng: np.random.Generator) -> TruncatedNormal:
        return TruncatedNormal(
            action_space,
            rng,
            self.noise_schedule,
            self.evaluation_noise,
            clip_low=self.clip_low,
            clip_high=self.clip_high,
            noise_as_percentage_from_action_space=self.noise_as_percentage_from_action_space,
        )


class TruncatedNormal(AdditiveNoise):
    """Per env and dimension, an action drawn from ``N(action, std^2)`` truncated to bounds.

    The truncation interval is the box, narrowed by ``clip_low``/``clip_high`` when given.
    Differs from Intel Coach's ``TruncatedNormal`` in that the bounds default to the box
    (Coach's were 0 and 1 whatever the space), an evaluation noise of 0 (the default here;
    Coach's was 0.05) gives the policy's actions clipped into the bounds, and a standard
    deviation given by the agent along with its actions is not taken.

    Args:
        action_space: A ``spaces.Box`` with finite bounds.
        rng: Generator of the draws.
        noise_schedule: The standard deviation after a number of training env steps.
        evaluation_noise: The standard deviation in evaluation.
        clip_low: A lower truncation bound, applied where it is above the box's low.
        clip_high: An upper truncation bound, applied where it is below the box's high.
        noise_as_percentage_from_action_space: Whether the noise values are fractions of
            the box's range.
    """

    name = "truncated normal exploration"

    def __init__(
        self,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        noise_schedule: Schedule,
        evaluation_noise: float = 0.0,
        *,
        clip_low: float | None = None,
        clip_high: float | None = None,
        noise_as_percentage_from_action_space: bool = True,
    ) -> None:
        super().__init__(
            action_space,
            rng,
            noise_schedule,
            evaluation_noise,
            noise_as_percentage_from_action_space,
        )
        if clip_low is not None:
            self.low = np.maximum(self.low, clip_low)
        if clip_high is not None:
            self.high = np.minimum(self.high, clip_high)
        if np.any(self.low > self.high):
            raise CoachError(
                f"truncated normal exploration: the bounds clip_low={clip_low}, "
                f"clip_high={clip_high} leave nothing of the action space {action_space}; "
                f"give bounds that overlap it"
            )

    def perturb(self, actions: np.ndarray, std: np.ndarray) -> np.ndarray:
        # A dimension of zero range has no spread: its only value is its bound.
        positive = std > 0.0
        drawn = sample_truncated_normal(
            self.rng, actions, np.where(positive, std, 1.0), self.low, self.high
        )
        return np.where(positive, drawn, actions)
