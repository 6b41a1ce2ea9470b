"""Each env's unfinished episode, held back by a memory that stores whole episodes.

The steps live column-wise in arrays of shape (num_envs, capacity, ...), grown by doubling, so
appending a step of every env is one assignment per column.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coach.core.types import Transition
from coach.errors import CoachError


def flatten_step(transition: Transition) -> dict[tuple[str, str], np.ndarray]:
    """A `Transition` as one array per (field, key) ("" for a plain array)."""
    t = transition
    columns = {("state", key): np.asarray(value) for key, value in t.state.items()}
    columns |= {("next_state", key): np.asarray(value) for key, value in t.next_state.items()}
    columns |= {("extras", key): np.asarray(value) for key, value in t.extras.items()}
    columns[("action", "")] = np.asarray(t.action)
    columns[("reward", "")] = np.asarray(t.reward)
    columns[("terminated", "")] = np.asarray(t.terminated, dtype=bool)
    columns[("truncated", "")] = np.asarray(t.truncated, dtype=bool)
    return columns


def as_transition(columns: dict[tuple[str, str], np.ndarray]) -> Transition:
    """Undo `flatten_step`."""
    return Transition(**nest_step(columns))


def nest_step(columns: dict[tuple[str, str], np.ndarray]) -> dict[str, Any]:
    """Undo `flatten_step` into plain dictionaries (the fields of a `Transition`, as a
    checkpoint keeps them)."""
    nested: dict[str, Any] = {"state": {}, "next_state": {}, "extras": {}}
    for (name, key), value in columns.items():
        if name in ("state", "next_state", "extras"):
            nested[name][key] = value
        else:
            nested[name] = value
    return nested


class OpenEpisodes:
    """Each env's unfinished episode, column-wise: arrays of shape (B, L, ...) whose L
    doubles when an episode outgrows it, and each env's number of steps so far.

    Appending a step of every env is one assignment per column, which copies the values:
    the caller may reuse its arrays.
    """

    def __init__(self, columns: dict[tuple[str, str], np.ndarray], lengths: np.ndarray) -> None:
        self.columns = columns
        """Per (argument of `store`, key): the steps, shape (B, L, ...)."""
        self.lengths = lengths
        """How many steps each env's episode holds, shape (B,)."""

    @classmethod
    def empty(cls, first_step: dict[tuple[str, str], np.ndarray], num_envs: int) -> OpenEpisodes:
        """Empty episodes for ``num_envs`` envs, with columns shaped after ``first_step``."""
        columns = {
            name: np.zeros((num_envs, 16, *value.shape[1:]), dtype=value.dtype)
            for name, value in first_step.items()
        }
        return cls(columns, np.zeros(num_envs, dtype=np.int64))

    @property
    def num_envs(self) -> int:
        return len(self.lengths)

    def widen(self, num_envs: int) -> None:
        """Room for the episodes of ``num_envs`` envs (the new ones empty)."""
        if num_envs <= self.num_envs:
            return
        for name, column in self.columns.items():
            grown = np.zeros((num_envs, *column.shape[1:]), column.dtype)
            grown[: self.num_envs] = column
            self.columns[name] = grown
        self.lengths = np.concatenate([self.lengths, np.zeros(num_envs - self.num_envs, int)])

    def append(
        self, step: dict[tuple[str, str], np.ndarray], envs: np.ndarray | None = None
    ) -> None:
        """Add a step of every env (one row per env), or of the envs ``envs`` (row for row),
        at the end of its episode."""
        if set(step) != set(self.columns):
            raise CoachError(
                f"a step must give the same observation keys and columns each time: the "
                f"first gave {sorted(self.columns)}, this one {sorted(step)}"
            )
        room = next(iter(self.columns.values())).shape[1]
        envs = np.arange(self.num_envs) if envs is None else envs
        lengths = self.lengths[envs]
        if lengths.max(initial=0) >= room:
            for name, column in self.columns.items():
                grown = np.zeros((self.num_envs, 2 * room, *column.shape[2:]), column.dtype)
                grown[:, :room] = column
                self.columns[name] = grown
        for name, column in self.columns.items():
            column[envs, lengths] = step[name]
        self.lengths[envs] += 1

    def pop(self, env: int) -> Transition:
        """Env ``env``'s episode, its steps as rows (views, valid until the next `append`),
        and an empty episode in its place."""
        length = int(self.lengths[env])
        self.lengths[env] = 0
        return as_transition({name: column[env, :length] for name, column in self.columns.items()})

    def state_dict(self) -> dict[str, Any]:
        """The steps held (the columns up to the longest episode) and the lengths."""
        longest = int(self.lengths.max(initial=0))
        steps = {name: column[:, :longest].copy() for name, column in self.columns.items()}
        return {"lengths": self.lengths.copy(), "steps": nest_step(steps)}

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> OpenEpisodes:
        """Undo `state_dict`."""
        lengths = np.asarray(state["lengths"], dtype=np.int64)
        longest = int(lengths.max(initial=0))
        columns: dict[tuple[str, str], np.ndarray] = {}
        for name, value in state["steps"].items():
            for key, saved in value.items() if isinstance(value, dict) else [("", value)]:
                saved = np.asarray(saved)
                if saved.ndim < 2 or saved.shape[:2] != (len(lengths), longest):
                    raise CoachError(
                        f"the saved open episodes of the hindsight memory are corrupted: "
                        f"{name} {key} has shape {saved.shape}, expected "
                        f"({len(lengths)}, {longest}, ...)"
                    )
                column = np.zeros((len(lengths), max(16, longest), *saved.shape[2:]), saved.dtype)
                column[:, :longest] = saved
                columns[(name, key)] = column
        return cls(columns, lengths)
