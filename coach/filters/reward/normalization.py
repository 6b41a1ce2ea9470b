"""Normalize rewards by the spread of the discounted return."""

from __future__ import annotations

from typing import Any

import numpy as np

from coach.errors import CoachError
from coach.filters.filter import RewardFilter
from coach.filters.running_stats import RunningMeanStd


class RewardNormalizationFilter(RewardFilter):
    """Divides rewards by the running standard deviation of the discounted return, then
    clips them, as Stable-Baselines3's ``VecNormalize`` does (after the reward scaling
    studied in Engstrom et al., "Implementation Matters in Deep Policy Gradients", 2020).

    Each env keeps the discounted return of its running episode, ``R = discount * R + r``;
    the statistics are those of ``R`` over every step and env. Rewards are divided, not
    centred, so that their sign (and an episode's incentive to end or go on) is kept. The
    output is ``clip(r / sqrt(var(R) + epsilon), -clip, clip)`` as float32.

    The statistics change only when ``filter`` is called with ``update=True``. The returns
    are per-episode history: they move on with every call, in every phase, and `reset`
    zeroes them for the envs whose episode ended.

    Args:
        discount: The discount of the return, in [0, 1]; usually the agent's.
        clip: The bound on the absolute value of a normalized reward; positive.
        epsilon: Added to the variance so that a constant return does not divide by zero;
            positive.
    """

    per_copy_state = True

    def __init__(self, discount: float = 0.99, clip: float = 10.0, epsilon: float = 1e-8) -> None:
        if not 0.0 <= discount <= 1.0:
            raise CoachError(
                f"RewardNormalizationFilter: discount must be in [0, 1], got {discount}"
            )
        if not clip > 0:
            raise CoachError(f"RewardNormalizationFilter: clip must be positive, got {clip}")
        if not epsilon > 0:
            raise CoachError(
                f"RewardNormalizationFilter: epsilon must be positive (it keeps a constant "
                f"return from dividing by zero), got {epsilon}"
            )
        self.discount = discount
        self.clip = clip
        self.epsilon = epsilon
        self.stats = RunningMeanStd(())
        """The statistics of the discounted returns."""
        self.returns: np.ndarray | None = None
        """Each env's discounted return so far, sized by the first batch of rewards."""

    def __repr__(self) -> str:
        return (
            f"RewardNormalizationFilter(discount={self.discount}, clip={self.clip}, "
            f"epsilon={self.epsilon})"
        )

    def filter(
        self, reward: np.ndarray, update: bool = True, rows: np.ndarray | None = None
    ) -> np.ndarray:
        if rows is not None:  # some copies stepped: their returns move on
            self._grow(int(rows.max()) + 1 if len(rows) else 0)
            assert self.returns is not None
            returns = self.returns[rows] * self.discount + reward
            self.returns[rows] = returns
            if update:
                self.stats.update(returns)
            normalized = reward / np.sqrt(self.stats.var + self.epsilon)
            return np.clip(normalized, -self.clip, self.clip).astype(np.float32)
        if self.returns is None:
            self.returns = np.zeros(len(reward), dtype=np.float64)
        if reward.shape != self.returns.shape:
            raise CoachError(
                f"RewardNormalizationFilter keeps returns for {len(self.returns)} envs, got "
                f"rewards shaped {reward.shape}"
            )
        self.returns = self.returns * self.discount + reward
        if update:
            self.stats.update(self.returns)
        normalized = reward / np.sqrt(self.stats.var + self.epsilon)
        return np.clip(normalized, -self.clip, self.clip).astype(np.float32)

    def _grow(self, copies: int) -> None:
        """Returns for at least ``copies`` copies (new ones at zero)."""
        held = 0 if self.returns is None else len(self.returns)
        if self.returns is None or held < copies:
            grown = np.zeros(copies, dtype=np.float64)
            grown[:held] = self.returns if self.returns is not None else []
            self.returns = grown

    def reset(self, env_mask: np.ndarray) -> None:
        if self.returns is not None:
            if len(self.returns) < len(env_mask):  # slots: copies that have not stepped yet
                self._grow(len(env_mask))
            self.returns = np.where(env_mask, 0.0, self.returns)

    def state_dict(self) -> dict[str, Any]:
        return {
            "stats": self.stats.state_dict(),
            "returns": None if self.returns is None else self.returns.copy(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.stats.load_state_dict(state["stats"])
        returns = state["returns"]
        self.returns = None if returns is None else np.array(returns, dtype=np.float64)
