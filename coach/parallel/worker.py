"""A rollout worker: environments and an acting copy of the policy, collecting for a learner.

The same class runs in a local process (`coach.parallel.local`) and in a Ray actor
(`coach.parallel.ray_workers`); it knows neither. The learner sends it policy snapshots and
asks it for blocks of steps. The worker's agent is built to act only (``learns=False``: its
policy and filters, no learner, no memory, no optimizers or target networks); it stores its
steps into an `Outbox`, and the block carries them back as the records of its
`Memory.store` calls, with the episodes that finished and the scalars the agent logged.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from coach.agents.agent import Agent
from coach.agents.parameters import AgentParameters
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, StepUnit
from coach.core.types import Batch, EnvResponse, Transition
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.graph_managers.evaluation import EvaluationEpisodes, EvaluationResult
from coach.memories.memory import Memory
from coach.memories.open_episodes import as_transition, flatten_step
from coach.parallel.exchange import load_policy_state


@dataclass(slots=True)
class WorkerSpec:
    """Everything a worker is built from; it travels to the worker's process."""

    agent_params: AgentParameters
    """The agent (built to act only; it stores into an `Outbox`)."""
    env_params: GymEnvironmentParameters
    """The environment, ``num_envs`` copies per worker."""
    seed: int
    """The worker's seed: the run's seed plus its rank (and ``num_workers`` per restart)."""
    rank: int
    """1 to N for rollout workers, 0 for the evaluation worker."""
    num_threads: int = 1
    """Torch CPU threads in the worker."""


@dataclass(slots=True)
class PolicySnapshot:
    """The learner's policy as the workers act with it (`Agent.policy_state`)."""

    version: int
    """How many times the learner published its weights before these."""
    state: dict[str, Any]
    """`Agent.policy_state` of the learner's agent."""


@dataclass(slots=True)
class Block:
    """What a worker collected in one call."""

    rank: int
    """The worker that collected it."""
    version: int
    """The version of the policy it acted with (its lag is the learner's version minus
    this one)."""
    phase: RunPhase
    """Heatup (random actions) or training (the policy, exploring)."""
    steps: dict[tuple[str, str], np.ndarray]
    """The stored steps, one array per column (`Outbox.drain`); `unpack` gives the `store`
    calls."""
    widths: list[int]
    """How many rows each `store` call had."""
    env_steps: int
    """Environment steps taken, summed over the worker's copies."""
    episodes: list[tuple[float, int, float | None]] = field(default_factory=list)
    """The episodes that finished: return, length and ``is_success`` (if reported)."""
    scalars: list[tuple[str, float]] = field(default_factory=list)
    """What the agent logged (exploration schedules and the like)."""
    statistics: list[dict[str, Any]] = field(default_factory=list)
    """What the filters' running statistics took in during the block
    (`RunningMeanStd.since`), for the learner to merge."""
    seconds: float = 0.0
    """Wall time the worker spent collecting."""


def unpack(columns: dict[tuple[str, str], np.ndarray], widths: list[int]) -> list[Transition]:
    """The transitions of each `store` call of a block, in order."""
    if not widths:
        return []
    bounds = np.cumsum(widths)[:-1]
    pieces = {key: np.split(value, bounds) for key, value in columns.items()}
    return [
        as_transition({key: parts[i] for key, parts in pieces.items()}) for i in range(len(widths))
    ]


class Outbox(Memory):
    """A rollout worker's memory: it keeps the `store` calls for the learner, column-wise,
    and learns nothing itself.

    Each column is one array that grows by doubling; a `store` call writes its rows into it
    (a copy: the agent may reuse its arrays), and `drain` hands out the rows so far.
    """

    def __init__(self) -> None:
        self.columns: dict[tuple[str, str], np.ndarray] = {}
        self.widths: list[int] = []
        """How many rows each `store` call had."""
        self.rows = 0

    def store(self, transition: Transition) -> None:
        step = flatten_step(transition)
        width = len(step[("reward", "")])
        start, end = self.rows, self.rows + width
        columns = self.columns
        if not columns or end > len(columns[("reward", "")]) or step.keys() != columns.keys():
            self._grow(step, end)
            columns = self.columns
        for key, value in step.items():
            columns[key][start:end] = value
        self.rows = end
        self.widths.append(width)

    def _grow(self, step: dict[tuple[str, str], np.ndarray], rows: int) -> None:
        """Columns for ``step``'s keys with room for twice ``rows``, holding the rows so far."""
        if self.rows and step.keys() != self.columns.keys():
            raise CoachError(
                f"a rollout worker's agent stored {sorted(step)} after {sorted(self.columns)}: "
                f"the columns of a block must not change"
            )
        grown = {}
        for key, value in step.items():
            column = np.empty((max(2 * rows, 64), *value.shape[1:]), dtype=value.dtype)
            if self.rows:
                column[: self.rows] = self.columns[key][: self.rows]
            grown[key] = column
        self.columns = grown

    def sample(self, batch_size: int) -> Batch:
        raise CoachError("a rollout worker does not learn: its steps go to the learner")

    def __len__(self) -> int:
        return self.rows

    def drain(self) -> tuple[dict[tuple[str, str], np.ndarray], list[int]]:
        """The rows stored since the last drain, as one array per column, and the width of
        each `store` call (`unpack` gives the calls back)."""
        columns = {key: value[: self.rows].copy() for key, value in self.columns.items()}
        widths, self.widths, self.rows = self.widths, [], 0
        return (columns if widths else {}), widths


