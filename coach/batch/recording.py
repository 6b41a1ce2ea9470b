"""Recording a run's episodes into a dataset (``coach -p PRESET --record-dataset NAME``).

The recorder observes the bottom level manager (`LevelManager.observers`): it sees every
step of every copy, the action record the agent acted with (the action the environment was
given, and the agent's behaviour: the probability of every action for discrete agents, the
log density of the action otherwise, as `Policy.log_behaviour` makes the agent give it) and
the environment's response. The environment never knows it is recorded. The behaviour is the
agent's own: with an output filter (a discrete map, a box rescaling) it is of the action
before the filter, while the action recorded is the environment's. It keeps whole episodes
only: an episode is recorded when it starts and ends in a recorded phase, so the episodes
that an evaluation cuts short (or that the run's end leaves open) are dropped. Observations
and actions are kept as the environment gave and took them, before any of Coach's filters,
so the dataset (`coach.batch.datasets`) is the environment's own.

A dataset logs a behaviour key for every step or for none (`shared_behaviour`): heatup's
uniform random actions have a density (a probability per action, or the log of one over a
bounded Box's volume), but a deterministic actor exploring with noise (DDPG, TD3, NAF; OU
noise carries state from step to step, clipping puts mass on the bounds) has none of the
observation alone, so its episodes log none (an episode that heatup began and training
ended logs none either). A key that some episodes lack is of no use to
what reads it (importance weights need the behaviour of every step), and the episodes
themselves are what an offline learner wants: the key is dropped from every episode, and
the run's log says so. Recording takes a graph of one level (`check_recording`): the actions
of a hierarchy's bottom level follow the goals of the level above, which the environment's
observations do not hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from coach.batch.datasets import write_dataset
from coach.batch.episodes import Episode
from coach.batch.ids import check_new_dataset
from coach.core.run_phase import RunPhase
from coach.core.types import ActionInfo, EnvResponse
from coach.environments.gym_environment import GymEnvironment
from coach.errors import CoachError
from coach.exploration.exploration_policy import uniform_behaviour
from coach.level_manager import LevelManager


def shared_behaviour(episodes: list[Episode]) -> tuple[list[Episode], list[str]]:
    """The episodes with only the behaviour keys that every one of them logs, and the keys
    dropped (those some episodes lack: heatup's uniform density where the agent's own
    actions have none)."""
    if not episodes:
        return episodes, []
    logged = [set(e.behaviour) for e in episodes]
    shared = set.intersection(*logged)
    dropped = sorted(set.union(*logged) - shared)
    if not dropped:
        return episodes, []
    kept = [
        replace(e, behaviour={k: v for k, v in e.behaviour.items() if k in shared})
        for e in episodes
    ]
    return kept, dropped


def dropped_behaviour_note(dropped: list[str], algorithm: str, whose: str = "") -> str:
    """The run log's line on behaviour keys `shared_behaviour` dropped."""
    return (
        f"behaviour {', '.join(dropped)} not recorded{whose}: some episodes (heatup's uniform "
        f"actions) log it but {algorithm}'s own actions do not, and a dataset logs a "
        f"behaviour for every step or for none"
    )


class _OpenEpisode:
    """One copy's episode so far."""

    def __init__(self, observation: Any) -> None:
        self.observations = [observation]
        self.actions: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.terminations: list[bool] = []
        self.truncations: list[bool] = []
        self.behaviour: dict[str, list[np.ndarray]] = {}

    def close(self, final_observation: Any) -> Episode:
        self.observations.append(final_observation)
        first = self.observations[0]
        observations: np.ndarray | dict[str, np.ndarray]
        if isinstance(first, dict):
            observations = {k: np.stack([o[k] for o in self.observations]) for k in first}
        else:
            observations = np.stack(self.observations)
        return Episode(
            observations=observations,
            actions=np.stack(self.actions),
            rewards=np.asarray(self.rewards, dtype=np.float64),
            terminations=np.asarray(self.terminations, dtype=bool),
            truncations=np.asarray(self.truncations, dtype=bool),
            # An episode logs a behaviour key when every one of its steps does: one that
            # heatup began and the agent's own actions carried on logs it for heatup's steps
            # alone (a deterministic actor's noisy actions have no density).
            behaviour={
                k: np.stack(v) for k, v in self.behaviour.items() if len(v) == len(self.actions)
            },
        )


