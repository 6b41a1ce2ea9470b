"""Frames of stacked observations, each stored once in a replay memory.

A stack of the last four 84x84 frames repeats three of them in the next step's stack, and a
transition holds two stacks: stored as they are, one Atari transition would cost eight
frames (56 KB) instead of one (7 KB), and a million of them 56 GB. The memory keeps the
frames of a `StackedFrames` key here instead: a ring of single frames, and for each
transition where its state's and next state's ``2 * stack_size`` frames lie in the ring.

Frames are found again by content, not by assuming who stores what in which order: a frame
equal to one written within the last ``window`` frames is not written again, whatever path
it came by (an n-step accumulator, several environment copies interleaved, the repeated
first frame of an episode).

What a transition costs besides its one new frame is kept to about 40 bytes, so that a
million Atari transitions take 7.1 GB rather than 7.3 (``python -m benchmarks.atari``):

- Where a transition's frames lie is one 4-byte slot (its next state's newest frame, the
  anchor) and ``2 * stack_size - 1`` 2-byte offsets from it. The frames of one transition
  were all written within ``window`` plus a few batches of frames of each other (see
  `FrameStore._chunk`), so the offsets fit 16 bits.
- The ring holds ``capacity + slack`` frames, ``slack`` a thousandth of the capacity (at
  least 1,024): every episode brings one frame no transition before it had, so the memory
  is full as long as episodes average more than about a thousand steps (or ``capacity /
  1024``, whichever is less). When frames do outrun transitions, the memory forgets its
  oldest transitions before their frames are overwritten (see ``ExperienceReplay``): each
  frame remembers the newest transition that refers to it (``last_use``), so exactly the
  transitions up to that one are forgotten, and a sample never mixes frames of different
  steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from coach.core.spaces import StackedFrames
from coach.errors import CoachError

WINDOW = 4096
"""How many of the most recently written frames a new stack may share frames with."""

_OFFSET_LIMIT = 32767
"""The largest offset an ``int16`` holds."""


class FrameStore:
    """The frames of one `StackedFrames` observation key of a replay memory.

    Args:
        capacity: How many transitions the memory holds.
        space: The key's space: ``stack_size`` frames of ``space.frame_space``.
        window: How many recently written frames are searched for a frame before it is
            written again.
        slack: How many frames the ring holds beyond ``capacity``; ``None``:
            ``max(capacity // 1024, 1024)``.
    """

    def __init__(
        self,
        capacity: int,
        space: StackedFrames,
        window: int = WINDOW,
        slack: int | None = None,
    ) -> None:
        self.stack_size = k = space.stack_size
        reach = 2 * k * (k + 1)
        if not 1 <= window <= _OFFSET_LIMIT - reach:
            raise ValueError(
                f"window must be in [1, {_OFFSET_LIMIT - reach}] for stacks of {k}, got {window}"
            )
        self.window = window
        self.slack = max(capacity // 1024, 1024) if slack is None else slack
        self.num_frames = capacity + self.slack
        self.frames = np.zeros((self.num_frames, *space.frame_space.shape), space.dtype)
        self.anchors = np.zeros(capacity, dtype=np.int32)
        """For each row, the slot of its next state's newest frame."""
        self.offsets = np.zeros((capacity, 2 * k - 1), dtype=np.int16)
        """For each row, its state's slots and its next state's other slots, as offsets from
        the anchor (modulo ``num_frames``)."""
        self.last_use = np.full(self.num_frames, -1, dtype=np.int64)
        """For each frame, the serial of the newest row that refers to it (-1: none)."""
        self.stored = 0
        """Rows stored so far: the serial of the next one."""
        self.written = 0
        """Frames written so far: the serial of the next one (its slot is that number
        modulo ``num_frames``)."""
        self._chunk = (_OFFSET_LIMIT - window) // reach
        """The most rows handled at once, which keeps a row's frames within 32,767 frames of
        each other: a frame is found (within the last ``window`` frames) or written by one
        chunk and, shifting one place down the stack per step, used by at most the ``k``
        chunks after it, and each chunk writes at most ``2 * k`` frames per row."""
        self._recent: dict[int, int] = {}
        """A fingerprint of recently written frames -> the serial of the latest with it."""
        self._last_next_states: np.ndarray | None = None
        self._last_next_serials: list[list[int]] = []
        """The next states of the last chunk stored and their frames' serials: usually the
        states of the next chunk."""

    def clear(self) -> None:
        """Forget every row and frame (the arrays keep their contents, unused)."""
        self.last_use[:] = -1
        self.stored = self.written = 0
        self._recent = {}
        self._last_next_states = None

    def nbytes(self) -> int:
        """Bytes held by the store's arrays."""
        return sum(a.nbytes for a in (self.frames, self.anchors, self.offsets, self.last_use))

    def store(
        self,
        rows: slice | np.ndarray,
        states: np.ndarray,
        next_states: np.ndarray,
        evict_before: Callable[[int], None],
    ) -> None:
        """Keep the stacks of the transitions going to ``rows`` of the memory.

        Args:
            rows: The memory rows being written, one per stacked state.
            states: The transitions' states, ``(B, stack_size, *frame)``.
            next_states: Their next states, same shape.
            evict_before: Called with a row serial before frames that rows stored before it
                refer to are overwritten; the memory forgets those rows.

        Raises:
            CoachError: when the ring is too small for a batch this large (a frame that a
                row of the batch refers to would be overwritten while the batch is stored).
        """
        row_ids = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
        for start in range(0, len(row_ids), self._chunk):
            end = start + self._chunk
            self._store_chunk(
                row_ids[start:end],
                self.stored + start,
                states[start:end],
                next_states[start:end],
                evict_before,
            )
        self.stored += len(row_ids)

    def _store_chunk(
        self,
        row_ids: np.ndarray,
        first_serial: int,
        states: np.ndarray,
        next_states: np.ndarray,
        evict: Callable[[int], None],
    ) -> None:
        # Once per environment step: Python lists of frame serials, a few numpy calls a chunk.
        k, num_frames, last_use = self.stack_size, self.num_frames, self.last_use
        rows: list[list[int]] = []
        last = self._last_next_states
        if last is not None and _equal(last, states):
            # The usual step: these states are the next states of the previous chunk.
            for i, serials in enumerate(self._last_next_serials):
                rows.append(list(serials))
                # Rows in increasing order, each newer than any that marked these frames.
                last_use[[f % num_frames for f in serials]] = first_serial + i
        else:
            rows = [self._stack(stack, first_serial + i, evict) for i, stack in enumerate(states)]
        for i, (row, state, next_state) in enumerate(zip(rows, states, next_states, strict=True)):
            if _equal(next_state[:-1], state[1:]):
                # One step on: all but the newest frame are the state's.
                row += row[1:k]
                row.append(self._find(next_state[-1], first_serial + i, evict))
            else:
                row += self._stack(next_state, first_serial + i, evict)
        if len(rows) == 1:
            row = rows[0]
            anchor = row[-1]
            offsets: Any = [f - anchor for f in row[:-1]]
            lowest, highest = min(offsets), max(offsets)
            self.anchors[row_ids[0]] = anchor % num_frames
        else:
            table = np.array(rows)
            offsets = table[:, :-1] - table[:, -1:]
            lowest, highest = offsets.min(), offsets.max()
            self.anchors[row_ids] = table[:, -1] % num_frames
        if lowest < -_OFFSET_LIMIT - 1 or highest > _OFFSET_LIMIT:
            raise AssertionError("a row's frames lie too far apart")  # the chunk rules it out
        self.offsets[row_ids] = offsets
        self._last_next_states = next_states.copy()
        self._last_next_serials = [row[k:] for row in rows]

    def _stack(self, stack: np.ndarray, serial: int, evict: Callable[[int], None]) -> list[int]:
        """The serials of a stack's frames, found or written, marked as used by row
        ``serial``."""
        serials: list[int] = []
        for j, frame in enumerate(stack):
            if j and _equal(frame, stack[j - 1]):
                serials.append(serials[-1])  # the repeated first frame of an episode
            else:
                serials.append(self._find(frame, serial, evict))
        return serials

    def _find(self, frame: np.ndarray, serial: int, evict: Callable[[int], None]) -> int:
        """The serial of a frame equal to ``frame`` written recently, or of a new one; either
        way marked as used by row ``serial``."""
        key = hash(frame.tobytes())
        written = self._recent.get(key)
        if written is not None and written >= self.written - self.window:
            slot = written % self.num_frames
            if _equal(self.frames[slot], frame):
                if self.last_use[slot] < serial:
                    self.last_use[slot] = serial
                return written
        written = self.written
        slot = written % self.num_frames
        user = int(self.last_use[slot])
        if user >= self.stored:
            raise CoachError(
                f"a replay memory of {self.num_frames - self.slack} transitions is too small "
                f"for batches this large of stacked frames: raise its max_size"
            )
        if user >= 0:
            evict(user + 1)  # the frame being overwritten was last used by row `user`
        self.frames[slot] = frame
        self.last_use[slot] = serial
        self._recent[key] = written
        self.written = written + 1
        if len(self._recent) > 4 * self.window:
            oldest = self.written - self.window
            self._recent = {k: s for k, s in self._recent.items() if s >= oldest}
        return written

    def slots(self, indices: np.ndarray) -> np.ndarray:
        """The slots of rows ``indices``: their states' frames, then their next states'."""
        anchors = self.anchors[indices].astype(np.int64)
        out = np.empty((len(anchors), 2 * self.stack_size), dtype=np.int64)
        np.add(anchors[:, None], self.offsets[indices], out=out[:, :-1])
        out[:, :-1] %= self.num_frames
        out[:, -1] = anchors
        return out

    def get(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The stacked states and next states of the memory rows ``indices``."""
        slots = self.slots(indices)
        k = self.stack_size
        return self.frames[slots[:, :k]], self.frames[slots[:, k:]]

    def state_dict(self) -> dict[str, Any]:
        """The frames and every row's slots (``state_slots``, ``next_state_slots``)."""
        live = min(self.written, self.num_frames)
        k = self.stack_size
        rows = np.arange(len(self.anchors))
        slots = np.concatenate(
            [self.slots(rows[s : s + 65536]).astype(np.int32) for s in range(0, len(rows), 65536)]
        )
        return {
            # A view, not a copy (a full Atari replay's frames are about 7 GB): a checkpoint
            # writes it at once, before the store changes.
            "frames": self.frames[:live],
            "state_slots": slots[:, :k].copy(),
            "next_state_slots": slots[:, k:].copy(),
            "written": self.written,
        }

    def load_state_dict(self, state: dict[str, Any], live_rows: np.ndarray) -> bool:
        """Restore a store of the same capacity (the memory re-stores rows otherwise).

        Args:
            state: What `state_dict` returned, in this version or an earlier one (the frames,
                every row's slots and the frames written).
            live_rows: The memory's live rows, oldest first: which frames they use is
                rebuilt from their slots.

        Returns:
            Whether the rows were restored as they lay; ``False`` (nothing changed) when the
            saved slots of a row lie too far apart for this store's offsets, which only a
            store of an earlier version can have written.
        """
        slots = np.concatenate([state["state_slots"], state["next_state_slots"]], axis=1)
        slots = slots.astype(np.int64)
        half = self.num_frames // 2
        offsets = (slots[:, :-1] - slots[:, -1:] + half) % self.num_frames - half
        if offsets.size and (offsets.min() < -_OFFSET_LIMIT - 1 or offsets.max() > _OFFSET_LIMIT):
            return False
        frames = state["frames"]
        self.frames[: len(frames)] = frames
        self.anchors[:] = slots[:, -1]
        self.offsets[:] = offsets
        self.written = int(state["written"])
        # The live rows get serials 0, 1, ... oldest first; each frame, its newest user's.
        self.stored = len(live_rows)
        self.last_use[:] = -1
        users = np.broadcast_to(
            np.arange(len(live_rows))[:, None], (len(live_rows), slots.shape[1])
        )
        np.maximum.at(self.last_use, slots[live_rows], users)
        self._last_next_states = None
        oldest = max(0, self.written - self.window)
        self._recent = {
            hash(self.frames[s % self.num_frames].tobytes()): s for s in range(oldest, self.written)
        }
        return True


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.array_equal`` for arrays of one dtype, without its conversions (a few
    microseconds a step)."""
    return a.shape == b.shape and bool((a == b).all())
