"""Direct Future Prediction's targets (Dosovitskiy and Koltun, 2017): how each step's
measurements have changed after each temporal offset, computed over a whole episode when it
ends (`coach.memories.held_episodes`), with what lies beyond its end.
"""

from __future__ import annotations

import numpy as np

FUTURE = "future_measurements"
"""The extra column of a step's targets: (offsets * measurements,), NaN where unknown."""

AFTER_END = ("ignore", "last_step")
"""How targets beyond a terminated episode's end are set."""


def future_targets(
    measurements: np.ndarray,
    offsets: list[int],
    scales: np.ndarray,
    terminated: bool,
    after_end: str = "ignore",
) -> np.ndarray:
    """Each step's targets over one episode, (T, offsets * measurements), float32.

    Args:
        measurements: The measurements of the episode's states and, last, of the state after
            its last step, (T + 1, M).
        offsets: The temporal offsets, in steps.
        scales: Each measurement's divisor, (M,).
        terminated: The episode ended in a terminal state (not cut).
        after_end: Beyond a terminated episode's end: ``ignore`` gives NaN, ``last_step``
            the final measurements' change. Beyond a cut episode's end, always NaN.
    """
    measurements = np.asarray(measurements, dtype=np.float64)
    length = len(measurements) - 1
    steps = np.arange(length)
    targets = np.full((length, len(offsets), measurements.shape[1]), np.nan)
    for j, offset in enumerate(offsets):
        later = steps + offset
        if terminated and after_end == "last_step":
            later = np.minimum(later, length)
        known = later <= length
        targets[known, j] = measurements[later[known]] - measurements[steps[known]]
    return (targets / scales).reshape(length, -1).astype(np.float32)


__all__ = ["AFTER_END", "FUTURE", "future_targets"]
