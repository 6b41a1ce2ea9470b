"""Hierarchical graphs: any number of levels, each the environment of the level above.

The top level's agent acts in the real environment's observation, its actions being goals
for the level below; each level below pursues the goal it was given for at most its
horizon of steps (or until the goal is reached, or the environment's episode ends), seeing
the goal in its observation and rewarded for reaching it (`LevelGoals`), and answers the
level above with one transition. The bottom level acts in the environment itself.

Each level counts its own steps and episodes (a level above the bottom, its goals and their
attempts), and its training rhythm follows them; its learning rate schedule follows the
environment's clock instead (`graph_clock`), so that one schedule over the run's env steps
or episodes means the same for every level.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from gymnasium import spaces

from coach import validation as check
from coach.agents.agent import Agent
from coach.agents.learning import Clock
from coach.agents.parameters import AgentParameters
from coach.environments.environment import Environment
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import Level, LevelGoals, LevelManager
from coach.logging.experiment_logger import AgentLogger
from coach.validation import InvalidParameter


@runtime_checkable
class HierarchyMember(Protocol):
    """An agent that takes its place in a hierarchy when the graph builds it (HAC)."""

    def join_hierarchy(
        self, sets_goals: bool, horizon: int | None, horizon_below: int | None
    ) -> None:
        """Whether the agent's level sets subgoals, its own horizon (``None`` at the top)
        and the horizon of the level below it (``None`` at the bottom)."""
        ...


@dataclass(slots=True, kw_only=True)
class HierarchyParameters:
    """The shape of a hierarchy: horizons and goals of the levels below the top."""

    horizons: list[int] = field(default_factory=lambda: [10])
    """Each level's most steps per goal, from the level below the top down to the bottom."""
    goals: LevelGoals = field(default_factory=LevelGoals)
    """How the levels below the top see, reach and are rewarded for their goals."""
    goal_space: spaces.Box | None = None
    """The space of the goals the upper levels set; ``None`` is the environment's achieved
    goal space."""

    def validate(self) -> None:
        for i, horizon in enumerate(self.horizons):
            check.whole(f"horizons.{i}", horizon, 1)


class HRLGraphManager(GraphManager):
    """Levels of agents, top first in ``agent_params``; level ``i + 1`` pursues the goals of
    level ``i``.

    Args:
        agent_params: One agent per level, the top level's first.
        env_params: The (goal-based) environment.
        schedule_params: How long each phase lasts.
        hierarchy: Horizons and goals of the levels below the top (one horizon each).
        name: The graph's name.
    """

    def __init__(
        self,
        agent_params: list[AgentParameters],
        env_params: GymEnvironmentParameters,
        schedule_params: ScheduleParameters,
        hierarchy: HierarchyParameters | None = None,
        name: str = "hrl_graph",
    ) -> None:
        super().__init__(name, schedule_params)
        self.agent_params = agent_params
        self.env_params = env_params
        self.hierarchy = hierarchy or HierarchyParameters()
        if len(agent_params) < 2:
            raise CoachError("a hierarchy needs at least two levels of agents")
        self._check_horizons()

    def _check_horizons(self) -> None:
        levels = len(self.agent_params)
        if len(self.hierarchy.horizons) != levels - 1:
            raise CoachError(
                f"{levels} levels need {levels - 1} horizons (one per level below the top), "
                f"got hierarchy.horizons = {self.hierarchy.horizons}"
            )

    def parameters(self) -> dict[str, Any]:
        return {
            "agents": self.agent_params,
            "environment": self.env_params,
            "schedule": self.schedule_params,
            "hierarchy": self.hierarchy,
        }

    def validate(self, workers: int = 1) -> None:
        super().validate()
        self.schedule_params.validate_for_copies(self.env_params.num_envs)
        self._check_horizons()  # an override may have changed them
        for i, params in enumerate(self.agent_params):
            try:
                params.validate_for_environment(self.env_params.num_envs)
            except InvalidParameter as error:
                raise error.under(f"agents.{i}") from None

    def _build(self, context: RunContext) -> tuple[Environment, Sequence[Level]]:
        environment = self.env_params.build()
        goals = self.hierarchy.goals
        goal_space: spaces.Space[Any] | None = self.hierarchy.goal_space
        if goal_space is None:
            goal_space = environment.observation_space.spaces.get(goals.achieved_goal_key)
            if goal_space is None:
                raise CoachError(
                    f"the upper levels' goals default to the environment's "
                    f"{goals.achieved_goal_key!r} Box; the observation has "
                    f"{sorted(environment.observation_space.spaces)}: give goal_space"
                )
        levels: list[LevelManager] = []
        below: Environment = environment
        count = len(self.agent_params)
        for index in reversed(range(count)):  # the bottom level first
            params = self.agent_params[index]
            top = index == 0
            name = f"level_{index}"
            observation_space = (
                below.observation_space
                if top
                else goals.agent_space(below.observation_space, goal_space)
            )
            log = (
                AgentLogger(self.logger, f"{name}.{params.name}", sub_episodes=not top)
                if self.logger
                else None
            )
            agent = params.agent_class()(
                params,
                observation_space,
                below.action_space,
                below.num_envs,
                seed=self.agent_seed(index),
                device=context.device,
                log=log,
            )
            if isinstance(agent, HierarchyMember):  # HAC: subgoals above the bottom, penalties
                horizons = self.hierarchy.horizons
                agent.join_hierarchy(
                    sets_goals=index < count - 1,
                    horizon=None if top else horizons[index - 1],
                    horizon_below=horizons[index] if index < count - 1 else None,
                )
            level = LevelManager(
                name,
                agent,
                below,
                steps_per_action=1 if top else self.hierarchy.horizons[index - 1],
                action_space=None if top else goal_space,
                goals=None if top else goals,
            )
            levels.append(level)
            below = level
        agents = [level.agent for level in levels]  # the bottom level's first
        clock = graph_clock(bottom=agents[0], top=agents[-1])
        for agent in agents:
            agent.run_clock = clock
        return environment, levels


def graph_clock(bottom: Agent, top: Agent) -> Callable[[], Clock]:
    """The environment's clock in a hierarchy: its training env steps and the gradient steps
    of the level that acts in it (the bottom one), and its episodes, the top level's."""

    def clock() -> Clock:
        return Clock(bottom.training_steps, bottom.training_env_steps, top.episodes)

    return clock


class HACGraphManager(HRLGraphManager):
    """A hierarchy of HAC levels (`coach.agents.hac`): each level learns from hindsight
    action and goal transitions and tests its subgoals (Levy et al., 2019)."""

    def __init__(
        self,
        agent_params: list[AgentParameters],
        env_params: GymEnvironmentParameters,
        schedule_params: ScheduleParameters,
        hierarchy: HierarchyParameters | None = None,
        name: str = "hac_graph",
    ) -> None:
        super().__init__(agent_params, env_params, schedule_params, hierarchy, name)
