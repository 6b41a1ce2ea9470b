"""Remove axes of size one from observations."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ObservationFilter


class ObservationSqueezeFilter(ObservationFilter):
    """Removes axes of size one from each observation (``(84, 84, 1)`` to ``(84, 84)``).

    Axes count within one environment's observation, as in its space: the batch axis is
    never removed, even for a single environment.

    Args:
        axis: The axis, or axes, to remove (negative ones count from the end); each must
            have size one. ``None`` removes every axis of size one.
    """

    def __init__(self, axis: int | tuple[int, ...] | None = None) -> None:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else axis
        if axes is not None and (
            not isinstance(axes, tuple)
            or not axes
            or any(not isinstance(a, (int, np.integer)) or isinstance(a, bool) for a in axes)
        ):
            raise CoachError(
                f"ObservationSqueezeFilter: axis is an integer, a tuple of integers or None, "
                f"got {axis!r}"
            )
        # Plain ints, so that the repr reads back without numpy.
        self.axis: int | tuple[int, ...] | None = None
        if isinstance(axis, tuple):
            self.axis = tuple(int(a) for a in axis)
        elif axis is not None:
            self.axis = int(axis)
        self._axes: tuple[int, ...] | None = None
        """The batch's axes to remove (one more than the observation's)."""

    def __repr__(self) -> str:
        return f"ObservationSqueezeFilter({self.axis!r})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(input_space, spaces.Box):
            raise CoachError(f"ObservationSqueezeFilter needs a Box observation, got {input_space}")
        shape = input_space.shape
        if self.axis is None:
            axes = tuple(i for i, size in enumerate(shape) if size == 1)
        else:
            given = (self.axis,) if not isinstance(self.axis, tuple) else self.axis
            if any(not -len(shape) <= a < len(shape) for a in given):
                raise CoachError(
                    f"ObservationSqueezeFilter removes axes {list(given)}, which needs a Box "
                    f"with more axes, got {input_space}"
                )
            axes = tuple(sorted({int(a) % len(shape) for a in given}))
            if any(shape[a] != 1 for a in axes):
                raise CoachError(
                    f"ObservationSqueezeFilter removes axes {list(given)}, which needs a Box "
                    f"whose size is 1 on those axes, got {input_space}"
                )
        self._axes = tuple(a + 1 for a in axes)
        return spaces.Box(
            np.squeeze(input_space.low, axis=axes).copy(),
            np.squeeze(input_space.high, axis=axes).copy(),
            dtype=input_space.dtype,
        )

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        if self._axes is None:
            raise CoachError(
                "ObservationSqueezeFilter was used before output_space told it its input"
            )
        return np.squeeze(observation, axis=self._axes).copy()
