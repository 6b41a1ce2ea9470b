"""An asynchronous worker: environments and a whole agent, acting and learning, its
gradients applied to the weights every worker shares (`coach.parallel.asynchronous`).

The worker builds the preset's agent with its learning side, in its own environment copies,
and connects its networks to the shared weights (`SharedWeights` on this machine, a
`HolderClient` of the parameter-holder actor on Ray): each gradient step the agent takes on
its own rollout goes to the shared weights, and the weights come back before its next
rollout. Its learning rate schedule follows the global clock (every worker's env steps,
episodes and gradient steps, summed), so one schedule spans the run whatever the number of
workers; its exploration follows its own clock, as each of the paper's threads anneals its
own epsilon. The same class runs in a local process and in a Ray actor, driven like a rollout
worker (`coach.parallel.pool`): this process asks it for a number of env steps (or
episodes) at a time, and it reports what it did, for the logs and the budgets.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch

from coach.agents.agent import Agent
from coach.agents.learning import Clock
from coach.agents.log import AgentLog
from coach.agents.parameters import AgentParameters
from coach.core.run_phase import RunPhase
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError
from coach.exploration.e_greedy import EGreedyParameters
from coach.level_manager import Level, LevelManager
from coach.networks.network_wrapper import NetworkWrapper
from coach.parallel.hogwild import leave_targets_to_the_server
from coach.parallel.parameters import AsynchronousParameters
from coach.parallel.worker import WorkerSpec
from coach.schedules import LinearSchedule

Episode = tuple[float, int, float | None]
"""A finished episode: its return, length and ``is_success`` (if reported)."""


class ParameterServer(Protocol):
    """Where a worker's gradients go and its weights come from."""

    def connect(self, rank: int, networks: dict[str, NetworkWrapper]) -> None:
        """Worker ``rank``'s networks act with the shared weights and take their gradient
        steps on them."""
        ...

    def count(self, env_steps: int, episodes: int) -> None:
        """The worker took ``env_steps`` more training env steps and finished ``episodes``
        more episodes (the global clock)."""
        ...

    def clock(self) -> Clock:
        """The global clock as this worker sees it: every worker's counts summed."""
        ...


def with_final_epsilon(params: AgentParameters, epsilon: float) -> None:
    """Make ``params``' e-greedy exploration anneal to ``epsilon`` (its own schedule's
    start and length kept).

    Raises:
        CoachError: the agent does not explore e-greedily on a linear schedule.
    """
    exploration = params.exploration
    if not (
        isinstance(exploration, EGreedyParameters)
        and isinstance(exploration.epsilon_schedule, LinearSchedule)
    ):
        raise CoachError(
            "parallel.final_epsilons anneals each worker's e-greedy exploration to its own "
            "final epsilon: the agent needs EGreedyParameters with a LinearSchedule"
        )
    exploration.epsilon_schedule = dataclasses.replace(
        exploration.epsilon_schedule, final_value=epsilon
    )


def draw_final_epsilon(params: AsynchronousParameters, seed: int) -> float | None:
    """The final epsilon of the worker seeded ``seed`` (``None``: the preset's own)."""
    if not params.final_epsilons:
        return None
    rng = np.random.default_rng(seed)
    return float(rng.choice(params.final_epsilons, p=params.final_epsilon_probabilities))


@dataclass(slots=True)
class AsynchronousLevel:
    """What an asynchronous worker builds (a `coach.parallel.worker.ActingGraph` that
    learns): the preset's agent with its learning side in its own environment copies."""

    agent_params: AgentParameters
    env_params: GymEnvironmentParameters
    server: ParameterServer
    """The shared weights its networks connect to."""
    final_epsilon: float | None = None
    """Its e-greedy exploration's own final epsilon (``None``: the preset's)."""

    def build(self, seed: int, logs: Any) -> Level:
        environment = self.env_params.build()
        try:
            params = copy.deepcopy(self.agent_params)
            leave_targets_to_the_server(params)
            if self.final_epsilon is not None:
                with_final_epsilon(params, self.final_epsilon)
            agent: Agent = params.agent_class()(
                params,
                environment.observation_space,
                environment.action_space,
                environment.num_envs,
                seed=seed,
                log=logs(params.name),
            )
        except BaseException:
            environment.close()
            raise
        return LevelManager("main_level", agent, environment)


