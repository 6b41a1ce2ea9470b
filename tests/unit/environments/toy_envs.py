"""Tiny configurable gymnasium environments for the adapter's unit tests.

They are loaded through the adapter's ``module:Class`` entry points (``toy_envs:CountingEnv``);
the ``conftest.py`` next to this file puts this folder on ``sys.path``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class CountingEnv(gym.Env):
    """Observation ``[episode, t]``; action 1 ends the episode (terminated), 0 goes on.

    The reward of the step into ``t`` is ``reward_scale * t``, so the return of an episode of
    length L is ``reward_scale * L * (L + 1) / 2``.

    Args:
        reward_scale: Multiplies every reward.
    """

    def __init__(self, reward_scale: float = 1.0) -> None:
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.reward_scale = reward_scale
        self.episode = -1
        self.t = 0
        self.reset_seeds: list[int | None] = []
        """The seed of every reset, in order."""

    def _observation(self) -> np.ndarray:
        return np.array([self.episode, self.t], dtype=np.float32)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.reset_seeds.append(seed)
        self.episode += 1
        self.t = 0
        return self._observation(), {"reset": True}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        reward = self.reward_scale * self.t
        return self._observation(), reward, bool(action == 1), False, {"t": self.t}


class DictObservationEnv(gym.Env):
    """A goal-style environment with a dict observation; never ends on its own."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(-10.0, 10.0, shape=(3,), dtype=np.float32),
                "desired_goal": spaces.Box(-10.0, 10.0, shape=(2,), dtype=np.float32),
            }
        )
        self.action_space = spaces.Discrete(3)
        self.t = 0

    def _observation(self) -> dict[str, np.ndarray]:
        return {
            "observation": np.full(3, self.t, dtype=np.float32),
            "desired_goal": np.array([1.0, -1.0], dtype=np.float32),
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self._observation(), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        self.t += 1
        return self._observation(), float(action), False, False, {}
