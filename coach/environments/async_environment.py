"""The gymnasium adapter with each copy in its own subprocess (``vectorization="async"``).

`AsyncGymEnvironment` answers exactly as `GymEnvironment` does, step for step and seed for
seed, but its copies step in parallel, in the subprocesses of gymnasium's ``AsyncVectorEnv``
with SAME_STEP autoreset. That can only pay when a step costs far more CPU than the round
trip to a subprocess and there are cores to spare: on 2 shared cores the round trip took a
few hundred microseconds, more than a BipedalWalker or HalfCheetah step, and the async
adapter ran at a fifth to a half of the sync one's speed (``python -m benchmarks.async_env``).

Three things stand between ``AsyncVectorEnv`` and Coach's interface:

- gymnasium merges the copies' info dictionaries into one dictionary of arrays (where a key
  with an integer in one copy and a float in another is truncated). Each copy therefore
  hands its info over whole, in a `_PackedInfo`, and Coach gets each copy's own dictionary
  back, the one of the step that ended the episode where one ended.
- gymnasium's worker makes its copy outside its error handling, so a copy that cannot be made
  kills the subprocess and leaves the main process a closed pipe. `_worker` reports the error
  instead, and the main process raises a `CoachError` that names the environment.
- The subprocesses start with the "forkserver" method (see `_start_method`); episodes in
  flight live in them and are not saved in checkpoints (`state_dict` is ``None``).

As with any "spawn" or "forkserver" multiprocessing, a script that builds the environment
must guard its entry point with ``if __name__ == "__main__":``: the subprocesses import the
main module.
"""

from __future__ import annotations

import multiprocessing
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.async_vector_env import _async_worker

from coach.core.types import EnvResponse
from coach.environments.environment import Environment
from coach.errors import CoachError

_INFO = "coach_info"
"""The one key of the info dictionaries the copies hand to gymnasium."""


@dataclass(frozen=True, slots=True)
class _PackedInfo:
    """One copy's info dictionary, kept whole through gymnasium's merging of infos."""

    info: dict[str, Any]


class _PackedInfos(gym.Wrapper):
    """A copy as the subprocess runs it: its infos packed, its action space seeded on reset."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        if seed is not None:
            self.action_space.seed(seed)
        return observation, {_INFO: _PackedInfo(info)}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, terminated, truncated, {_INFO: _PackedInfo(info)}


@dataclass(frozen=True, slots=True)
class _MakeCopy:
    """Makes one copy; picklable (a module-level class around a picklable maker, such as a
    bound method of `GymEnvironmentParameters`), as the "forkserver" and "spawn" start
    methods require."""

    make_env: Callable[[], gym.Env]

    def __call__(self) -> gym.Env:
        return _PackedInfos(self.make_env())


class _CopyFailed(Exception):
    """A copy could not be made in its subprocess; the message is the original error's."""


def _worker(
    index: int,
    env_fn: Callable[[], gym.Env],
    pipe: Connection,
    parent_pipe: Connection,
    shared_memory: Any,
    error_queue: Any,
    *rest: Any,
) -> None:
    """gymnasium's subprocess loop, except that a copy that cannot be made says why.

    ``rest`` (the autoreset mode and, from gymnasium 1.4, a concurrency semaphore) passes
    through to gymnasium's own worker.
    """
    try:
        env = env_fn()
    except Exception as error:
        parent_pipe.close()
        message = (
            str(error) if isinstance(error, CoachError) else f"{type(error).__name__}: {error}"
        )
        error_queue.put((index, _CopyFailed, _CopyFailed(message), traceback.format_exc()))
        pipe.recv()  # the space check, the first thing the main process asks
        pipe.send((None, False))
        return
    _async_worker(index, lambda: env, pipe, parent_pipe, shared_memory, error_queue, *rest)


def _start_method() -> str:
    """The multiprocessing start method: "forkserver" where there is one (POSIX), else
    "spawn"; never "fork".

    "fork" copies this process as it is, torch's threads and their locks included, which is
    unsafe once torch has run. "spawn" and "forkserver" both start clean, and a copy has to
    import Coach (and with it torch) before it can unpickle its parameters: about a second
    per copy with "spawn", every time (CartPole on 2 cores: 2 copies 2.1-3.8 s, 4 copies
    4.6-7.3 s; "forkserver" without a preload is no faster). A fork server that preloads this
    module imports Coach once, when the first environment starts (1.8-2.2 s), and forks every
    later copy from there, already imported (2 or 4 copies in 0.04-0.06 s). It has only
    imported, run no torch code, so forking it is safe.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return "spawn"
    # multiprocessing's default preload is ["__main__"]: keep it, add this module. It takes
    # effect when the fork server starts, once per process.
    multiprocessing.get_context("forkserver").set_forkserver_preload(["__main__", __name__])
    return "forkserver"


class _Subprocesses(gym.vector.AsyncVectorEnv):
    """gymnasium's ``AsyncVectorEnv`` that ends the subprocesses it started if it fails."""

    def __init__(self, env_fns: list[Callable[[], gym.Env]]) -> None:
        try:
            with warnings.catch_warnings():
                # gymnasium logs a subprocess's error before raising it; the CoachError says it.
                warnings.filterwarnings("ignore", module=r"gymnasium\.vector\.async_vector_env")
                super().__init__(
                    env_fns,
                    context=_start_method(),
                    worker=_worker,
                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
                    copy=False,  # `AsyncGymEnvironment` copies the observations itself
                )
        except BaseException:
            self._end()
            raise

    def _end(self) -> None:
        for pipe in getattr(self, "parent_pipes", ()):
            if pipe is not None:
                pipe.close()
        for process in getattr(self, "processes", ()):
            if process.pid is not None:  # started
                process.terminate()
                process.join()
        self.closed = True


