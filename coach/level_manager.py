"""The level manager: the proxy between a level's agent and its environment.

A level manager is itself an `Environment`. The graph manager steps the top level with no
action; a level below is stepped by the level above with that level's action, which it takes
as a goal (or option) for its own agent. It then runs its agent for up to
``steps_per_action`` steps of its own environment, or until an episode ends, and answers with
one response: the rewards summed, the last observation, the done flags. That is how
hierarchies of any depth are built.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from gymnasium import spaces

from coach.agents.agent import Agent
from coach.core.goals import GoalReward
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, EnvResponse
from coach.environments.environment import Environment
from coach.errors import CoachError
from coach.parallel.exchange import load_policy_state, policy_state


@dataclass(slots=True, kw_only=True)
class LevelGoals:
    """How a level below the top pursues the goals the level above sets it.

    The level's agent sees its environment's observation with ``desired_goal_key`` replaced
    by the goal, is rewarded by ``goal_reward`` for the goal its next state achieves
    (``achieved_goal_key``), and a sub-episode per goal: it ends when the goal is reached,
    when the level's horizon is spent, or when the environment's episode ends.
    """

    goal_reward: GoalReward = field(default_factory=GoalReward)
    """When a goal is reached, and the lower agent's reward for it."""
    achieved_goal_key: str = "achieved_goal"
    """The observation key of the goal the environment's state achieves."""
    desired_goal_key: str = "desired_goal"
    """The observation key the goal goes under, for the level's agent."""

    def agent_space(self, observation_space: spaces.Dict, goal_space: spaces.Space) -> spaces.Dict:
        """The observation space of the level's agent."""
        if self.achieved_goal_key not in observation_space.spaces:
            raise CoachError(
                f"a goal level needs the achieved goal {self.achieved_goal_key!r} in the "
                f"observation, which has {sorted(observation_space.spaces)}"
            )
        return spaces.Dict({**observation_space.spaces, self.desired_goal_key: goal_space})


class StepObserver(Protocol):
    """Watches a level's environment steps (dataset recording, for one): what the agent
    decided and what the environment answered, in the phase the level is in. Observers see
    the level manager, never the environment or the agent."""

    def on_reset(self, response: EnvResponse, phase: RunPhase) -> None:
        """New episodes started in every copy."""

    def on_step(self, info: ActionInfo, response: EnvResponse, phase: RunPhase) -> None:
        """The environment took ``info.env_action`` and answered ``response``."""


class Level(Environment):
    """What a graph manager drives: a level of one or several agents, itself an environment
    to the level above (`LevelManager`, `coach.multi_agent.MultiAgentLevelManager`)."""

    name: str
    environment: Any
    """What the level's agents act in: a real environment, or the level below."""

    @property
    @abstractmethod
    def phase(self) -> RunPhase:
        """The run phase of the level's agents."""

    @phase.setter
    @abstractmethod
    def phase(self, phase: RunPhase) -> None: ...

    @property
    @abstractmethod
    def agents(self) -> dict[str, Agent]:
        """The level's learning agents, by name."""

    @abstractmethod
    def agents_state_dict(self, include_memory: bool = False) -> Any:
        """The state of the level's agents (and what the level keeps of its own) for a
        checkpoint; the memories' contents only when asked."""

    @abstractmethod
    def load_agents_state_dict(self, state: Any, episodes_in_flight: bool = True) -> None:
        """Restore what `agents_state_dict` returned."""

    @abstractmethod
    def with_memories(self, state: Any) -> Any:
        """``state`` (from `agents_state_dict` without memories) with the memories as they
        are now."""

    @abstractmethod
    def step(self, action: Any = None) -> EnvResponse:
        """Run the level's agents for a step (or a goal's steps) of their environment."""

    def end_episodes(self) -> None:
        """The episodes in flight stop before they ended: each agent stores now what waits
        for their end (`Agent.end_episodes`)."""
        for agent in self.agents.values():
            agent.end_episodes()

    def episode_state(self) -> Any:
        """What the level itself keeps of the episodes in flight, beyond its agents and its
        environment, for a checkpoint; ``None`` when nothing."""
        return None

    def continue_episodes(self, state: Any) -> bool:
        """Carry on the episodes in flight with what `episode_state` returned; ``False`` when
        ``state`` lacks what the level needs (the episodes then restart)."""
        return True

    def policy_state(self) -> dict[str, Any]:
        """What acting copies of the level's agents need (rollout workers): each agent's
        policy, by name (`coach.parallel.exchange.policy_state`)."""
        return {name: policy_state(agent) for name, agent in self.agents.items()}

    def load_policy_state(self, state: dict[str, Any]) -> None:
        """Act with the policies `policy_state` gave."""
        for name, agent in self.agents.items():
            load_policy_state(agent, state[name])

    def trained(self) -> None:
        """The level's agents may have trained (self-play snapshots its learner when due)."""

    def report_episodes(
        self, phase: RunPhase, episodes: list[tuple[float, int, float | None]]
    ) -> None:
        """Episodes of the level's environment that ran elsewhere (on rollout workers):
        whatever the level logs of its episodes beyond what its agents log."""

    def only_agent(self, what: str) -> Agent:
        """The level's one agent, for ``what`` works with a single agent; a `CoachError`
        when the level has several."""
        agents = list(self.agents.values())
        if len(agents) != 1:
            raise CoachError(
                f"{what} takes a level with one agent; {self.name!r} has {len(agents)}"
            )
        return agents[0]


