"""Move an axis of observations to another place."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ObservationFilter


class ObservationMoveAxisFilter(ObservationFilter):
    """Moves one axis of each observation to another place, keeping the order of the others,
    as `numpy.moveaxis` does: ``ObservationMoveAxisFilter(-1, 0)`` turns images ``(H, W, C)``
    into ``(C, H, W)`` for a convolutional network.

    Axes count within one environment's observation, as in its space (the batch axis stays
    first). The output is a contiguous copy.

    Args:
        axis_origin: The axis to move; negative axes count from the end.
        axis_target: Where it goes; negative axes count from the end.
    """

    def __init__(self, axis_origin: int, axis_target: int) -> None:
        for name, value in (("axis_origin", axis_origin), ("axis_target", axis_target)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise CoachError(
                    f"ObservationMoveAxisFilter: {name} must be an integer, got {value!r}"
                )
        self.axis_origin = int(axis_origin)
        self.axis_target = int(axis_target)
        self._axes: tuple[int, int] | None = None
        """The batch's origin and target axes (one more than the observation's)."""

    def __repr__(self) -> str:
        return f"ObservationMoveAxisFilter({self.axis_origin}, {self.axis_target})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(input_space, spaces.Box):
            raise CoachError(
                f"ObservationMoveAxisFilter needs a Box observation, got {input_space}"
            )
        ndim = len(input_space.shape)
        # Axis a exists when there are at least a + 1 axes (a >= 0), or -a axes (a < 0).
        needed = max(a + 1 if a >= 0 else -a for a in (self.axis_origin, self.axis_target))
        if ndim < needed:
            raise CoachError(
                f"ObservationMoveAxisFilter moves axis {self.axis_origin} to "
                f"{self.axis_target}, which needs a Box with at least {needed} axes, "
                f"got {input_space}"
            )
        origin, target = self.axis_origin % ndim, self.axis_target % ndim
        self._axes = (origin + 1, target + 1)
        return spaces.Box(
            np.moveaxis(input_space.low, origin, target).copy(),
            np.moveaxis(input_space.high, origin, target).copy(),
            dtype=input_space.dtype,
        )

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        if self._axes is None:
            raise CoachError(
                "ObservationMoveAxisFilter was used before output_space told it its input"
            )
        return np.moveaxis(observation, *self._axes).copy()
