"""Recording a multi-agent run's episodes (``--record-dataset NAME`` on a multi-agent preset):
one dataset per agent id, ``NAME`` with the id added to its dataset name
(``spread/ppo`` gives ``spread/ppo_agent_0-v0``, ``spread/ppo_agent_1-v0``, ...).

Each id's episode is its own stream of decisions, recorded where a learning agent plays it
(not where self-play's frozen opponents do): the observation it acted on (as the
environment gave it, before any of Coach's filters), the action it took, the reward its
outcome summed (in a turn-based game, what the others' moves did to it too), and the flags
of its end; the behaviour is its agent's (the probability of every action for discrete
agents, the log density of the action otherwise). The recorder watches the level
(`MultiAgentLevelManager.observers`); the environment never knows. As for one agent
(`coach.batch.recording`), only whole episodes acted in a recorded phase are kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from minari.dataset.minari_dataset import DATASET_ID_RE

from coach.agents.agent import Agent
from coach.batch.datasets import write_dataset
from coach.batch.episodes import Episode
from coach.batch.ids import check_new_dataset
from coach.batch.recording import _OpenEpisode, dropped_behaviour_note, shared_behaviour
from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.exploration_policy import uniform_behaviour
from coach.multi_agent.level import MultiAgentLevelManager
from coach.multi_agent.stacked import StackedResponse
from coach.multi_agent.watchers import Acted


def dataset_of(name: str, agent_id: str) -> str:
    """The dataset id of ``agent_id``'s episodes when the run records dataset ``name``."""
    match = DATASET_ID_RE.fullmatch(name)
    if match is None:
        check_new_dataset(name)  # says what a valid id is
    assert match is not None
    namespace, dataset, version = match.group("namespace", "dataset", "version")
    prefix = f"{namespace}/" if namespace else ""
    return f"{prefix}{dataset}_{agent_id}" + (f"-v{version}" if version is not None else "")


