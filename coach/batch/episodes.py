"""The records of batch RL: an `Episode` as the environment gave it, and a loaded `Dataset`.

They sit apart from `coach.batch.datasets` (reading and writing Minari) so that the checks
(`coach.batch.checks`) and the recorder read them without importing Minari's storage code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces


@dataclass(slots=True)
class Episode:
    """One episode as the environment gave it (raw gymnasium spaces, not Coach's filtered
    ones), ``T`` steps long."""

    observations: np.ndarray | dict[str, np.ndarray]
    """``(T + 1, ...)``, the final observation included; a dict of them for a Dict space."""
    actions: np.ndarray
    """``(T, *action_shape)``, in the environment's action space."""
    rewards: np.ndarray
    """``(T,)`` float (float64 once loaded)."""
    terminations: np.ndarray
    """``(T,)`` bool."""
    truncations: np.ndarray
    """``(T,)`` bool."""
    behaviour: dict[str, np.ndarray] = field(default_factory=dict)
    """What the acting policy logged about each action, ``(T, ...)`` per key:
    ``"action_probabilities"`` ``(T, A)`` for discrete actions (the probability of every
    action under the behaviour policy at that step), ``"action_log_prob"`` ``(T,)`` for
    continuous ones. Stored in Minari's ``infos`` (see the module docstring)."""

    @property
    def num_steps(self) -> int:
        """``T``, the number of actions taken."""
        return len(self.rewards)


@dataclass(slots=True)
class Dataset:
    """A loaded dataset."""

    name: str
    """The Minari id, e.g. ``cartpole/random-v0``."""
    path: Path
    """Its directory (the one holding ``data/``)."""
    episodes: list[Episode]
    """Its episodes, in the order they were written."""
    observation_space: spaces.Space[Any]
    """The environment's observation space when the dataset was recorded."""
    action_space: spaces.Space[Any]
    """The environment's action space when the dataset was recorded."""
    env_id: str | None
    """The registered gymnasium id of the environment, if it was recorded."""
    metadata: dict[str, Any]
    """Minari's metadata as Minari returns it: ``dataset_id``, ``total_steps``,
    ``total_episodes``, ``algorithm_name``, ``description``, ``author`` (a set)..."""

    @property
    def total_steps(self) -> int:
        """Steps (actions) over all episodes."""
        return sum(episode.num_steps for episode in self.episodes)

    @property
    def num_episodes(self) -> int:
        """How many episodes it holds."""
        return len(self.episodes)
