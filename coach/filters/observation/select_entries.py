"""Keep chosen entries of vector observations: partially observed variants of any
environment (CartPole's positions without its velocities) are a preset away."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ObservationFilter


class ObservationSelectEntriesFilter(ObservationFilter):
    """Keeps the given entries of each observation's last axis, in the given order, and
    drops the others: ``ObservationSelectEntriesFilter([0, 2])`` keeps CartPole's cart
    position and pole angle and hides both velocities, which makes the task partially
    observed (a policy needs memory, a recurrent network, to act well).

    It keeps no state. The output space has the bounds of the kept entries.

    Args:
        indices: The entries to keep, as indices on the last axis (negative ones count from
            its end); at least one, each once.
    """

    def __init__(self, indices: Sequence[int]) -> None:
        given: object = indices  # from a preset: anything
        if isinstance(given, str) or not isinstance(given, Sequence | np.ndarray):
            raise CoachError(
                f"ObservationSelectEntriesFilter: indices is a list of entry indices, got "
                f"{indices!r}"
            )
        chosen = list(indices)
        if not chosen or not all(
            isinstance(i, int | np.integer) and not isinstance(i, bool) for i in chosen
        ):
            raise CoachError(
                f"ObservationSelectEntriesFilter: indices needs at least one integer index, "
                f"got {indices!r}"
            )
        self.indices = [int(i) for i in chosen]
        self._kept: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"ObservationSelectEntriesFilter({self.indices!r})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        """The Box of the kept entries.

        Raises:
            CoachError: when ``input_space`` is not a Box with a last axis that holds every
                index, or two indices name the same entry.
        """
        if not isinstance(input_space, spaces.Box) or not input_space.shape:
            raise CoachError(
                f"ObservationSelectEntriesFilter needs a Box observation with at least one "
                f"axis, got {input_space}"
            )
        size = input_space.shape[-1]
        outside = [i for i in self.indices if not -size <= i < size]
        if outside:
            raise CoachError(
                f"ObservationSelectEntriesFilter keeps the entries {self.indices}, but "
                f"{outside} are outside the last axis of {size} entries of {input_space}"
            )
        kept = np.array([i % size for i in self.indices])
        if len(set(kept.tolist())) < len(kept):
            raise CoachError(
                f"ObservationSelectEntriesFilter keeps the entries {self.indices}, which name "
                f"some entry twice in a last axis of {size} entries"
            )
        self._kept = kept
        return spaces.Box(
            input_space.low[..., kept], input_space.high[..., kept], dtype=input_space.dtype
        )

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        """A new array holding the kept entries of each observation in the batch."""
        if self._kept is None:
            raise CoachError(
                "ObservationSelectEntriesFilter was used before output_space told it its input"
            )
        return observation[..., self._kept]
