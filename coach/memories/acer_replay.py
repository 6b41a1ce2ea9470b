"""ACER's memory (Wang et al., 2017, "Sample Efficient Actor-Critic with Experience
Replay"): the rollout block being collected, and a replay of the segments past blocks were
cut into.

The agent fills a T x B block (`coach.memories.rollout.Rollout`) with ``T`` steps of each of
its ``B`` env copies, every step with the behaviour policy's probabilities ``mu(.|s)`` (an
extras column). Once the block is full the agent learns from it on-policy, then retires it:
each copy's column becomes one segment of ``T`` consecutive steps in a ring of whole
segments (the oldest overwritten first), and the off-policy updates draw segments from the
ring uniformly. A segment may hold the end of one episode and the start of the next: its
``terminated`` and ``truncated`` flags say where (a restart cuts the block, marking its
last steps truncated), so that Retrace can stop there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.memory import Memory
from coach.memories.rollout import Rollout


@dataclass(slots=True, kw_only=True)
class ACERReplayParameters:
    """ACER's rollout block and replay of its segments."""

    segment_length: int = 5
    """Steps per env copy in a block (the original Coach's
    ``num_steps_between_gradient_updates``): the n of the on-policy update, and the length
    of every replayed segment."""
    max_size: int = 50_000
    """Capacity in steps, in whole segments (``max_size // segment_length`` of them)."""

    def validate(self) -> None:
        check.whole("segment_length", self.segment_length, 1)
        check.whole("max_size", self.max_size, self.segment_length)

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> ACERReplay:
        """The memory, for an agent's spaces and its extra columns, sampling with ``rng``."""
        return ACERReplay(self, observation_space, action_space, rng, extra_spaces)


Columns = dict[str, Any]
"""Columns nested as a `Rollout` keeps them: ``states`` and ``next_states`` (by key),
``actions``, ``rewards``, ``terminated``, ``truncated`` and ``extras`` (by name)."""


def _map(fn: Callable[..., np.ndarray], first: Columns, *others: Columns) -> Columns:
    """``fn`` applied to the arrays of ``first`` and the matching arrays of ``others``."""
    return {
        name: _map(fn, value, *(o[name] for o in others))
        if isinstance(value, dict)
        else fn(value, *(o[name] for o in others))
        for name, value in first.items()
    }


def _batch(columns: Columns, indices: np.ndarray | None = None) -> Batch:
    """Columns of segments as a time-major batch (T, N, ...)."""
    return Batch(
        states=columns["states"],
        actions=columns["actions"],
        rewards=columns["rewards"],
        next_states=columns["next_states"],
        terminated=columns["terminated"],
        truncated=columns["truncated"],
        indices=indices,
        extras=columns["extras"],
    )


class ACERReplay(Memory):
    """The block being collected (`block`) and a ring of whole segments (`sample`).

    Args:
        params: The segment length and the capacity.
        observation_space: The agent's (filtered) observation space.
        action_space: The agent's action space.
        rng: Draws the segments replayed.
        extra_spaces: Further per-step columns (ACER's ``mu``).
    """

    def __init__(
        self,
        params: ACERReplayParameters,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> None:
        params.validate()
        self.length = params.segment_length
        self.capacity = params.max_size // params.segment_length
        """How many segments the ring holds."""
        self.rng = rng
        self.block = Rollout(self.length, observation_space, action_space, rng, extra_spaces)
        """The T x B block being collected."""
        self.segments: Columns = {}
        """The ring: every column (capacity, T, ...), allocated with the first block."""
        self.position = 0
        """The slot the next segment goes to."""
        self.size = 0
        """Slots that hold a segment."""

    @property
    def block_length(self) -> int:
        return self.length

    @property
    def block_steps_left(self) -> int:
        return max(self.length - self.block.steps, 0)

    @property
    def full(self) -> bool:
        """The block holds its T steps of every copy: time to learn from it."""
        return self.block.full

    @property
    def replayed_steps(self) -> int:
        """Steps in the ring."""
        return self.size * self.length

    def __len__(self) -> int:
        return self.replayed_steps + len(self.block)

    def store(self, transition: Transition) -> None:
        """A step of every copy, into the block."""
        self.block.store(transition)

    def cut(self) -> None:
        """The episodes in the block stop here (they restart): the last steps are marked
        truncated, so that returns bootstrap from their successors."""
        if self.block.stored:
            self.block.cut()

    def _full_block(self) -> Columns:
        """The block's columns, checked to hold T steps of every copy."""
        block = self.block
        if not block.full or not block.aligned or block.steps != self.length:
            raise CoachError(
                f"ACER learns from full blocks of {self.length} steps of every env copy; this "
                f"one holds {block.counts.tolist()} steps per copy (on a multi-agent level, "
                f"every agent id must act at every step)"
            )
        return block.columns

    def block_segments(self) -> Batch:
        """The full block, each copy's column a segment: time-major, (T, B, ...); views of
        the block's arrays, valid until the next `store`."""
        return _batch(_map(lambda column: column[: self.length], self._full_block()))

    def retire_block(self) -> None:
        """Keep the full block's segments in the ring (over the oldest) and clear it."""
        block = self._full_block()
        copies = self.block.num_envs
        if copies > self.capacity:
            raise CoachError(
                f"a replay of {self.capacity} segments cannot keep a block of {copies} env "
                f"copies: raise memory.max_size to at least {copies * self.length}"
            )
        if not self.segments:
            self.segments = _map(
                lambda c: np.zeros((self.capacity, self.length, *c.shape[2:]), c.dtype), block
            )
        slots = (self.position + np.arange(copies)) % self.capacity

        def keep(ring: np.ndarray, column: np.ndarray) -> np.ndarray:
            ring[slots] = np.swapaxes(column[: self.length], 0, 1)
            return ring

        _map(keep, self.segments, block)
        self.position = int((self.position + copies) % self.capacity)
        self.size = min(self.size + copies, self.capacity)
        self.block.clear()

    def sample(self, batch_size: int) -> Batch:
        """``batch_size`` segments drawn uniformly (with replacement): time-major,
        (T, batch_size, ...), ``indices`` their slots."""
        if self.size == 0:
            raise CoachError("cannot sample from an empty ACER replay")
        slots = self.rng.integers(0, self.size, size=batch_size)
        return _batch(_map(lambda ring: np.swapaxes(ring[slots], 0, 1), self.segments), slots)

    def state_dict(self) -> dict[str, Any]:
        """The block and the segments held."""
        return {
            "block": self.block.state_dict(),
            "position": self.position,
            "size": self.size,
            "segments": _map(lambda ring: ring[: self.size].copy(), self.segments),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.block.load_state_dict(state["block"])
        self.position, self.size = int(state["position"]), int(state["size"])
        if self.size > self.capacity:
            raise CoachError(
                f"a replay of {self.size} segments cannot be restored into one of "
                f"{self.capacity}: restore it with the same max_size and segment_length"
            )

        def restore(saved: np.ndarray) -> np.ndarray:
            saved = np.asarray(saved)
            ring = np.zeros((self.capacity, *saved.shape[1:]), saved.dtype)
            ring[: self.size] = saved
            return ring

        self.segments = _map(restore, state["segments"]) if state["segments"] else {}


__all__ = ["ACERReplay", "ACERReplayParameters"]
