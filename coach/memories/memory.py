"""The memory interface. Memories know spaces, never the agent."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from coach.core.types import Batch, Transition


class Memory(ABC):
    """Stores batches of transitions and hands back `Batch` samples."""

    @abstractmethod
    def store(
        self,
        state: dict[str, np.ndarray],
        action: np.ndarray,
        reward: np.ndarray,
        next_state: dict[str, np.ndarray],
        terminated: np.ndarray,
        truncated: np.ndarray,
        extras: dict[str, np.ndarray] | None = None,
    ) -> None:
        """Store one step of every env: each argument is batched, leading axis (B,)."""

    def store_transition(self, transition: Transition) -> None:
        """Store a single `Transition` (a batch of one)."""
        self.store(
            {k: np.asarray(v)[None] for k, v in transition.state.items()},
            np.asarray(transition.action)[None],
            np.asarray([transition.reward]),
            {k: np.asarray(v)[None] for k, v in transition.next_state.items()},
            np.asarray([transition.terminated]),
            np.asarray([transition.truncated]),
        )

    @abstractmethod
    def sample(self, batch_size: int) -> Batch:
        """A batch of ``batch_size`` stored transitions."""

    @abstractmethod
    def __len__(self) -> int:
        """How many transitions are stored."""

    def stream(self, key: int) -> Memory:
        """Where source ``key`` stores, when several feed the memory (rollout workers).
        Memories that keep per-env state between steps keep each source's apart; the
        others take every source alike, as themselves."""
        return self

    def end_episodes(self) -> None:  # noqa: B027 - an optional hook
        """The agent's episodes restart before they ended (memories that hold unfinished
        episodes back store them now)."""

    def state_dict(self) -> dict[str, Any]:
        """The stored contents, for checkpoints that keep the memory."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Restore what `state_dict` returned."""
