"""Measurements: an observation key of numbers about the agent's situation (health, ammo,
kills in a ViZDoom scenario), apart from what it sees, for Direct Future Prediction to
predict (Dosovitskiy and Koltun, 2017).

A Doom scenario gives its game variables as ``measurements`` (`coach.environments.doom`).
Elsewhere `ReturnMeasurement` (``measure_return=True`` on an environment's parameters) makes
the episode's return so far one: appended to the environment's own measurements, or the
only one.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

MEASUREMENTS = "measurements"
"""The observation key of the measurements."""


class ReturnMeasurement(gym.Wrapper):
    """Adds the episode's return so far (the rewards up to the observation) as the last
    measurement; an observation that is not a dictionary becomes ``{key: observation,
    "measurements": ...}``.

    Args:
        env: The environment.
        key: The name of a plain observation in the dictionary.
    """

    def __init__(self, env: gym.Env, key: str = "observation") -> None:
        super().__init__(env)
        self.key = key
        given = env.observation_space
        inner = dict(given.spaces) if isinstance(given, spaces.Dict) else {key: given}
        own = inner.get(MEASUREMENTS)
        size = 1 + (int(np.prod(own.shape or ())) if own is not None else 0)
        inner[MEASUREMENTS] = spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        self.observation_space = spaces.Dict(inner)
        self.episode_return = 0.0

    def _observation(self, observation: Any) -> dict[str, Any]:
        out = dict(observation) if isinstance(observation, dict) else {self.key: observation}
        own = out.get(MEASUREMENTS)
        own = np.zeros(0, np.float32) if own is None else np.ravel(own).astype(np.float32)
        out[MEASUREMENTS] = np.append(own, np.float32(self.episode_return))
        return out

    def reset(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        self.episode_return = 0.0
        return self._observation(observation), info

    def step(self, action: Any) -> tuple[dict[str, Any], Any, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.episode_return += float(reward)
        return self._observation(observation), reward, terminated, truncated, info

    def get_wrapper_state(self) -> dict[str, Any]:
        """The return so far, for an episode saved in a checkpoint."""
        return {"episode_return": self.episode_return}

    def set_wrapper_state(self, state: dict[str, Any]) -> None:
        self.episode_return = float(state["episode_return"])


__all__ = ["MEASUREMENTS", "ReturnMeasurement"]
