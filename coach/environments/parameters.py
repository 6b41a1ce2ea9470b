"""Which gymnasium environment a run uses: `GymEnvironmentParameters`.

The parameters know how to make one copy (`GymEnvironmentParameters.make_env`), what envpool
makes instead (`GymEnvironmentParameters.envpool_task`) and which adapter steps the copies
(`GymEnvironmentParameters.build`); the adapters themselves (`GymEnvironment`,
`AsyncGymEnvironment`, `EnvpoolEnvironment`) take only the copy maker or the task, so none
imports the parameters and the parameters import all three.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from coach import validation as check
from coach.environments.async_environment import AsyncGymEnvironment
from coach.environments.environment import Environment
from coach.environments.envpool_environment import (
    EnvpoolEnvironment,
    EnvpoolTask,
    envpool_task_id,
    task_config,
)
from coach.environments.gym_environment import GymEnvironment
from coach.environments.levels import LEVEL_SETS, resolve_level
from coach.environments.measurements import ReturnMeasurement
from coach.errors import CoachError
from coach.trust import NAMES_CODE

VECTORIZATIONS = ("sync", "async", "envpool")
"""How the copies of an environment step (`GymEnvironmentParameters.vectorization`)."""


@dataclass(slots=True, kw_only=True)
class GymEnvironmentParameters:
    """Which gymnasium environment to run, and how many copies of it."""

    level: str = field(metadata=NAMES_CODE)
    """A registered gymnasium id (``CartPole-v1``) or an entry point ``package.module:Class``."""
    num_envs: int = 1
    """How many copies step together (a batch of environments)."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments for the environment's constructor."""
    max_episode_steps: int | None = None
    """Override of the time limit (truncation) of an episode; ``None`` keeps the default."""
    observation_key: str = "observation"
    """The name a non-dict observation gets in the observation dictionary."""
    render_mode: str | None = None
    """Gymnasium render mode (``human``, ``rgb_array``) or ``None``."""
    level_set: str | None = None
    """The level set ``-lvl`` picks ``level`` from (``atari``, ``mujoco``, ``box2d``), if any."""
    vectorization: str = "sync"
    """``sync``: copies step in this process; ``async``: a subprocess each, for CPU-heavy
    steps; ``envpool``: envpool's C++ threads, for Atari games and MuJoCo tasks (``pip
    install "coach[envpool]"``; see `coach.environments.envpool_environment` for where its
    episodes differ)."""
    measure_return: bool = False
    """Make the episode's return so far a measurement (the observation key
    ``measurements``, after any the environment gives): what Direct Future Prediction
    predicts where the environment measures nothing else (`coach.environments.measurements`)."""

    def validate(self) -> None:
        check.name("level", self.level)
        check.whole("num_envs", self.num_envs, 1)
        if self.max_episode_steps is not None:
            check.whole("max_episode_steps", self.max_episode_steps, 1)
        check.name("observation_key", self.observation_key)
        check.one_of("vectorization", self.vectorization, VECTORIZATIONS)
        if self.level_set is not None:
            check.one_of("level_set", self.level_set, LEVEL_SETS)

    def build(self) -> Environment:
        """The environment: `GymEnvironment`, or `AsyncGymEnvironment` for
        ``vectorization="async"``, or `EnvpoolEnvironment` for ``vectorization="envpool"``.

        Raises:
            CoachError: for another ``vectorization``, or what `envpool_task` raises.
        """
        make = self.make_env if not self.measure_return else self.make_measured_env
        if self.vectorization == "sync":
            return GymEnvironment(make, self.num_envs, self.observation_key)
        if self.vectorization == "async":
            return AsyncGymEnvironment(make, self.num_envs, self.observation_key, name=self.level)
        if self.vectorization == "envpool":
            if self.measure_return:
                raise CoachError('measure_return needs vectorization="sync" or "async"')
            return EnvpoolEnvironment(
                self.envpool_task(), self.num_envs, self.observation_key, name=self.level
            )
        raise CoachError(
            f'vectorization must be "sync", "async" or "envpool", got {self.vectorization!r}'
        )

    def envpool_task(self) -> EnvpoolTask:
        """What envpool makes for ``vectorization="envpool"``: gymnasium's MuJoCo task of this
        level, with ``kwargs`` and ``max_episode_steps`` as envpool's options.

        Raises:
            CoachError: for a level that is not a gymnasium MuJoCo task (Atari games take
                `AtariEnvironmentParameters`), one envpool lacks, options it does not know, a
                render mode (envpool cannot render MuJoCo here), or no envpool installed.
        """
        level = self.level
        if self.level_set is not None:
            level = resolve_level(self.level_set, level)
        spec = gym.registry.get(level)
        entry = spec.entry_point if spec is not None else None
        if not isinstance(entry, str) or not entry.startswith("gymnasium.envs.mujoco"):
            raise CoachError(
                f'vectorization="envpool" runs Atari games (AtariEnvironmentParameters) and '
                f"gymnasium's MuJoCo tasks; {level!r} is neither"
            )
        if self.render_mode is not None:
            raise CoachError(
                f"envpool cannot render MuJoCo tasks here (it needs an OpenGL context): "
                f'render_mode={self.render_mode!r} needs vectorization="sync"'
            )
        task_id = envpool_task_id(level, "mujoco")
        config = dict(self.kwargs)
        if self.max_episode_steps is not None:
            config["max_episode_steps"] = self.max_episode_steps
        return EnvpoolTask(task_id, task_config(task_id, config, "kwargs"))

    def select_level(self, name: str) -> None:
        """Pick ``name`` from the level set (``-lvl``).

        Raises:
            CoachError: when there is no level set or no such level in it.
        """
        if self.level_set is None:
            raise CoachError(
                f"this preset's environment ({self.level}) has no level set to choose from; "
                f"-cp environment.level=ID changes its environment"
            )
        self.level = resolve_level(self.level_set, name)

    def make_measured_env(self) -> gym.Env:
        """`make_env`'s copy with its return so far as a measurement."""
        return ReturnMeasurement(self.make_env(), self.observation_key)

    def make_env(self) -> gym.Env:
        """Make one copy: by registered id, by a level of the level set, or by importing
        ``module:Class``."""
        kwargs = dict(self.kwargs)
        if self.render_mode is not None:
            kwargs["render_mode"] = self.render_mode
        level = self.level
        if self.level_set is not None:
            level = resolve_level(self.level_set, level)
        elif level.startswith("coach/"):
            import coach_environments  # noqa: F401 - registers the environments Coach ships
        if ":" in level and level not in gym.registry:
            module_name, _, class_name = level.partition(":")
            try:
                env_class = getattr(importlib.import_module(module_name), class_name)
            except (ImportError, AttributeError) as error:
                raise CoachError(f"cannot load environment {level!r}: {error}") from error
            try:
                env: gym.Env = env_class(**kwargs)
            except (TypeError, ValueError) as error:  # wrong or bad keyword arguments
                raise CoachError(f"cannot make environment {level!r}: {error}") from error
            if self.max_episode_steps is not None:
                env = gym.wrappers.TimeLimit(env, self.max_episode_steps)
            return env
        try:
            return gym.make(level, max_episode_steps=self.max_episode_steps, **kwargs)
        except (gym.error.Error, TypeError, ValueError) as error:
            # An unknown id, or keyword arguments the environment refuses.
            raise CoachError(f"cannot make gymnasium environment {level!r}: {error}") from error
