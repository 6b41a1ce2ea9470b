"""The statistics of a study across seeds, as the field now reports them.

Two kinds, after Agarwal et al., "Deep Reinforcement Learning at the Edge of the Statistical
Precipice" (NeurIPS 2021):

- `curve_band`: a learning curve's mean over the runs at each point, with a percentile
  bootstrap confidence band (the runs resampled with replacement).
- `aggregate`: final performance, each with a stratified bootstrap confidence interval
  (runs resampled within each task), computed by the ``rliable`` library:
  - the interquartile mean (IQM) of every run of every task;
  - the median and the mean of the tasks' mean scores;
  - the optimality gap, how far runs fall short of 1 on average.

  Scores are normalised, so 1 is a task's target.

``rliable`` comes with the ``study`` extra (``make install`` installs it).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from coach.errors import CoachError

AGGREGATES = ("IQM", "median", "mean", "optimality gap")
"""The aggregates `aggregate` estimates, in its order."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate and its confidence interval."""

    point: float
    low: float
    high: float


def curve_band(
    values: np.ndarray, reps: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mean over runs at each point of a curve, and its bootstrap confidence band.

    Args:
        values: (runs, points): each run's value at each point (the same points for all).
        reps: Bootstrap resamples of the runs.
        confidence: The band's coverage, in (0, 1).
        seed: Seeds the resampling: the same inputs give the same band.

    Returns:
        ``(mean, low, high)``, each (points,): low and high are the percentiles
        ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` of the resampled means.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or not values.size:
        raise CoachError(f"a curve band needs values of shape (runs, points), got {values.shape}")
    _check(reps, confidence)
    picks = np.random.default_rng(seed).integers(0, len(values), size=(reps, len(values)))
    means = values[picks].mean(axis=1)  # (reps, points)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    return values.mean(axis=0), low, high


def aggregate(
    scores: Mapping[str, np.ndarray], reps: int = 2000, confidence: float = 0.95, seed: int = 0
) -> dict[str, dict[str, Estimate]]:
    """IQM, median, mean and optimality gap of each entry's normalised scores, with
    stratified bootstrap confidence intervals.

    Args:
        scores: By name (a preset, an agent): normalised final scores, (runs, tasks).
        reps: Bootstrap resamples.
        confidence: The intervals' coverage, in (0, 1).
        seed: Seeds the resampling.

    Returns:
        By name, then by aggregate (`AGGREGATES`): its `Estimate`.
    """
    _check(reps, confidence)
    arrays = {}
    for name, value in scores.items():
        array = np.asarray(value, dtype=np.float64)
        if array.ndim != 2 or not array.size:
            raise CoachError(f"{name}: scores must be (runs, tasks), got shape {array.shape}")
        arrays[name] = array
    try:
        from rliable import library, metrics
    except ImportError as error:  # its dependencies come with the study extra
        raise CoachError(
            f"aggregate statistics need rliable ({error}): pip install 'coach[study]'"
        ) from error

    def estimates(x: np.ndarray) -> np.ndarray:
        return np.array(
            [
                metrics.aggregate_iqm(x),
                metrics.aggregate_median(x),
                metrics.aggregate_mean(x),
                metrics.aggregate_optimality_gap(x),
            ]
        )

    # rliable hands its bootstrap a RandomState, which arch 7 takes with a FutureWarning and
    # then does not draw from: the resamples come from numpy's global generator. That one is
    # seeded here, and put back as it was, so that the same scores give the same intervals.
    global_state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            points, intervals = library.get_interval_estimates(
                arrays,
                estimates,
                reps=reps,
                confidence_interval_size=confidence,
                random_state=np.random.RandomState(seed),
            )
    finally:
        np.random.set_state(global_state)
    return {
        name: {
            label: Estimate(
                float(points[name][k]),
                float(intervals[name][0][k]),
                float(intervals[name][1][k]),
            )
            for k, label in enumerate(AGGREGATES)
        }
        for name in arrays
    }


def _check(reps: int, confidence: float) -> None:
    if reps < 1:
        raise CoachError(f"a bootstrap needs at least one resample, got reps={reps}")
    if not 0.0 < confidence < 1.0:
        raise CoachError(f"confidence must be in (0, 1), got {confidence}")
