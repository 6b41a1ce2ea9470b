"""The gymnasium adapter: any registered id or ``module:Class``, ``num_envs`` copies.

The copies step in one loop with gymnasium's SAME_STEP autoreset semantics: where an episode
ends the copy is reset at once, the response's ``observation`` is the new episode's first
observation and its ``next_observation`` the finished episode's last one. The loop is our own
rather than gymnasium's ``SyncVectorEnv`` because that one costs about 13 microseconds per
step over the bare environment (its info merging and generic concatenation), which by itself
would hold a one-env heatup to a third of the bare environment's speed. With
``vectorization="async"`` the copies step in subprocesses instead, in parallel
(`coach.environments.async_environment`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.types import EnvResponse
from coach.environments.async_environment import AsyncGymEnvironment
from coach.environments.env_state import get_env_state, set_env_state
from coach.environments.environment import Environment
from coach.environments.levels import LEVEL_SETS, resolve_level
from coach.errors import CoachError

if TYPE_CHECKING:
    from coach.batch.recording import EpisodeRecorder


@dataclass(slots=True, kw_only=True)
class GymEnvironmentParameters:
    """Which gymnasium environment to run, and how many copies of it."""

    level: str
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
    """``sync``: copies step in this process; ``async``: a subprocess each, for CPU-heavy steps."""

    def validate(self) -> None:
        check.name("level", self.level)
        check.whole("num_envs", self.num_envs, 1)
        if self.max_episode_steps is not None:
            check.whole("max_episode_steps", self.max_episode_steps, 1)
        check.name("observation_key", self.observation_key)
        check.one_of("vectorization", self.vectorization, ("sync", "async"))
        if self.level_set is not None:
            check.one_of("level_set", self.level_set, LEVEL_SETS)

    def build(self) -> Environment:
        """The environment: `GymEnvironment` or, for ``vectorization="async"``,
        `AsyncGymEnvironment`.

        Raises:
            CoachError: for a ``vectorization`` other than ``"sync"`` and ``"async"``.
        """
        if self.vectorization == "sync":
            return GymEnvironment(self)
        if self.vectorization == "async":
            return AsyncGymEnvironment(self)
        raise CoachError(f'vectorization must be "sync" or "async", got {self.vectorization!r}')

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
            import environments  # noqa: F401 - registers the environments Coach ships
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


class GymEnvironment(Environment):
    """``num_envs`` copies of a gymnasium environment behind Coach's batched interface."""

    def __init__(self, params: GymEnvironmentParameters) -> None:
        if params.num_envs < 1:
            raise CoachError(f"num_envs must be >= 1, got {params.num_envs}")
        self.params = params
        self.num_envs = params.num_envs
        self.envs = [params.make_env() for _ in range(self.num_envs)]
        single_space = self.envs[0].observation_space
        self._dict_observations = isinstance(single_space, spaces.Dict)
        self.observation_space: spaces.Dict
        if isinstance(single_space, spaces.Dict):
            self.observation_space = single_space
        else:
            self.observation_space = spaces.Dict({params.observation_key: single_space})
        self._keys = list(self.observation_space.spaces)
        self.action_space = self.envs[0].action_space
        self.metadata = self.envs[0].metadata
        self._buffer_specs = [
            (key, (self.num_envs, *(space.shape or ())), space.dtype)
            for key, space in self.observation_space.spaces.items()
        ]
        self._returns = [0.0] * self.num_envs
        self._lengths = [0] * self.num_envs
        self.total_steps = 0
        self.total_episodes = 0
        self.recorder: EpisodeRecorder | None = None
        """Records the episodes into a dataset, when set (``--record-dataset``)."""

    @property
    def dict_observations(self) -> bool:
        """The gymnasium environment's own observations are dictionaries."""
        return self._dict_observations

    def _empty_observation(self) -> dict[str, np.ndarray]:
        return {key: np.empty(shape, dtype) for key, shape, dtype in self._buffer_specs}

    def _write(self, buffers: dict[str, np.ndarray], i: int, observation: Any) -> None:
        if self._dict_observations:
            for key in self._keys:
                buffers[key][i] = observation[key]
        else:
            buffers[self._keys[0]][i] = observation

    def reset(self, seed: int | None = None) -> EnvResponse:
        observation = self._empty_observation()
        infos = []
        for i, env in enumerate(self.envs):
            obs, info = env.reset(seed=None if seed is None else seed + i)
            self._write(observation, i, obs)
            infos.append(info)
        if seed is not None:
            for i, env in enumerate(self.envs):
                env.action_space.seed(seed + i)
        self._returns = [0.0] * self.num_envs
        self._lengths = [0] * self.num_envs
        response = EnvResponse.first(observation, self.num_envs, infos)
        if self.recorder is not None:
            self.recorder.reset(response)
        return response

    def step(self, action: Any) -> EnvResponse:
        # The hot path of every run: plain lists per env, one array per field at the end.
        observation = self._empty_observation()
        single = None if self._dict_observations else observation[self._keys[0]]
        rewards, terminated, truncated, infos = [], [], [], []
        returns, lengths = self._returns, self._lengths
        final: list[tuple[int, Any]] = []
        for i, env in enumerate(self.envs):
            obs, r, term, trunc, info = env.step(action[i])
            returns[i] += float(r)
            lengths[i] += 1
            rewards.append(r)
            terminated.append(term)
            truncated.append(trunc)
            infos.append(info)
            if term or trunc:
                final.append((i, obs))
                obs, _ = env.reset()
            if single is not None:
                single[i] = obs
            else:
                self._write(observation, i, obs)
        response = EnvResponse(
            observation=observation,
            reward=np.array(rewards, dtype=np.float32),
            terminated=np.array(terminated, dtype=bool),
            truncated=np.array(truncated, dtype=bool),
            next_observation=observation,
            episode_return=np.array(returns),
            episode_length=np.array(lengths, dtype=np.int64),
            infos=infos,
        )
        self.total_steps += self.num_envs
        if final:
            next_observation = {key: value.copy() for key, value in observation.items()}
            for i, obs in final:
                self._write(next_observation, i, obs)
                returns[i] = 0.0
                lengths[i] = 0
            response.next_observation = next_observation
            self.total_episodes += len(final)
        if self.recorder is not None:
            self.recorder.step(action, response)
        return response

    def state_dict(self) -> dict[str, Any] | None:
        states = [get_env_state(env) for env in self.envs]
        if any(s is None for s in states):
            return None
        return {
            "envs": states,
            "returns": list(self._returns),
            "lengths": list(self._lengths),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if len(state["envs"]) != self.num_envs:
            raise CoachError(
                f"the checkpoint holds {len(state['envs'])} environments, this run has "
                f"{self.num_envs}"
            )
        for env, env_state in zip(self.envs, state["envs"], strict=True):
            env.reset()  # wrappers insist on a reset before the first step
            set_env_state(env, env_state)
        self._returns = [float(r) for r in state["returns"]]
        self._lengths = [int(n) for n in state["lengths"]]

    def render(self) -> Any:
        return self.envs[0].render()

    def close(self) -> None:
        for env in self.envs:
            env.close()