class EpisodeRecorder:
    """Whole episodes of a level's environment copies, acted in ``phases``: a `StepObserver`
    of the level.

    Args:
        level: The level whose environment is recorded (the bottom one, on the real
            environment); the recorder joins its observers and asks its agent to log its
            behaviour.
        environment: The real environment under ``level``: its spaces and id describe the
            dataset. It is only read.
        phases: The phases whose episodes are kept: heatup and training for a training run,
            evaluation for ``--evaluate``.
        dataset: The dataset `save` writes, and the command that made the episodes.
    """

    def __init__(
        self,
        level: LevelManager,
        environment: GymEnvironment,
        phases: Iterable[RunPhase],
        dataset: tuple[str, str] = ("", ""),
    ) -> None:
        self.environment = environment
        self.action_space = level.agent.action_space
        """The agent's action space (before its output filter), of the heatup behaviour."""
        self.algorithm_name = type(level.agent).__name__
        self.phases = frozenset(phases)
        self.episodes: list[Episode] = []
        self.dataset = dataset
        self._open: list[_OpenEpisode | None] = [None] * environment.num_envs
        level.agent.policy.log_behaviour = True
        level.observers.append(self)

    @property
    def steps(self) -> int:
        """Steps in the whole episodes recorded so far."""
        return sum(len(e.rewards) for e in self.episodes)

    def _raw(self, observation: dict[str, np.ndarray], i: int) -> Any:
        """Copy ``i``'s observation as the gymnasium environment gave it."""
        if self.environment.dict_observations:
            return {key: np.array(value[i]) for key, value in observation.items()}
        return np.array(next(iter(observation.values()))[i])

    def on_reset(self, response: EnvResponse, phase: RunPhase) -> None:
        """New episodes in every copy: the open ones are dropped."""
        recording = phase in self.phases
        self._open = [
            _OpenEpisode(self._raw(response.observation, i)) if recording else None
            for i in range(self.environment.num_envs)
        ]

    def on_step(self, info: ActionInfo, response: EnvResponse, phase: RunPhase) -> None:
        """A step of every copy: the action record it was taken with (``env_action`` as
        the environment took it), and the environment's response."""
        if phase not in self.phases:
            self._open = [None] * self.environment.num_envs
            return
        action = info.env_action
        assert action is not None
        behaviour: dict[str, np.ndarray] = {}
        if phase is RunPhase.HEATUP:  # uniform random actions
            behaviour = uniform_behaviour(self.action_space, self.environment.num_envs)
            if "action_probabilities" in info.extras:  # uniform among the legal actions
                behaviour["action_probabilities"] = info.extras["action_probabilities"]
        else:
            if "action_probabilities" in info.extras:
                behaviour["action_probabilities"] = info.extras["action_probabilities"]
            elif info.log_prob is not None:
                behaviour["action_log_prob"] = np.asarray(info.log_prob, dtype=np.float64)
        for i, episode in enumerate(self._open):
            done = bool(response.terminated[i] or response.truncated[i])
            started = bool(response.episode_started[i])
            if episode is not None:
                episode.actions.append(np.array(action[i]))
                episode.rewards.append(float(response.reward[i]))
                episode.terminations.append(bool(response.terminated[i]))
                episode.truncations.append(bool(response.truncated[i]))
                for key, value in behaviour.items():
                    episode.behaviour.setdefault(key, []).append(np.array(value[i]))
                if done:
                    self.episodes.append(episode.close(self._raw(response.next_observation, i)))
                else:
                    episode.observations.append(self._raw(response.next_observation, i))
            if started:  # the copy starts a new episode, recorded from its first step
                self._open[i] = _OpenEpisode(self._raw(response.observation, i))

    def save(self, logger: Any) -> None:
        """Write the episodes recorded so far as the run's dataset, saying so in its log."""
        name, command = self.dataset
        if not self.episodes:
            logger.info(f"no whole episode to record: dataset {name} not written")
            return
        evaluating = self.phases == {RunPhase.EVALUATE}
        what = "the evaluation episodes" if evaluating else "the episodes collected"
        _, dropped = shared_behaviour(self.episodes)
        if dropped:
            logger.info(dropped_behaviour_note(dropped, self.algorithm_name))
        path = self.write(name, f"{what} by `{command}`, with Coach")
        logger.info(
            f"dataset {name}: {len(self.episodes)} episodes, {self.steps} steps written to {path}"
        )

    def write(self, name: str, description: str) -> Path:
        """Write the whole episodes recorded as the local Minari dataset ``name``."""
        first = self.environment.envs[0]
        return write_dataset(
            name,
            shared_behaviour(self.episodes)[0],
            first.observation_space,
            first.action_space,
            env_id=first.spec.id if first.spec is not None else None,
            algorithm_name=self.algorithm_name,
            description=description,
        )