class AsyncGymEnvironment(Environment):
    """``num_envs`` copies of a gymnasium environment, each in a subprocess, stepped in
    parallel, answering exactly as `GymEnvironment` does; only their episodes in flight
    cannot be saved.

    Args:
        make_env: Makes one copy, in its subprocess; picklable
            (`GymEnvironmentParameters.make_env`).
        num_envs: How many copies step together.
        observation_key: The name a non-dict observation gets in the observation dictionary.
        name: The environment in error messages (its gymnasium id).

    Raises:
        CoachError: when ``num_envs`` is below 1 or a copy cannot be made, in this process
            or in a subprocess.
    """

    fresh_observations = True  # copied out of the shared memory every step

    def __init__(
        self,
        make_env: Callable[[], gym.Env],
        num_envs: int = 1,
        observation_key: str = "observation",
        *,
        name: str,
    ) -> None:
        if num_envs < 1:
            raise CoachError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = num_envs
        try:
            self._envs = _Subprocesses([_MakeCopy(make_env)] * self.num_envs)
        except _CopyFailed as error:
            raise CoachError(
                f"cannot make environment {name!r} in a subprocess "
                f'(vectorization="async"): {error} (a subprocess starts afresh: ids registered '
                f"while this process ran are unknown to it)"
            ) from None
        except (EOFError, OSError) as error:  # a subprocess died before it could report
            raise CoachError(
                f"the subprocesses of environment {name!r} ended while starting "
                f'(vectorization="async"): {error!r}; their own error is printed above'
            ) from None
        single_space = self._envs.single_observation_space
        self._dict_observations = isinstance(single_space, spaces.Dict)
        self.observation_space: spaces.Dict
        if isinstance(single_space, spaces.Dict):
            self.observation_space = single_space
        else:
            self.observation_space = spaces.Dict({observation_key: single_space})
        self._keys = list(self.observation_space.spaces)
        self.action_space = self._envs.single_action_space
        self.metadata = self._envs.metadata
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        self.total_steps = 0
        self.total_episodes = 0

    def _observation(self, batch: Any) -> dict[str, np.ndarray]:
        """The subprocesses' observations, copied out of their shared memory."""
        if self._dict_observations:
            return {key: batch[key].copy() for key in self._keys}
        return {self._keys[0]: batch.copy()}

    def _write(self, buffers: dict[str, np.ndarray], i: int, observation: Any) -> None:
        if self._dict_observations:
            for key in self._keys:
                buffers[key][i] = observation[key]
        else:
            buffers[self._keys[0]][i] = observation

    @staticmethod
    def _infos(infos: dict[str, Any], ended: np.ndarray) -> list[dict[str, Any]]:
        """Each copy's own info dictionary; where an episode ended, the one of the step that
        ended it (gymnasium keeps it as ``final_info``, the reset's as the info)."""
        packed = infos[_INFO]
        if ended.any():
            packed = np.where(ended, infos["final_info"][_INFO], packed)
        return [p.info for p in packed]

    def reset(self, seed: int | None = None) -> EnvResponse:
        observations, infos = self._envs.reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        observation = self._observation(observations)
        return EnvResponse.first(
            observation, self.num_envs, [packed.info for packed in infos[_INFO]]
        )

    def step(self, action: Any) -> EnvResponse:
        observations, rewards, terminated, truncated, infos = self._envs.step(action)
        ended = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        observation = self._observation(observations)
        response = EnvResponse(
            observation=observation,
            reward=rewards.astype(np.float32),
            terminated=terminated,
            truncated=truncated,
            next_observation=observation,
            episode_return=self._returns.copy(),
            episode_length=self._lengths.copy(),
            infos=self._infos(infos, ended),
            episode_started=ended.copy(),  # reset in the same step
        )
        self.total_steps += self.num_envs
        if ended.any():
            next_observation = {key: value.copy() for key, value in observation.items()}
            for i in np.flatnonzero(ended):
                self._write(next_observation, int(i), infos["final_obs"][i])
            self._returns[ended] = 0.0
            self._lengths[ended] = 0
            response.next_observation = next_observation
            self.total_episodes += int(ended.sum())
        return response

    def state_dict(self) -> dict[str, Any] | None:
        """``None``: the episodes in flight live in the subprocesses and are not saved, so a
        resumed run starts new ones."""
        return None

    def render(self) -> Any:
        """Copy 0's frame (every copy renders: gymnasium asks them all)."""
        frames: tuple[Any, ...] = self._envs.call("render")
        return frames[0]

    def close(self) -> None:
        """Close the copies and end their subprocesses."""
        self._envs.close()
