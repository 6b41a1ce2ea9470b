"""Uniform experience replay over a column-wise ring buffer (Mnih et al., 2015).

Transitions live in preallocated numpy arrays, one per field and observation key, so storing
a batch of B steps is a handful of slice assignments and sampling is fancy indexing: there is
no Python object per step. An observation key whose space is `StackedFrames` (the output of
a frame-stacking filter) keeps each frame once, in a `FrameStore`, rather than each stack.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.spaces import StackedFrames
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.frame_store import FrameStore
from coach.memories.memory import Memory, TakesPriorities


@runtime_checkable
class ReplayParameters(Protocol):
    """The parameters of a replay memory of any kind (uniform, prioritized, hindsight)."""

    max_size: int
    """Capacity in transitions."""


@dataclass(slots=True, kw_only=True)
class ExperienceReplayParameters:
    """A uniform replay memory."""

    max_size: int = 1_000_000
    """Capacity in transitions; the oldest are overwritten first."""

    def validate(self) -> None:
        check.whole("max_size", self.max_size, 1)

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> ExperienceReplay:
        """The memory, for an agent's spaces (and its extra columns), sampling with ``rng``."""
        return ExperienceReplay(self.max_size, observation_space, action_space, rng, extra_spaces)


def _narrow_dtype(space: spaces.Space[Any]) -> np.dtype[Any] | None:
    """The narrowest unsigned dtype that holds every action of a discrete space, or ``None``
    (a space of other actions, stored in its own dtype)."""
    if isinstance(space, spaces.Discrete) and int(space.start) >= 0:
        top = int(space.start) + int(space.n) - 1
        for dtype in (np.uint8, np.uint16):
            if top <= np.iinfo(dtype).max:
                return np.dtype(dtype)
    return None


def _column(capacity: int, space: spaces.Space[Any], dtype: Any = None) -> np.ndarray:
    if space.shape is None:
        raise CoachError(f"a replay memory cannot store the space {space}: it has no shape")
    try:
        return np.zeros((capacity, *space.shape), dtype=dtype or space.dtype)
    except (MemoryError, ValueError):  # more than the machine (or numpy) can hold
        raise CoachError(
            f"a replay memory of {capacity} transitions of {space} does not fit in this "
            f"machine's memory: lower its max_size"
        ) from None


AHEAD_BYTES = 1 << 20
"""How much of a training round's batches a uniform replay draws ahead (`batches`): well
inside a core's L2 cache, and a few batches of Atari frames."""


