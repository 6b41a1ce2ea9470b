"""Replay of fixed-length sequences for recurrent value learning, with sequence priorities
(Kapturowski et al., 2019, "Recurrent Experience Replay in Distributed Reinforcement
Learning", R2D2).

Each env copy's steps form one continuous stream. Every ``sequence_length - overlap`` steps
the copy's last ``sequence_length`` steps are stored as one sequence: adjacent sequences of a
copy share ``overlap`` steps, so that every step is learned from with some history before
it. A sequence runs on across episode ends: the ``episode_start`` column marks where the
hidden state is zeroed, and so where the episode before ended, however it ended (a
learner reads it so; nothing stored needs marking when episodes restart). It keeps the
hidden state the policy had at its first step (``hidden.<network>``), what the learner
unrolls from, and no other hidden state (the after-step states,
``next_hidden.<network>``, are not kept).

Sequences are whole slots of a ring: storing overwrites the oldest slot, never part of one,
so no sample mixes steps of different times. With ``alpha > 0`` a slot is drawn in
proportion to its priority ``(p + epsilon) ** alpha``, where the learner gives ``p`` from the
sequence's TD errors (R2D2: ``eta * max |delta| + (1 - eta) * mean |delta|``), and the
batch's ``weights`` correct the bias as in prioritized replay (Schaul et al., 2016).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.recurrent_columns import HIDDEN, NEXT_HIDDEN
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.memory import SLOT, Memory
from coach.memories.open_episodes import flatten_step, nest_step
from coach.memories.segment_tree import MinTree, SumTree
from coach.schedules import ConstantSchedule, Schedule
from coach.validation import InvalidParameter

Column = tuple[str, str]
"""A stored column: (field of `Transition`, key) as `flatten_step` names it."""


@dataclass(slots=True, kw_only=True)
class SequenceReplayParameters:
    """A replay of fixed-length sequences (R2D2), sampled by priority."""

    ordered: ClassVar[bool] = True
    """The memory keeps each copy's steps in order: a step of some copies names them
    (`coach.memories.memory.SLOT`)."""

    max_size: int = 100_000
    """Capacity in steps (whole sequences: ``max_size // sequence_length`` of them)."""
    sequence_length: int = 80
    """Steps per stored sequence (burn-in included)."""
    overlap: int = 40
    """Steps a sequence shares with the previous one of its env copy."""
    alpha: float = 0.9
    """How much priorities count: 0 samples uniformly."""
    beta_schedule: Schedule = field(default_factory=lambda: ConstantSchedule(0.6))
    """Importance-weight exponent per number of sample() calls (R2D2: 0.6)."""
    epsilon: float = 1e-6
    """Added to a sequence's priority so that none is ever 0."""

    def validate(self) -> None:
        check.whole("sequence_length", self.sequence_length, 1)
        check.whole("max_size", self.max_size, self.sequence_length)
        check.whole("overlap", self.overlap, 0)
        if self.overlap >= self.sequence_length:
            raise InvalidParameter(
                "overlap",
                f"must be below sequence_length ({self.sequence_length}): each sequence needs "
                f"new steps",
                self.overlap,
            )
        check.number("alpha", self.alpha, 0, why="0 samples uniformly")
        check.schedule("beta_schedule", self.beta_schedule, 0, 1)
        check.number("epsilon", self.epsilon, 0, low_open=True)

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> SequenceReplay:
        """The memory these parameters describe, sampling with ``rng``."""
        return SequenceReplay(self, observation_space, action_space, rng, extra_spaces)


class SequenceStream(Memory):
    """Where one source (a rollout worker, or the agent itself) stores into a
    `SequenceReplay`: its env copies' streams are kept apart from other sources'."""

    def __init__(self, memory: SequenceReplay, key: int) -> None:
        self.memory = memory
        self.key = key

    def store(self, transition: Transition) -> None:
        self.memory.store(transition, self.key)

    def sample(self, batch_size: int) -> Batch:
        return self.memory.sample(batch_size)

    def __len__(self) -> int:
        return len(self.memory)


class SequenceReplay(Memory):
    """Fixed-length sequences of every env copy's steps, in a ring of slots.

    Args:
        params: Capacity, sequence length and overlap, priorities.
        observation_space: The agent's (filtered) observation space.
        action_space: The agent's action space.
        rng: Draws the samples.
        extra_spaces: Further per-step columns (the policy's ``hidden.<network>`` and
            ``episode_start`` among them).
    """

    def __init__(
        self,
        params: SequenceReplayParameters,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> None:
        params.validate()
        self.params = params
        self.length = params.sequence_length
        self.period = params.sequence_length - params.overlap
        self.slots = params.max_size // self.length
        self.rng = rng
        extras = {k: s for k, s in (extra_spaces or {}).items() if not k.startswith(NEXT_HIDDEN)}
        self.extras = sorted(extras)

        def column(space: spaces.Space[Any], per_step: bool = True) -> np.ndarray:
            steps = (self.length,) if per_step else ()
            return np.zeros((self.slots, *steps, *(space.shape or ())), dtype=space.dtype)

        self.columns: dict[Column, np.ndarray] = {}
        for key, space in observation_space.spaces.items():
            self.columns[("state", key)] = column(space)
            self.columns[("next_state", key)] = column(space)
        for key, space in extras.items():
            self.columns[("extras", key)] = column(space, per_step=not key.startswith(HIDDEN))
        self.columns[("action", "")] = column(action_space)
        self.columns[("reward", "")] = np.zeros((self.slots, self.length), np.float32)
        self.columns[("terminated", "")] = np.zeros((self.slots, self.length), bool)
        self.columns[("truncated", "")] = np.zeros((self.slots, self.length), bool)
        self.position = 0
        """The slot the next sequence goes to."""
        self.size = 0
        """Slots that hold a sequence."""
        self.windows: dict[int, dict[Column, np.ndarray]] = {}
        """Each source's env copies' last steps, (B, sequence_length, ...) per column."""
        self.filled: dict[int, np.ndarray] = {}
        """How many steps each source's copies' windows hold, (B,)."""
        self.sum_tree = SumTree(self.slots)
        self.min_tree = MinTree(self.slots)
        self.max_priority = 1.0
        """The largest priority given so far (1.0 before any): what a new sequence gets."""
        self.sample_calls = 0
        """How many times `sample` has run: the step count of ``beta_schedule``."""

    def __len__(self) -> int:
        return self.size * self.length

    def stream(self, key: int) -> SequenceStream:
        return SequenceStream(self, key)

    # -- storing ----------------------------------------------------------------------------

    def store(self, transition: Transition, stream: int = 0) -> None:
        """Add a step of a source's env copies to their windows; store each copy's window
        as a sequence once it has ``period`` new steps. A step of some copies names them
        (`SLOT`): only their windows move on."""
        step = flatten_step(transition)
        slots = step.pop(("extras", SLOT), None)
        for key in [k for k in step if k[0] == "extras" and k[1].startswith(NEXT_HIDDEN)]:
            del step[key]
        expected = {k for k in self.columns}
        if set(step) != expected:
            raise CoachError(
                f"this sequence replay stores the columns {sorted(expected)}, got a step with "
                f"{sorted(step)}"
            )
        copies = len(transition) if slots is None else int(slots.max(initial=-1)) + 1
        window = self.windows.get(stream)
        if window is None:
            window = self.windows[stream] = _windows(step, copies, self.length)
            self.filled[stream] = np.zeros(copies, dtype=np.int64)
        elif slots is None and len(self.filled[stream]) != copies:
            raise CoachError(
                f"source {stream} stored steps of {len(self.filled[stream])} env copies, now "
                f"one of {copies}"
            )
        elif copies > len(self.filled[stream]):  # copies not seen before
            grown = _windows(step, copies, self.length)
            for key, column in window.items():
                grown[key][: len(column)] = column
            window = self.windows[stream] = grown
            filled = self.filled[stream]
            self.filled[stream] = np.concatenate([filled, np.zeros(copies - len(filled), int)])
        filled = self.filled[stream]
        keep = self.length - self.period
        if slots is None and (filled == filled[0]).all():  # every copy, in step
            t = int(filled[0])
            for key, value in step.items():
                window[key][:, t] = value
            filled += 1
            if t + 1 == self.length:
                self._store_sequences(window)
                for column in window.values():
                    column[:, :keep] = column[:, self.period :]
                filled[:] = keep
            return
        rows = np.arange(copies) if slots is None else np.asarray(slots)
        at = filled[rows]
        for key, value in step.items():
            window[key][rows, at] = value
        filled[rows] += 1
        full = rows[filled[rows] == self.length]
        if len(full):
            self._store_sequences(window, full)
            for column in window.values():
                column[full, :keep] = column[full, self.period :]
            filled[full] = keep

    def _store_sequences(self, window: dict[Column, np.ndarray], rows: Any = None) -> None:
        """The windows of every copy (or of the copies ``rows``), as new sequences in the
        ring's next slots."""
        copies = len(next(iter(window.values()))) if rows is None else len(rows)
        slots = (self.position + np.arange(copies)) % self.slots
        for key, column in self.columns.items():
            value = window[key] if rows is None else window[key][rows]
            column[slots] = value[:, 0] if column.ndim == value.ndim - 1 else value
        self.sum_tree.update(slots, self.max_priority)
        self.min_tree.update(slots, self.max_priority)
        self.position = int((self.position + copies) % self.slots)
        self.size = min(self.size + copies, self.slots)

    # -- sampling ---------------------------------------------------------------------------

    @property
    def beta(self) -> float:
        """The importance-weight exponent the next `sample` uses."""
        return self.params.beta_schedule.value(self.sample_calls)

    def sample(self, batch_size: int) -> Batch:
        """``batch_size`` sequences drawn by priority (stratified, as in prioritized replay).

        Returns:
            A time-major batch: each per-step field (sequence_length, batch_size, ...), the
            hidden states at the sequences' first steps (batch_size, ...), ``indices`` the
            slots (batch_size,) and ``weights`` their importance weights.
        """
        if self.size == 0:
            raise CoachError("cannot sample from an empty sequence replay")
        segment = self.sum_tree.total() / batch_size
        prefix_sums = (np.arange(batch_size) + self.rng.random(batch_size)) * segment
        slots = np.minimum(self.sum_tree.find_prefix_sum(prefix_sums), self.size - 1)
        weights = (self.sum_tree[slots] / self.min_tree.min()) ** -self.beta
        self.sample_calls += 1
        picked = {}
        for key, column in self.columns.items():
            rows = column[slots]
            per_step = not (key[0] == "extras" and key[1].startswith(HIDDEN))
            picked[key] = np.swapaxes(rows, 0, 1) if per_step else rows
        fields = nest_step(picked)
        return Batch(
            states=fields["state"],
            actions=fields["action"],
            rewards=fields["reward"],
            next_states=fields["next_state"],
            terminated=fields["terminated"],
            truncated=fields["truncated"],
            indices=slots,
            weights=weights.astype(np.float32),
            extras=fields["extras"],
        )

    def update_priorities(self, indices: np.ndarray, td_errors: np.ndarray) -> None:
        """New priorities for sampled sequences from their priority values (R2D2's mix of
        their TD errors, one per sequence): ``(p + epsilon) ** alpha``."""
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        values = np.abs(np.asarray(td_errors, dtype=np.float64).reshape(-1))
        if indices.shape != values.shape:
            raise CoachError(
                f"update_priorities needs one value per sequence: got {indices.size} sequences "
                f"and {values.size} values"
            )
        if not np.isfinite(values).all():
            raise CoachError(
                f"update_priorities got non-finite TD errors {values[~np.isfinite(values)][:5]}: "
                f"the learning has diverged"
            )
        priorities = (values + self.params.epsilon) ** self.params.alpha
        self.sum_tree.update(indices, priorities)
        self.min_tree.update(indices, priorities)
        self.max_priority = max(self.max_priority, float(priorities.max(initial=0.0)))

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The stored sequences with their priorities, and every source's open window."""
        held = np.arange(self.size)
        return {
            "slots": self.slots,
            "position": self.position,
            "size": self.size,
            "sequences": nest_step({k: v[: self.size].copy() for k, v in self.columns.items()}),
            "priorities": self.sum_tree[held],
            "max_priority": self.max_priority,
            "sample_calls": self.sample_calls,
            "windows": {
                stream: {"filled": self.filled[stream].copy(), "steps": nest_step(window)}
                for stream, window in self.windows.items()
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if int(state["slots"]) != self.slots:
            raise CoachError(
                f"a sequence replay of {state['slots']} sequences cannot be restored into one "
                f"of {self.slots}: restore it with the same max_size and sequence_length"
            )
        self.position, self.size = int(state["position"]), int(state["size"])
        for key, saved in _flat(state["sequences"]).items():
            self.columns[key][: self.size] = saved
        self.sum_tree, self.min_tree = SumTree(self.slots), MinTree(self.slots)
        held = np.arange(self.size)
        priorities = np.asarray(state["priorities"], dtype=np.float64)
        self.sum_tree.update(held, priorities)
        self.min_tree.update(held, priorities)
        self.max_priority = float(state["max_priority"])
        self.sample_calls = int(state["sample_calls"])
        self.windows = {
            int(stream): {k: np.array(v) for k, v in _flat(saved["steps"]).items()}
            for stream, saved in state["windows"].items()
        }
        self.filled = {
            int(s): np.broadcast_to(
                saved["filled"], len(next(iter(self.windows[int(s)].values())))
            ).astype(np.int64)
            for s, saved in state["windows"].items()
        }


def _windows(step: dict[Column, np.ndarray], copies: int, length: int) -> dict[Column, np.ndarray]:
    """Empty windows of ``length`` steps for ``copies`` copies, shaped like ``step``'s rows."""
    return {k: np.zeros((copies, length, *v.shape[1:]), v.dtype) for k, v in step.items()}


def _flat(nested: dict[str, Any]) -> dict[Column, np.ndarray]:
    """Undo `nest_step`."""
    flat: dict[Column, np.ndarray] = {}
    for name, value in nested.items():
        for key, array in value.items() if isinstance(value, dict) else [("", value)]:
            flat[(name, key)] = np.asarray(array)
    return flat
