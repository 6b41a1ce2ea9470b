"""A goal-based pendulum swing-up: reach a target angle and angular velocity.

The task of Coach's HAC preset (Levy et al., 2019), moved from the original Coach's MuJoCo
model onto gymnasium's classic Pendulum dynamics so that it needs no MuJoCo.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

# The physics of gymnasium's Pendulum-v1 (a uniform rod pivoting at one end, theta = 0 upright,
# counter-clockwise positive), so results compare with that well-known environment.
MAX_SPEED = 8.0
"""Angular velocity is clipped to ``[-MAX_SPEED, MAX_SPEED]`` rad/s."""
MAX_TORQUE = 2.0
"""Torque is clipped to ``[-MAX_TORQUE, MAX_TORQUE]``."""
DT = 0.05
"""Seconds per simulation frame."""
GRAVITY = 10.0
MASS = 1.0
LENGTH = 1.0

_FRAME = 256
"""Side, in pixels, of an ``rgb_array`` frame."""
_PIXELS_PER_LENGTH = _FRAME / (2 * 2.2)
"""The framing of gymnasium's Pendulum renderer: the frame spans 2.2 rod lengths each way."""
_ROD_COLOUR = (204, 77, 77)
_GOAL_COLOUR = (230, 180, 40)


class PendulumWithGoalsEnv(gym.Env[dict[str, Any], np.ndarray]):
    """Swing a pendulum to a goal angle and angular velocity (Levy et al., 2019).

    The goal-based pendulum of Coach's ``Pendulum_HAC`` preset, the environment Levy et al.
    use in "Learning Multi-Level Hierarchies with Hindsight" (ICLR 2019). The original Coach
    simulated it in MuJoCo; this one integrates gymnasium's Pendulum-v1 dynamics, frame for
    frame (``DT`` = 0.05 s, torque in ``[-2, 2]``, angular velocity clipped to ``[-8, 8]``).
    As in Coach, an episode starts at an angle drawn from ``[pi/4, 7pi/4]`` (away from
    upright) with an angular velocity from ``[-0.05, 0.05]``, and the goal is standing still
    upright unless ``random_goals_instead_of_standing_goal`` draws one per episode (an angle
    from ``[-pi/8, pi/8]`` and an angular velocity from ``[-0.2, 0.2]``).

    Observations follow gymnasium-robotics' goal-env convention: a dict with ``observation``
    ``(cos theta, sin theta, theta_dot)`` as in Pendulum-v1, ``achieved_goal`` (the same three
    values, as in Coach) and ``desired_goal``, each a float32 ``Box``. A goal is reached when
    every ``|achieved - desired|`` is at most its entry of ``goal_reaching_thresholds``.
    `compute_reward` recomputes the reward for any (achieved, desired) pairs and every step's
    info carries ``is_success`` (1.0 or 0.0).

    The episode terminates when the goal is reached (if ``terminate_on_goal_reaching``) and is
    truncated after ``time_limit`` steps, inside the environment, so the limit holds without a
    ``TimeLimit`` wrapper (the registered id adds none).

    Args:
        goal_reaching_thresholds: Per-dimension tolerance ``(cos, sin, theta_dot)`` within
            which the goal counts as reached.
        goal_not_reached_penalty: Reward of a step that ends away from the goal.
        goal_reached_reward: Reward of a step that ends at the goal.
        terminate_on_goal_reaching: End the episode (terminated) when the goal is reached.
        time_limit: Steps before the episode is truncated.
        frameskip: Frames of ``DT`` seconds simulated per step, all with the step's torque.
        random_goals_instead_of_standing_goal: Draw a goal every episode instead of always
            standing still upright.
        render_mode: ``"rgb_array"`` (the pendulum in red, the goal's rod in gold) or ``None``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": round(1 / DT)}

    def __init__(
        self,
        goal_reaching_thresholds: Sequence[float] | np.ndarray = (0.075, 0.075, 0.75),
        goal_not_reached_penalty: float = -1.0,
        goal_reached_reward: float = 0.0,
        terminate_on_goal_reaching: bool = True,
        time_limit: int = 1000,
        frameskip: int = 1,
        random_goals_instead_of_standing_goal: bool = False,
        render_mode: str | None = None,
    ) -> None:
        thresholds = np.array(goal_reaching_thresholds, dtype=np.float32)
        if thresholds.shape != (3,) or (thresholds < 0).any():
            raise ValueError(
                "goal_reaching_thresholds must be 3 non-negative numbers (cos, sin, theta_dot), "
                f"got {goal_reaching_thresholds!r}"
            )
        if time_limit < 1:
            raise ValueError(f"time_limit must be at least 1, got {time_limit}")
        if frameskip < 1:
            raise ValueError(f"frameskip must be at least 1, got {frameskip}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        self.goal_reaching_thresholds = thresholds
        self.goal_not_reached_penalty = float(goal_not_reached_penalty)
        self.goal_reached_reward = float(goal_reached_reward)
        self.terminate_on_goal_reaching = terminate_on_goal_reaching
        self.time_limit = time_limit
        self.frameskip = frameskip
        self.random_goals_instead_of_standing_goal = random_goals_instead_of_standing_goal
        self.render_mode = render_mode

        high = np.array([1.0, 1.0, MAX_SPEED], dtype=np.float32)
        box = spaces.Box(-high, high, dtype=np.float32)
        self.observation_space = spaces.Dict(
            {"observation": box, "achieved_goal": box, "desired_goal": box}
        )
        self.action_space = spaces.Box(-MAX_TORQUE, MAX_TORQUE, shape=(1,), dtype=np.float32)

        self.theta = np.pi
        self.theta_dot = 0.0
        self.goal = np.array([1.0, 0.0, 0.0], dtype=np.float32)
        self._steps = 0
        self._pixels: tuple[np.ndarray, np.ndarray] | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start away from upright; draw a goal if goals are random."""
        super().reset(seed=seed)
        self.theta = float(self.np_random.uniform(np.pi / 4, 7 * np.pi / 4))
        self.theta_dot = float(self.np_random.uniform(-0.05, 0.05))
        if self.random_goals_instead_of_standing_goal:
            goal_angle = float(self.np_random.uniform(-np.pi / 8, np.pi / 8))
            goal_velocity = float(self.np_random.uniform(-0.2, 0.2))
        else:
            goal_angle, goal_velocity = 0.0, 0.0
        self.goal = np.array(
            [np.cos(goal_angle), np.sin(goal_angle), goal_velocity], dtype=np.float32
        )
        self._steps = 0
        return self._observation(), {}

    def step(
        self, action: np.ndarray
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Apply torque ``action[0]`` for ``frameskip`` frames."""
        torque = float(
            np.clip(np.asarray(action, dtype=np.float64).reshape(1)[0], -MAX_TORQUE, MAX_TORQUE)
        )
        theta, theta_dot = self.theta, self.theta_dot
        for _ in range(self.frameskip):
            # Pendulum-v1's semi-implicit Euler step: the new velocity moves the angle.
            acceleration = (
                3 * GRAVITY / (2 * LENGTH) * np.sin(theta) + 3.0 / (MASS * LENGTH**2) * torque
            )
            theta_dot = float(np.clip(theta_dot + acceleration * DT, -MAX_SPEED, MAX_SPEED))
            theta = float(theta + theta_dot * DT)
        self.theta, self.theta_dot = theta, theta_dot
        self._steps += 1

        observation = self._observation()
        # Judged on the float32 observation itself, so that compute_reward on the returned
        # goals gives exactly this step's reward.
        success = bool(self._reached(observation["achieved_goal"], observation["desired_goal"]))
        reward = self.goal_reached_reward if success else self.goal_not_reached_penalty
        terminated = success and self.terminate_on_goal_reaching
        truncated = self._steps >= self.time_limit
        return observation, reward, terminated, truncated, {"is_success": float(success)}

    def compute_reward(
        self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any = None
    ) -> np.ndarray:
        """The reward for reaching ``achieved_goal`` when ``desired_goal`` was asked for.

        Vectorised as HER needs it: goals of shape ``(..., 3)`` give rewards of shape
        ``(...)``, so a batch ``(B, 3)`` gives ``(B,)``.

        Args:
            achieved_goal: ``(cos theta, sin theta, theta_dot)`` reached, shape ``(..., 3)``.
            desired_goal: The goal, the same shape.
            info: Ignored; part of the goal-env signature.

        Returns:
            ``goal_reached_reward`` where every dimension is within its threshold, else
            ``goal_not_reached_penalty`` (float64).
        """
        reached = self._reached(achieved_goal, desired_goal)
        return np.where(reached, self.goal_reached_reward, self.goal_not_reached_penalty)

    def render(self) -> np.ndarray | None:
        """An image of the pendulum and, behind it, the goal (``rgb_array``)."""
        if self.render_mode is None:
            gym.logger.warn("PendulumWithGoalsEnv.render() was called without a render_mode")
            return None
        if self._pixels is None:
            # Pixel centres in rod lengths from the pivot, y up; computed once per env.
            rows, cols = np.mgrid[0:_FRAME, 0:_FRAME] + 0.5
            self._pixels = (
                (cols - _FRAME / 2) / _PIXELS_PER_LENGTH,
                (_FRAME / 2 - rows) / _PIXELS_PER_LENGTH,
            )
        x, y = self._pixels
        image = np.full((_FRAME, _FRAME, 3), 255, dtype=np.uint8)
        goal_angle = float(np.arctan2(self.goal[1], self.goal[0]))
        # The goal first, thin and gold, so that the pendulum covers it where they overlap.
        for angle, width, colour in (
            (goal_angle, 0.08, _GOAL_COLOUR),
            (self.theta, 0.2, _ROD_COLOUR),
        ):
            # Counter-clockwise from upright: the tip of the rod is at (-sin, cos).
            tip_x, tip_y = -LENGTH * np.sin(angle), LENGTH * np.cos(angle)
            along = np.clip((x * tip_x + y * tip_y) / LENGTH**2, 0.0, 1.0)
            image[np.hypot(x - along * tip_x, y - along * tip_y) <= width / 2] = colour
            image[np.hypot(x - tip_x, y - tip_y) <= 0.1] = colour
        image[np.hypot(x, y) <= 0.05] = 0  # the axle
        return image

    def get_state(self) -> dict[str, Any]:
        """The episode in flight, for Coach's checkpoints (the generator is saved apart)."""
        return {
            "theta": self.theta,
            "theta_dot": self.theta_dot,
            "goal": self.goal.copy(),
            "steps": self._steps,
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Continue the episode saved by `get_state` (tests use it to pose the pendulum)."""
        self.theta = float(state["theta"])
        self.theta_dot = float(state["theta_dot"])
        self.goal = np.array(state["goal"], dtype=np.float32)
        self._steps = int(state["steps"])

    def _reached(self, achieved_goal: np.ndarray, desired_goal: np.ndarray) -> np.ndarray:
        distance = np.abs(np.asarray(achieved_goal) - np.asarray(desired_goal))
        return np.all(distance <= self.goal_reaching_thresholds, axis=-1)

    def _observation(self) -> dict[str, np.ndarray]:
        observation = np.array(
            [np.cos(self.theta), np.sin(self.theta), self.theta_dot], dtype=np.float32
        )
        return {
            "observation": observation,
            "achieved_goal": observation.copy(),
            "desired_goal": self.goal.copy(),
        }
