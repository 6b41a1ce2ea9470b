"""Crop observations to a box of indices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ObservationFilter

Bound = int | None


def _bounds(name: str, values: object) -> tuple[Bound, ...] | None:
    """``values`` (from a preset: anything) as crop bounds, or ``None``."""
    if values is None:
        return None
    problem = CoachError(
        f"ObservationCropFilter: {name} holds one non-negative integer or None (the whole "
        f"axis) per axis, got {values!r}"
    )
    if isinstance(values, str) or not isinstance(values, (Sequence, np.ndarray)):
        raise problem
    bounds: list[Bound] = []
    for value in values:
        if value is None:
            bounds.append(None)
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
            bounds.append(int(value))
        else:
            raise problem
    return tuple(bounds)


class ObservationCropFilter(ObservationFilter):
    """Keeps the part of each observation between ``crop_low`` (included) and ``crop_high``
    (excluded), axis by axis; the axes are those of one environment's observation.

    A ``None`` entry takes the axis from its start (in ``crop_low``) or to its end (in
    ``crop_high``), where Coach used -1; a ``None`` vector does so for every axis.

    Args:
        crop_low: The first index kept on each axis.
        crop_high: One past the last index kept on each axis.
    """

    def __init__(
        self,
        crop_low: Sequence[Bound] | np.ndarray | None = None,
        crop_high: Sequence[Bound] | np.ndarray | None = None,
    ) -> None:
        low = _bounds("crop_low", crop_low)
        high = _bounds("crop_high", crop_high)
        if low is None and high is None:
            raise CoachError("ObservationCropFilter needs crop_low, crop_high or both")
        if low is not None and high is not None:
            if len(low) != len(high):
                raise CoachError(
                    f"ObservationCropFilter: crop_low {low} and crop_high {high} have different "
                    f"lengths"
                )
            for axis, (start, stop) in enumerate(zip(low, high, strict=True)):
                if start is not None and stop is not None and start >= stop:
                    raise CoachError(
                        f"ObservationCropFilter: crop_low {low} is not below crop_high {high} "
                        f"on axis {axis}"
                    )
        self.crop_low = low
        self.crop_high = high
        self._slices: tuple[slice, ...] | None = None

    def __repr__(self) -> str:
        return f"ObservationCropFilter(crop_low={self.crop_low}, crop_high={self.crop_high})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(input_space, spaces.Box):
            raise CoachError(f"ObservationCropFilter needs a Box observation, got {input_space}")
        shape = input_space.shape
        low = self.crop_low if self.crop_low is not None else (None,) * len(shape)
        high = self.crop_high if self.crop_high is not None else (None,) * len(shape)
        if len(low) != len(shape):
            raise CoachError(
                f"ObservationCropFilter crops {len(low)} axes, so it needs a Box with "
                f"{len(low)} axes, got {input_space}"
            )
        slices = []
        for axis, (start, stop, size) in enumerate(zip(low, high, shape, strict=True)):
            first = 0 if start is None else start
            end = size if stop is None else stop
            if not first < end <= size:
                needed = first + 1 if stop is None else stop
                raise CoachError(
                    f"ObservationCropFilter crops axis {axis} from index {first} to "
                    f"{'its end' if stop is None else stop}, which needs a Box with at least "
                    f"{needed} entries on that axis, got {input_space}"
                )
            slices.append(slice(first, end))
        self._slices = tuple(slices)
        return spaces.Box(
            input_space.low[self._slices].copy(),
            input_space.high[self._slices].copy(),
            dtype=input_space.dtype,
        )

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        if self._slices is None:
            raise CoachError("ObservationCropFilter was used before output_space told it its input")
        return observation[(slice(None), *self._slices)].copy()
