"""Running mean and variance of a stream of batches, for the normalization filters."""

from __future__ import annotations

from typing import Any

import numpy as np

from coach.errors import CoachError


class RunningMeanStd:
    """The element-wise mean and (population) variance of every sample seen so far.

    Batches are merged with the parallel algorithm of Chan, Golub and LeVeque, "Updating
    Formulae and a Pairwise Algorithm for Computing Sample Variances" (1979): it needs no pass
    over old samples and stays accurate where the naive sum of squares would cancel. The
    count is a float64, like Stable-Baselines3's, so that it never overflows or truncates.

    Before the first update the mean is 0 and the variance 1, so a normalizer built on it
    starts as the identity.

    Args:
        shape: The shape of one sample (``()`` for scalars such as rewards).
    """

    def __init__(self, shape: tuple[int, ...] = ()) -> None:
        self.shape = tuple(shape)
        self.mean = np.zeros(self.shape, dtype=np.float64)
        self.var = np.ones(self.shape, dtype=np.float64)
        self.count = 0.0

    def __repr__(self) -> str:
        return f"RunningMeanStd({self.shape})"

    def update(self, batch: np.ndarray) -> None:
        """Take in a batch of samples ``(N, *shape)``; an empty batch changes nothing."""
        batch = np.asarray(batch)
        if batch.shape[1:] != self.shape:
            raise CoachError(
                f"RunningMeanStd of samples shaped {self.shape} got a batch shaped {batch.shape}"
            )
        n = batch.shape[0]
        if n == 0:
            return
        batch_mean = batch.mean(axis=0, dtype=np.float64)
        batch_var = batch.var(axis=0, dtype=np.float64)
        total = self.count + n
        delta = batch_mean - self.mean
        # New arrays rather than in-place updates: a state_dict taken earlier stays as it was.
        self.mean = np.asarray(self.mean + delta * (n / total))
        m2 = self.var * self.count + batch_var * n + delta**2 * (self.count * n / total)
        self.var = np.asarray(m2 / total)
        self.count = float(total)

    def state_dict(self) -> dict[str, Any]:
        return {"count": self.count, "mean": self.mean.copy(), "var": self.var.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        mean = np.array(state["mean"], dtype=np.float64)
        var = np.array(state["var"], dtype=np.float64)
        if mean.shape != self.shape or var.shape != self.shape:
            raise CoachError(
                f"RunningMeanStd of samples shaped {self.shape} cannot load statistics shaped "
                f"{mean.shape} (mean) and {var.shape} (var)"
            )
        self.count = float(state["count"])
        self.mean = mean
        self.var = var
