"""On-policy rollouts: a T x B block (time x slots), and GAE over it.

An on-policy agent fills the block with ``T`` steps of each of its ``B`` slots (its env
copies, or on a multi-agent level the agent ids it plays in each copy), then computes returns
and advantages for the whole block at once and learns from it in minibatches. The value a
step bootstraps from is V(s_{t+1}) of its true successor: the slot's next step's value while
the episode goes on, the value of the final observation where the episode was truncated (a
time limit is not the end of the task), and nothing where it terminated.

On a single-agent environment every slot steps at every step, and the block fills row by
row. On a turn-based game, or once an id has left a simultaneous one, only some slots step:
their rows name them (the ``slot`` column, `SLOT`), and each slot's column of the block holds
its own steps in order, as many as it took. The block is then full once it holds ``T x B``
steps, however they fall over the slots; GAE runs down each column over its own steps, and
the minibatches draw from the steps stored.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.advantages import generalized_advantages
from coach.memories.memory import SLOT, Memory

VALID = "valid"
"""The extras column of a minibatch of sequences marking the cells that hold a step."""


@dataclass(slots=True, kw_only=True)
class RolloutParameters:
    """An on-policy rollout block."""

    ordered: ClassVar[bool] = True
    """The memory keeps each copy's steps in order: a step of some copies names them
    (`coach.memories.memory.SLOT`)."""

    rollout_length: int = 2048
    """Steps per slot in one block (T): per env copy, or per agent id in each copy."""

    def validate(self) -> None:
        check.whole("rollout_length", self.rollout_length, 1)

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> Rollout:
        """A rollout block for the agent's spaces; minibatches are shuffled with ``rng``."""
        return Rollout(self.rollout_length, observation_space, action_space, rng, extra_spaces)


