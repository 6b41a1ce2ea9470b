"""Each env copy's episode held back until it ends, then released whole with columns
computed over the episode: Monte Carlo returns (MMC), n-step returns bootstrapped from a
dictionary (NEC), future measurement changes (DFP).

`HeldEpisodes.add` takes a step of every copy (or of some) and gives back the steps of the
episodes that step ended, episode after episode, each in order, with the columns the
``finish`` function computed for it as extras. An episode cut by a restart
(`HeldEpisodes.flush`) is released as it is: its last step is neither terminated nor
truncated, and ``finish`` sees that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from coach.core.types import Transition
from coach.memories.open_episodes import OpenEpisodes, flatten_step

Finish = Callable[[Transition], dict[str, np.ndarray]]
"""Further columns (one row per step) for one whole episode's steps."""


class HeldEpisodes:
    """Holds each copy's open episode; releases the ended ones with ``finish``'s columns.

    Args:
        num_envs: The env copies whose steps arrive (one row each).
        finish: Computes an episode's further columns, called once per released episode
            with its steps (views, valid until the next `add`).
    """

    def __init__(self, num_envs: int, finish: Finish) -> None:
        self.num_envs = num_envs
        self.finish = finish
        self.episodes: OpenEpisodes | None = None
        """The open episodes (built on the first step, shaped after it)."""

    def add(self, step: Transition, envs: np.ndarray | None = None) -> Transition | None:
        """Take a step of every copy, or of the copies ``envs`` (row for row); the steps of
        the episodes it ended, with their columns, or ``None`` when none ended."""
        columns = flatten_step(step)
        if self.episodes is None:
            self.episodes = OpenEpisodes.empty(columns, self.num_envs)
        self.episodes.append(columns, envs)
        ended = np.flatnonzero(step.terminated | step.truncated)
        copies = ended if envs is None else np.asarray(envs)[ended]
        return self._release([int(c) for c in copies])

    def flush(self) -> Transition | None:
        """Every open episode's steps (cut where they are), with their columns."""
        if self.episodes is None:
            return None
        return self._release([int(c) for c in np.flatnonzero(self.episodes.lengths)])

    def _release(self, copies: list[int]) -> Transition | None:
        assert self.episodes is not None
        parts = []
        for copy in copies:
            episode = self.episodes.pop(copy)
            parts.append((episode, self.finish(episode)))
        if not parts:
            return None
        return joined(parts)

    def state_dict(self) -> dict[str, Any]:
        return {"episodes": None if self.episodes is None else self.episodes.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        held = state["episodes"]
        self.episodes = None if held is None else OpenEpisodes.from_state_dict(held)


def joined(parts: list[tuple[Transition, dict[str, np.ndarray]]]) -> Transition:
    """The episodes' steps one after another, each with its further columns; copies (the
    episodes' rows are views into the open episodes' arrays)."""
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
            **{k: cat([columns[k] for _, columns in parts]) for k in parts[0][1]},
        },
    )


__all__ = ["Finish", "HeldEpisodes", "joined"]
