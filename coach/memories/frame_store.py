"""Frames of stacked observations, each stored once in a replay memory.

A stack of the last four 84x84 frames repeats three of them in the next step's stack, and a
transition holds two stacks: stored as they are, one Atari transition would cost eight
frames (56 KB) instead of one (7 KB), and a million of them 56 GB. The memory keeps the
frames of a `StackedFrames` key here instead: a ring of single frames, and for each
transition the ``stack_size`` frame slots of its state and of its next state.

Frames are found again by content, not by assuming who stores what in which order: a frame
equal to one written within the last ``window`` frames is not written again, whatever path
it came by (an n-step accumulator, several environment copies interleaved, the repeated
first frame of an episode). Frames older than that window are never reused, so every frame a
transition refers to was written at most ``window`` frames before it was stored. A
transition is therefore alive as long as the ring has not overwritten the frame written
``window`` frames before it; the ring holds ``capacity + slack`` frames, which is room for a
full memory as long as episodes average more than about ``capacity / slack`` steps (every
episode brings one frame no transition before it had). When frames do outrun transitions,
the memory forgets its oldest transitions before their frames are overwritten (see
``ExperienceReplay``), so a sample never mixes frames of different steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from coach.core.spaces import StackedFrames

WINDOW = 4096
"""How many of the most recently written frames a new stack may share frames with."""


class FrameStore:
    """The frames of one `StackedFrames` observation key of a replay memory.

    Args:
        capacity: How many transitions the memory holds.
        space: The key's space: ``stack_size`` frames of ``space.frame_space``.
        window: How many recently written frames are searched for a frame before it is
            written again.
    """

    def __init__(self, capacity: int, space: StackedFrames, window: int = WINDOW) -> None:
        self.stack_size = space.stack_size
        self.window = window
        self.slack = max(capacity // 32, 2 * window)
        self.num_frames = capacity + self.slack
        self.frames = np.zeros((self.num_frames, *space.frame_space.shape), space.dtype)
        self.state_slots = np.zeros((capacity, self.stack_size), dtype=np.int32)
        self.next_state_slots = np.zeros((capacity, self.stack_size), dtype=np.int32)
        self.stamps = np.zeros(capacity, dtype=np.int64)
        """For each transition, how many frames had been written when it was stored."""
        self.written = 0
        """Frames written so far: the serial number of the next one (its slot is that
        number modulo ``num_frames``)."""
        self._recent: dict[int, int] = {}
        """A fingerprint of recently written frames -> the serial of the latest with it."""
        self._last_next_states: np.ndarray | None = None
        self._last_next_slots = np.zeros((0, self.stack_size), dtype=np.int64)
        """The next states of the last `store` and their slots: usually the next states."""

    def nbytes(self) -> int:
        """Bytes held by the store's arrays."""
        return sum(a.nbytes for a in (self.frames, self.state_slots, self.next_state_slots))

    def store(
        self,
        rows: slice | np.ndarray,
        states: np.ndarray,
        next_states: np.ndarray,
        evict_older_than: Callable[[int], None],
    ) -> None:
        """Keep the stacks of the transitions going to ``rows`` of the memory.

        Args:
            rows: The memory rows being written, one per stacked state.
            states: The transitions' states, ``(B, stack_size, *frame)``.
            next_states: Their next states, same shape.
            evict_older_than: Called with a stamp before frames that transitions stored
                before that stamp may refer to are overwritten; the memory forgets them.
        """
        row_ids = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
        self.stamps[row_ids] = self.written
        last = self._last_next_states
        if last is not None and last.shape == states.shape and np.array_equal(last, states):
            # The usual step: these states are the next states of the previous call.
            state_slots = self._last_next_slots
        else:
            state_slots = np.array([self._slots(stack, evict_older_than) for stack in states])
        next_slots = np.empty_like(state_slots)
        for i, (state, next_state) in enumerate(zip(states, next_states, strict=True)):
            if np.array_equal(next_state[:-1], state[1:]):
                # One step on: all but the newest frame are the state's.
                next_slots[i, :-1] = state_slots[i, 1:]
                next_slots[i, -1] = self._slot(next_state[-1], evict_older_than)
            else:
                next_slots[i] = self._slots(next_state, evict_older_than)
        self.state_slots[row_ids] = state_slots
        self.next_state_slots[row_ids] = next_slots
        self._last_next_states = next_states.copy()
        self._last_next_slots = next_slots

    def _slots(self, stack: np.ndarray, evict_older_than: Callable[[int], None]) -> list[int]:
        slots: list[int] = []
        for j, frame in enumerate(stack):
            if j and np.array_equal(frame, stack[j - 1]):
                slots.append(slots[-1])  # the repeated first frame of an episode
            else:
                slots.append(self._slot(frame, evict_older_than))
        return slots

    def _slot(self, frame: np.ndarray, evict_older_than: Callable[[int], None]) -> int:
        """The slot of a frame equal to ``frame`` written recently, or a new one."""
        key = hash(frame.tobytes())
        serial = self._recent.get(key)
        if serial is not None and serial >= self.written - self.window:
            slot = serial % self.num_frames
            if np.array_equal(self.frames[slot], frame):
                return slot
        return self._write(frame, key, evict_older_than)

    def _write(self, frame: np.ndarray, key: int, evict_older_than: Callable[[int], None]) -> int:
        serial = self.written
        if serial >= self.num_frames:
            # Slot `serial % num_frames` last held frame `serial - num_frames`; transitions
            # stamped up to `window` frames after it may refer to it.
            evict_older_than(serial - self.num_frames + self.window + 1)
        slot = serial % self.num_frames
        self.frames[slot] = frame
        self._recent[key] = serial
        self.written = serial + 1
        if len(self._recent) > 4 * self.window:
            oldest = self.written - self.window
            self._recent = {k: s for k, s in self._recent.items() if s >= oldest}
        return slot

    def get(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The stacked states and next states of the memory rows ``indices``."""
        return self.frames[self.state_slots[indices]], self.frames[self.next_state_slots[indices]]

    def state_dict(self) -> dict[str, Any]:
        live = min(self.written, self.num_frames)
        return {
            "frames": self.frames[:live].copy(),
            "state_slots": self.state_slots.copy(),
            "next_state_slots": self.next_state_slots.copy(),
            "stamps": self.stamps.copy(),
            "written": self.written,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a store of the same capacity (the memory re-stores rows otherwise)."""
        frames = state["frames"]
        self.frames[: len(frames)] = frames
        self.state_slots[:] = state["state_slots"]
        self.next_state_slots[:] = state["next_state_slots"]
        self.stamps[:] = state["stamps"]
        self.written = int(state["written"])
        self._last_next_states = None
        oldest = max(0, self.written - self.window)
        self._recent = {
            hash(self.frames[s % self.num_frames].tobytes()): s for s in range(oldest, self.written)
        }