def check_recording(
    name: str, distributed: bool, graph: Any = None, evaluating: bool = False
) -> None:
    """Refuse, before a run starts, a recording it could not make: into an existing or
    invalid dataset ``name``, of a run whose rollout workers act elsewhere, of a hierarchy
    (``graph``: the preset's graph manager, not yet built), or of batch RL's training, which
    learns from a dataset without acting (its ``evaluating`` runs, ``--evaluate``, act)."""
    from coach.batch.graph_manager import BatchRLGraphManager
    from coach.graph_managers.hrl import HRLGraphManager

    if distributed:
        raise CoachError(
            "--record-dataset records the environment of this process; it does not go "
            "with rollout workers (-n, --backend, -ew)"
        )
    if isinstance(graph, HRLGraphManager):
        raise CoachError(
            f"--record-dataset records a graph of one level; this preset's is a hierarchy of "
            f"{len(graph.agent_params)} levels, whose bottom level acts on goals of the level "
            f"above that the dataset's observations would not hold"
        )
    if isinstance(graph, BatchRLGraphManager) and not evaluating:
        raise CoachError(
            "--record-dataset records the episodes a run acts; batch RL learns from its "
            "dataset without acting: record its evaluation with --evaluate N -crd CHECKPOINT"
        )
    check_new_dataset(name)


def record_run(graph: Any, name: str, command: str, evaluating: bool) -> Any:
    """Record the episodes of a run's environment (``--record-dataset``) as dataset
    ``name``: training's (heatup and training), or with ``evaluating`` the evaluation's.
    ``command`` is what made them, kept in the dataset's description. A multi-agent level's
    are recorded per agent id (`coach.batch.multi_agent_recording`)."""
    phases = [RunPhase.EVALUATE] if evaluating else [RunPhase.HEATUP, RunPhase.TRAIN]
    from coach.multi_agent.level import MultiAgentLevelManager

    if isinstance(graph.levels[0], MultiAgentLevelManager):
        from coach.batch.multi_agent_recording import MultiAgentRecorder

        return MultiAgentRecorder(graph.levels[0], phases, (name, command))
    if not isinstance(graph.environment, GymEnvironment):
        raise CoachError(
            f"--record-dataset records a gymnasium environment stepped in this process "
            f"(vectorization 'sync'), not a {type(graph.environment).__name__}"
        )
    return EpisodeRecorder(graph.levels[0], graph.environment, phases, (name, command))
