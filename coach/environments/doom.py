"""ViZDoom's scenarios (``pip install 'coach[doom]'``), headless, as a level set.

``coach -p Doom_Basic_DQN -lvl health_gathering`` picks a scenario of the ``doom`` level set
(`coach.environments.levels.DOOM_SCENARIOS`). vizdoom's gymnasium environments give a dict
of the RGB screen and the scenario's game variables; here the screen is the observation
(``observation``, (240, 320, 3) uint8) and the game variables are the ``measurements`` (health,
ammo, kills, ... as the scenario's configuration lists them, float32), the key Direct Future
Prediction predicts. The screens go through Coach's filters like Atari frames
(`coach.filters.atari.atari_input_filter` with ``obs_type="rgb"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from coach import validation as check
from coach.environments.levels import resolve_level
from coach.environments.measurements import MEASUREMENTS
from coach.environments.parameters import GymEnvironmentParameters
from coach.trust import NAMES_CODE


@dataclass(slots=True, kw_only=True)
class DoomEnvironmentParameters(GymEnvironmentParameters):
    """A ViZDoom scenario: ``level`` is a name of the ``doom`` level set (``basic``,
    ``health_gathering``, ...; ``-lvl`` picks it) or a ``Vizdoom<Name>-v1`` id."""

    level: str = field(default="basic", metadata=NAMES_CODE)
    """The scenario."""
    level_set: str | None = "doom"
    """The levels ``-lvl`` chooses from."""
    frame_skip: int = 4
    """Game tics per agent step (the action repeats)."""

    def validate(self) -> None:
        GymEnvironmentParameters.validate(self)
        check.whole("frame_skip", self.frame_skip, 1)

    def make_env(self) -> gym.Env:
        env = gym.make(
            resolve_level("doom", self.level),
            frame_skip=self.frame_skip,
            render_mode=self.render_mode,
            max_episode_steps=self.max_episode_steps,
            **self.kwargs,
        )
        return DoomObservations(env, self.observation_key)


class DoomObservations(gym.ObservationWrapper):
    """vizdoom's ``{"screen", "gamevariables"}`` as ``{key, "measurements"}``; a scenario
    without game variables has no ``measurements``."""

    def __init__(self, env: gym.Env, key: str = "observation") -> None:
        super().__init__(env)
        self.key = key
        given = env.observation_space
        assert isinstance(given, spaces.Dict), "vizdoom's observations are dictionaries"
        renamed = {key: given["screen"]}
        if "gamevariables" in given.spaces:
            renamed[MEASUREMENTS] = given["gamevariables"]
        self.observation_space = spaces.Dict(renamed)

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        renamed = {self.key: observation["screen"]}
        if "gamevariables" in observation:
            renamed[MEASUREMENTS] = observation["gamevariables"]
        return renamed
