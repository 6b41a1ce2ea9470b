"""A rollout worker: environments and an acting copy of the policy, collecting for a learner.

The same class runs in a local process (`coach.parallel.local`) and in a Ray actor
(`coach.parallel.ray_workers`); it knows neither. The learner sends it policy snapshots and
asks it for blocks of steps. The worker builds the preset's top level to act only
(`ActingGraph`: its agents without their learning side, no memory, no optimizers or target
networks): one agent, or the several agents of a multi-agent level. Each agent stores its
steps into an `Outbox`, and the block carries them back per agent as the records of its
`Memory.store` calls, with the episodes that finished and the scalars the agents logged.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from coach.agents.agent import Agent
from coach.agents.log import AgentLog
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, StepUnit
from coach.core.types import Batch, EnvResponse, Transition
from coach.errors import CoachError
from coach.graph_managers.evaluation import EvaluationEpisodes, EvaluationResult
from coach.level_manager import Level
from coach.memories.memory import Memory
from coach.memories.open_episodes import as_transition, flatten_step


class ActingGraph(Protocol):
    """What a worker builds: a preset's top level with its agents acting only (built with
    ``learns=False``), each reporting to ``logs(name)``. Graph managers that run on workers
    give one (`GraphManager.acting_graph`); it travels to the worker's process."""

    def build(self, seed: int, logs: Callable[[str], AgentLog]) -> Level:
        """The level, its agents seeded from ``seed``."""
        ...


@runtime_checkable
class RunsOnWorkers(Protocol):
    """A graph whose acting rollout workers can take (one agent's, a multi-agent level's)."""

    def acting_graph(self) -> ActingGraph:
        """What a worker builds of the graph (a `CoachError` where it cannot run on them)."""
        ...


@dataclass(slots=True)
class WorkerSpec:
    """Everything a worker is built from; it travels to the worker's process."""

    graph: ActingGraph
    """The level to build (its environment: ``num_envs`` copies per worker)."""
    seed: int
    """The worker's seed: the run's seed plus its rank (and ``num_workers`` per restart)."""
    rank: int
    """1 to N for rollout workers, 0 for the evaluation worker."""
    num_threads: int = 1
    """Torch CPU threads in the worker."""
    worker: Callable[[WorkerSpec], PooledWorker] | None = None
    """What the worker is, built from this spec: ``None`` for a `RolloutWorker`; an
    asynchronous worker (`coach.parallel.asynchronous_worker`) acts and learns."""


class PooledWorker(Protocol):
    """What a pool drives in each of its processes or actors: it runs the commands it is
    sent (`WorkerPool.submit`), each given the latest snapshot, if newer than ``version``."""

    version: int
    """The version of the policy it acts with (-1: its own)."""

    def pid(self) -> int:
        """Its process id."""
        ...

    def close(self) -> None:
        """Close its environments."""
        ...


def start_worker(spec: WorkerSpec) -> PooledWorker:
    """The worker ``spec`` describes (a `RolloutWorker` unless it names another kind)."""
    return RolloutWorker(spec) if spec.worker is None else spec.worker(spec)


@dataclass(slots=True)
class PolicySnapshot:
    """The learner's policy as the workers act with it (`Agent.policy_state`)."""

    version: int
    """How many times the learner published its weights before these."""
    state: dict[str, Any]
    """What acting copies of the learner's level need (`Level.policy_state`)."""


@dataclass(slots=True)
class AgentSteps:
    """What one agent of a worker's level stored and reported in a block."""

    steps: dict[tuple[str, str], np.ndarray]
    """The stored steps, one array per column (`Outbox.drain`); `unpack` gives the `store`
    calls."""
    widths: list[int]
    """How many rows each `store` call had."""
    env_steps: int
    """The agent's own env steps (its slots'), as its training schedule counts them."""
    episodes: list[tuple[float, int, float | None]] = field(default_factory=list)
    """The agent's episodes that finished: return, length and ``is_success`` (if reported)."""
    scalars: list[tuple[str, float]] = field(default_factory=list)
    """What the agent logged (exploration schedules and the like)."""
    statistics: list[dict[str, Any]] = field(default_factory=list)
    """What its filters' running statistics took in during the block
    (`RunningMeanStd.since`), for the learner to merge."""


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
    agents: dict[str, AgentSteps]
    """Per agent of the level, by name: its steps, episodes, scalars and statistics."""
    env_steps: int
    """Environment steps taken, summed over the worker's copies."""
    episodes: list[tuple[float, int, float | None]] = field(default_factory=list)
    """The environment's episodes that finished (the level's return: the team's)."""
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


