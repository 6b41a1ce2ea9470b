"""Monte Carlo returns: each env copy's episode held until it ends, then released with every
step's discounted return to the episode's end (``mc_return``), as mixed Monte Carlo targets
need them (Ostrovski et al., 2017).

An episode cut by a time limit (``truncated``) or by a restart (`MonteCarloReturns.flush`)
has no end to reach: its steps carry the discounted sum of the rewards seen up to the cut,
as the original Coach's episodic replay gave them.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from coach.core.types import Transition
from coach.memories.held_episodes import HeldEpisodes

MC_RETURN = "mc_return"
"""The extra column holding a step's Monte Carlo return."""

MC_RETURN_SPACE = spaces.Box(-np.inf, np.inf, shape=(), dtype=np.float32)
"""What the memory keeps in that column: one float per step."""


def discounted_returns(rewards: np.ndarray, discount: float) -> np.ndarray:
    """``G_t = r_t + discount * G_{t+1}`` over one episode's rewards, from its last step back
    (``G`` after the last step is 0); float32, computed in float64."""
    returns = np.empty(len(rewards), dtype=np.float64)
    following = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        following = float(rewards[t]) + discount * following
        returns[t] = following
    return returns.astype(np.float32)


class MonteCarloReturns(HeldEpisodes):
    """Holds each copy's open episode; `add` gives back the steps of the episodes that just
    ended, with their returns (``mc_return``), as one `Transition` (episode after episode,
    each in order).

    Args:
        discount: The discount of the returns.
        num_envs: The env copies whose steps arrive (one row each).
    """

    def __init__(self, discount: float, num_envs: int) -> None:
        super().__init__(num_envs, self._returns)
        self.discount = discount

    def _returns(self, episode: Transition) -> dict[str, np.ndarray]:
        return {MC_RETURN: discounted_returns(episode.reward, self.discount)}