class _RecordingLog:
    """The worker agent's `AgentLog`: what it reports goes back with the block."""

    def __init__(self) -> None:
        self.episodes: list[tuple[float, int, float | None]] = []
        self.scalars: list[tuple[str, float]] = []

    def scalar(self, tag: str, value: float) -> None:
        self.scalars.append((tag, float(value)))

    def episode(
        self, phase: RunPhase, reward: float, length: int, success: float | None = None
    ) -> None:
        self.episodes.append((float(reward), int(length), success))

    def take(self) -> tuple[list[tuple[float, int, float | None]], list[tuple[str, float]]]:
        episodes, scalars = self.episodes, self.scalars
        self.episodes, self.scalars = [], []
        return episodes, scalars


class RolloutWorker:
    """Environments and an acting copy of the learner's agent.

    Args:
        spec: What to build, with the worker's seed and rank.
    """

    def __init__(self, spec: WorkerSpec) -> None:
        torch.set_num_threads(spec.num_threads)
        self.spec = spec
        self.rank = spec.rank
        self.environment = spec.env_params.build()
        try:
            self._log = _RecordingLog()
            params = copy.deepcopy(spec.agent_params)
            self.agent: Agent = params.agent_class()(
                params,
                self.environment.observation_space,
                self.environment.action_space,
                self.environment.num_envs,
                seed=spec.seed,
                log=self._log,
                learns=False,
            )
            self.outbox = Outbox()
            # The learner owns the memory: this copy's steps go to it.
            self.agent.memory = self.outbox
            self.agent.fresh_observations = self.environment.fresh_observations
        except BaseException:
            self.environment.close()
            raise
        self.version = -1
        """The version of the policy the agent acts with (-1: its own initial weights)."""
        self._response: EnvResponse | None = None
        self._statistics = self.agent.input_filter.running_statistics()
        self._statistics_sent = [s.state_dict() for s in self._statistics]
        """The running statistics as the learner knows them (what was loaded or sent)."""

    def pid(self) -> int:
        """The worker's process id (fault tests kill it)."""
        return os.getpid()

    def set_policy(self, snapshot: PolicySnapshot) -> None:
        """Act with ``snapshot`` from now on (its running statistics too)."""
        load_policy_state(self.agent, snapshot.state)
        self.version = snapshot.version
        self._statistics_sent = [s.state_dict() for s in self._statistics]

    def collect(
        self, env_steps: int, phase: RunPhase, snapshot: PolicySnapshot | None = None
    ) -> Block:
        """Act for at least ``env_steps`` env steps (summed over copies), storing each step.

        Args:
            env_steps: The steps to take; a block ends after the step that reaches them.
            phase: `RunPhase.HEATUP` (random actions) or `RunPhase.TRAIN` (the policy).
            snapshot: A newer policy to act with first, if any.
        """
        started = time.perf_counter()
        if snapshot is not None and snapshot.version != self.version:
            self.set_policy(snapshot)
        agent, environment = self.agent, self.environment
        agent.phase = phase
        if self._response is None:
            self._response = environment.reset(self.spec.seed)
            agent.reset(self._response)
        before = environment.total_steps
        while environment.total_steps - before < env_steps:
            response = environment.step(agent.act().env_action)
            agent.observe(response)
        steps, widths = self.outbox.drain()
        episodes, scalars = self._log.take()
        sent = zip(self._statistics, self._statistics_sent, strict=True)
        statistics = [s.since(before) for s, before in sent]
        self._statistics_sent = [s.state_dict() for s in self._statistics]
        return Block(
            rank=self.rank,
            version=self.version,
            phase=phase,
            steps=steps,
            widths=widths,
            env_steps=environment.total_steps - before,
            episodes=episodes,
            scalars=scalars,
            statistics=statistics,
            seconds=time.perf_counter() - started,
        )

    def evaluate(self, budget: StepUnit, snapshot: PolicySnapshot | None) -> EvaluationResult:
        """Act greedily on fresh episodes for ``budget`` (the evaluation worker), as
        `GraphManager.evaluate` does in the learner's process, with ``snapshot``'s policy (if
        given; else the one it has)."""
        if snapshot is not None:
            self.set_policy(snapshot)
        agent, environment = self.agent, self.environment
        agent.phase = RunPhase.EVALUATE
        response = environment.reset(None if self._response is not None else self.spec.seed)
        self._response = response
        agent.reset(response)
        episodes = EvaluationEpisodes(budget, environment.num_envs)
        by_episodes = isinstance(budget, EnvironmentEpisodes)
        before = environment.total_steps
        while by_episodes or environment.total_steps - before < budget.num_steps:
            response = environment.step(agent.act().env_action)
            agent.observe(response)
            if episodes.record(response):
                break
        self._log.take()
        # The training clock of the snapshot is filled in by the learner.
        return EvaluationResult(0, episodes.rewards, episodes.lengths, episodes.successes)

    def close(self) -> None:
        self.environment.close()
