"""The memory interface. Memories know spaces, never the agent."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

from coach.core.types import Batch, Transition

SLOT = "slot"
"""The extras column naming each row's copy, in a step only some copies took (the slots of
a multi-agent level whose ids decided): memories that keep each copy's steps in order place
the rows by it."""


@runtime_checkable
class MemoryParameters(Protocol):
    """What an agent's ``memory`` parameters are: something that builds its memory."""

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> Memory:
        """The memory, for an agent's spaces (and its extra columns), sampling with ``rng``."""
        ...


@runtime_checkable
class TakesPriorities(Protocol):
    """A memory that samples by priority and takes each sampled row's new TD error back
    (prioritized replay)."""

    def update_priorities(self, indices: np.ndarray, td_errors: np.ndarray) -> None:
        """New priorities for the rows ``indices`` of a sample, from their TD errors."""
        ...


@runtime_checkable
class TakesSubgoalPenalties(Protocol):
    """A memory of a level that sets subgoals (HAC) and stores the penalty of a subgoal test
    it missed."""

    def store_subgoal_penalty(
        self,
        state: dict[str, np.ndarray],
        subgoal: np.ndarray,
        penalty: float,
        next_state: dict[str, np.ndarray],
    ) -> None:
        """Store missed subgoal tests: the proposed subgoal, rewarded ``penalty``."""
        ...


class Memory(ABC):
    """Stores batches of transitions and hands back `Batch` samples."""

    @abstractmethod
    def store(self, transition: Transition) -> None:
        """Store a step of every env (or any rows): each field batched, leading axis (B,).

        The memory copies what it keeps: the caller may reuse its arrays afterwards."""

    @abstractmethod
    def sample(self, batch_size: int) -> Batch:
        """A batch of ``batch_size`` stored transitions."""

    @abstractmethod
    def __len__(self) -> int:
        """How many transitions are stored."""

    def batches(self, batch_size: int, count: int) -> Iterator[Batch]:
        """``count`` batches of ``batch_size`` for a training round's steps, in order. Each
        is drawn just before its step here; a memory whose draws do not depend on what the
        steps change may draw several ahead (the same batches, sooner)."""
        for _ in range(count):
            yield self.sample(batch_size)

    def stream(self, key: int) -> Memory:
        """Where source ``key`` stores, when several feed the memory (rollout workers).
        Memories that keep per-env state between steps keep each source's apart; the
        others take every source alike, as themselves."""
        return self

    @property
    def block_length(self) -> int | None:
        """T, where the agent learns from whole blocks of T fresh steps of every copy (an
        on-policy block, ACER's): rollout workers then collect their blocks together, with
        one policy, side by side in the learner's. ``None`` (the default): the agent learns
        from whatever the memory holds, and workers feed it as they go."""
        return None

    @property
    def block_steps_left(self) -> int | None:
        """Steps of every copy the block in progress still needs before the agent learns
        from it (``block_length`` when it is empty); ``None`` where ``block_length`` is."""
        return None

    def end_episodes(self) -> None:  # noqa: B027 - an optional hook
        """The agent's episodes restart before they ended (memories that hold unfinished
        episodes back store them now)."""

    def state_dict(self) -> dict[str, Any]:
        """The stored contents, for checkpoints that keep the memory."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Restore what `state_dict` returned."""
