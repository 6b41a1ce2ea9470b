"""The environment interface that agents' level managers talk to.

A real environment (the gymnasium adapter) and a `LevelManager` both implement it, which is
how a level of agents can be the environment of the level above.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from gymnasium import spaces

from coach.core.types import EnvResponse


class Environment(ABC):
    """A batch of ``num_envs`` environment copies stepped together.

    Attributes:
        observation_space: The space of one copy's observation, always a ``spaces.Dict``.
        action_space: The space of one copy's action (``None`` for a top level).
        num_envs: How many copies step together.
        total_steps: Steps taken since construction, summed over copies (real environments
            count them; the graph manager's budgets and logs read them).
        total_episodes: Episodes finished since construction, summed over copies.
        fresh_observations: Every response's observation arrays are new, made for that
            response, and the environment never writes them again: an agent may keep them
            as its state without a copy. False unless an environment promises it (one that
            reuses its buffers, or wraps another's responses, keeps the default).
    """

    observation_space: spaces.Dict
    action_space: Any
    num_envs: int
    total_steps: int = 0
    total_episodes: int = 0
    fresh_observations: bool = False

    @abstractmethod
    def reset(self, seed: int | None = None) -> EnvResponse:
        """Start new episodes in every copy; with a seed, copy ``i`` is seeded ``seed + i``."""

    @abstractmethod
    def step(self, action: Any) -> EnvResponse:
        """Act in every copy; copies whose episode ends are reset in the same step."""

    def close(self) -> None:  # noqa: B027 - an optional hook
        """Release what the environment holds."""

    def state_dict(self) -> dict[str, Any] | None:
        """The episodes in flight and the counters, or ``None`` if they cannot be saved."""
        return None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the episodes saved by `state_dict`."""
        raise NotImplementedError(f"{type(self).__name__} cannot restore episodes in flight")
