"""The gymnasium adapter: ``num_envs`` copies of a gymnasium environment, in this process.

The copies step in one loop with gymnasium's SAME_STEP autoreset semantics: where an episode
ends the copy is reset at once, the response's ``observation`` is the new episode's first
observation and its ``next_observation`` the finished episode's last one. The loop is our own
rather than gymnasium's ``SyncVectorEnv`` because that one costs about 13 microseconds per
step over the bare environment (its info merging and generic concatenation), which by itself
would hold a one-env heatup to a third of the bare environment's speed. With
``vectorization="async"`` the copies step in subprocesses instead, in parallel
(`coach.environments.async_environment`); `coach.environments.parameters` picks one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coach.core.types import EnvResponse
from coach.environments.env_state import get_env_state, set_env_state
from coach.environments.environment import Environment
from coach.errors import CoachError


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


class GymEnvironment(Environment):
    """``num_envs`` copies of a gymnasium environment behind Coach's batched interface.

    Args:
        make_env: Makes one copy (`GymEnvironmentParameters.make_env`).
        num_envs: How many copies step together.
        observation_key: The name a non-dict observation gets in the observation dictionary.

    Raises:
        CoachError: when ``num_envs`` is below 1.
    """

    fresh_observations = True  # new buffers every step, never written after it

    def __init__(
        self,
        make_env: Callable[[], gym.Env],
        num_envs: int = 1,
        observation_key: str = "observation",
    ) -> None:
        if num_envs < 1:
            raise CoachError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = num_envs
        self.envs = [make_env() for _ in range(self.num_envs)]
        single_space = self.envs[0].observation_space
        self._dict_observations = isinstance(single_space, spaces.Dict)
        self.observation_space: spaces.Dict
        if isinstance(single_space, spaces.Dict):
            self.observation_space = single_space
        else:
            self.observation_space = spaces.Dict({observation_key: single_space})
        self._keys = list(self.observation_space.spaces)
        self.action_space = self.envs[0].action_space
        self.metadata = self.envs[0].metadata
        self._buffer_specs = [
            (key, (self.num_envs, *(space.shape or ())), space.dtype)
            for key, space in self.observation_space.spaces.items()
        ]
        self._returns = [0.0] * self.num_envs
        self._lengths = [0] * self.num_envs
        self._no_flags = np.zeros(self.num_envs, dtype=bool)
        self._no_flags.flags.writeable = False
        """The flags of a step where no episode ended, shared by those steps' responses
        (read-only: nobody writes a response's arrays)."""
        self.total_steps = 0
        self.total_episodes = 0
        if num_envs == 1 and not self._dict_observations:
            # One copy, one observation array: the same responses with less work a step.
            key, shape, dtype = self._buffer_specs[0]
            self._single = (self.envs[0], key, dtype, len(shape))
            # The step's reward, return and length, overwritten by the next step (a response's
            # arrays are the environment's until its next call); read-only outside.
            self._scalars = np.zeros(1, dtype=np.float32), np.zeros(1), np.zeros(1, dtype=np.int64)
            self._scalar_views = tuple(_read_only(a) for a in self._scalars)
            self._one_flag = _read_only(np.ones(1, dtype=bool))
            """The set flag of a step where the episode ended, shared as `_no_flags` is."""
            self.step = self._step_single  # type: ignore[method-assign]

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
        return EnvResponse.first(observation, self.num_envs, infos)

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
        if final:
            terminated_flags = np.array(terminated, dtype=bool)
            truncated_flags = np.array(truncated, dtype=bool)
            started = terminated_flags | truncated_flags  # reset in the same step
        else:  # most steps: no flag set, no new arrays
            terminated_flags = truncated_flags = started = self._no_flags
        # The fields in their order: a call with keywords costs a microsecond more a step.
        response = EnvResponse(
            observation,
            np.array(rewards, dtype=np.float32),  # reward
            terminated_flags,
            truncated_flags,
            observation,  # next_observation, replaced below where an episode ended
            np.array(returns),  # episode_return
            np.array(lengths, dtype=np.int64),  # episode_length
            infos,
            started,  # episode_started
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
        return response

    def _step_single(self, action: Any) -> EnvResponse:
        """`step` for one copy with a non-dict observation: one environment call and the
        response's arrays made directly, without the loop and lists of several copies."""
        env, key, dtype, ndim = self._single
        obs, r, term, trunc, info = env.step(action[0])
        returns, lengths = self._returns, self._lengths
        returns[0] += float(r)
        lengths[0] += 1
        self.total_steps += 1
        reward, episode_return, episode_length = self._scalars
        reward[0] = r
        episode_return[0] = returns[0]
        episode_length[0] = lengths[0]
        # A new array each step (`fresh_observations`), (1, ...) in the space's dtype.
        observation = {key: np.array(obs, dtype=dtype, ndmin=ndim)}
        views = self._scalar_views
        response = EnvResponse(
            observation,
            views[0],  # reward
            self._no_flags,  # terminated
            self._no_flags,  # truncated
            observation,  # next_observation
            views[1],  # episode_return
            views[2],  # episode_length
            [info],
            self._no_flags,  # episode_started
        )
        if term or trunc:
            first, _ = env.reset()
            response.observation = {key: np.array(first, dtype=dtype, ndmin=ndim)}
            response.terminated = self._one_flag if term else self._no_flags
            response.truncated = self._one_flag if trunc else self._no_flags
            response.episode_started = self._one_flag
            returns[0] = 0.0
            lengths[0] = 0
            self.total_episodes += 1
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
