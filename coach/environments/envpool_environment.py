"""Atari and MuJoCo copies stepped by envpool's C++ thread pool (``vectorization="envpool"``).

envpool (Weng et al., "EnvPool: A Highly Parallel Reinforcement Learning Environment
Execution Engine", NeurIPS 2022) steps a batch of copies in C++ threads, without a Python
loop over the copies or a subprocess per copy. `EnvpoolEnvironment` puts it behind Coach's
interface and answers as `GymEnvironment` does where envpool allows:

- envpool resets a copy whose episode ended at its *next* step (gymnasium's NEXT_STEP
  autoreset); Coach expects the reset in the same step (SAME_STEP). The copies that ended are
  therefore reset at once, in a second call on them alone, and the response carries both
  their last observation and the next episode's first.
- envpool fixes its copies' seeds when it makes them, so ``reset(seed)`` makes the pool
  again, copy ``i`` seeded from ``seed + i`` (`EnvpoolTask.copy_seed`); ``reset()`` without
  a seed resets every copy of the pool there is.
- A step that ends an episode (a game over, a fall) just as the time limit falls is only
  ``truncated`` in envpool (gymnasium's time limit marks it ``terminated`` and ``truncated``).
- Atari: envpool runs the same emulator with Coach's conventions (frame skip with the last
  two frames max-pooled, 1 to ``noop_max`` no-ops, sticky actions, optional episodes per
  life) and hands over raw 210x160 frames, which Coach's own input filter shrinks and
  stacks. Each copy's ALE gets the seed ale-py derives from the copy's seed, so with
  ``noop_max=1`` the frames, rewards and episode ends are those of the gymnasium path for
  the same seed and actions, sticky actions included. They differ where envpool draws
  differently: the number of no-ops of a new episode (its own generator) and the reset
  after a lost life with ``terminal_on_life_loss`` (envpool: no-op frames, Coach: one no-op
  step); and in the last frame of a game that ends inside the frame skip (envpool: the
  previous pooled frame, Coach: the final screen). Episodes are truncated after
  ``max_episode_frames // frame_skip`` steps (Coach's own path counts emulator frames,
  no-ops included). ``noop_max=0`` has no envpool equivalent (it always takes one no-op).
- MuJoCo: envpool's tasks of the same name and version (the nearest version where it lacks
  the one asked for), with gymnasium's keyword arguments where envpool has them. The reset
  noise comes from envpool's own generator, so the episodes of a seed differ from
  gymnasium's; with ``reset_noise_scale=0`` the first observations are equal, and the steps
  after them agree to rounding until the dynamics amplify it. envpool cannot render MuJoCo
  here (it needs an OpenGL context).

Episodes in flight live in envpool's C++ copies and are not saved in checkpoints.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.types import EnvResponse
from coach.environments.environment import Environment
from coach.errors import CoachError

_BOOKKEEPING = frozenset({"env_id", "players", "elapsed_step", "ram"})
"""envpool's info keys that are not the environment's own (the copy ids, the step count,
Atari's RAM)."""


def import_envpool() -> Any:
    """The envpool module.

    Raises:
        CoachError: when envpool is not installed.
    """
    try:
        import envpool
    except ImportError:
        raise CoachError(
            'vectorization="envpool" needs envpool: pip install "coach[envpool]"'
        ) from None
    return envpool


def _same_seed(seed: int) -> int:
    return seed % 2**31  # envpool takes 32-bit seeds


def ale_seed(seed: int) -> int:
    """The seed ale-py gives the emulator of an Atari env reset with ``seed``, so an envpool
    copy draws its sticky actions as the gymnasium env does."""
    return int(np.int32(np.random.SeedSequence(seed).generate_state(2)[1]))


@dataclass(frozen=True, slots=True)
class EnvpoolTask:
    """What envpool makes for a level, and how its observations become Coach's."""

    task_id: str
    """envpool's id (``Breakout-v5``, ``HalfCheetah-v5``)."""
    config: dict[str, Any] = field(default_factory=dict)
    """envpool's configuration of the task (``frame_skip``, ``reset_noise_scale``, ...)."""
    copy_seed: Callable[[int], int] = _same_seed
    """envpool's seed of a copy that Coach seeds ``seed``."""
    layout: str = "flat"
    """``flat``: observations as envpool gives them; ``frame``: one grayscale frame
    ``(1, H, W)`` -> ``(H, W)``; ``rgb``: ``(3, H, W)`` -> ``(H, W, 3)``."""
    render_mode: str | None = None
    """``rgb_array`` to render copy 0's screen (Atari only), or ``None``."""


def _key(name: str) -> str:
    return re.sub(r"[-_ ]", "", name).lower()


def envpool_task_id(gym_id: str, family: str) -> str:
    """envpool's id of a gymnasium id or an Atari game name.

    ``ALE/Breakout-v5``, ``breakout`` and ``Breakout`` give ``Breakout-v5``; a MuJoCo id gives
    envpool's task of the same name and version or, where envpool lacks that version, its
    nearest one (the newest older version, else the oldest newer one).

    Args:
        gym_id: The gymnasium id, or for Atari a game name.
        family: ``atari`` or ``mujoco``: where in envpool to look.

    Raises:
        CoachError: when envpool has no such task, naming close ones.
    """
    envpool = import_envpool()
    prefix = {"atari": "envpool.atari", "mujoco": "envpool.mujoco.gym"}[family]
    tasks = [t for t, spec in envpool.registration.registry.specs.items() if spec[0] == prefix]
    name, _, version = gym_id.removeprefix("ALE/").rpartition("-v")
    if not name or not version.isdigit():
        name, version = gym_id.removeprefix("ALE/"), ""
    versions: dict[int, str] = {}
    for task in tasks:
        task_name, _, task_version = task.rpartition("-v")
        if _key(task_name) == _key(name) and task_version.isdigit():
            versions[int(task_version)] = task
    if not versions:
        names = sorted({t.rpartition("-v")[0] for t in tasks})
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise CoachError(f"envpool has no {family} task {gym_id!r}{hint}")
    wanted = int(version) if version else max(versions)
    older = [v for v in versions if v <= wanted]
    return versions[max(older) if older else min(versions)]


def task_config(envpool_id: str, config: dict[str, Any], what: str) -> dict[str, Any]:
    """``config``, checked against the options envpool's ``envpool_id`` takes.

    Raises:
        CoachError: naming the options envpool does not know and the ones it does.
    """
    known = set(import_envpool().make_spec(envpool_id).config._fields)
    unknown = sorted(set(config) - known)
    if unknown:
        raise CoachError(
            f"envpool's {envpool_id} has no option {', '.join(unknown)} (from {what}); "
            f"its options: {', '.join(sorted(known))}"
        )
    return config


class EnvpoolEnvironment(Environment):
    """``num_envs`` copies of an envpool task behind Coach's batched interface.

    Args:
        task: The task and its configuration (`GymEnvironmentParameters.envpool_task`).
        num_envs: How many copies step together.
        observation_key: The name the observation gets in the observation dictionary.
        name: The environment in error messages (its gymnasium id).

    Raises:
        CoachError: when envpool is not installed, or ``num_envs`` is below 1.
    """

    fresh_observations = True  # envpool hands out new arrays at every step

    def __init__(
        self,
        task: EnvpoolTask,
        num_envs: int = 1,
        observation_key: str = "observation",
        *,
        name: str,
    ) -> None:
        if num_envs < 1:
            raise CoachError(f"num_envs must be >= 1, got {num_envs}")
        self._envpool = import_envpool()
        self.task = task
        self.name = name
        self.num_envs = num_envs
        spec = self._envpool.make_spec(task.task_id, num_envs=num_envs, **task.config)
        single = spec.gymnasium_observation_space
        if task.layout == "frame":
            single = spaces.Box(0, 255, single.shape[1:], np.uint8)
        elif task.layout == "rgb":
            single = spaces.Box(0, 255, (*single.shape[1:], single.shape[0]), np.uint8)
        self._key = observation_key
        self.observation_space = spaces.Dict({observation_key: single})
        self.action_space = spec.gymnasium_action_space
        self.metadata = {"render_modes": ["rgb_array"] if task.render_mode else []}
        self.render_mode = task.render_mode
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        self._threads = min(num_envs, cores or 1)
        self._pool: Any = None
        self._returns = np.zeros(num_envs)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self.total_steps = 0
        self.total_episodes = 0

    def _make_pool(self, seeds: list[int]) -> None:
        if self._pool is not None:
            self._pool.close()
        self._pool = self._envpool.make_gymnasium(
            self.task.task_id,
            num_envs=self.num_envs,
            batch_size=self.num_envs,
            num_threads=self._threads,
            env_seed=seeds,
            **({"render_mode": self.task.render_mode} if self.task.render_mode else {}),
            **self.task.config,
        )

    def _observation(self, batch: np.ndarray) -> np.ndarray:
        if self.task.layout == "frame":
            return batch.reshape(batch.shape[0], *batch.shape[2:])
        if self.task.layout == "rgb":
            return np.ascontiguousarray(batch.transpose(0, 2, 3, 1))
        return batch

    @staticmethod
    def _infos(info: dict[str, Any], count: int) -> list[dict[str, Any]]:
        """Each copy's own info dictionary, without envpool's bookkeeping."""
        columns = {k: v.tolist() for k, v in info.items() if k not in _BOOKKEEPING}
        return [{k: v[i] for k, v in columns.items()} for i in range(count)]

    def reset(self, seed: int | None = None) -> EnvResponse:
        if seed is not None:
            self._make_pool([self.task.copy_seed(seed + i) for i in range(self.num_envs)])
            self.action_space.seed(seed)
        elif self._pool is None:  # unseeded: seeds from the operating system's entropy
            entropy = np.random.SeedSequence().generate_state(self.num_envs)
            self._make_pool([int(s) % 2**31 for s in entropy])
        observations, info = self._pool.reset()
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        observation = {self._key: self._observation(observations)}
        return EnvResponse.first(observation, self.num_envs, self._infos(info, self.num_envs))

    def step(self, action: Any) -> EnvResponse:
        if self._pool is None:
            raise CoachError(f"reset the envpool environment {self.name!r} before stepping it")
        observations, rewards, terminated, truncated, info = self._pool.step(np.asarray(action))
        ended = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        observation = {self._key: self._observation(observations)}
        response = EnvResponse(
            observation,
            rewards.astype(np.float32),  # reward
            terminated,
            truncated,
            observation,  # next_observation: the finished episodes' last ones stay in it
            self._returns.copy(),  # episode_return
            self._lengths.copy(),  # episode_length
            self._infos(info, self.num_envs),
            ended,  # episode_started: reset below, in the same step
        )
        self.total_steps += self.num_envs
        if ended.any():
            ids = np.flatnonzero(ended)
            first, _ = self._pool.reset(ids.astype(np.int32))
            started = observation[self._key].copy()
            started[ids] = self._observation(first)
            response.observation = {self._key: started}
            self._returns[ids] = 0.0
            self._lengths[ids] = 0
            self.total_episodes += len(ids)
        return response

    def state_dict(self) -> dict[str, Any] | None:
        """``None``: the episodes in flight live in envpool's copies and are not saved, so a
        resumed run starts new ones."""
        return None

    def render(self) -> Any:
        """Copy 0's screen, ``(H, W, 3)``.

        Raises:
            CoachError: when the environment was made without ``render_mode="rgb_array"``.
        """
        if self.task.render_mode is None or self._pool is None:
            raise CoachError(
                f"the envpool environment {self.name!r} renders only when made with "
                f'render_mode="rgb_array" and reset'
            )
        return self._pool.render(0)[0]

    def close(self) -> None:
        """Close the pool and end its threads."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
