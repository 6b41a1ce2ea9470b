"""A rollout worker: environments and an acting copy of the policy, collecting for a learner.

The same class runs in a local process (`coach.parallel.local`) and in a Ray actor
(`coach.parallel.ray_workers`); it knows neither. The learner sends it policy snapshots and
asks it for blocks of steps; the worker's agent stores its steps into an `Outbox` instead of
a memory, and the block carries them back as the keyword arguments of `Memory.store` calls,
with the episodes that finished and the scalars the agent logged.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from coach.agents.agent import Agent, AgentParameters
from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, StepUnit
from coach.core.types import Batch, EnvResponse
from coach.environments.gym_environment import GymEnvironmentParameters
from coach.errors import CoachError
from coach.graph_managers.parameters import EvaluationEpisodes, EvaluationResult
from coach.memories.memory import Memory
from coach.memories.open_episodes import flatten_step, nest_step


@dataclass(slots=True)
class WorkerSpec:
    """Everything a worker is built from; it travels to the worker's process."""

    agent_params: AgentParameters
    """The agent (its memory is replaced by an `Outbox`)."""
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
    """The stored steps packed column-wise (`pack`); `unpack` gives the `store` calls."""
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


def pack(calls: list[dict[str, Any]]) -> tuple[dict[tuple[str, str], np.ndarray], list[int]]:
    """`store` calls as one array per column (rows concatenated) and each call's width: a
    block travels as a few large arrays rather than many small ones."""
    if not calls:
        return {}, []
    flat = [
        flatten_step(
            c["state"],
            c["action"],
            c["reward"],
            c["next_state"],
            c["terminated"],
            c["truncated"],
            c.get("extras") or {},
        )
        for c in calls
    ]
    columns = {key: np.concatenate([f[key] for f in flat]) for key in flat[0]}
    return columns, [len(c["reward"]) for c in calls]


def unpack(columns: dict[tuple[str, str], np.ndarray], widths: list[int]) -> list[dict[str, Any]]:
    """Undo `pack`: the keyword arguments of each `store` call, in order."""
    if not widths:
        return []
    bounds = np.cumsum(widths)[:-1]
    pieces = {key: np.split(value, bounds) for key, value in columns.items()}
    calls = []
    for i in range(len(widths)):
        call = nest_step({key: parts[i] for key, parts in pieces.items()})
        if not call["extras"]:
            call["extras"] = None
        calls.append(call)
    return calls


class Outbox(Memory):
    """A rollout worker's memory: it keeps the `store` calls for the learner, and learns
    nothing itself."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def store(
        self,
        state: dict[str, np.ndarray],
        action: np.ndarray,
        reward: np.ndarray,
        next_state: dict[str, np.ndarray],
        terminated: np.ndarray,
        truncated: np.ndarray,
        extras: dict[str, np.ndarray] | None = None,
    ) -> None:
        # Copies: the agent may reuse its arrays for the next step.
        self.calls.append(
            {
                "state": {k: np.array(v) for k, v in state.items()},
                "action": np.array(action),
                "reward": np.array(reward),
                "next_state": {k: np.array(v) for k, v in next_state.items()},
                "terminated": np.array(terminated, dtype=bool),
                "truncated": np.array(truncated, dtype=bool),
                "extras": {k: np.array(v) for k, v in extras.items()} if extras else None,
            }
        )

    def sample(self, batch_size: int) -> Batch:
        raise CoachError("a rollout worker does not learn: its steps go to the learner")

    def __len__(self) -> int:
        return sum(len(call["reward"]) for call in self.calls)

    def drain(self) -> list[dict[str, Any]]:
        """The calls stored since the last drain."""
        calls, self.calls = self.calls, []
        return calls


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
            )
            self.outbox = Outbox()
            # The learner owns the memory: this copy's steps go to it.
            self.agent.memory = self.outbox
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
        self.agent.load_policy_state(snapshot.state)
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
            response = environment.step(agent.act().action)
            agent.observe(response)
        steps, widths = pack(self.outbox.drain())
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
            response = environment.step(agent.act().action)
            agent.observe(response)
            if episodes.record(response):
                break
        self._log.take()
        # The training clock of the snapshot is filled in by the learner.
        return EvaluationResult(0, episodes.rewards, episodes.lengths, episodes.successes)

    def close(self) -> None:
        self.environment.close()