def finished_episodes(response: EnvResponse) -> list[tuple[float, int, float | None]]:
    """The return, length and ``is_success`` (if reported) of each episode ``response``
    ended."""
    out = []
    for i in np.flatnonzero(response.done):
        info = response.infos[i] if response.infos else {}
        success = float(info["is_success"]) if "is_success" in info else None
        out.append((float(response.episode_return[i]), int(response.episode_length[i]), success))
    return out


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
    """Environments and acting copies of the learner's agents.

    Args:
        spec: What to build, with the worker's seed and rank.
    """

    def __init__(self, spec: WorkerSpec) -> None:
        torch.set_num_threads(spec.num_threads)
        self.spec = spec
        self.rank = spec.rank
        self._logs: dict[str, _RecordingLog] = {}
        self.level = spec.graph.build(spec.seed, self._log)
        self.environment = self.level.environment
        self.agents = self.level.agents
        self.outboxes = {name: Outbox() for name in self.agents}
        for name, agent in self.agents.items():
            agent.memory = self.outboxes[name]  # the learner owns the memory
        self.version = -1
        """The version of the policy the agents act with (-1: their own initial weights)."""
        self._started = False
        self._statistics = {
            name: agent.input_filter.running_statistics() for name, agent in self.agents.items()
        }
        self._statistics_sent = {
            name: [s.state_dict() for s in stats] for name, stats in self._statistics.items()
        }
        """The running statistics as the learner knows them (what was loaded or sent)."""

    def _log(self, name: str) -> _RecordingLog:
        self._logs[name] = _RecordingLog()
        return self._logs[name]

    @property
    def agent(self) -> Agent:
        """The level's agent, when it has one."""
        return self.level.only_agent("RolloutWorker.agent")

    def pid(self) -> int:
        """The worker's process id (fault tests kill it)."""
        return os.getpid()

    def set_policy(self, snapshot: PolicySnapshot) -> None:
        """Act with ``snapshot`` from now on (its running statistics too)."""
        self.level.load_policy_state(snapshot.state)
        self.version = snapshot.version
        self._statistics_sent = {
            name: [s.state_dict() for s in stats] for name, stats in self._statistics.items()
        }

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
        level, environment = self.level, self.environment
        level.phase = phase
        if not self._started:
            level.reset(self.spec.seed)
            self._started = True
        before = environment.total_steps
        acted = {name: agent.env_steps for name, agent in self.agents.items()}
        episodes: list[tuple[float, int, float | None]] = []
        while environment.total_steps - before < env_steps:
            response = level.step()
            if response.done.any():
                episodes += finished_episodes(response)
        agents = {}
        for name, agent in self.agents.items():
            steps, widths = self.outboxes[name].drain()
            logged, scalars = self._logs[name].take()
            sent = zip(self._statistics[name], self._statistics_sent[name], strict=True)
            agents[name] = AgentSteps(
                steps=steps,
                widths=widths,
                env_steps=agent.env_steps - acted[name],
                episodes=logged,
                scalars=scalars,
                statistics=[s.since(old) for s, old in sent],
            )
            self._statistics_sent[name] = [s.state_dict() for s in self._statistics[name]]
        return Block(
            rank=self.rank,
            version=self.version,
            phase=phase,
            agents=agents,
            env_steps=environment.total_steps - before,
            episodes=episodes,
            seconds=time.perf_counter() - started,
        )

    def evaluate(self, budget: StepUnit, snapshot: PolicySnapshot | None) -> EvaluationResult:
        """Act greedily on fresh episodes for ``budget`` (the evaluation worker), as
        `GraphManager.evaluate` does in the learner's process, with ``snapshot``'s policy (if
        given; else the one it has)."""
        if snapshot is not None:
            self.set_policy(snapshot)
        level, environment = self.level, self.environment
        level.phase = RunPhase.EVALUATE
        level.reset(None if self._started else self.spec.seed)
        self._started = True
        episodes = EvaluationEpisodes(budget, environment.num_envs)
        by_episodes = isinstance(budget, EnvironmentEpisodes)
        before = environment.total_steps
        while by_episodes or environment.total_steps - before < budget.num_steps:
            if episodes.record(level.step()):
                break
        for log in self._logs.values():
            log.take()
        # The training clock of the snapshot is filled in by the learner.
        return EvaluationResult(0, episodes.rewards, episodes.lengths, episodes.successes)

    def close(self) -> None:
        self.level.close()
