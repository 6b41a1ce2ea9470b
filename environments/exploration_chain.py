"""The exploration chain of Bootstrapped DQN: a small reward nearby, a large one far away."""

from __future__ import annotations

from enum import Enum
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

_CELL = 16
"""Side, in pixels, of one state's square in an ``rgb_array`` frame."""


class ChainObservation(str, Enum):
    """How `ExplorationChainEnv` shows the agent its state ``s`` in a chain of ``N`` states."""

    ONE_HOT = "one_hot"
    """``N`` values, 1 at ``s`` and 0 elsewhere."""
    THERMOMETER = "thermometer"
    """``N`` values, 1 at ``0..s`` and 0 after: the encoding Osband et al. found generalises."""
    STATE_INDEX = "state_index"
    """One value, ``s`` itself."""
    TIMED_ONE_HOT = "timed_one_hot"
    """``N * (max_steps + 1)`` values, 1 at the pair (steps taken ``t``, ``s``), index
    ``t * N + s``, and 0 elsewhere: every step of an episode is in states of its own, as in
    bsuite's deep sea, and the time limit becomes part of the task (it terminates)."""


class ExplorationChainEnv(gym.Env[np.ndarray, np.int64]):
    """A chain where only deep exploration finds the large reward (Osband et al., 2016).

    The chain environment of "Deep Exploration via Bootstrapped DQN" (Osband et al., NeurIPS
    2016), with the semantics of the original Intel Coach ``ExplorationChain``: states
    ``0 .. chain_length - 1``, the agent starts at ``start_state`` and moves left (action 0) or
    right (action 1), staying put at either end. A step that ends in state 0 pays
    ``left_state_reward`` (1/1000), one that ends in the last state pays ``right_state_reward``
    (1), any other step pays nothing. Dithering exploration keeps collecting the small reward
    next to the start; only an agent that commits to walking right the whole chain finds the
    large one.

    With ``action_mapping_seed`` set, which action moves right is drawn per state, once, from
    that seed (the "deep sea" of Osband et al., 2019, bsuite): action 1 moves right in some
    states and left in others. An agent cannot then walk the chain by repeating one action,
    nor by a network's bias towards one output; it has to find the way state by state.

    With the ``timed_one_hot`` observation the agent sees the step count as well as its state,
    one-hot over the pairs: the chain becomes the deep sea's grid (a row per step, a column per
    state). Either action then leads to a state never seen before, so a network whose guesses
    for unseen states are higher than what it has learned gains nothing by heading for them;
    on the plain one-hot chain, such optimism alone walks epsilon-greedy DQN to the far end on
    some initializations.

    Every step's info holds ``state`` and ``is_success``: 1.0 once the episode has reached
    the last state, 0.0 until then (Coach's success rate on the chain).

    Episodes end after ``max_steps`` steps, inside the environment, so the limit holds without
    a ``TimeLimit`` wrapper (the registered id adds none). The end is a truncation (rather than
    the original Coach's ``done``) when the step count is not in the observation, so a learner
    bootstraps through it; with ``timed_one_hot`` it is a termination, the time limit being
    part of the state.

    Args:
        chain_length: Number of states ``N``; more than 3.
        start_state: The state every episode starts in, in ``[0, chain_length)``.
        max_steps: Steps before the episode ends; ``None`` means ``chain_length + 7``,
            the limit of Coach's ExplorationChain presets (the paper uses ``N + 9``).
        observation_type: A `ChainObservation` or its string value (``"one_hot"``,
            ``"thermometer"``, ``"state_index"``, ``"timed_one_hot"``). Thermometer is the
            default, as in Coach.
        left_state_reward: Reward of a step that ends in state 0.
        right_state_reward: Reward of a step that ends in state ``chain_length - 1``.
        action_mapping_seed: ``None``: action 0 moves left and 1 right in every state (the
            paper's chain). An integer: per state, a fixed random choice of which action moves
            right, drawn from this seed (the same chain on every run that names it).
        render_mode: ``"ansi"`` (a line with ``@`` at the agent's state), ``"rgb_array"``
            (a row of squares, the agent's white, the rewarding ends gold) or ``None``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    LEFT = 0
    RIGHT = 1

    def __init__(
        self,
        chain_length: int = 16,
        start_state: int = 1,
        max_steps: int | None = None,
        observation_type: ChainObservation | str = ChainObservation.THERMOMETER,
        left_state_reward: float = 1 / 1000,
        right_state_reward: float = 1.0,
        action_mapping_seed: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if chain_length <= 3:
            raise ValueError(f"chain_length must be more than 3, got {chain_length}")
        if not 0 <= start_state < chain_length:
            raise ValueError(
                f"start_state must be in [0, {chain_length}) (the chain), got {start_state}"
            )
        if max_steps is not None and max_steps < 1:
            raise ValueError(
                f"max_steps must be at least 1 (or None for chain_length + 7), got {max_steps}"
            )
        try:
            self.observation_type = ChainObservation(observation_type)
        except ValueError:
            raise ValueError(
                f"observation_type must be one of {[o.value for o in ChainObservation]}, "
                f"got {observation_type!r}"
            ) from None
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        self.chain_length = chain_length
        self.start_state = start_state
        self.max_steps = chain_length + 7 if max_steps is None else max_steps
        self.left_state_reward = float(left_state_reward)
        self.right_state_reward = float(right_state_reward)
        self.render_mode = render_mode
        self.right_action = np.full(chain_length, self.RIGHT, dtype=np.int64)
        """Per state, the action that moves right there."""
        if action_mapping_seed is not None:
            mapping = np.random.default_rng(action_mapping_seed)
            self.right_action = mapping.integers(0, 2, size=chain_length)

        self._time_observed = self.observation_type is ChainObservation.TIMED_ONE_HOT
        """The step count is in the observation, so the time limit terminates episodes."""
        self.action_space = spaces.Discrete(2)
        if self.observation_type is ChainObservation.STATE_INDEX:
            self.observation_space = spaces.Box(0.0, chain_length - 1, shape=(1,), dtype=np.float32)
        elif self._time_observed:
            size = chain_length * (self.max_steps + 1)
            self.observation_space = spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)
        else:
            self.observation_space = spaces.Box(0.0, 1.0, shape=(chain_length,), dtype=np.float32)

        self.state = start_state
        self._steps = 0
        self._reached = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Put the agent back at ``start_state`` (the chain has no randomness)."""
        super().reset(seed=seed)
        self.state = self.start_state
        self._steps = 0
        self._reached = False
        return self._observation(), self._info()

    def step(
        self, action: int | np.integer
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Move left or right: action 0 left and 1 right, unless the actions are mapped per
        state (``action_mapping_seed``)."""
        if not self.action_space.contains(action):
            raise ValueError(f"action must be 0 or 1, got {action!r}")
        if action == self.right_action[self.state]:
            self.state = min(self.state + 1, self.chain_length - 1)
        else:
            self.state = max(self.state - 1, 0)
        self._steps += 1
        if self.state == 0:
            reward = self.left_state_reward
        elif self.state == self.chain_length - 1:
            reward = self.right_state_reward
        else:
            reward = 0.0
        self._reached = self._reached or self.state == self.chain_length - 1
        out_of_time = self._steps >= self.max_steps
        terminated = out_of_time and self._time_observed
        truncated = out_of_time and not self._time_observed
        return self._observation(), reward, terminated, truncated, self._info()

    def render(self) -> str | np.ndarray | None:
        """The chain as text (``ansi``) or an image (``rgb_array``)."""
        if self.render_mode is None:
            gym.logger.warn("ExplorationChainEnv.render() was called without a render_mode")
            return None
        if self.render_mode == "ansi":
            return "".join("@" if i == self.state else "." for i in range(self.chain_length))
        image = np.zeros((1, self.chain_length, 3), dtype=np.uint8)
        image[0, 0] = (90, 75, 0)  # dim gold: the small reward
        image[0, -1] = (255, 200, 0)  # bright gold: the large reward
        image[0, self.state] = 255
        image = image.repeat(_CELL, axis=0).repeat(_CELL, axis=1)
        image[:, ::_CELL] = 128  # grey borders between states
        return image

    def get_state(self) -> dict[str, Any]:
        """The episode in flight, for Coach's checkpoints."""
        return {"state": self.state, "steps": self._steps, "reached": self._reached}

    def set_state(self, state: dict[str, Any]) -> None:
        """Continue the episode saved by `get_state`."""
        self.state = int(state["state"])
        self._steps = int(state["steps"])
        self._reached = bool(state["reached"])

    def _info(self) -> dict[str, Any]:
        return {"state": self.state, "is_success": float(self._reached)}

    def _observation(self) -> np.ndarray:
        if self.observation_type is ChainObservation.STATE_INDEX:
            return np.array([self.state], dtype=np.float32)
        if self._time_observed:
            observation = np.zeros(self.observation_space.shape, dtype=np.float32)
            observation[self._steps * self.chain_length + self.state] = 1.0
            return observation
        observation = np.zeros(self.chain_length, dtype=np.float32)
        if self.observation_type is ChainObservation.ONE_HOT:
            observation[self.state] = 1.0
        else:
            observation[: self.state + 1] = 1.0
        return observation
