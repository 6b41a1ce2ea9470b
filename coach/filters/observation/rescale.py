"""Resize image observations."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ObservationFilter

INTERPOLATIONS = ("nearest", "linear", "area", "cubic")
"""The interpolations offered, by their OpenCV names without ``INTER_``."""

# The dtypes OpenCV resizes with every interpolation above (int8, int32 and float16 only
# work with "nearest").
_DTYPES = (np.uint8, np.uint16, np.int16, np.float32, np.float64)
_MAX_CHANNELS = 512  # OpenCV's CV_CN_MAX


def _import_cv2() -> ModuleType:
    try:
        import cv2
    except ImportError as error:
        raise CoachError(
            "ObservationRescaleToSizeFilter needs OpenCV: pip install 'coach[atari]'"
        ) from error
    return cv2


class ObservationRescaleToSizeFilter(ObservationFilter):
    """Resizes image observations of shape ``(H, W)`` or ``(H, W, C)`` to
    ``(height, width)`` or ``(height, width, C)`` with OpenCV, keeping their dtype.

    The output space has the input's lowest ``low`` and highest ``high`` everywhere, since a
    resized pixel mixes (or picks) pixels from anywhere in a neighbourhood. Cubic
    interpolation can overshoot those bounds, and floating point rounding can too by a hair;
    such outputs are clipped back into them.

    Args:
        height: The height of the output images, in pixels.
        width: The width of the output images, in pixels.
        interpolation: One of ``"nearest"``, ``"linear"``, ``"area"`` (the best to shrink
            images, as in the DQN papers' Atari pipelines) or ``"cubic"``.
    """

    def __init__(self, height: int, width: int, interpolation: str = "area") -> None:
        for name, value in (("height", height), ("width", width)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise CoachError(
                    f"ObservationRescaleToSizeFilter: {name} must be a positive integer, "
                    f"got {value!r}"
                )
        if interpolation not in INTERPOLATIONS:
            raise CoachError(
                f"ObservationRescaleToSizeFilter: interpolation must be one of "
                f"{list(INTERPOLATIONS)}, got {interpolation!r}"
            )
        self.height = int(height)
        self.width = int(width)
        self.interpolation = interpolation
        self._out_shape: tuple[int, ...] | None = None
        self._low: float = -np.inf
        self._high: float = np.inf
        self._clip = False

    def __repr__(self) -> str:
        return (
            f"ObservationRescaleToSizeFilter({self.height}, {self.width}, "
            f"interpolation={self.interpolation!r})"
        )

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if (
            not isinstance(input_space, spaces.Box)
            or len(input_space.shape) not in (2, 3)
            or (len(input_space.shape) == 3 and not 1 <= input_space.shape[2] <= _MAX_CHANNELS)
        ):
            raise CoachError(
                f"ObservationRescaleToSizeFilter needs a Box of shape (H, W) or (H, W, C) "
                f"with C <= {_MAX_CHANNELS}, got {input_space}"
            )
        if input_space.dtype not in _DTYPES:
            raise CoachError(
                f"ObservationRescaleToSizeFilter needs a Box of dtype "
                f"{', '.join(np.dtype(d).name for d in _DTYPES)}, got {input_space}"
            )
        _import_cv2()  # refuse now rather than at the first step
        self._out_shape = (self.height, self.width, *input_space.shape[2:])
        self._low = input_space.low.min().item()
        self._high = input_space.high.max().item()
        self._clip = self.interpolation == "cubic" or np.issubdtype(input_space.dtype, np.floating)
        return spaces.Box(self._low, self._high, shape=self._out_shape, dtype=input_space.dtype)

    def filter(self, observation: np.ndarray, update: bool = True) -> np.ndarray:
        if self._out_shape is None:
            raise CoachError(
                "ObservationRescaleToSizeFilter was used before output_space told it its input"
            )
        cv2 = _import_cv2()
        mode = getattr(cv2, f"INTER_{self.interpolation.upper()}")
        out = np.empty((len(observation), *self._out_shape), dtype=observation.dtype)
        for i, image in enumerate(observation):
            # cv2 drops a single channel axis, hence the reshape.
            resized = cv2.resize(image, (self.width, self.height), interpolation=mode)
            out[i] = resized.reshape(self._out_shape)
        if self._clip:
            np.clip(out, self._low, self._high, out=out)
        return out
