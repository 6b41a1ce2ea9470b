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

    def merge(self, other: dict[str, Any]) -> None:
        """Take in the statistics of other samples (a `state_dict` or a `since`), as if
        those samples had gone through `update`."""
        n = float(other["count"])
        if n == 0:
            return
        other_mean = np.asarray(other["mean"], dtype=np.float64)
        total = self.count + n
        delta = other_mean - self.mean
        m2 = self.var * self.count + np.asarray(other["var"]) * n
        m2 = m2 + delta**2 * (self.count * n / total)
        self.mean = np.asarray(self.mean + delta * (n / total))
        self.var = np.asarray(m2 / total)
        self.count = total

    def since(self, earlier: dict[str, Any]) -> dict[str, Any]:
        """The statistics of the samples taken in after ``earlier`` (a `state_dict` of
        this object): what `merge` adds to ``earlier`` to give the current statistics.

        Rollout workers send these to the learner, which merges every worker's.
        """
        n0 = float(earlier["count"])
        n = self.count - n0
        if n <= 0:
            return {"count": 0.0, "mean": np.zeros(self.shape), "var": np.ones(self.shape)}
        mean0 = np.asarray(earlier["mean"], dtype=np.float64)
        mean = (self.mean * self.count - mean0 * n0) / n
        m2 = self.var * self.count - np.asarray(earlier["var"]) * n0
        m2 = m2 - (mean - mean0) ** 2 * (n0 * n / self.count)
        return {"count": n, "mean": mean, "var": np.maximum(m2 / n, 0.0)}

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
