"""Monte Carlo returns: each env copy's episode held until it ends, then released with every
step's discounted return to the episode's end (``mc_return``), as mixed Monte Carlo targets
need them (Ostrovski et al., 2017).

An episode cut by a time limit (``truncated``) or by a restart (`MonteCarloReturns.flush`)
has no end to reach: its steps carry the discounted sum of the rewards seen up to the cut,
as the original Coach's episodic replay gave them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.types import Transition
from coach.memories.open_episodes import OpenEpisodes, flatten_step

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


class MonteCarloReturns:
    """Holds each copy's open episode; `add` gives back the steps of the episodes that just
    ended, with their returns, as one `Transition` (episode after episode, each in order).

    Args:
        discount: The discount of the returns.
        num_envs: The env copies whose steps arrive (one row each).
    """

    def __init__(self, discount: float, num_envs: int) -> None:
        self.discount = discount
        self.num_envs = num_envs
        self.episodes: OpenEpisodes | None = None
        """The open episodes (built on the first step, shaped after it)."""

    def add(self, step: Transition, envs: np.ndarray | None = None) -> Transition | None:
        """Take a step of every copy, or of the copies ``envs`` (row for row); the steps of
        the episodes it ended, with ``mc_return``, or ``None`` when none ended."""
        columns = flatten_step(step)
        if self.episodes is None:
            self.episodes = OpenEpisodes.empty(columns, self.num_envs)
        self.episodes.append(columns, envs)
        ended = np.flatnonzero(step.terminated | step.truncated)
        copies = ended if envs is None else np.asarray(envs)[ended]
        return self._release([int(c) for c in copies])

    def flush(self) -> Transition | None:
        """Every open episode's steps (cut where they are), with their returns so far."""
        if self.episodes is None:
            return None
        return self._release([int(c) for c in np.flatnonzero(self.episodes.lengths)])

    def _release(self, copies: list[int]) -> Transition | None:
        assert self.episodes is not None
        parts = []
        for copy in copies:
            episode = self.episodes.pop(copy)
            returns = discounted_returns(episode.reward, self.discount)
            parts.append((episode, returns))
        if not parts:
            return None
        return _joined(parts)

    def state_dict(self) -> dict[str, Any]:
        return {"episodes": None if self.episodes is None else self.episodes.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        held = state["episodes"]
        self.episodes = None if held is None else OpenEpisodes.from_state_dict(held)


def _joined(parts: list[tuple[Transition, np.ndarray]]) -> Transition:
    """The episodes' steps one after another, each with its returns; copies (the episodes'
    rows are views into the open episodes' arrays)."""
    episodes = [episode for episode, _ in parts]

    def cat(values: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(values)

    first = episodes[0]
    return Transition(
        state={k: cat([e.state[k] for e in episodes]) for k in first.state},
        action=cat([e.action for e in episodes]),
        reward=cat([e.reward for e in episodes]),
        next_state={k: cat([e.next_state[k] for e in episodes]) for k in first.next_state},
        terminated=cat([e.terminated for e in episodes]),
        truncated=cat([e.truncated for e in episodes]),
        extras={
            **{k: cat([e.extras[k] for e in episodes]) for k in first.extras},
            MC_RETURN: cat([returns for _, returns in parts]),
        },
    )
