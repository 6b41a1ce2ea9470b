"""Clip actions into the bounds of the environment's Box."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ActionFilter


class ActionClipToBounds(ActionFilter):
    """The agent acts in the environment's Box and its actions are clipped into the bounds.

    A Gaussian policy samples from an unbounded distribution: its actions can leave the box,
    which some environments refuse. The agent is told the same box (so its exploration and
    its heatup stay inside), and whatever lands outside is clipped to the nearest bound,
    element by element. An unbounded side of the box is left unclipped.
    """

    def __init__(self) -> None:
        self._low: np.ndarray | None = None
        self._high = np.zeros(())
        self._dtype = np.dtype(np.float32)

    def __repr__(self) -> str:
        return "ActionClipToBounds()"

    def input_space(self, output_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(output_space, spaces.Box):
            raise CoachError(
                f"ActionClipToBounds needs a Box action space to clip into, got {output_space}"
            )
        self._low, self._high = output_space.low.copy(), output_space.high.copy()
        self._dtype = output_space.dtype
        return spaces.Box(self._low, self._high, dtype=output_space.dtype)  # Box copies them

    def filter(self, action: np.ndarray) -> np.ndarray:
        """Clip a batch of actions ``(B, *shape)`` into the box, in its dtype."""
        if self._low is None:
            raise RuntimeError("ActionClipToBounds.filter called before input_space")
        return np.clip(action, self._low, self._high).astype(self._dtype, copy=False)
