"""Tiny environments and scripted agents for tests."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coach.agents.acting import Policy
from coach.agents.agent import Agent
from coach.agents.learning import Learner
from coach.agents.parameters import AgentParameters
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, EnvResponse, Observation
from coach.environments.environment import Environment


class CountingEnvironment(Environment):
    """Observation = step count in the episode; reward 1 per step; episodes last `length`."""

    def __init__(self, num_envs: int = 1, length: int = 10) -> None:
        self.num_envs = num_envs
        self.length = length
        self.observation_space = spaces.Dict({"observation": spaces.Box(0, 1e6, (1,))})
        self.action_space = spaces.Discrete(2)
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.actions: list[np.ndarray] = []
        self.total_steps = 0
        self.total_episodes = 0

    def _obs(self, t: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": t.astype(np.float32).reshape(-1, 1)}

    def reset(self, seed: int | None = None) -> EnvResponse:
        self.t[:] = 0
        n = self.num_envs
        obs = self._obs(self.t)
        zeros = np.zeros(n)
        return EnvResponse(
            obs, zeros.astype(np.float32), zeros > 0, zeros > 0, obs, zeros, zeros.astype(np.int64)
        )

    def step(self, action: np.ndarray) -> EnvResponse:
        self.actions.append(np.asarray(action).copy())
        self.t += 1
        self.total_steps += self.num_envs
        truncated = self.t >= self.length
        next_obs = self._obs(self.t)
        ret = self.t.astype(np.float64)
        length = self.t.copy()
        obs = next_obs
        if truncated.any():
            self.total_episodes += int(truncated.sum())
            self.t[truncated] = 0
            obs = self._obs(self.t)
        return EnvResponse(
            obs,
            np.ones(self.num_envs, dtype=np.float32),
            np.zeros(self.num_envs, dtype=bool),
            truncated,
            next_obs,
            ret,
            length,
        )


class StaggeredEpisodes(Environment):
    """Copy ``i``'s episodes last ``lengths[i]`` steps and end in a terminal state, so that
    the copies start episodes at different steps. Observation = (step in the episode + 1,
    copy index); reward 1 per step."""

    def __init__(self, lengths: tuple[int, ...] = (3, 5, 7)) -> None:
        self.lengths = np.asarray(lengths)
        self.num_envs = len(lengths)
        self.observation_space = spaces.Dict({"observation": spaces.Box(0, 1e6, (2,))})
        self.action_space = spaces.Discrete(2)
        self.t = np.zeros(self.num_envs, dtype=np.int64)
        self.total_steps = 0
        self.total_episodes = 0

    def _obs(self) -> dict[str, np.ndarray]:
        copies = np.arange(self.num_envs)
        return {"observation": np.stack([self.t + 1, copies], axis=1).astype(np.float32)}

    def reset(self, seed: int | None = None) -> EnvResponse:
        self.t[:] = 0
        return EnvResponse.first(self._obs(), self.num_envs)

    def step(self, action: np.ndarray) -> EnvResponse:
        self.t += 1
        self.total_steps += self.num_envs
        terminated = self.t >= self.lengths
        next_obs = self._obs()
        ret, length = self.t.astype(np.float64), self.t.copy()
        self.total_episodes += int(terminated.sum())
        self.t[terminated] = 0
        return EnvResponse(
            self._obs(),
            np.ones(self.num_envs, dtype=np.float32),
            terminated,
            np.zeros(self.num_envs, dtype=bool),
            next_obs,
            ret,
            length,
        )


class ScriptedPolicy(Policy):
    """Acts as a function of the state says."""

    def __init__(self, choose: Callable[[Observation], ActionInfo], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.choose = choose

    def decide(self, state: Observation, phase: RunPhase) -> ActionInfo:
        return self.choose(state)


class ScriptedAgent(Agent):
    """Acts a fixed action; records goals, states and what it observed."""

    def __init__(self, action: int, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.fixed_action = action
        self.goals: list[object] = []
        self.observed: list[EnvResponse] = []

    def set_goal(self, goal: object) -> None:
        super().set_goal(goal)
        self.goals.append(goal)

    def make_policy(self) -> Policy:
        return ScriptedPolicy(
            lambda state: ActionInfo(np.full(self.num_envs, self.fixed_action)),
            **self.policy_arguments(),
        )

    def make_learner(self) -> Learner:
        return Learner(**self.learner_arguments())  # a scripted agent learns nothing

    def observe(self, response: EnvResponse) -> None:
        self.observed.append(response)
        super().observe(response)


def scripted(action: int, environment: Environment, name: str) -> ScriptedAgent:
    space = environment.action_space if environment.action_space is not None else spaces.Discrete(2)
    return ScriptedAgent(
        action,
        AgentParameters(name=name),
        environment.observation_space,
        space,
        environment.num_envs,
        seed=0,
    )


class FailingEnv(gym.Env):
    """CartPole's spaces; its step raises after ``fail_at`` steps, as a crashing simulator
    would."""

    def __init__(self, fail_at: int = 10) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.fail_at = fail_at
        self.steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.steps += 1
        if self.steps >= self.fail_at:
            raise RuntimeError("the simulator crashed")
        return np.zeros(4, dtype=np.float32), 1.0, False, self.steps % 5 == 0, {}


class CoinFlipEnv(gym.Env):
    """One-step episodes whose reward is a fair coin's toss (1 or 0), whatever the action:
    one lucky episode reaches a reward of 1, twenty average about 0.5."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        reward = float(self.np_random.integers(0, 2))
        return np.zeros(1, dtype=np.float32), reward, True, False, {}


class FakeTerminal(io.StringIO):
    """A console that says it is a terminal: live progress bars draw into it."""

    encoding = "utf-8"

    def isatty(self) -> bool:
        return True
