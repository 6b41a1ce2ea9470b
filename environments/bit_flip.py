"""The bit-flipping task of Hindsight Experience Replay, as a goal-based gymnasium environment."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

_CELL = 16
"""Side, in pixels, of one bit's square in an ``rgb_array`` frame."""


class BitFlipEnv(gym.Env[dict[str, Any], np.int64]):
    """Flip bits one at a time until they equal a goal (Andrychowicz et al., 2017).

    The bit-flipping environment of "Hindsight Experience Replay" (Andrychowicz et al., NeurIPS
    2017): the state is a vector of ``n_bits`` bits, each action flips one of them, and the
    reward is ``goal_not_reached_penalty`` on every step that does not end with the bits equal
    to the goal. With a reward this sparse a random policy almost never sees success for more
    than about 15 bits, which is what HER's relabelled goals fix.

    Observations follow gymnasium-robotics' goal-env convention so that HER can relabel them:
    a dict with ``observation`` (the bits), ``achieved_goal`` (the bits again: achieving a goal
    here means having those bits) and ``desired_goal``, each a ``MultiBinary(n_bits)`` int8
    array. `compute_reward` recomputes the reward for any (achieved, desired) pairs, and every
    step's info carries ``is_success`` (1.0 or 0.0).

    An episode terminates when the bits equal the goal and is truncated after ``max_steps``
    steps. The truncation happens inside the environment, so it holds without a ``TimeLimit``
    wrapper (the registered id adds none); like ``TimeLimit``, the ``max_steps``-th step is
    truncated even if it also terminates.

    Args:
        n_bits: Number of bits, also the number of actions.
        max_steps: Steps before the episode is truncated; ``None`` means ``n_bits``, which is
            enough to reach any goal (each differing bit needs one flip).
        render_mode: ``"ansi"`` (the bits and the goal as text), ``"rgb_array"`` (a row of
            black/white squares for the bits over a row of green/red squares for whether each
            matches the goal) or ``None``.
        goal_reached_reward: Reward of a step that ends with the bits equal to the goal.
        goal_not_reached_penalty: Reward of any other step.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        n_bits: int = 20,
        max_steps: int | None = None,
        render_mode: str | None = None,
        *,
        goal_reached_reward: float = 0.0,
        goal_not_reached_penalty: float = -1.0,
    ) -> None:
        if n_bits < 1:
            raise ValueError(f"n_bits must be at least 1, got {n_bits}")
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be at least 1 (or None for n_bits), got {max_steps}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        self.n_bits = n_bits
        self.max_steps = n_bits if max_steps is None else max_steps
        self.render_mode = render_mode
        self.goal_reached_reward = float(goal_reached_reward)
        self.goal_not_reached_penalty = float(goal_not_reached_penalty)

        bits = spaces.MultiBinary(n_bits)
        self.observation_space = spaces.Dict(
            {"observation": bits, "achieved_goal": bits, "desired_goal": bits}
        )
        self.action_space = spaces.Discrete(n_bits)

        self._bits: np.ndarray | None = None
        self._goal = np.zeros(n_bits, dtype=np.int8)
        self._steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Draw new bits and a different goal from ``self.np_random``."""
        super().reset(seed=seed)
        n = self.n_bits
        bits = self.np_random.integers(0, 2, size=n, dtype=np.int8)
        goal = self.np_random.integers(0, 2, size=n, dtype=np.int8)
        # A goal equal to the start would be an episode with nothing to learn; redraw it.
        # (Expected redraws are 2**-n_bits per reset, so this costs nothing but for n_bits=1.)
        while np.array_equal(goal, bits):
            goal = self.np_random.integers(0, 2, size=n, dtype=np.int8)
        self._bits, self._goal, self._steps = bits, goal, 0
        return self._observation(), {}

    def step(
        self, action: int | np.integer
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Flip bit ``action``."""
        if self._bits is None:
            raise RuntimeError("BitFlipEnv.step() was called before reset()")
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an int in [0, {self.n_bits}), got {action!r}")
        self._bits[int(action)] ^= 1
        self._steps += 1
        success = bool(np.array_equal(self._bits, self._goal))
        reward = self.goal_reached_reward if success else self.goal_not_reached_penalty
        truncated = self._steps >= self.max_steps
        return self._observation(), reward, success, truncated, {"is_success": float(success)}

    def compute_reward(
        self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any = None
    ) -> np.ndarray:
        """The reward for reaching ``achieved_goal`` when ``desired_goal`` was asked for.

        Vectorised as HER needs it: goals of shape ``(..., n_bits)`` give rewards of shape
        ``(...)``, so a batch ``(B, n_bits)`` gives ``(B,)``.

        Args:
            achieved_goal: Bits reached, shape ``(..., n_bits)``.
            desired_goal: Goal bits, the same shape.
            info: Ignored; part of the goal-env signature.

        Returns:
            ``goal_reached_reward`` where all bits match, else ``goal_not_reached_penalty``
            (float64).
        """
        reached = np.all(np.asarray(achieved_goal) == np.asarray(desired_goal), axis=-1)
        return np.where(reached, self.goal_reached_reward, self.goal_not_reached_penalty)

    def render(self) -> str | np.ndarray | None:
        """The current bits as text (``ansi``) or an image (``rgb_array``)."""
        if self.render_mode is None:
            gym.logger.warn("BitFlipEnv.render() was called without a render_mode")
            return None
        bits = self._bits if self._bits is not None else np.zeros(self.n_bits, dtype=np.int8)
        if self.render_mode == "ansi":
            return f"{''.join(map(str, bits))} (goal {''.join(map(str, self._goal))})"
        image = np.zeros((2, self.n_bits, 3), dtype=np.uint8)
        image[0] = np.where(bits == 1, 255, 0)[:, None]
        match = bits == self._goal
        image[1, match] = (0, 200, 0)
        image[1, ~match] = (220, 0, 0)
        image = image.repeat(_CELL, axis=0).repeat(_CELL, axis=1)
        # Grey cell borders, or neighbouring equal bits would merge into one wide square.
        image[::_CELL] = 128
        image[:, ::_CELL] = 128
        return image

    def get_state(self) -> dict[str, Any]:
        """The episode in flight, for Coach's checkpoints (the generator is saved apart)."""
        return {
            "bits": None if self._bits is None else self._bits.copy(),
            "goal": self._goal.copy(),
            "steps": self._steps,
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Continue the episode saved by `get_state`."""
        bits = state["bits"]
        self._bits = None if bits is None else np.array(bits, dtype=np.int8)
        self._goal = np.array(state["goal"], dtype=np.int8)
        self._steps = int(state["steps"])

    def _observation(self) -> dict[str, np.ndarray]:
        assert self._bits is not None
        # Fresh arrays every call: the caller keeps them, and we flip our bits in place.
        return {
            "observation": self._bits.copy(),
            "achieved_goal": self._bits.copy(),
            "desired_goal": self._goal.copy(),
        }