def _nbytes(batch: Batch) -> int:
    arrays = [*batch.states.values(), *batch.next_states.values(), *batch.extras.values()]
    arrays += [batch.actions, batch.rewards, batch.terminated, batch.truncated]
    return sum(getattr(a, "nbytes", 0) for a in arrays)


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
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> None:
        if capacity < 1:
            raise CoachError(f"a replay memory needs a capacity >= 1, got {capacity}")
        self.capacity = capacity
        self.rng = rng
        self.draws_ahead = not isinstance(self, TakesPriorities)
        """A round's batches may be drawn ahead (`batches`): not where the learner's steps
        change the draws (priorities)."""
        plain = {
            k: s for k, s in observation_space.spaces.items() if not isinstance(s, StackedFrames)
        }
        self.states = {k: _column(capacity, s) for k, s in plain.items()}
        self.next_states = {k: _column(capacity, s) for k, s in plain.items()}
        self._shaped_states = all(c.ndim > 1 for c in self.states.values())
        self.frame_stores = {
            k: FrameStore(capacity, s)
            for k, s in observation_space.spaces.items()
            if isinstance(s, StackedFrames)
        }
        """The keys whose frames are stored once each (`StackedFrames` spaces)."""
        self.action_dtype = action_space.dtype
        """What sampled actions are: the space's dtype (the column may be narrower)."""
        self.actions = _column(capacity, action_space, _narrow_dtype(action_space))
        """The actions; those of a discrete space of at most 65,536 in an unsigned integer
        just wide enough (one byte instead of eight for Atari's 18 actions)."""
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.terminated = np.zeros(capacity, dtype=bool)
        self.truncated = np.zeros(capacity, dtype=bool)
        self.extras = {k: _column(capacity, s) for k, s in (extra_spaces or {}).items()}
        self._position = 0
        """The row the next transition goes to."""
        self._size = 0
        """How many rows before ``_position`` (around the ring) hold live transitions."""
        self._filled = 0
        """How many rows have ever been written (at most the capacity)."""

    def __len__(self) -> int:
        return self._size

    def nbytes(self) -> int:
        """Bytes held by the memory's arrays."""
        columns = [*self.states.values(), *self.next_states.values(), *self.extras.values()]
        columns += [self.actions, self.rewards, self.terminated, self.truncated]
        return sum(c.nbytes for c in columns) + sum(f.nbytes() for f in self.frame_stores.values())

    def _live_rows(self) -> np.ndarray:
        """The live rows, oldest first."""
        return (self._position - self._size + np.arange(self._size)) % self.capacity

    def _forget_before(self, store: FrameStore, serial: int) -> None:
        """Forget the oldest transitions up to the one ``store`` numbered ``serial - 1``:
        a frame it refers to is about to be overwritten."""
        # The live rows are the ones `store` numbered `stored - size` to `stored - 1`.
        count = min(self._size, serial - (store.stored - self._size))
        if count > 0:
            oldest = (self._position - self._size + np.arange(count)) % self.capacity
            self._forget(oldest)
            self._size -= count

    def _forget(self, rows: np.ndarray) -> None:
        """Hook: ``rows`` no longer hold live transitions."""

    def _positions(self, count: int) -> slice | np.ndarray:
        start = self._position
        if start + count <= self.capacity:
            return slice(start, start + count)
        return (start + np.arange(count)) % self.capacity

    def store(self, transition: Transition) -> None:
        # Once per environment step: plain comparisons rather than calls where they can be.
        state, next_state, extras = transition.state, transition.next_state, transition.extras
        count, capacity = len(transition.reward), self.capacity
        if count > capacity:
            raise CoachError(f"a batch of {count} does not fit a memory of {capacity}")
        # One copy's step is one row, written by index with each value's row: a slice of one
        # costs twice as much, and NumPy takes no 1-array for a flat column's element.
        row = count == 1 and not self.frame_stores
        where = self._position if row else self._positions(count)
        pick: int | slice = 0 if row else slice(None)
        # The rows about to be overwritten stop being live first.
        if self._size > capacity - count:
            self._size = capacity - count
        if row and self._shaped_states:  # a (1, ...) array fills a shaped column's row
            next_columns = self.next_states
            for key, column in self.states.items():
                column[where] = state[key]
                next_columns[key][where] = next_state[key]
        else:
            for key, column in self.states.items():
                column[where] = state[key][pick]
                self.next_states[key][where] = next_state[key][pick]
        for key, store in self.frame_stores.items():
            assert not isinstance(where, int)  # frames are stored by slice or rows
            store.store(
                where, state[key], next_state[key], functools.partial(self._forget_before, store)
            )
        self.actions[where] = transition.action[pick]
        self.rewards[where] = transition.reward[pick]
        self.terminated[where] = transition.terminated[pick]
        self.truncated[where] = transition.truncated[pick]
        if extras or self.extras:
            if extras.keys() != self.extras.keys():
                raise CoachError(
                    f"this memory stores the columns {sorted(self.extras)} with each step, "
                    f"got {sorted(extras)}"
                )
            for key, column in self.extras.items():
                column[where] = extras[key][pick]
        self._position = (self._position + count) % capacity
        self._size += count
        if self._filled < capacity:
            self._filled = min(self._filled + count, capacity)

    def sample(self, batch_size: int) -> Batch:
        if self._size == 0:
            raise CoachError("cannot sample from an empty replay memory")
        if batch_size < 1:
            raise CoachError(f"a batch needs at least one transition, got {batch_size}")
        offsets = self.rng.integers(0, self._size, size=batch_size)
        if self._size == self.capacity:
            return self.get(offsets)  # every row is live
        return self.get((self._position - self._size + offsets) % self.capacity)

    def batches(self, batch_size: int, count: int) -> Iterator[Batch]:
        """The round's batches, drawn ahead up to `AHEAD_BYTES` at a time: a uniform draw
        reads only the memory's rows and generator, which a round's steps leave alone, so the
        batches are the ones drawn in turn. Drawn one after another, their gathers do not
        wait behind each gradient step's traffic in the caches (CartPole_DQN's step: 50 µs
        of 750). A memory that takes new priorities after each step draws in turn."""
        if not self.draws_ahead or count < 2:
            yield from super().batches(batch_size, count)
            return
        first = self.sample(batch_size)
        yield first
        ahead = max(1, AHEAD_BYTES // max(_nbytes(first), 1))
        left = count - 1
        while left > 0:
            drawn = [self.sample(batch_size) for _ in range(min(ahead, left))]
            left -= len(drawn)
            yield from drawn

    def get(self, indices: np.ndarray) -> Batch:
        """The transitions at ``indices`` (positions in the buffer) as a `Batch`."""
        states = {k: v[indices] for k, v in self.states.items()}
        next_states = {k: v[indices] for k, v in self.next_states.items()}
        for key, store in self.frame_stores.items():
            states[key], next_states[key] = store.get(indices)
        return Batch(
            states=states,
            actions=self.actions[indices].astype(self.action_dtype, copy=False),
            rewards=self.rewards[indices],
            next_states=next_states,
            terminated=self.terminated[indices],
            truncated=self.truncated[indices],
            indices=indices,
            extras={k: v[indices] for k, v in self.extras.items()},
        )

    def state_dict(self) -> dict[str, Any]:
        """The rows as they lie in the buffer, with the write position and the live count."""
        filled = self._filled
        return {
            "capacity": self.capacity,
            "position": self._position,
            "size": self._size,
            "filled": filled,
            "states": {k: v[:filled].copy() for k, v in self.states.items()},
            "next_states": {k: v[:filled].copy() for k, v in self.next_states.items()},
            "frame_stores": {k: f.state_dict() for k, f in self.frame_stores.items()},
            "actions": self.actions[:filled].copy(),
            "rewards": self.rewards[:filled].copy(),
            "terminated": self.terminated[:filled].copy(),
            "truncated": self.truncated[:filled].copy(),
            "extras": {k: v[:filled].copy() for k, v in self.extras.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the rows of `state_dict`.

        Into a memory of the same capacity the buffer is restored as it was, so sampling
        continues exactly; into another capacity the live rows are stored again, oldest first.
        """
        size = int(state["size"])
        if size > self.capacity:
            raise CoachError(
                f"a memory of {size} transitions does not fit a capacity of {self.capacity}"
            )
        live_rows = (int(state["position"]) - size + np.arange(size)) % self.capacity
        if int(state["capacity"]) == self.capacity and all(
            store.load_state_dict(state["frame_stores"][key], live_rows)
            for key, store in self.frame_stores.items()
        ):
            filled = int(state.get("filled", size))
            for name in ("states", "next_states"):
                for key, column in getattr(self, name).items():
                    column[:filled] = state[name][key]
            for name in ("actions", "rewards", "terminated", "truncated"):
                getattr(self, name)[:filled] = state[name]
            for key, column in self.extras.items():
                column[:filled] = state["extras"][key]
            self._position = int(state["position"])
            self._size = size
            self._filled = filled
            return
        saved = _SavedRows(state)
        self._position = self._size = self._filled = 0
        for store in self.frame_stores.values():
            store.clear()
        rows = saved.live_rows()
        for start in range(0, len(rows), 4096):
            self.store(saved.transitions(rows[start : start + 4096]))


class _SavedRows:
    """The rows of another memory's `state_dict`, read back as transitions."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state
        self.stores: dict[str, tuple[np.ndarray, dict[str, Any]]] = {
            key: (saved["frames"], saved) for key, saved in state.get("frame_stores", {}).items()
        }

    def live_rows(self) -> np.ndarray:
        capacity, size = int(self.state["capacity"]), int(self.state["size"])
        return (int(self.state["position"]) - size + np.arange(size)) % capacity

    def transitions(self, rows: np.ndarray) -> Transition:
        state = self.state
        states = {k: v[rows] for k, v in state["states"].items()}
        next_states = {k: v[rows] for k, v in state["next_states"].items()}
        for key, (frames, saved) in self.stores.items():
            states[key] = frames[saved["state_slots"][rows]]
            next_states[key] = frames[saved["next_state_slots"][rows]]
        return Transition(
            state=states,
            action=state["actions"][rows],
            reward=state["rewards"][rows],
            next_state=next_states,
            terminated=state["terminated"][rows],
            truncated=state["truncated"][rows],
            extras={k: v[rows] for k, v in state["extras"].items()},
        )
