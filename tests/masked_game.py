"""A game whose legal actions change every step: an environment with action masks for tests
(`coach.core.action_masks`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.action_masks import ACTION_MASK
from coach.core.types import EnvResponse
from coach.environments.environment import Environment

ACTIONS = 4
"""The game's discrete actions."""


def masked_observations(mask_length: int = ACTIONS) -> spaces.Dict:
    """The game's observations: the mask as the network's input, and as the action mask
    (of another length than the game's actions, to test that it is refused)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, (ACTIONS,), np.float32),
            ACTION_MASK: spaces.Box(0, 1, (mask_length,), np.int8),
        }
    )


class MaskedGame(Environment):
    """A game of ``num_envs`` copies whose legal actions change every step: each state's mask
    is drawn at random (at least one action legal) and is also what the agent observes.
    Episodes last ``length`` steps and end in a terminal state with no legal action (a
    finished game's). Counts the illegal actions it is given."""

    def __init__(self, num_envs: int = 3, length: int = 5, seed: int = 0) -> None:
        self.num_envs = num_envs
        self.length = length
        self.rng = np.random.default_rng(seed)
        self.observation_space = masked_observations()
        self.action_space = spaces.Discrete(ACTIONS)
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.masks = self._draw()
        self.illegal = 0
        self.taken = 0

    def _draw(self) -> np.ndarray:
        masks = (self.rng.random((self.num_envs, ACTIONS)) < 0.4).astype(np.int8)
        masks[np.arange(self.num_envs), self.rng.integers(0, ACTIONS, self.num_envs)] = 1
        return masks

    @staticmethod
    def _observe(masks: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": masks.astype(np.float32), ACTION_MASK: masks.copy()}

    def reset(self, seed: int | None = None) -> EnvResponse:
        self.t[:] = 0
        self.masks = self._draw()
        return EnvResponse.first(self._observe(self.masks), self.num_envs)

    def step(self, action: Any) -> EnvResponse:
        action = np.asarray(action)
        rows = np.arange(self.num_envs)
        self.illegal += int((self.masks[rows, action] == 0).sum())
        self.taken += self.num_envs
        reward = (action == self.masks.argmax(axis=1)).astype(np.float32)  # the first legal
        self.t += 1
        terminated = self.t >= self.length
        self.masks = self._draw()
        final = np.where(terminated[:, None], 0, self.masks).astype(np.int8)
        self.t[terminated] = 0
        return EnvResponse(
            self._observe(self.masks),
            reward,
            terminated,
            np.zeros(self.num_envs, dtype=bool),
            self._observe(final),
            self.t.astype(np.float64),
            self.t.copy(),
        )
