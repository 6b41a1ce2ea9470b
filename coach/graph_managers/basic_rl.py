"""The basic graph: one agent acting in one (batched) environment."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from coach.agents.agent import Agent
from coach.agents.log import AgentLog
from coach.agents.parameters import AgentParameters
from coach.environments.environment import Environment
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import Level, LevelManager
from coach.logging.experiment_logger import AgentLogger
from coach.validation import InvalidParameter


class BasicRLGraphManager(GraphManager):
    """One level: an agent and its environment.

    Args:
        agent_params: The agent.
        env_params: The environment.
        schedule_params: How long each phase lasts.
        name: The graph's name.
    """

    def __init__(
        self,
        agent_params: AgentParameters,
        env_params: GymEnvironmentParameters,
        schedule_params: ScheduleParameters,
        name: str = "basic_rl_graph",
    ) -> None:
        super().__init__(name, schedule_params)
        self.agent_params = agent_params
        self.env_params = env_params

    def parameters(self) -> dict[str, Any]:
        return {
            "agent": self.agent_params,
            "environment": self.env_params,
            "schedule": self.schedule_params,
        }

    def validate(self, workers: int = 1) -> None:
        """`GraphManager.validate`, and the agent against the env copies it learns from at
        once: this graph's, or each of ``workers`` rollout workers' (`coach.parallel`)."""
        super().validate()
        self.schedule_params.validate_for_copies(self.env_params.num_envs, workers)
        try:
            self.agent_params.validate_for_environment(self.env_params.num_envs * workers)
        except InvalidParameter as error:
            raise error.under("agent") from None

    def acting_graph(self) -> SingleAgentActing:
        return SingleAgentActing(self.agent_params, self.env_params)

    def _build(self, context: RunContext) -> tuple[Environment, Sequence[Level]]:
        environment = self.env_params.build()
        agent = self._make_agent(self.agent_params, environment, context)
        return environment, [LevelManager("main_level", agent, environment)]

    def _make_agent(
        self, params: AgentParameters, environment: Environment, context: RunContext
    ) -> Agent:
        """The agent of ``params`` for ``environment``, logging to the main level's run."""
        log = (
            AgentLogger(self.logger, f"main_level.{params.name}")
            if self.logger is not None
            else None
        )
        agent: Agent = params.agent_class()(
            params,
            environment.observation_space,
            environment.action_space,
            environment.num_envs,
            seed=self.agent_seed(0),
            device=context.device,
            log=log,
        )
        return agent


@dataclass(slots=True)
class SingleAgentActing:
    """A basic graph's level for a rollout worker (`coach.parallel.worker.ActingGraph`): its
    agent, acting only, in its own copies of the environment."""

    agent_params: AgentParameters
    env_params: GymEnvironmentParameters

    def build(self, seed: int, logs: Callable[[str], AgentLog]) -> Level:
        environment = self.env_params.build()
        try:
            params = copy.deepcopy(self.agent_params)
            agent: Agent = params.agent_class()(
                params,
                environment.observation_space,
                environment.action_space,
                environment.num_envs,
                seed=seed,
                log=logs(params.name),
                learns=False,
            )
        except BaseException:
            environment.close()
            raise
        return LevelManager("main_level", agent, environment)