class LevelManager(Level):
    """One level of a graph: an agent acting in an environment (real, or the level below).

    Args:
        name: The level's name in logs.
        agent: The agent of this level.
        environment: What the agent acts in: a real environment or the level below.
        steps_per_action: The most steps this level runs per action from the level above
            (its horizon). The top level runs one step per call.
        action_space: The space of the goals this level takes from the level above
            (``None`` for the top level).
        goals: How the level pursues those goals (`LevelGoals`): its agent then sees and is
            rewarded for the goal, in sub-episodes of at most ``steps_per_action`` steps.
            Without it the goal is only handed to the agent (`Agent.set_goal`).
    """

    def __init__(
        self,
        name: str,
        agent: Agent,
        environment: Environment,
        steps_per_action: int = 1,
        action_space: spaces.Space | None = None,
        goals: LevelGoals | None = None,
    ) -> None:
        if steps_per_action < 1:
            raise ValueError(f"steps_per_action must be >= 1, got {steps_per_action}")
        if goals is not None and environment.num_envs != 1:
            raise CoachError(
                f"a goal level runs one environment copy (its sub-episodes end at different "
                f"steps in different copies), got {environment.num_envs}"
            )
        self.goals = goals
        self._below: LevelManager | None = (
            environment if isinstance(environment, LevelManager) else None
        )
        """The level below, if this level's environment is one."""
        self.testing_subgoal = False
        """Set by the level above while it tests a subgoal: this level and every level below
        act without exploration (Levy et al., 2019)."""
        self._observation: dict[str, np.ndarray] | None = None
        """The environment's observation now: where a goal level's next sub-episode starts."""
        self.name = name
        self.agent = agent
        self.environment = environment
        self.steps_per_action = steps_per_action
        self.observation_space = environment.observation_space
        self.action_space = action_space
        self.num_envs = environment.num_envs
        self.fresh_observations = environment.fresh_observations  # what this level answers
        # A goal level's agent sees observations with the goal added: it copies its state.
        agent.join_level(fresh_observations=environment.fresh_observations and goals is None)
        self.observers: list[StepObserver] = []
        """Told of every reset and step of this level's environment."""

    @property
    def agents(self) -> dict[str, Agent]:
        return {self.agent.name: self.agent}

    def agents_state_dict(self, include_memory: bool = False) -> Any:
        return self.agent.state_dict(include_memory)

    def load_agents_state_dict(self, state: Any, episodes_in_flight: bool = True) -> None:
        self.agent.load_state_dict(state, episodes_in_flight=episodes_in_flight)

    def episode_state(self) -> Any:
        if self.goals is None or self._observation is None:
            return None
        return {"observation": self._observation}

    def continue_episodes(self, state: Any) -> bool:
        if self.goals is None:
            return True
        if state is None:  # a checkpoint written before goal levels kept their observation
            return False
        self._observation = state["observation"]
        return True

    def with_memories(self, state: Any) -> Any:
        memory = self.agent.memory
        return {**state, "memory": memory.state_dict() if memory is not None else None}

    @property
    def phase(self) -> RunPhase:
        return self.agent.phase

    @phase.setter
    def phase(self, phase: RunPhase) -> None:
        """Set the phase of this level's agent and of every level below."""
        self.agent.phase = phase
        if self._below is not None:
            self._below.phase = phase

    def reset(self, seed: int | None = None) -> EnvResponse:
        response = self.environment.reset(seed)
        for observer in self.observers:
            observer.on_reset(response, self.phase)
        self._observation = response.observation
        if self.goals is None:  # a goal level starts its agent when a goal arrives
            self.agent.reset(response)
        return response

    def step(self, action: Any = None) -> EnvResponse:
        """Run this level's agent for up to ``steps_per_action`` steps and answer once.

        Args:
            action: The goal (or option) from the level above; ``None`` at the top.
        """
        if self.goals is not None and action is not None:
            return self._pursue(action)
        if action is not None:
            self.agent.set_goal(action)
        agent = self.agent
        response = self._step_once(agent)
        if self.steps_per_action == 1:
            return response
        reward = response.reward.astype(np.float64)
        for _ in range(self.steps_per_action - 1):
            if response.done.any():  # an episode ended: the level above sees it now
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
            episode_started=response.episode_started,
        )

    def _pursue(self, goal: Any) -> EnvResponse:
        """One sub-episode towards ``goal``; the environment's steps answered as one."""
        goals = self.goals
        agent = self.agent
        assert goals is not None and self._observation is not None
        goal = np.asarray(goal)
        agent.set_goal(goal)
        agent.set_subgoal_test(self.testing_subgoal)
        agent.reset(self._with_goal(self._observation, goal))
        reward = np.zeros(self.num_envs)
        goal_return = np.zeros(self.num_envs)
        for t in range(1, self.steps_per_action + 1):
            response = self._environment_step(agent)
            reward += response.reward
            achieved = response.next_observation[goals.achieved_goal_key]
            reached = goals.goal_reward.reached(achieved, goal)
            goal_reward = goals.goal_reward.reward(achieved, goal)
            goal_return += goal_reward
            terminated = response.terminated | (reached & goals.goal_reward.terminate_when_reached)
            ended = response.done.any()
            last = bool(terminated.any() or ended or t == self.steps_per_action)
            truncated = ~terminated & (response.truncated | (t == self.steps_per_action))
            next_observation = {**response.next_observation, goals.desired_goal_key: goal}
            # At the end of a sub-episode the agent sees an episode end; the next one starts
            # from the environment's observation with the next goal (`agent.reset` above).
            agent.observe(
                EnvResponse(
                    observation=next_observation,
                    reward=goal_reward.astype(np.float32),
                    terminated=terminated if last else np.zeros_like(terminated),
                    truncated=truncated if last else np.zeros_like(truncated),
                    next_observation=next_observation,
                    episode_return=goal_return.copy(),
                    episode_length=np.full(self.num_envs, t),
                    infos=[{"is_success": float(r)} for r in reached],
                    episode_started=np.full(self.num_envs, last),
                )
            )
            agent.train()
            self._observation = response.observation
            if last:
                break
        return EnvResponse(
            observation=response.observation,
            reward=reward.astype(np.float32),
            terminated=response.terminated,
            truncated=response.truncated,
            next_observation=response.next_observation,
            episode_return=response.episode_return,
            episode_length=response.episode_length,
            infos=response.infos,
            episode_started=response.episode_started,
        )

    def _with_goal(self, observation: dict[str, np.ndarray], goal: np.ndarray) -> EnvResponse:
        """A response that starts the agent's sub-episode at ``observation`` with ``goal``."""
        assert self.goals is not None
        with_goal = {**observation, self.goals.desired_goal_key: goal}
        return EnvResponse.first(with_goal, self.num_envs)

    def _environment_step(self, agent: Agent) -> EnvResponse:
        """The agent acts, the environment steps, the observers see both. A subgoal test the
        agent asks for reaches the levels below."""
        info = agent.act()
        if self._below is not None:
            testing = self.testing_subgoal or bool(info.extras.get("subgoal_test", False))
            self._below.testing_subgoal = testing
        response = self.environment.step(info.env_action)
        if self.observers:  # most levels have none: no loop set up every step
            for observer in self.observers:
                observer.on_step(info, response, self.phase)
        return response

    def _step_once(self, agent: Agent) -> EnvResponse:
        response = self._environment_step(agent)
        agent.observe(response)
        if agent.phase is RunPhase.TRAIN:  # agents learn in training only
            agent.train()
        return response

    def close(self) -> None:
        self.environment.close()