@dataclass(slots=True)
class Progress:
    """What an asynchronous worker did in one call."""

    rank: int
    phase: RunPhase
    env_steps: int
    """Env steps taken, summed over the worker's copies."""
    gradient_steps: int
    """Gradient steps its agent applied to the shared weights."""
    rounds: int
    """Blocks its agent learned from."""
    episodes: list[Episode] = field(default_factory=list)
    """The episodes that finished."""
    scalars: list[tuple[str, float]] = field(default_factory=list)
    """What its agent logged (losses, exploration)."""
    seconds: float = 0.0
    """Wall time of the call."""


class _Reports:
    """The worker agent's `AgentLog`: what it reports goes back with the next `Progress`."""

    def __init__(self) -> None:
        self.episodes: list[Episode] = []
        self.scalars: list[tuple[str, float]] = []

    def scalar(self, tag: str, value: float) -> None:
        self.scalars.append((tag, float(value)))

    def episode(
        self, phase: RunPhase, reward: float, length: int, success: float | None = None
    ) -> None:
        self.episodes.append((float(reward), int(length), success))

    def take(self) -> tuple[list[Episode], list[tuple[str, float]]]:
        taken = self.episodes, self.scalars
        self.episodes, self.scalars = [], []
        return taken


class AsynchronousWorker:
    """Environments and an agent that acts and learns, connected to the shared weights.

    Args:
        spec: What to build (its ``graph`` an `AsynchronousLevel`), its seed and rank.
    """

    def __init__(self, spec: WorkerSpec) -> None:
        torch.set_num_threads(spec.num_threads)
        graph = spec.graph
        if not isinstance(graph, AsynchronousLevel):
            raise CoachError(f"an asynchronous worker builds an AsynchronousLevel, not {graph}")
        self.spec = spec
        self.rank = spec.rank
        self._log = _Reports()

        def logs(name: str) -> AgentLog:
            return self._log

        self.level = graph.build(spec.seed, logs)
        self.environment = self.level.environment
        self.agent = self.level.only_agent("an asynchronous worker")
        self.server = graph.server
        self.server.connect(spec.rank, self.agent.networks)
        self.agent.run_clock = self.server.clock  # one rate schedule over the whole run
        self.version = -1
        """No policy is ever sent to it: it learns its own (the pools read this)."""
        self._started = False

    def pid(self) -> int:
        """The worker's process id (fault tests kill it)."""
        return os.getpid()

    def collect(
        self, env_steps: int, phase: RunPhase, episodes: int | None = None, snapshot: Any = None
    ) -> Progress:
        """Act (and in training, learn) for ``env_steps`` env steps summed over the copies,
        or until ``episodes`` episodes have finished, whichever comes first.

        Args:
            env_steps: The most steps to take; the call ends after the step that reaches them.
            phase: `RunPhase.HEATUP` (random actions) or `RunPhase.TRAIN`.
            episodes: The most episodes to finish (``None``: no limit).
            snapshot: Unused (the pools' policy snapshot: none is published).
        """
        started = time.perf_counter()
        level, environment, agent = self.level, self.environment, self.agent
        level.phase = phase
        if not self._started:
            level.reset(self.spec.seed)
            self._started = True
        before = environment.total_steps
        gradient_steps, rounds = agent.training_steps, agent.training_rounds
        training = phase is RunPhase.TRAIN
        while environment.total_steps - before < env_steps:
            stepped, ended = environment.total_steps, len(self._log.episodes)
            level.step()  # the agent learns from its block when full, on the shared weights
            self.server.count(
                environment.total_steps - stepped if training else 0,
                len(self._log.episodes) - ended,
            )
            if episodes is not None and len(self._log.episodes) >= episodes:
                break
        finished, scalars = self._log.take()
        return Progress(
            rank=self.rank,
            phase=phase,
            env_steps=environment.total_steps - before,
            gradient_steps=agent.training_steps - gradient_steps,
            rounds=agent.training_rounds - rounds,
            episodes=finished,
            scalars=scalars,
            seconds=time.perf_counter() - started,
        )

    def close(self) -> None:
        self.level.close()
