"""A level with several agents on one multi-agent environment.

The level manager holds its agents by name and the seats they play (`Seats`: which agent id
in which environment copy each of an agent's slots is). At each step every agent acts in the
slots whose id decides now (all of them in a simultaneous game, until an id leaves; one per
copy in a turn-based one), the environment steps with those actions, and each agent observes
the outcomes of its slots: an outcome closes the slot's last action, whenever it was taken,
with the rewards its id collected since. A slot whose id decides for the first time in an
episode without an outcome to observe (the second player of a game) begins its episode there.

An agent that acts and learns in all its slots at every step takes the same path as on a
single-agent environment, with its ids stacked along its batch: a shared agent on a
simultaneous game computes the same numbers as one agent on the stacked batch.

The level is itself an `Environment` to the graph above it: its observation is every id's,
its reward the team's (the sum over the ids scored, every id by default), and an episode is
an environment copy's episode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.agents.agent import Agent
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, EnvResponse, Observation
from coach.environments.multi_agent import MultiAgentEnvironment, MultiAgentResponse
from coach.errors import CoachError
from coach.level_manager import Level
from coach.logging.experiment_logger import ExperimentLogger
from coach.multi_agent.action_records import ActionRecords
from coach.multi_agent.seats import Seats
from coach.multi_agent.stacked import StackedResponse
from coach.multi_agent.watchers import Acted, MultiAgentStepObserver, SlotActor


class MultiAgentLevelManager(Level):
    """Several agents acting on one multi-agent environment.

    Args:
        name: The level's name in logs.
        agents: The agents (or self-play's opponents) by name.
        seats: The seats of each agent's slots, by agent name; each agent has as many slots
            as it has copies (``num_envs``).
        environment: The multi-agent environment.
        logger: Where the team's episodes are reported (the level's own TensorBoard run),
            and each id's (its own run) when an agent plays several ids; ``None`` reports
            none.
    """

    def __init__(
        self,
        name: str,
        agents: dict[str, SlotActor],
        seats: dict[str, Seats],
        environment: MultiAgentEnvironment,
        logger: ExperimentLogger | None = None,
    ) -> None:
        if set(agents) != set(seats):
            raise CoachError(f"seats for {sorted(seats)}, agents {sorted(agents)}")
        for agent_name, agent in agents.items():
            if agent.num_envs != len(seats[agent_name]):
                raise CoachError(
                    f"agent {agent_name!r} acts in {agent.num_envs} copies, its seats are "
                    f"{len(seats[agent_name])}"
                )
        self.name = name
        self.steps_per_action = 1
        """Environment steps per call of `step` (a level of a hierarchy may run several)."""
        self.actors = agents
        self.seats = seats
        self.environment = environment
        self.logger = logger
        self.num_envs = environment.num_envs
        self.agent_ids = environment.agent_ids
        self.observation_space = spaces.Dict(
            {
                f"{agent_id}.{key}": space
                for agent_id in self.agent_ids
                for key, space in environment.observation_spaces[agent_id].spaces.items()
            }
        )
        self.action_space = None
        self.scored = np.ones((len(self.agent_ids), self.num_envs), dtype=bool)
        """(n_ids, B): whose rewards make the level's reward (the team's by default; the
        learner's seat in self-play)."""
        self._actions = {
            agent_id: np.zeros(
                (self.num_envs, *(environment.action_spaces[agent_id].shape or ())),
                dtype=environment.action_spaces[agent_id].dtype,
            )
            for agent_id in self.agent_ids
        }
        self.observers: list[MultiAgentStepObserver] = []
        """Told of every reset and step of the level's environment."""
        self._current: StackedResponse | None = None
        self._phase = RunPhase.HEATUP
        self._score = np.zeros(self.num_envs)
        self.records = {name: ActionRecords(actor.num_envs) for name, actor in agents.items()}
        """Each slot's last action record, until its outcome comes (`ActionRecords`)."""
        self._agents = {name: a for name, a in agents.items() if isinstance(a, Agent)}
        for agent in self._agents.values():
            # The level gathers new arrays for every agent, and drives its copies as slots.
            agent.join_level(fresh_observations=True, in_slots=True)

    @property
    def agents(self) -> dict[str, Agent]:
        """The learning agents of the level, by name (self-play's opponents are not)."""
        return self._agents

    # -- the environment interface --------------------------------------------------------

    @property
    def phase(self) -> RunPhase:
        return self._phase

    @phase.setter
    def phase(self, phase: RunPhase) -> None:
        self._phase = phase
        for actor in self.actors.values():
            actor.phase = phase

    @property
    def total_steps(self) -> int:  # type: ignore[override]
        return int(self.environment.total_steps)

    @property
    def total_episodes(self) -> int:  # type: ignore[override]
        return int(self.environment.total_episodes)

    def reset(self, seed: int | None = None) -> EnvResponse:
        response = self.environment.reset(seed)
        stacked = StackedResponse(response, self.agent_ids)
        self.on_reset(stacked, np.ones(self.num_envs, dtype=bool))
        for observer in self.observers:
            observer.on_reset(stacked, self._phase)
        for name, actor in self.actors.items():
            seats = self.seats[name]
            first = stacked.outcomes(seats, None)
            actor.reset(EnvResponse.first(first.observation, len(seats)))
            self.records[name] = ActionRecords(actor.num_envs)
        self._current = stacked
        self._score = np.zeros(self.num_envs)
        observation = self._team_observation(stacked.observation)
        return EnvResponse.first(observation, self.num_envs, response.infos)

    def step(self, action: Any = None) -> EnvResponse:
        """Every agent acts in its slots that decide, the environment steps, every agent
        observes its slots' outcomes and trains when its schedule says so.

        Args:
            action: A goal from the level above (handed to every agent); ``None`` at the top.
        """
        current = self._current
        if current is None:
            raise CoachError(f"level {self.name!r} steps before its first reset")
        if action is not None:
            for agent in self.agents.values():
                agent.set_goal(action)
        acted_in_all: dict[str, bool] = {}
        acted: list[Acted] = []
        for name, actor in self.actors.items():
            seats = self.seats[name]
            deciding = current.acting[seats.ids, seats.copies]
            if not deciding.any():
                acted_in_all[name] = False
                continue
            every = bool(deciding.all())
            rows = None if every else np.flatnonzero(deciding)
            info = actor.act(rows)
            self.records[name].put(slice(None) if rows is None else rows, info)
            self._route_actions(seats, rows, np.asarray(info.env_action))
            acted_in_all[name] = every
            if self.observers:
                acted.append(self._acted(name, seats, rows, info))
        response = self.environment.step(self._actions)
        stacked = StackedResponse(response, self.agent_ids)
        for observer in self.observers:
            observer.on_step(acted, stacked, self._phase)
        for name, actor in self.actors.items():
            self._observe(name, actor, stacked, acted_in_all[name])
        answer = self._team_response(stacked, response)  # scored by the seats that played
        if response.copy_done.any() and self.on_reset(stacked, response.copy_done):
            for name, actor in self.actors.items():
                self._begin_moved(name, actor, stacked, response.copy_done)
        for actor in self.actors.values():
            actor.train()
        self.trained()
        self._current = stacked
        return answer

    def on_reset(self, stacked: StackedResponse, copies: np.ndarray) -> bool:
        """New episodes started in ``copies`` (a (B,) mask): a hook for self-play, which
        moves seats between episodes; returns whether any seat moved."""
        return False

    def _acted(self, name: str, seats: Seats, rows: np.ndarray | None, info: ActionInfo) -> Acted:
        every = slice(None) if rows is None else rows
        behaviour = {}
        if "action_probabilities" in info.extras:
            behaviour["action_probabilities"] = info.extras["action_probabilities"]
        elif info.log_prob is not None:
            behaviour["action_log_prob"] = np.asarray(info.log_prob)
        return Acted(
            name, seats.ids[every], seats.copies[every], np.asarray(info.env_action), behaviour
        )

    def _route_actions(self, seats: Seats, rows: np.ndarray | None, env_action: np.ndarray) -> None:
        ids, copies = (
            (seats.ids, seats.copies) if rows is None else (seats.ids[rows], seats.copies[rows])
        )
        for index in np.unique(ids):
            mine = ids == index
            self._actions[self.agent_ids[index]][copies[mine]] = env_action[mine]

    def _observe(
        self, name: str, actor: SlotActor, stacked: StackedResponse, acted_in_all: bool
    ) -> None:
        """The outcomes of ``actor``'s slots, then the first decisions of slots that begin an
        episode without one."""
        seats = self.seats[name]
        outcome = stacked.outcome[seats.ids, seats.copies]
        if outcome.any():
            if acted_in_all and outcome.all():  # the single-agent path, every slot at once
                actor.observe(stacked.outcomes(seats, None))
            else:
                rows = np.flatnonzero(outcome)
                actor.observe(stacked.outcomes(seats, rows), rows, self.records[name].take(rows))
            self._log_ids(name, seats, stacked, outcome)
        beginning = (
            stacked.acting[seats.ids, seats.copies]
            & stacked.started[seats.ids, seats.copies]
            & ~outcome
        )
        if beginning.any():
            rows = np.flatnonzero(beginning)
            actor.begin(stacked.observations(seats, rows), rows)

    def _begin_moved(
        self, name: str, actor: SlotActor, stacked: StackedResponse, copies: np.ndarray
    ) -> None:
        """After seats moved in ``copies``: their slots whose new id decides now begin."""
        seats = self.seats[name]
        ids, slot_copies = seats.ids, seats.copies
        starting = (
            copies[slot_copies]
            & stacked.acting[ids, slot_copies]
            & stacked.started[ids, slot_copies]
        )
        if starting.any():
            rows = np.flatnonzero(starting)
            actor.begin(stacked.observations(seats, rows), rows)

    def _log_ids(
        self, name: str, seats: Seats, stacked: StackedResponse, outcome: np.ndarray
    ) -> None:
        """Each id's finished episodes in its own run, when ``name`` plays several ids."""
        logger = self.logger
        if logger is None or len(np.unique(seats.ids)) < 2:
            return
        ended = outcome & (stacked.terminated | stacked.truncated)[seats.ids, seats.copies]
        for slot in np.flatnonzero(ended):
            index, copy = seats.ids[slot], seats.copies[slot]
            logger.episode(
                f"{self.name}.{name}.{self.agent_ids[index]}",
                self._phase,
                float(stacked.episode_return[index, copy]),
                int(stacked.episode_length[index, copy]),
                sub_episode=True,
            )

    def report_episodes(
        self, phase: RunPhase, episodes: list[tuple[float, int, float | None]]
    ) -> None:
        """The team's episodes, in the level's own run (counted as the run's episodes)."""
        if self.logger is not None:
            for reward, length, success in episodes:
                self.logger.episode(self.name, phase, reward, length, success)

    def _team_observation(self, per_id: list[Observation]) -> Observation:
        """Every id's observation, keyed ``<id>.<key>``: what a level above would see."""
        return {
            f"{agent_id}.{key}": value
            for agent_id, observation in zip(self.agent_ids, per_id, strict=True)
            for key, value in observation.items()
        }

    def _team_response(self, stacked: StackedResponse, response: MultiAgentResponse) -> EnvResponse:
        """The level's answer as an environment: the scored ids' rewards summed per copy,
        an episode per environment copy's episode."""
        scored = self.scored & stacked.outcome
        reward = np.where(scored, stacked.reward, 0.0).sum(axis=0)
        self._score += reward
        done = response.copy_done
        truncated = done & (stacked.truncated & stacked.outcome).any(axis=0)
        episode_return = self._score.copy()
        self._score[done] = 0.0
        if self.logger is not None and self._phase is not RunPhase.EVALUATE and done.any():
            self.report_episodes(
                self._phase,
                [
                    (float(episode_return[c]), int(response.copy_length[c]), None)
                    for c in np.flatnonzero(done)
                ],
            )
        return EnvResponse(
            observation=self._team_observation(stacked.observation),
            reward=reward.astype(np.float32),
            terminated=done & ~truncated,
            truncated=truncated,
            # Each id's successor where its step closed (the final one where it ended).
            next_observation=self._team_observation(stacked.next_observation),
            episode_return=episode_return,
            episode_length=response.copy_length,
            infos=self.team_infos(stacked, response),
            episode_started=done,
        )

    def team_infos(
        self, stacked: StackedResponse, response: MultiAgentResponse
    ) -> list[dict[str, Any]]:
        """The infos of the level's response, per copy (the environment's)."""
        return response.infos

    # -- checkpoints -----------------------------------------------------------------------

    def agents_state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        """Every agent's (and self-play's opponents') state, the seats, and where the
        episodes in flight stand: who decides next, on what, and the team's returns."""
        current = self._current
        return {
            "actors": {
                name: actor.state_dict(include_memory) for name, actor in self.actors.items()
            },
            "seats": {name: (s.ids.copy(), s.copies.copy()) for name, s in self.seats.items()},
            "current": None
            if current is None
            else {name: getattr(current, name) for name in StackedResponse.__slots__},
            "score": self._score.copy(),
            "records": {name: r.state_dict() for name, r in self.records.items()},
        }

    def load_agents_state_dict(self, state: Any, episodes_in_flight: bool = True) -> None:
        if set(state["actors"]) != set(self.actors):
            raise CoachError(
                f"the checkpoint has agents {sorted(state['actors'])}, level {self.name!r} "
                f"has {sorted(self.actors)}"
            )
        for name, actor in self.actors.items():
            actor.load_state_dict(state["actors"][name], episodes_in_flight=episodes_in_flight)
        if episodes_in_flight and state["current"] is not None:
            for name, (ids, copies) in state["seats"].items():
                self.seats[name] = Seats(np.asarray(ids), np.asarray(copies))
            current = StackedResponse.__new__(StackedResponse)
            for name, value in state["current"].items():
                setattr(current, name, value)
            self._current = current
            self._score = np.asarray(state["score"], dtype=np.float64)
            for name, records in state["records"].items():
                self.records[name].load_state_dict(records)

    def with_memories(self, state: Any) -> Any:
        actors = {
            name: {
                **actor_state,
                "memory": self.agents[name].memory.state_dict()  # type: ignore[union-attr]
                if name in self.agents and self.agents[name].memory is not None
                else actor_state.get("memory"),
            }
            for name, actor_state in state["actors"].items()
        }
        return {**state, "actors": actors}

    def close(self) -> None:
        self.environment.close()
