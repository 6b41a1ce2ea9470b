"""Uniform experience replay over a column-wise ring buffer (Mnih et al., 2015).

Transitions live in preallocated numpy arrays, one per field and observation key, so storing
a batch of B steps is a handful of slice assignments and sampling is fancy indexing: there is
no Python object per step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.types import Batch
from coach.errors import CoachError
from coach.memories.memory import Memory


@dataclass(slots=True, kw_only=True)
class ExperienceReplayParameters:
    """A uniform replay memory."""

    max_size: int = 1_000_000
    """Capacity in transitions; the oldest are overwritten first."""

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space,
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space] | None = None,
    ) -> ExperienceReplay:
        """The memory, for an agent's spaces (and its extra columns), sampling with ``rng``."""
        return ExperienceReplay(self.max_size, observation_space, action_space, rng, extra_spaces)


def _column(capacity: int, space: spaces.Space) -> np.ndarray:
    if space.shape is None:
        raise CoachError(f"a replay memory cannot store the space {space}: it has no shape")
    return np.zeros((capacity, *space.shape), dtype=space.dtype)


class ExperienceReplay(Memory):
    """A ring buffer of transitions sampled uniformly.

    Args:
        capacity: How many transitions it holds.
        observation_space: The agent's (filtered) observation space, a ``spaces.Dict``.
        action_space: The agent's action space.
        rng: The generator the samples are drawn with.
        extra_spaces: Further per-transition columns an agent keeps (an n-step discount,
            bootstrap masks), by name; they come back in ``Batch.extras``.
    """

    def __init__(
        self,
        capacity: int,
        observation_space: spaces.Dict,
        action_space: spaces.Space,
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space] | None = None,
    ) -> None:
        if capacity < 1:
            raise CoachError(f"a replay memory needs a capacity >= 1, got {capacity}")
        self.capacity = capacity
        self.rng = rng
        self.states = {k: _column(capacity, s) for k, s in observation_space.spaces.items()}
        self.next_states = {k: _column(capacity, s) for k, s in observation_space.spaces.items()}
        self.actions = _column(capacity, action_space)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.terminated = np.zeros(capacity, dtype=bool)
        self.truncated = np.zeros(capacity, dtype=bool)
        self.extras = {k: _column(capacity, s) for k, s in (extra_spaces or {}).items()}
        self._position = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def _positions(self, count: int) -> slice | np.ndarray:
        start = self._position
        if start + count <= self.capacity:
            return slice(start, start + count)
        return (start + np.arange(count)) % self.capacity

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
        count = len(reward)
        if count > self.capacity:
            raise CoachError(f"a batch of {count} does not fit a memory of {self.capacity}")
        where = self._positions(count)
        for key, column in self.states.items():
            column[where] = state[key]
            self.next_states[key][where] = next_state[key]
        self.actions[where] = action
        self.rewards[where] = reward
        self.terminated[where] = terminated
        self.truncated[where] = truncated
        if self.extras:
            if extras is None or set(extras) != set(self.extras):
                raise CoachError(
                    f"this memory stores the columns {sorted(self.extras)} with each step, "
                    f"got {sorted(extras or {})}"
                )
            for key, column in self.extras.items():
                column[where] = extras[key]
        self._position = (self._position + count) % self.capacity
        if self._size < self.capacity:
            self._size = min(self._size + count, self.capacity)

    def sample(self, batch_size: int) -> Batch:
        if self._size == 0:
            raise CoachError("cannot sample from an empty replay memory")
        if batch_size < 1:
            raise CoachError(f"a batch needs at least one transition, got {batch_size}")
        indices = self.rng.integers(0, self._size, size=batch_size)
        return self.get(indices)

    def get(self, indices: np.ndarray) -> Batch:
        """The transitions at ``indices`` (positions in the buffer) as a `Batch`."""
        return Batch(
            states={k: v[indices] for k, v in self.states.items()},
            actions=self.actions[indices],
            rewards=self.rewards[indices],
            next_states={k: v[indices] for k, v in self.next_states.items()},
            terminated=self.terminated[indices],
            truncated=self.truncated[indices],
            indices=indices,
            extras={k: v[indices] for k, v in self.extras.items()},
        )

    def state_dict(self) -> dict[str, Any]:
        """The stored rows as they lie in the buffer, with the write position."""
        size = self._size
        return {
            "capacity": self.capacity,
            "position": self._position,
            "size": size,
            "states": {k: v[:size].copy() for k, v in self.states.items()},
            "next_states": {k: v[:size].copy() for k, v in self.next_states.items()},
            "actions": self.actions[:size].copy(),
            "rewards": self.rewards[:size].copy(),
            "terminated": self.terminated[:size].copy(),
            "truncated": self.truncated[:size].copy(),
            "extras": {k: v[:size].copy() for k, v in self.extras.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the rows of `state_dict`.

        Into a memory of the same capacity the buffer is restored as it was, so sampling
        continues exactly; into another capacity the rows are laid out oldest first.
        """
        size = int(state["size"])
        if size > self.capacity:
            raise CoachError(
                f"a memory of {size} transitions does not fit a capacity of {self.capacity}"
            )
        same_layout = int(state["capacity"]) == self.capacity
        if same_layout or size < int(state["capacity"]):
            order: slice | np.ndarray = slice(None)  # the saved rows are already oldest first
            position = int(state["position"]) if same_layout else size % self.capacity
        else:
            order = (int(state["position"]) + np.arange(size)) % size
            position = size % self.capacity
        for name in ("states", "next_states"):
            for key, column in getattr(self, name).items():
                column[:size] = state[name][key][order]
        for name in ("actions", "rewards", "terminated", "truncated"):
            getattr(self, name)[:size] = state[name][order]
        for key, column in self.extras.items():
            column[:size] = state["extras"][key][order]
        self._position = position
        self._size = size
