"""Let an agent act in a Box of its own bounds, mapped linearly onto the environment's."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import ArrayLike

from coach.errors import CoachError
from coach.filters.filter import ActionFilter


class LinearBoxToBoxMap(ActionFilter):
    """The agent acts in ``Box(input_space_low, input_space_high)``, of the environment box's
    shape and dtype, and each element is mapped by the affine map that takes the agent's
    bounds to the environment's:
    ``env = env_low + (agent - input_low) * (env_high - env_low) / (input_high - input_low)``.

    A policy squashed into ``[-1, 1]`` (a tanh output) drives any bounded box this way.
    Actions outside the agent's box land outside the environment's, as the map is linear;
    follow with `ActionClipToBounds` to keep them in.

    Args:
        input_space_low: The agent box's lower bound: one number for every element, or an
            array of the environment box's shape.
        input_space_high: The agent box's upper bound, above ``input_space_low`` everywhere.
    """

    def __init__(self, input_space_low: ArrayLike, input_space_high: ArrayLike) -> None:
        low = _finite_array(input_space_low, "input_space_low")
        high = _finite_array(input_space_high, "input_space_high")
        try:
            below = np.all(low < high)
        except ValueError:
            raise CoachError(
                f"LinearBoxToBoxMap: input_space_low of shape {low.shape} and input_space_high "
                f"of shape {high.shape} do not match"
            ) from None
        if not below:
            raise CoachError(
                f"LinearBoxToBoxMap: input_space_low {low.tolist()} must be below "
                f"input_space_high {high.tolist()} everywhere"
            )
        self.input_space_low = low
        self.input_space_high = high
        self._agent_low: np.ndarray | None = None
        self._agent_width = self._env_low = self._env_high = np.zeros(())
        self._dtype = np.dtype(np.float32)

    def __repr__(self) -> str:
        return (
            f"LinearBoxToBoxMap({self.input_space_low.tolist()!r}, "
            f"{self.input_space_high.tolist()!r})"
        )

    def input_space(self, output_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(output_space, spaces.Box) or not np.issubdtype(
            output_space.dtype, np.floating
        ):
            raise CoachError(
                f"LinearBoxToBoxMap needs a Box action space of float dtype, got {output_space}"
            )
        if not output_space.is_bounded("both"):
            raise CoachError(
                "LinearBoxToBoxMap needs a Box bounded on both sides (it maps onto the "
                f"bounds), got {output_space}"
            )
        for name, bound in (("low", self.input_space_low), ("high", self.input_space_high)):
            if bound.shape not in ((), output_space.shape):
                raise CoachError(
                    f"LinearBoxToBoxMap: input_space_{name} of shape {bound.shape} needs the "
                    f"shape of the environment's Box, got {output_space}"
                )
        shape = output_space.shape
        agent_space = spaces.Box(
            np.broadcast_to(self.input_space_low, shape).astype(output_space.dtype),
            np.broadcast_to(self.input_space_high, shape).astype(output_space.dtype),
            dtype=output_space.dtype,
        )
        # The map runs between the bounds as the boxes hold them (in their dtype), in
        # float64: the agent's bounds then land exactly on the environment's.
        self._agent_low = agent_space.low.astype(np.float64)
        self._agent_width = agent_space.high.astype(np.float64) - self._agent_low
        if not np.all(self._agent_width > 0):
            raise CoachError(
                f"LinearBoxToBoxMap: the bounds {self!r} are too close to tell apart in the "
                f"dtype of the environment's Box, {output_space}"
            )
        self._env_low = output_space.low.astype(np.float64)
        self._env_high = output_space.high.astype(np.float64)
        self._dtype = output_space.dtype
        return agent_space

    def filter(self, action: np.ndarray) -> np.ndarray:
        """Map a batch of agent actions ``(B, *shape)`` to the environment's box."""
        if self._agent_low is None:
            raise RuntimeError("LinearBoxToBoxMap.filter called before input_space")
        t = (action - self._agent_low) / self._agent_width  # 0 at the agent's low, 1 at high
        return (self._env_low * (1.0 - t) + self._env_high * t).astype(self._dtype)


def _finite_array(value: object, name: str) -> np.ndarray:
    """``value`` as a float64 array, refusing what is not finite real numbers."""
    try:
        raw = np.asarray(value)
    except ValueError:  # a ragged list
        raw = np.asarray(None)
    if raw.dtype.kind not in "iuf" or not np.all(np.isfinite(raw)):
        raise CoachError(f"LinearBoxToBoxMap: {name} must be finite numbers, got {value!r}")
    return raw.astype(np.float64)