class Rollout(Memory):
    """A T x B block of steps, filled in time order per slot, used once and cleared.

    The slot count B is taken from the first `store` (the width of a step every slot took,
    or the highest slot named plus one; `reserve` sets it ahead). ``extra_spaces`` name
    per-step columns the agent keeps (``value`` and ``log_prob`` for the policy-gradient
    family).

    Args:
        length: T, the steps per slot.
        observation_space: The agent's observation space.
        action_space: The agent's action space.
        rng: Shuffles the minibatches.
        extra_spaces: Further per-step columns by name.
    """

    def __init__(
        self,
        length: int,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> None:
        if length < 1:
            raise CoachError(f"a rollout needs at least one step, got {length}")
        self.length = length
        self.rng = rng
        self.observation_space = observation_space
        self.action_space = action_space
        self.extra_spaces = dict(extra_spaces or {})
        self.columns: dict[str, Any] = {}
        self.num_envs = 0
        self.reserved = 0
        self.counts = np.zeros(0, dtype=np.int64)
        """Steps stored per slot."""
        self.steps = 0
        """Rows in use: the most steps any slot stored."""
        self.stored = 0
        """Steps stored, over every slot."""
        self.aligned = True
        """Every slot holds as many steps (the rows ``[:steps]`` are all steps)."""
        self.advantages: np.ndarray | None = None
        self.returns: np.ndarray | None = None

    def _allocate(self, num_envs: int, rows: int | None = None) -> None:
        rows = self.length if rows is None else rows

        def column(space: spaces.Space[Any]) -> np.ndarray:
            return np.zeros((rows, num_envs, *(space.shape or ())), dtype=space.dtype)

        obs = self.observation_space.spaces
        self.columns = {
            "states": {k: column(s) for k, s in obs.items()},
            "next_states": {k: column(s) for k, s in obs.items()},
            "actions": column(self.action_space),
            "rewards": np.zeros((rows, num_envs), dtype=np.float32),
            "terminated": np.zeros((rows, num_envs), dtype=bool),
            "truncated": np.zeros((rows, num_envs), dtype=bool),
            "extras": {k: column(s) for k, s in self.extra_spaces.items()},
        }
        self.num_envs = num_envs
        self.counts = np.zeros(num_envs, dtype=np.int64)

    def _resize(self, rows: int, num_envs: int) -> None:
        """Room for ``rows`` steps of ``num_envs`` slots, keeping what is stored."""
        old, counts, steps = self.columns, self.counts, self.steps
        self._allocate(num_envs, rows)
        width = len(counts)
        self.counts[:width] = counts
        _copy_columns(self.columns, old, np.s_[:steps, :width], np.s_[:steps])

    def join(self, blocks: list[Rollout]) -> Rollout:
        """Full blocks of this length side by side along their slots, into this empty one
        (a learner's batch of several sources' blocks); returns it."""
        if self.stored or any(not b.full or b.steps != self.length for b in blocks):
            raise CoachError("joins full blocks of its own length, into an empty block")
        self._allocate(sum(block.num_envs for block in blocks))
        start = 0
        for block in blocks:
            end = start + block.num_envs
            _copy_columns(self.columns, block.columns, np.s_[:, start:end], np.s_[:])
            start = end
        self.counts[:] = self.steps = self.length
        self.stored = self.length * self.num_envs
        return self

    def reserve(self, num_slots: int) -> None:
        """The block holds at least ``num_slots`` slots (those of steps still to come)."""
        self.reserved = max(self.reserved, num_slots)
        if not self.columns and num_slots:
            self._allocate(num_slots)
        elif num_slots > self.num_envs:
            self._resize(len(self.columns["rewards"]), num_slots)

    @property
    def block_length(self) -> int:
        return self.length

    @property
    def block_steps_left(self) -> int:
        return max(self.length - self.steps, 0)

    @property
    def full(self) -> bool:
        return self.num_envs > 0 and self.stored >= self.length * self.num_envs

    def __len__(self) -> int:
        return self.stored

    def store(self, transition: Transition) -> None:
        extras = dict(transition.extras)
        slots = extras.pop(SLOT, None)
        if set(extras) != set(self.extra_spaces):
            raise CoachError(
                f"this rollout stores the columns {sorted(self.extra_spaces)} with each step, "
                f"got {sorted(extras)}"
            )
        count = len(transition)
        if slots is None and not self.columns:
            self._allocate(max(count, self.reserved))
        if slots is None and count != self.num_envs:
            raise CoachError(f"this rollout holds {self.num_envs} envs, got a step of {count}")
        if slots is None and self.aligned:
            if self.full:
                raise CoachError("the rollout is full: learn from it and clear it first")
            where: Any = self.steps
            self.counts += 1
            self.steps += 1
        else:
            if slots is None:
                slots = np.arange(count)
            elif not count:
                return
            slots = np.asarray(slots, dtype=np.int64)
            widest = max(int(slots.max()) + 1, self.reserved)
            if not self.columns:
                self._allocate(widest)
            elif widest > self.num_envs:  # slots not seen before
                self._resize(len(self.columns["rewards"]), widest)
            t = self.counts[slots]
            deepest = int(t.max()) + 1
            rows = len(self.columns["rewards"])
            if deepest > rows:  # a slot ran ahead of the block's length
                self._resize(max(2 * rows, deepest), self.num_envs)
            where = (t, slots)
            self.counts[slots] += 1
            self.steps = max(self.steps, deepest)
            self.aligned = bool((self.counts == self.counts[0]).all())
        c = self.columns
        for key in c["states"]:
            c["states"][key][where] = transition.state[key]
            c["next_states"][key][where] = transition.next_state[key]
        c["actions"][where] = transition.action
        c["rewards"][where] = transition.reward
        c["terminated"][where] = transition.terminated
        c["truncated"][where] = transition.truncated
        for key, column in c["extras"].items():
            column[where] = extras[key]
        self.stored += count

    def valid(self) -> np.ndarray:
        """(steps, B): the cells of the rows in use that hold a step."""
        return np.arange(self.steps)[:, None] < self.counts[None]

    def cut(self) -> None:
        """The episodes in the block stop here: each slot's last step is marked truncated,
        so that GAE bootstraps from its successor and does not run on into what follows."""
        self.columns["truncated"][self.last_steps()] = True

    def last_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """``(t, b)``: the cell of each slot's last step (of the slots with one)."""
        slots = np.flatnonzero(self.counts)
        return self.counts[slots] - 1, slots

    def compute_advantages(
        self,
        values: np.ndarray,
        last_values: np.ndarray,
        final_values: np.ndarray,
        discount: float,
        gae_lambda: float,
    ) -> None:
        """GAE over the block, down each slot's column.

        Args:
            values: (steps, B) V(s_t) of the stored states.
            last_values: V of the states after each slot's last step, in the order of
                `last_steps`.
            final_values: (steps, B) V(next_state) of the stored next states; only the cells
                of truncated steps are read (pass zeros where no step was truncated).
            discount: gamma.
            gae_lambda: lambda.
        """
        if not self.full:
            raise CoachError(
                f"GAE runs on a full block ({self.stored} of {self.length * self.num_envs} steps)"
            )
        steps = self.steps
        c = self.columns
        truncated = c["truncated"][:steps]
        next_values = np.concatenate([values[1:], np.zeros_like(values[:1])], axis=0)
        next_values[self.last_steps()] = last_values
        next_values = np.where(truncated, final_values, next_values)
        self.advantages, self.returns = generalized_advantages(
            rewards=c["rewards"][:steps],
            values=values,
            next_values=next_values,
            terminated=c["terminated"][:steps],
            truncated=truncated,
            discount=discount,
            gae_lambda=gae_lambda,
            valid=None if self.aligned else self.valid(),
        )

    def _rows(self, indices: np.ndarray, first_only: Collection[str] = ()) -> Batch:
        """The block cells ``indices`` (flat over rows x slots, any shape); the extras
        ``first_only`` names are taken at the first cell of each column of ``indices`` only
        (a sequence's first step)."""
        c = self.columns
        t, b = np.divmod(indices, self.num_envs)
        extras = {
            k: (v[t[0], b[0]] if k in first_only else v[t, b]) for k, v in c["extras"].items()
        }
        if self.advantages is not None and self.returns is not None:
            extras["advantages"] = self.advantages[t, b].astype(np.float32)
            extras["returns"] = self.returns[t, b].astype(np.float32)
        return Batch(
            states={k: v[t, b] for k, v in c["states"].items()},
            actions=c["actions"][t, b],
            rewards=c["rewards"][t, b],
            next_states={k: v[t, b] for k, v in c["next_states"].items()},
            terminated=c["terminated"][t, b],
            truncated=c["truncated"][t, b],
            indices=indices,
            extras=extras,
        )

    def _cells(self, picks: np.ndarray) -> np.ndarray:
        """The flat cells of the stored steps ``picks`` (numbered in row-major order)."""
        if self.aligned:
            return picks
        return np.flatnonzero(self.valid().reshape(-1))[picks]

    def sample(self, batch_size: int) -> Batch:
        """``batch_size`` steps drawn at random from the block (with replacement)."""
        if self.stored == 0:
            raise CoachError("cannot sample from an empty rollout")
        return self._rows(self._cells(self.rng.integers(0, len(self), size=batch_size)))

    def minibatches(self, batch_size: int) -> Iterator[Batch]:
        """One epoch over the block: every step once, shuffled, in minibatches."""
        order = self._cells(self.rng.permutation(len(self)))
        for start in range(0, len(order), batch_size):
            yield self._rows(order[start : start + batch_size])

    def sequence_minibatches(
        self, length: int, batch_size: int, first_only: Collection[str] = ()
    ) -> Iterator[Batch]:
        """One epoch over the block in sequences, for recurrent networks: each slot's
        column of the block cut into sequences of ``length`` consecutive steps, shuffled,
        ``batch_size // length`` of them per minibatch (at least one). The fields are
        time-major, (length, sequences, ...), and ``indices`` holds the block cells; the
        extras ``first_only`` names are each sequence's first step's, (sequences, ...) (the
        hidden states a learner unrolls from). Where the slots took different numbers of
        steps, a column's last sequence may run past its steps: the extra `VALID`,
        (length, sequences), marks the cells that hold one.
        """
        if self.length % length:
            raise CoachError(
                f"sequences of {length} steps do not tile a block of {self.length} steps"
            )
        whole = self.aligned and self.steps == self.length  # every column exactly full
        if whole:
            count = self.length // length * self.num_envs
            order = self.rng.permutation(count)
            starts, slots = np.divmod(order, self.num_envs)
            starts = starts * length
        else:  # each column's own steps, from its first on
            pieces = -(-self.counts // length)
            slots = np.repeat(np.arange(self.num_envs), pieces)
            starts = (
                np.arange(len(slots)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
            ) * length
            order = self.rng.permutation(len(slots))
            starts, slots = starts[order], slots[order]
        per_batch = max(1, batch_size // length)
        offsets = np.arange(length)[:, None]
        last = self.steps - 1  # cells past a column's steps read a row in use (masked)
        for start in range(0, len(slots), per_batch):
            steps = starts[None, start : start + per_batch] + offsets
            slot = slots[start : start + per_batch]
            batch = self._rows(np.minimum(steps, last) * self.num_envs + slot[None], first_only)
            if not whole:
                batch.extras[VALID] = steps < self.counts[slot][None]
            yield batch

    def state_dict(self) -> dict[str, Any]:
        """The steps stored so far in the block (a checkpoint mid-block resumes exactly)."""
        t = self.steps
        c = self.columns
        if not c:
            return {"steps": 0, "num_envs": 0}
        return {
            "steps": t,
            "num_envs": self.num_envs,
            "counts": self.counts.copy(),
            "states": {k: v[:t].copy() for k, v in c["states"].items()},
            "next_states": {k: v[:t].copy() for k, v in c["next_states"].items()},
            "actions": c["actions"][:t].copy(),
            "rewards": c["rewards"][:t].copy(),
            "terminated": c["terminated"][:t].copy(),
            "truncated": c["truncated"][:t].copy(),
            "extras": {k: v[:t].copy() for k, v in c["extras"].items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.clear()
        if not state["num_envs"]:
            return
        t = int(state["steps"])
        self._allocate(int(state["num_envs"]), max(self.length, t))
        c = self.columns
        for name in ("states", "next_states", "extras"):
            for key, column in c[name].items():
                column[:t] = state[name][key]
        for name in ("actions", "rewards", "terminated", "truncated"):
            c[name][:t] = state[name]
        self.counts[:] = state.get("counts", t)
        self.steps = t
        self.stored = int(self.counts.sum())
        self.aligned = bool((self.counts == self.counts[0]).all())

    def clear(self) -> None:
        self.steps = self.stored = 0
        self.counts[:] = 0
        self.aligned = True
        self.advantages = self.returns = None


def _copy_columns(into: Any, source: Any, where: Any, what: Any) -> None:
    """``into[where] = source[what]`` for every column of two blocks' nested columns."""
    if isinstance(into, dict):
        for key in into:
            _copy_columns(into[key], source[key], where, what)
    else:
        into[where] = source[what]