class MultiAgentRecorder:
    """Whole episodes of every agent id of a multi-agent level, acted in ``phases``.

    Args:
        level: The level whose environment is recorded; the recorder joins its observers and
            asks its agents to log their behaviour.
        phases: The phases whose episodes are kept.
        dataset: The dataset name (each id's is made from it) and the command that ran.

    Raises:
        CoachError: when an id's dataset is not a valid new id.
    """

    def __init__(
        self,
        level: MultiAgentLevelManager,
        phases: Iterable[RunPhase],
        dataset: tuple[str, str] = ("", ""),
    ) -> None:
        self.level = level
        self.phases = frozenset(phases)
        self.dataset = dataset
        self.ids = level.agent_ids
        self.names = {agent_id: dataset_of(dataset[0], agent_id) for agent_id in self.ids}
        if dataset[0]:
            for name in self.names.values():
                check_new_dataset(name)
        self.episodes: dict[str, list[Episode]] = {agent_id: [] for agent_id in self.ids}
        self._open: dict[tuple[int, int], _OpenEpisode] = {}
        for agent in level.agents.values():
            agent.policy.log_behaviour = True
        level.observers.append(self)

    @property
    def steps(self) -> int:
        """Steps in the whole episodes recorded so far, over every id."""
        return sum(len(e.rewards) for episodes in self.episodes.values() for e in episodes)

    def _raw(self, stacked: StackedResponse, index: int, copy: int, next_: bool) -> Any:
        """The id's observation in the copy, as the environment gave it (a flat observation
        without the dict the adapter puts it in)."""
        observation = (stacked.next_observation if next_ else stacked.observation)[index]
        if list(observation) == ["observation"]:
            return np.array(observation["observation"][copy])
        return {key: np.array(value[copy]) for key, value in observation.items()}

    def on_reset(self, stacked: StackedResponse, phase: RunPhase) -> None:
        """New episodes in every copy: the open ones are dropped."""
        self._open = {}
        if phase in self.phases:
            self._start(stacked, np.ones(self.level.num_envs, dtype=bool))

    def _start(self, stacked: StackedResponse, copies: np.ndarray) -> None:
        """Open an episode for every id whose first decision is in ``copies`` now."""
        first = stacked.acting & stacked.started & copies[None, :]
        for index, copy in zip(*np.nonzero(first), strict=True):
            self._open[(int(index), int(copy))] = _OpenEpisode(
                self._raw(stacked, index, copy, next_=False)
            )

    def on_step(self, acted: list[Acted], stacked: StackedResponse, phase: RunPhase) -> None:
        """The actions the ids took (with their behaviour) and what came of them."""
        if phase not in self.phases:
            self._open = {}
            return
        for record in acted:
            if record.actor not in self.level.agents:
                continue  # self-play's opponents: their moves are the others' outcomes
            behaviour = record.behaviour
            if phase is RunPhase.HEATUP and "action_probabilities" not in behaviour:
                space = self.level.environment.action_spaces[self.ids[record.ids[0]]]
                behaviour = uniform_behaviour(space, len(record.ids))
            for row, (index, copy) in enumerate(zip(record.ids, record.copies, strict=True)):
                episode = self._open.get((int(index), int(copy)))
                if episode is None:
                    continue
                episode.actions.append(np.array(record.env_action[row]))
                for column, value in behaviour.items():
                    episode.behaviour.setdefault(column, []).append(np.array(value[row]))
        for index, copy in zip(*np.nonzero(stacked.outcome), strict=True):
            key = (int(index), int(copy))
            episode = self._open.get(key)
            if episode is None or len(episode.actions) == len(episode.rewards):
                continue  # not recorded from its start
            done = bool(stacked.terminated[index, copy] or stacked.truncated[index, copy])
            episode.rewards.append(float(stacked.reward[index, copy]))
            episode.terminations.append(bool(stacked.terminated[index, copy]))
            episode.truncations.append(bool(stacked.truncated[index, copy]))
            next_observation = self._raw(stacked, index, copy, next_=True)
            if done:
                self.episodes[self.ids[index]].append(episode.close(next_observation))
                del self._open[key]
            else:
                episode.observations.append(next_observation)
        started = stacked.acting & stacked.started
        for index, copy in zip(*np.nonzero(started), strict=True):
            self._open[(int(index), int(copy))] = _OpenEpisode(
                self._raw(stacked, index, copy, next_=False)
            )

    def save(self, logger: Any) -> None:
        """Write each id's episodes as its dataset, saying so in the run's log."""
        command = self.dataset[1]
        evaluating = self.phases == {RunPhase.EVALUATE}
        what = "the evaluation episodes" if evaluating else "the episodes collected"
        for agent_id, episodes in self.episodes.items():
            if not episodes:
                logger.info(f"no whole episode of {agent_id} to record: not written")
                continue
            _, dropped = shared_behaviour(episodes)
            if dropped:
                owner = type(self._owner(agent_id)).__name__
                logger.info(dropped_behaviour_note(dropped, owner, f" for {agent_id}"))
            path = self.write(agent_id, f"{agent_id}'s {what} by `{command}`, with Coach")
            steps = sum(len(e.rewards) for e in episodes)
            logger.info(
                f"dataset {self.names[agent_id]}: {len(episodes)} episodes of {agent_id}, "
                f"{steps} steps written to {path}"
            )

    def _owner(self, agent_id: str) -> Agent:
        """The agent that plays ``agent_id``."""
        owner = next(
            (
                agent
                for name, agent in self.level.agents.items()
                if agent_id in {self.ids[i] for i in self.level.seats[name].ids}
            ),
            None,
        )
        if owner is None:
            raise CoachError(f"no learning agent plays {agent_id}: nothing of it to record")
        return owner

    def write(self, agent_id: str, description: str) -> Path:
        """Write ``agent_id``'s whole episodes as its local Minari dataset."""
        environment = self.level.environment
        space = environment.observation_spaces[agent_id]
        if list(space.spaces) == ["observation"]:
            space = space["observation"]
        owner = self._owner(agent_id)
        return write_dataset(
            self.names[agent_id],
            shared_behaviour(self.episodes[agent_id])[0],
            space,
            environment.action_spaces[agent_id],
            algorithm_name=type(owner).__name__,
            description=description,
        )
