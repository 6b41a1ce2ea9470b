"""Let an agent act in a sub-box of the environment's Box, shifted to start at zero."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import ArrayLike

from coach.errors import CoachError
from coach.filters.filter import ActionFilter


class BoxMasking(ActionFilter):
    """Restricts a Box environment to the sub-box ``[masked_target_space_low,
    masked_target_space_high]``, which the agent sees shifted to start at zero.

    As in the original Coach: the agent acts in ``Box(0, masked_high - masked_low)`` of the
    environment box's shape and dtype, and its action is shifted, not scaled:
    ``env_action = agent_action + masked_low``. For instance, on an environment box
    ``[10, 32]`` masked to ``[20, 25]``, the agent acts in ``[0, 5]`` and its action 3 is the
    environment's 23. Actions outside the agent's box are shifted all the same, landing
    outside the mask; follow with `ActionClipToBounds` to keep them in. (Coach could also
    change the mask after construction, with ``set_masking``; here a mask is fixed.)

    Args:
        masked_target_space_low: The lowest environment action the agent can reach: one
            number for every element, or an array of the environment box's shape. Must lie
            within the environment's bounds.
        masked_target_space_high: The highest environment action the agent can reach, not
            below ``masked_target_space_low`` and within the environment's bounds.
    """

    def __init__(
        self,
        masked_target_space_low: ArrayLike,
        masked_target_space_high: ArrayLike,
    ) -> None:
        low = _finite_array(masked_target_space_low, "masked_target_space_low")
        high = _finite_array(masked_target_space_high, "masked_target_space_high")
        try:
            ordered = np.all(low <= high)
        except ValueError:
            raise CoachError(
                f"BoxMasking: masked_target_space_low of shape {low.shape} and "
                f"masked_target_space_high of shape {high.shape} do not match"
            ) from None
        if not ordered:
            raise CoachError(
                f"BoxMasking: masked_target_space_low {low.tolist()} is above "
                f"masked_target_space_high {high.tolist()}"
            )
        self.masked_target_space_low = low
        self.masked_target_space_high = high
        self._offset: np.ndarray | None = None
        self._dtype = np.dtype(np.float32)

    def __repr__(self) -> str:
        return (
            f"BoxMasking({self.masked_target_space_low.tolist()!r}, "
            f"{self.masked_target_space_high.tolist()!r})"
        )

    def input_space(self, output_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(output_space, spaces.Box):
            raise CoachError(f"BoxMasking needs a Box action space to mask, got {output_space}")
        shape, dtype = output_space.shape, output_space.dtype
        for name, bound in (
            ("low", self.masked_target_space_low),
            ("high", self.masked_target_space_high),
        ):
            if bound.shape not in ((), shape):
                raise CoachError(
                    f"BoxMasking: masked_target_space_{name} of shape {bound.shape} needs the "
                    f"shape of the environment's Box, got {output_space}"
                )
        # The mask as the environment's dtype holds it: an integer box needs integer bounds.
        low = np.broadcast_to(self.masked_target_space_low, shape).astype(dtype)
        high = np.broadcast_to(self.masked_target_space_high, shape).astype(dtype)
        if np.issubdtype(dtype, np.integer) and not (
            np.all(low == self.masked_target_space_low)
            and np.all(high == self.masked_target_space_high)
        ):
            raise CoachError(
                f"BoxMasking: the mask {self!r} needs integer bounds for a Box of integer "
                f"dtype, got {output_space}"
            )
        if not (np.all(output_space.low <= low) and np.all(high <= output_space.high)):
            raise CoachError(
                f"BoxMasking: the mask {self!r} needs to lie within the bounds of the "
                f"environment's Box, got {output_space}"
            )
        # In float64, where the bounds of a float32 or integer box are exact.
        self._offset = low.astype(np.float64)
        self._dtype = dtype
        width = high.astype(np.float64) - self._offset
        return spaces.Box(np.zeros(shape, dtype), width.astype(dtype), dtype=dtype)

    def filter(self, action: np.ndarray) -> np.ndarray:
        """Shift a batch of agent actions ``(B, *shape)`` into the mask."""
        if self._offset is None:
            raise RuntimeError("BoxMasking.filter called before input_space")
        return (np.asarray(action, dtype=np.float64) + self._offset).astype(self._dtype)


def _finite_array(value: object, name: str) -> np.ndarray:
    """``value`` as a float64 array, refusing what is not finite real numbers."""
    try:
        raw = np.asarray(value)
    except ValueError:  # a ragged list
        raw = np.asarray(None)
    if raw.dtype.kind not in "iuf" or not np.all(np.isfinite(raw)):
        raise CoachError(f"BoxMasking: {name} must be finite numbers, got {value!r}")
    return raw.astype(np.float64)
