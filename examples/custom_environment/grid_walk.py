"""A custom environment for Coach: any ``gymnasium.Env`` subclass works.

Walk from the top-left corner of a square grid to the bottom-right one. Coach needs nothing
but the gymnasium API: spaces, ``reset(seed=...)`` and ``step`` returning ``terminated`` and
``truncated`` apart (the time limit comes from ``max_episode_steps`` in the preset).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class GridWalkEnv(gym.Env):
    """Reach the far corner of a ``size`` x ``size`` grid; -0.01 per step, +1 on arrival.

    Args:
        size: The grid's side.
    """

    MOVES = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]])  # right, down, left, up

    def __init__(self, size: int = 5) -> None:
        self.size = size
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(4)
        self.position = np.zeros(2, dtype=np.int64)

    def _observation(self) -> np.ndarray:
        return (self.position / (self.size - 1)).astype(np.float32)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.position = np.zeros(2, dtype=np.int64)
        return self._observation(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.position = np.clip(self.position + self.MOVES[int(action)], 0, self.size - 1)
        arrived = bool(np.all(self.position == self.size - 1))
        return self._observation(), 1.0 if arrived else -0.01, arrived, False, {}
