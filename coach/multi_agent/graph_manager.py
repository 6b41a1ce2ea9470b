"""The multi-agent graph: several agents on one level of a multi-agent environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coach.agents.agent import Agent
from coach.agents.parameters import AgentParameters
from coach.errors import CoachError
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import Level
from coach.logging.experiment_logger import AgentLogger
from coach.multi_agent.level import MultiAgentLevelManager
from coach.multi_agent.seats import Seats, assign_ids
from coach.multi_agent.self_play import OpponentPool, SelfPlayLevelManager, SelfPlayParameters
from coach.validation import InvalidParameter


class MultiAgentGraphManager(GraphManager):
    """One level of several agents on a multi-agent (PettingZoo) environment.

    Which agent plays which of the environment's agent ids is the ``mapping``: id patterns
    to agent names. One agent for every id shares its parameters among them (their steps
    stacked along its batch); an agent per id makes independent learners; patterns such as
    ``adversary_*`` make teams, each with its own agent (of any family).

    Args:
        agents: The agents by name (each name is its TensorBoard run, ``main_level.<name>``).
        env_params: The multi-agent environment (`PettingZooEnvironmentParameters`).
        schedule_params: How long each phase lasts.
        mapping: Id patterns (``fnmatch``) to agent names, the first match deciding; by
            default the only agent plays every id.
        self_play: Two-player self-play (`SelfPlayParameters`): its learner plays either
            seat against snapshots of itself, and the mapping is not used.
        name: The graph's name.
    """

    def __init__(
        self,
        agents: dict[str, AgentParameters],
        env_params: Any,
        schedule_params: ScheduleParameters,
        mapping: dict[str, str] | None = None,
        self_play: SelfPlayParameters | None = None,
        name: str = "multi_agent_graph",
    ) -> None:
        super().__init__(name, schedule_params)
        if not agents:
            raise CoachError("a multi-agent graph needs at least one agent")
        if mapping is None:
            if len(agents) != 1:
                raise CoachError(
                    f"with several agents ({sorted(agents)}) say which ids each plays: "
                    f'mapping={{"pattern": "agent name", ...}}'
                )
            mapping = {"*": next(iter(agents))}
        self.agent_params = agents
        self.env_params = env_params
        self.mapping = mapping
        self.self_play = self_play
        if self_play is not None and self_play.learner not in agents:
            raise CoachError(
                f"self_play.learner is {self_play.learner!r}, the agents are {sorted(agents)}"
            )

    def parameters(self) -> dict[str, Any]:
        roots = {
            "agents": self.agent_params,
            "environment": self.env_params,
            "schedule": self.schedule_params,
        }
        if self.self_play is not None:
            roots["self_play"] = self.self_play
        return roots

    def validate(self, workers: int = 1) -> None:
        """`GraphManager.validate`, then each agent against the slots it learns from at
        once: its ids times the environment copies (of each of ``workers``)."""
        super().validate()
        for name, params in self.agent_params.items():
            if params.name != name:
                raise InvalidParameter(
                    f"agents.{name}.name", f"must be the agent's key, {name!r}", params.name
                )
        copies = self.env_params.num_envs * workers
        if self.self_play is not None:
            slots = {self.self_play.learner: copies}
        else:
            played = assign_ids(self.env_params.agent_ids(), list(self.agent_params), self.mapping)
            slots = {name: len(ids) * copies for name, ids in played.items()}
        for name, count in slots.items():
            try:
                self.agent_params[name].validate_for_environment(count)
            except InvalidParameter as error:
                raise error.under(f"agents.{name}") from None

    def score(self, result: EvaluationResult) -> float:
        """The win rate in self-play (the learner's evaluation returns sum to a draw's zero
        as easily by trading wins for losses); the team's mean reward otherwise."""
        if self.self_play is not None and result.successes:
            return result.success_rate
        return result.mean_reward

    def _build(self, context: RunContext) -> tuple[Any, Sequence[Level]]:
        environment = self.env_params.build()
        if self.self_play is not None:
            return environment, [self._self_play_level(environment, self.self_play, context)]
        played = assign_ids(environment.agent_ids, list(self.agent_params), self.mapping)
        agents: dict[str, Any] = {}
        seats: dict[str, Seats] = {}
        for k, (name, params) in enumerate(self.agent_params.items()):
            ids = played[name]
            first = ids[0]
            for other in ids[1:]:
                if (
                    environment.observation_spaces[other] != environment.observation_spaces[first]
                    or environment.action_spaces[other] != environment.action_spaces[first]
                ):
                    raise CoachError(
                        f"agent {name!r} plays ids {ids}, whose spaces differ ({first}: "
                        f"{environment.observation_spaces[first]}, "
                        f"{environment.action_spaces[first]}; {other}: "
                        f"{environment.observation_spaces[other]}, "
                        f"{environment.action_spaces[other]}); map them to different agents"
                    )
            indices = [environment.agent_ids.index(i) for i in ids]
            seats[name] = Seats.stacked(indices, environment.num_envs)
            agents[name] = self._make_agent(
                params,
                environment.observation_spaces[first],
                environment.action_spaces[first],
                len(seats[name]),
                k,
                context,
            )
        level = MultiAgentLevelManager("main_level", agents, seats, environment, self.logger)
        return environment, [level]

    def _self_play_level(
        self, environment: Any, self_play: SelfPlayParameters, context: RunContext
    ) -> SelfPlayLevelManager:
        """The learner and its pool of snapshots on a two-player game."""
        params = self.agent_params[self_play.learner]
        ids = environment.agent_ids
        observation_space = environment.observation_spaces[ids[0]]
        action_space = environment.action_spaces[ids[0]]
        if len(ids) == 2 and (
            environment.observation_spaces[ids[1]] != observation_space
            or environment.action_spaces[ids[1]] != action_space
        ):
            raise CoachError(f"self-play needs both players' spaces alike; {ids} differ")
        num_envs = environment.num_envs
        learner = self._make_agent(params, observation_space, action_space, num_envs, 0, context)

        def make_player() -> Agent:
            player: Agent = params.agent_class()(
                params,
                observation_space,
                action_space,
                num_envs,
                seed=self.agent_seed(1),
                device=context.device,
                learns=False,
            )
            return player

        opponents = OpponentPool(self_play, make_player, num_envs, seed=self.agent_seed(2))
        return SelfPlayLevelManager(
            "main_level", learner, opponents, environment, self.agent_seed(3), self.logger
        )

    def _make_agent(
        self,
        params: AgentParameters,
        observation_space: Any,
        action_space: Any,
        num_slots: int,
        index: int,
        context: RunContext,
    ) -> Agent:
        """The agent of ``params`` for its slots, logging to its own run."""
        log = (
            AgentLogger(self.logger, f"main_level.{params.name}", sub_episodes=True)
            if self.logger is not None
            else None
        )
        agent: Agent = params.agent_class()(
            params,
            observation_space,
            action_space,
            num_slots,
            seed=self.agent_seed(index),
            device=context.device,
            log=log,
        )
        return agent
