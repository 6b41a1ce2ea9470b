"""Spaces Coach adds to gymnasium's (a Box that says it is a stack of frames), and what
agents read off a space (`first_action`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


class StackedFrames(spaces.Box):
    """A Box of ``stack_size`` frames along its first axis, oldest first.

    Everything that reads a Box reads it as one (networks see a ``(stack_size, *frame)``
    array); a replay memory that recognises it stores each frame once instead of
    ``stack_size`` times (see `coach.memories.frame_store`).

    Args:
        frame_space: The space of one frame.
        stack_size: How many consecutive frames are stacked.
    """

    def __init__(self, frame_space: spaces.Box, stack_size: int, seed: Any = None) -> None:
        self.stack_size = stack_size
        self.frame_space = frame_space
        low = np.broadcast_to(frame_space.low, (stack_size, *frame_space.shape))
        high = np.broadcast_to(frame_space.high, (stack_size, *frame_space.shape))
        super().__init__(low, high, dtype=frame_space.dtype, seed=seed)

    def __repr__(self) -> str:
        return f"StackedFrames({self.frame_space}, stack_size={self.stack_size})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, StackedFrames)
            and other.stack_size == self.stack_size
            and other.frame_space == self.frame_space
        )

    def __hash__(self) -> int:
        return hash((self.stack_size, self.frame_space.shape))


def first_action(space: spaces.Space[Any]) -> int:
    """The number of a discrete space's first action (gymnasium's ``Discrete(n, start)``
    numbers its actions from ``start``): what an agent subtracts from an action to index
    its network's outputs by it, and adds back to act. 0 for any other space."""
    return int(space.start) if isinstance(space, spaces.Discrete) else 0
