"""The multi-agent graph: several agents on one level of a multi-agent environment."""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from coach.agents.agent import Agent
from coach.agents.log import AgentLog
from coach.agents.parameters import AgentParameters
from coach.errors import CoachError
from coach.graph_managers.evaluation import EvaluationResult
from coach.graph_managers.graph_manager import GraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import Level
from coach.logging.experiment_logger import AgentLogger, ExperimentLogger
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
        scored: Id patterns whose rewards make the level's reward, its evaluations' and
            best.pt's: every id's (the team's) by default, one side's in a competitive game
            (in self-play, always the learner's).
        name: The graph's name.
    """

    def __init__(
        self,
        agents: dict[str, AgentParameters],
        env_params: Any,
        schedule_params: ScheduleParameters,
        mapping: dict[str, str] | None = None,
        self_play: SelfPlayParameters | None = None,
        scored: tuple[str, ...] = ("*",),
        name: str = "multi_agent_graph",
    ) -> None:
        super().__init__(name, schedule_params)
        self.scored = scored
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
        self.schedule_params.validate_for_copies(self.env_params.num_envs, workers)
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
        """In self-play, the win rate with each loss weighing a hundred wins: against the
        evaluation's opponent the learner should never lose, and then win most (an agent
        that loses a game to a random player has a hole in its play that a stronger one
        finds); the team's mean reward otherwise."""
        if self.self_play is not None and result.successes:
            losses = float(np.mean(np.asarray(result.rewards) < 0))
            return result.success_rate - 100.0 * losses
        return result.mean_reward

    @property
    def later_on_ties(self) -> bool:  # type: ignore[override]
        """In self-play a later agent as good as the best so far replaces it: it has met
        stronger snapshots of itself."""
        return self.self_play is not None

    def _build(self, context: RunContext) -> tuple[Any, Sequence[Level]]:
        environment = self.env_params.build()
        logger = self.logger

        def make(spec: AgentSpec) -> Agent:
            log = (
                AgentLogger(logger, f"main_level.{spec.params.name}", sub_episodes=True)
                if logger is not None and spec.learns
                else None
            )
            agent: Agent = spec.params.agent_class()(
                spec.params,
                spec.observation_space,
                spec.action_space,
                spec.num_slots,
                seed=self.agent_seed(spec.index),
                device=context.device,
                log=log,
                learns=spec.learns,
            )
            return agent

        level = self.acting_graph().level(environment, make, self.agent_seed, logger)
        return environment, [level]

    def acting_graph(self) -> MultiAgentActing:
        return MultiAgentActing(
            self.agent_params, self.env_params, self.mapping, self.self_play, self.scored
        )


@dataclass(slots=True)
class AgentSpec:
    """One agent a multi-agent level needs: its parameters, spaces, slots, index (its seed's)
    and whether it learns (self-play's opponents and rollout workers' agents do not)."""

    params: AgentParameters
    observation_space: Any
    action_space: Any
    num_slots: int
    index: int
    learns: bool


@dataclass(slots=True)
class MultiAgentActing:
    """The level of a multi-agent graph: by the learner, with its agents learning; by a
    rollout worker (`coach.parallel.worker.ActingGraph`), with them acting only."""

    agent_params: dict[str, AgentParameters]
    env_params: Any
    mapping: dict[str, str]
    self_play: SelfPlayParameters | None = None
    scored: tuple[str, ...] = ("*",)

    def build(self, seed: int, logs: Callable[[str], AgentLog]) -> Level:
        """A rollout worker's level: its agents act only, each logs to ``logs(name)``."""
        environment = self.env_params.build()

        def seed_of(index: int) -> int:
            return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])

        def make(spec: AgentSpec) -> Agent:
            params = copy.deepcopy(spec.params)
            agent: Agent = params.agent_class()(
                params,
                spec.observation_space,
                spec.action_space,
                spec.num_slots,
                seed=seed_of(spec.index),
                log=logs(params.name) if spec.learns else None,
                learns=False,
            )
            return agent

        try:
            return self.level(environment, make, seed_of, None)
        except BaseException:
            environment.close()
            raise

    def level(
        self,
        environment: Any,
        make: Callable[[AgentSpec], Agent],
        seed_of: Callable[[int], int],
        logger: ExperimentLogger | None,
    ) -> MultiAgentLevelManager:
        """The level on ``environment``, its agents made by ``make``."""
        if self.self_play is not None:
            return self._self_play_level(environment, self.self_play, make, seed_of, logger)
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
            observation_space = environment.observation_spaces[first]
            action_space = environment.action_spaces[first]
            spec = AgentSpec(params, observation_space, action_space, len(seats[name]), k, True)
            agents[name] = make(spec)
        level = MultiAgentLevelManager("main_level", agents, seats, environment, logger)
        scored = [any(fnmatch.fnmatchcase(i, p) for p in self.scored) for i in level.agent_ids]
        if not any(scored):
            raise CoachError(f"scored={self.scored} matches none of the ids {level.agent_ids}")
        level.scored[:] = np.asarray(scored)[:, None]
        return level

    def _self_play_level(
        self,
        environment: Any,
        self_play: SelfPlayParameters,
        make: Callable[[AgentSpec], Agent],
        seed_of: Callable[[int], int],
        logger: ExperimentLogger | None,
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
        learner = make(AgentSpec(params, observation_space, action_space, num_envs, 0, True))

        def make_player() -> Agent:
            return make(AgentSpec(params, observation_space, action_space, num_envs, 1, False))

        opponents = OpponentPool(self_play, make_player, num_envs, seed=seed_of(2))
        return SelfPlayLevelManager(
            "main_level", learner, opponents, environment, seed_of(3), logger
        )
