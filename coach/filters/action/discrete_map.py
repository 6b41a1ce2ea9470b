"""Let a discrete agent choose among a list of environment actions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ActionFilter

ARRAY_SPACES = (spaces.Discrete, spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)
"""The environment action spaces whose actions are arrays, which a table can hold."""


class PartialDiscreteActionSpaceMap(ActionFilter):
    """The agent acts in ``Discrete(len(target_actions))``; its action ``i`` is the
    environment's ``target_actions[i]``.

    For instance ``PartialDiscreteActionSpaceMap([[-1.0], [0.0], [1.0]])`` lets a DQN agent
    push a one-dimensional Box environment left, not at all, or right, and
    ``PartialDiscreteActionSpaceMap([0, 3])`` keeps two of an Atari game's actions.

    Args:
        target_actions: The environment actions the agent chooses among, in order (a list,
            or an array whose rows are the actions): each a valid action of the environment's
            space (an integer of a Discrete space, an array of a Box's shape within its
            bounds, ...).
    """

    def __init__(self, target_actions: Sequence[Any] | np.ndarray) -> None:
        if isinstance(target_actions, str | bytes) or not isinstance(
            target_actions, Sequence | np.ndarray
        ):
            raise CoachError(
                "PartialDiscreteActionSpaceMap: target_actions must be a list of environment "
                f"actions, got {target_actions!r}"
            )
        if len(target_actions) == 0:
            raise CoachError(
                "PartialDiscreteActionSpaceMap: target_actions must hold at least one action"
            )
        self.target_actions = [_as_list(i, a) for i, a in enumerate(target_actions)]
        self.table: np.ndarray | None = None
        """``target_actions`` in the environment's dtype, ``(n, *env_shape)``; set by
        `input_space`."""

    def __repr__(self) -> str:
        return f"PartialDiscreteActionSpaceMap({self.target_actions!r})"

    def input_space(self, output_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(output_space, ARRAY_SPACES):
            raise CoachError(
                "PartialDiscreteActionSpaceMap needs an action space whose actions are arrays "
                f"(Discrete, Box, MultiDiscrete, MultiBinary), got {output_space}"
            )
        table, invalid = [], []
        for i, action in enumerate(self.target_actions):
            value = _as_action(action, output_space)
            if value is None:
                invalid.append(f"{i}: {action!r}")
            else:
                table.append(value)
        if invalid:
            raise CoachError(
                "PartialDiscreteActionSpaceMap needs target actions valid in the environment's "
                f"action space; {', '.join(invalid)} are not, in {output_space}"
            )
        self.table = np.stack(table)
        return spaces.Discrete(len(table))

    def filter(self, action: np.ndarray) -> np.ndarray:
        """Map a batch of indices ``(B,)`` to their environment actions ``(B, *env_shape)``."""
        if self.table is None:
            raise RuntimeError("PartialDiscreteActionSpaceMap.filter called before input_space")
        return self.table[action]  # fancy indexing: a new array


def _as_list(index: int, action: Any) -> Any:
    """``action`` as plain numbers and lists (for the ``repr``), refusing ragged arrays."""
    try:
        return np.asarray(action).tolist()
    except ValueError:
        raise CoachError(
            f"PartialDiscreteActionSpaceMap: target action {index}, {action!r}, is not an array"
        ) from None


def _as_action(action: Any, space: spaces.Space[Any]) -> np.ndarray | None:
    """``action`` in ``space``'s dtype when it is one of ``space``'s actions, else None.

    A number must keep its value in the dtype (``1.5`` is not an action of ``Discrete``),
    though rounding to a float dtype is allowed (``0.1`` is an action of a float32 Box).
    """
    raw = np.asarray(action)
    if raw.dtype.kind not in "biuf" or raw.shape != space.shape:
        return None
    assert space.dtype is not None  # every ARRAY_SPACES space has one
    with np.errstate(invalid="ignore", over="ignore"):
        value = raw.astype(space.dtype)
    if raw.dtype.kind == "b" and not isinstance(space, spaces.MultiBinary):
        return None  # True is no Discrete action, nor a Box one
    if not np.issubdtype(space.dtype, np.floating) and not np.all(value == raw):
        return None
    return value if space.contains(value) else None


class FullDiscreteActionSpaceMap(ActionFilter):
    """Every action of a Discrete environment, in order, as a Discrete space starting at 0:
    the agent's action ``i`` is the environment's ``start + i``.

    Agents index their outputs from zero; this lets them drive a ``Discrete(n, start=s)``
    environment (for ``start == 0`` it changes nothing).
    """

    def __init__(self) -> None:
        self.start = 0

    def __repr__(self) -> str:
        return "FullDiscreteActionSpaceMap()"

    def input_space(self, output_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(output_space, spaces.Discrete):
            raise CoachError(
                "FullDiscreteActionSpaceMap needs a Discrete action space to enumerate, got "
                f"{output_space}"
            )
        self.start = int(output_space.start)
        return spaces.Discrete(int(output_space.n))

    def filter(self, action: np.ndarray) -> np.ndarray:
        """Map a batch of indices ``(B,)`` to the environment's actions ``(B,)``."""
        return np.asarray(action, dtype=np.int64) + self.start  # a new array
