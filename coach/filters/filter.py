"""The filter interface: one hook per transformation, the output space known up front.

A filter is told the space it will receive once, at construction of its pipeline, and
answers with the space it will emit (or refuses the input space with an error naming both).
It never mutates the space it was given. Filters work on batches (the leading axis is over
environment copies). A filter that keeps statistics or history offers ``state_dict`` and
``load_state_dict`` so checkpoints carry it.

Two kinds of state are kept apart. Learned statistics (a running mean) change only when
``filter`` is called with ``update=True``: in heatup and training, never in evaluation.
Per-episode history (the last frames of a frame stack) moves on with every call, in every
phase; `ObservationFilter.start_episodes` starts it over for the envs whose episode begins.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces


class Filter:
    """What every filter shares: state for checkpoints."""

    per_copy_state: ClassVar[bool] = False
    """The filter keeps a history per environment copy: its ``filter`` also takes ``rows``,
    the copies of a batch's rows when only some copies stepped (``None``: every copy)."""

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint needs to restore the filter (empty when it keeps nothing)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""


class ObservationFilter(Filter):
    """Transforms one observation key of a batch of observations."""

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        """The space of what `filter` emits for inputs from ``input_space``.

        Raises:
            CoachError: when the filter cannot take ``input_space``.
        """
        return input_space

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        """Transform a batch ``(B, ...)``; ``update=False`` leaves statistics untouched."""
        return observation

    def start_episodes(self, observation: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Transform the first observations of new episodes in the envs ``rows``.

        ``observation`` holds one row per entry of ``rows`` (env indices). A filter with
        per-episode history starts it over for those envs (and leaves the others alone);
        a filter without history transforms the rows as `filter` does, statistics frozen.
        """
        return self.filter(observation, update=False)


class RewardFilter(Filter):
    """Transforms a batch of rewards ``(B,)``."""

    def filter(self, reward: np.ndarray, update: bool = True) -> np.ndarray:
        return reward

    def reset(self, env_mask: np.ndarray) -> None:
        """The episodes of the envs where ``env_mask`` is true have ended (after `filter` saw
        their last reward): forget their per-episode history."""


class ActionFilter(Filter):
    """Maps the agent's actions to the environment's.

    It is built from the environment's action space and tells the agent the action space it
    acts in (``input_space``), the reverse of the observation filters.
    """

    def input_space(self, output_space: spaces.Space[Any]) -> spaces.Space[Any]:
        """The agent-facing action space, given the environment-facing one.

        Raises:
            CoachError: when the filter cannot drive ``output_space``.
        """
        return output_space

    def filter(self, action: np.ndarray) -> np.ndarray:
        """Map a batch of agent actions ``(B, ...)`` to environment actions."""
        return action
