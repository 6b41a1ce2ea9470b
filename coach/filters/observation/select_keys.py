"""Keep some keys of dictionary observations."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import Filter


class ObservationSelectKeysFilter(Filter):
    """Keeps only the given keys of a dictionary observation, in the given order (a robotics
    environment's ``achieved_goal`` is often of no use to the agent, for instance).

    Unlike the other observation filters it takes the whole observation dictionary, not
    one key's array; `coach.filters.pipeline.InputFilter` applies it (as ``select_keys``)
    before the per-key filters. It keeps no state.

    Args:
        keys: The observation keys to keep; at least one, each once.
    """

    def __init__(self, keys: Sequence[str]) -> None:
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise CoachError(
                f"ObservationSelectKeysFilter: keys is a list of key names, got {keys!r}"
            )
        keys = list(keys)
        if not keys or len(set(keys)) != len(keys):
            raise CoachError(
                f"ObservationSelectKeysFilter: keys needs at least one key, each once, got {keys!r}"
            )
        self.keys = keys

    def __repr__(self) -> str:
        return f"ObservationSelectKeysFilter({self.keys!r})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Dict:
        """The observation space with the selected keys only.

        Raises:
            CoachError: when ``input_space`` is not a Dict holding every selected key.
        """
        if not isinstance(input_space, spaces.Dict):
            raise CoachError(
                f"ObservationSelectKeysFilter needs a Dict observation space, got {input_space}"
            )
        missing = [k for k in self.keys if k not in input_space.spaces]
        if missing:
            raise CoachError(
                f"ObservationSelectKeysFilter selects {missing}, which the observation space "
                f"does not have: it has {list(input_space.spaces)} in {input_space}"
            )
        # A sequence of pairs keeps the given order (a plain dict would be sorted).
        return spaces.Dict([(k, copy.deepcopy(input_space.spaces[k])) for k in self.keys])

    def filter(
        self, observation: dict[str, np.ndarray], update: bool = True
    ) -> dict[str, np.ndarray]:
        """A new dictionary with the selected keys (the arrays are the given ones)."""
        return {k: observation[k] for k in self.keys}

    def start_episodes(
        self, observation: dict[str, np.ndarray], rows: np.ndarray
    ) -> dict[str, np.ndarray]:
        """The first observations of new episodes, selected as `filter` does."""
        return self.filter(observation, update=False)
