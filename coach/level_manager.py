"""The level manager: the proxy between a level's agent and its environment.

A level manager is itself an `Environment`. The graph manager steps the top level with no
action; a level below is stepped by the level above with that level's action, which it takes
as a goal (or option) for its own agent. It then runs its agent for up to
``steps_per_action`` steps of its own environment, or until an episode ends, and answers with
one response: the rewards summed, the last observation, the done flags. That is how
hierarchies of any depth are built.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.agents.agent import Agent
from coach.core.run_phase import RunPhase
from coach.core.types import EnvResponse
from coach.environments.environment import Environment


class LevelManager(Environment):
    """One level of a graph: an agent acting in an environment (real, or the level below).

    Args:
        name: The level's name in logs.
        agent: The agent of this level.
        environment: What the agent acts in: a real environment or the level below.
        steps_per_action: The most steps this level runs per action from the level above
            (its horizon). The top level runs one step per call.
        action_space: The space of the goals this level takes from the level above
            (``None`` for the top level).
    """

    def __init__(
        self,
        name: str,
        agent: Agent,
        environment: Environment,
        steps_per_action: int = 1,
        action_space: spaces.Space | None = None,
    ) -> None:
        if steps_per_action < 1:
            raise ValueError(f"steps_per_action must be >= 1, got {steps_per_action}")
        self.name = name
        self.agent = agent
        self.environment = environment
        self.steps_per_action = steps_per_action
        self.observation_space = environment.observation_space
        self.action_space = action_space
        self.num_envs = environment.num_envs

    @property
    def phase(self) -> RunPhase:
        return self.agent.phase

    @phase.setter
    def phase(self, phase: RunPhase) -> None:
        """Set the phase of this level's agent and of every level below."""
        self.agent.phase = phase
        if isinstance(self.environment, LevelManager):
            self.environment.phase = phase

    def reset(self, seed: int | None = None) -> EnvResponse:
        response = self.environment.reset(seed)
        self.agent.reset(response)
        return response

    def step(self, action: Any = None) -> EnvResponse:
        """Run this level's agent for up to ``steps_per_action`` steps and answer once.

        Args:
            action: The goal (or option) from the level above; ``None`` at the top.
        """
        if action is not None:
            self.agent.set_goal(action)
        agent = self.agent
        response = self._step_once(agent)
        if self.steps_per_action == 1:
            return response
        reward = response.reward.astype(np.float64)
        for _ in range(self.steps_per_action - 1):
            if response.next_observation is not response.observation:  # an episode ended
                break
            response = self._step_once(agent)
            reward += response.reward
        return EnvResponse(
            observation=response.observation,
            reward=reward.astype(np.float32),
            terminated=response.terminated,
            truncated=response.truncated,
            next_observation=response.next_observation,
            episode_return=response.episode_return,
            episode_length=response.episode_length,
            infos=response.infos,
        )

    def _step_once(self, agent: Agent) -> EnvResponse:
        action_info = agent.act()
        response = self.environment.step(action_info.action)
        agent.observe(response)
        agent.train()
        return response

    def close(self) -> None:
        self.environment.close()
