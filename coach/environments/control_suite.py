"""The DeepMind Control Suite (``pip install 'coach[dmc]'``) as a level set, through
shimmy's gymnasium environments.

``coach -p ControlSuite_DDPG -lvl cheetah_run`` picks a task of the ``control_suite`` level
set: ``<domain>_<task>`` (``cartpole_swingup``, ``walker_walk``, ``reacher_easy``, ...) ->
``dm_control/<domain>-<task>-v0``. Every task runs 1,000 steps (an episode ends by
truncation, never by termination) and pays a reward in [0, 1] per step, so returns run from
0 to 1,000.

The state observation is the task's dict of arrays (positions, velocities, ...) flattened
into one float32 vector (``observation``), in the dict's key order. With ``pixels=True`` it is
instead the frame a camera renders, ``(pixel_size, pixel_size, 3)`` uint8, the observation
of the pixel-based benchmarks (pair it with image filters, as the Atari presets do). Rendering
runs headless through EGL (``MUJOCO_GL=egl``, set here unless the caller set another).
``action_repeat`` repeats each action, summing the rewards, as the pixel benchmarks do
(PlaNet, DrQ: 2 to 8).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.environments.levels import resolve_level
from coach.environments.parameters import GymEnvironmentParameters
from coach.trust import NAMES_CODE


@dataclass(slots=True, kw_only=True)
class ControlSuiteEnvironmentParameters(GymEnvironmentParameters):
    """A Control Suite task: ``level`` is a name of the ``control_suite`` level set
    (``cartpole_swingup``; ``-lvl`` picks it) or a ``dm_control/<domain>-<task>-v0`` id."""

    level: str = field(default="cartpole_swingup", metadata=NAMES_CODE)
    """The task."""
    level_set: str | None = "control_suite"
    """The levels ``-lvl`` chooses from."""
    pixels: bool = False
    """Observe the camera's frames instead of the state."""
    pixel_size: int = 84
    """The frames' width and height, in pixels."""
    camera_id: int = 0
    """The camera that renders them."""
    action_repeat: int = 1
    """Environment steps per agent step, each with the same action."""

    def validate(self) -> None:
        GymEnvironmentParameters.validate(self)
        check.whole("pixel_size", self.pixel_size, 1)
        check.whole("camera_id", self.camera_id, 0)
        check.whole("action_repeat", self.action_repeat, 1)

    def make_env(self) -> gym.Env:
        os.environ.setdefault("MUJOCO_GL", "egl")  # before dm_control loads its renderer
        kwargs: dict[str, Any] = dict(self.kwargs)
        if self.pixels:
            kwargs["render_mode"] = "rgb_array"
            size = self.pixel_size
            kwargs["render_kwargs"] = {"width": size, "height": size, "camera_id": self.camera_id}
        elif self.render_mode is not None:
            kwargs["render_mode"] = self.render_mode
        level = resolve_level("control_suite", self.level)
        env = gym.make(level, max_episode_steps=self.max_episode_steps, **kwargs)
        if self.action_repeat > 1:
            env = ActionRepeat(env, self.action_repeat)
        if self.pixels:
            return gym.wrappers.AddRenderObservation(env, render_only=True)
        return FlatObservation(env)


class FlatObservation(gym.ObservationWrapper[np.ndarray, Any, Any]):
    """A dict of arrays (a 0-d array counts one number) as one float32 vector, key by key."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        given = env.observation_space
        assert isinstance(given, spaces.Dict)
        self.keys = list(given.spaces)
        size = sum(int(np.prod(space.shape or ())) for space in given.spaces.values())
        self.observation_space = spaces.Box(-np.inf, np.inf, (size,), np.float32)

    def observation(self, observation: dict[str, Any]) -> np.ndarray:
        parts = [np.asarray(observation[key], np.float32).ravel() for key in self.keys]
        return np.concatenate(parts)


class ActionRepeat(gym.Wrapper[Any, Any, Any, Any]):
    """Each action taken ``repeat`` times (fewer if the episode ends), the rewards summed."""

    def __init__(self, env: gym.Env, repeat: int) -> None:
        super().__init__(env)
        self.repeat = repeat

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        total = float(reward)
        for _ in range(self.repeat - 1):
            if terminated or truncated:
                break
            observation, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
        return observation, total, terminated, truncated, info


__all__ = ["ActionRepeat", "ControlSuiteEnvironmentParameters", "FlatObservation"]
