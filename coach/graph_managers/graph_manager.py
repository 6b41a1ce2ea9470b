"""The graph manager: builds the levels and drives a run through its phases.

    improve():
        heatup(heatup_steps)                       # random acting, memories fill
        while improve_steps not spent:
            train_and_act(steps_between_evaluation_periods)
            evaluate(evaluation_steps)             # greedy, nothing stored or trained

Every phase steps the top level until the phase's budget, counted in its own step unit, is
spent. Episodes in flight are dropped when an evaluation starts and when it ends, so an
evaluation always scores whole, fresh episodes.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coach.core.run_phase import RunPhase
from coach.core.step_units import (
    EnvironmentEpisodes,
    EnvironmentSteps,
    StepUnit,
    TrainingSteps,
)
from coach.environments.environment import Environment
from coach.errors import CoachError
from coach.level_manager import LevelManager
from coach.logging.experiment_logger import ExperimentLogger


@dataclass(slots=True, kw_only=True)
class ScheduleParameters:
    """How long each phase of a run lasts."""

    heatup_steps: StepUnit = field(default_factory=lambda: EnvironmentSteps(1000))
    """Random acting before training starts (env steps or episodes)."""
    improve_steps: StepUnit = field(default_factory=lambda: EnvironmentSteps(100_000))
    """The training budget of the whole run, heatup excluded."""
    steps_between_evaluation_periods: StepUnit = field(
        default_factory=lambda: EnvironmentSteps(5000)
    )
    """Training between two evaluations."""
    evaluation_steps: StepUnit = field(default_factory=lambda: EnvironmentEpisodes(10))
    """The length of one evaluation (episodes are split evenly over the env copies)."""


@dataclass(slots=True)
class RunContext:
    """What the command line decides about a run, as opposed to what the preset does."""

    seed: int = 0
    """Seeds environments, agents and networks."""
    device: str = "cpu"
    """Torch device."""
    experiment_dir: Path | None = None
    """Where the run writes; ``None`` runs without writing anything."""
    quiet: bool = False
    """Keep the console silent."""
    num_threads: int = 1
    """Torch CPU threads (small networks run fastest on one)."""
    progress_seconds: float = 10.0
    """Seconds between two progress lines on the console."""


@dataclass(slots=True)
class EvaluationResult:
    """The episodes of one evaluation period."""

    env_steps: int
    """The run's training env steps when the evaluation ran."""
    rewards: list[float]
    lengths: list[int]

    @property
    def mean_reward(self) -> float:
        return float(np.mean(self.rewards)) if self.rewards else float("nan")


class GraphManager(ABC):
    """Owns the levels, the environment at the bottom, the phases and the logger.

    Args:
        name: The graph's name (a preset's name by default).
        schedule_params: How long each phase lasts.
    """

    def __init__(self, name: str, schedule_params: ScheduleParameters) -> None:
        self.name = name
        self.schedule_params = schedule_params
        self.levels: list[LevelManager] = []
        self.environment: Environment | None = None
        self.logger: ExperimentLogger | None = None
        self.context = RunContext()
        self.evaluations: list[EvaluationResult] = []
        self._phase = RunPhase.HEATUP
        self._evaluation_env_steps = 0
        self._evaluation_episodes = 0
        self._frozen_env_steps = 0
        self._seeded = False

    # -- building ---------------------------------------------------------------------------

    def parameters(self) -> dict[str, Any]:
        """The parameter objects a ``-cp path=value`` override may start from, by name."""
        return {"schedule": self.schedule_params}

    @abstractmethod
    def _build(self, context: RunContext) -> tuple[Environment, list[LevelManager]]:
        """Build the real environment and the levels on it, bottom level first."""

    def create_graph(self, context: RunContext | None = None) -> GraphManager:
        """Build environments, agents and the logger for a run."""
        self.context = context or RunContext()
        torch.set_num_threads(self.context.num_threads)
        if self.context.experiment_dir is not None:
            self.logger = ExperimentLogger(
                self.context.experiment_dir,
                lambda: self.env_steps,
                lambda: self.training_steps,
                quiet=self.context.quiet,
            )
        self.environment, self.levels = self._build(self.context)
        return self

    def agent_seed(self, index: int) -> int:
        """A seed for the ``index``-th agent, derived from the run's seed."""
        return int(np.random.SeedSequence([self.context.seed, index]).generate_state(1)[0])

    @property
    def top_level(self) -> LevelManager:
        if not self.levels:
            raise CoachError("the graph is not built: call create_graph() first")
        return self.levels[-1]

    # -- counters ---------------------------------------------------------------------------

    @property
    def env_steps(self) -> int:
        """Env steps in heatup and training (evaluation excluded): the x axis of the logs."""
        if self._phase is RunPhase.EVALUATE or self.environment is None:
            return self._frozen_env_steps
        return self.environment.total_steps - self._evaluation_env_steps

    @property
    def training_steps(self) -> int:
        return sum(level.agent.training_steps for level in self.levels)

    def _episodes(self) -> int:
        return self.environment.total_episodes if self.environment is not None else 0

    def _total_env_steps(self) -> int:
        return self.environment.total_steps if self.environment is not None else 0

    def _counter(self, unit: StepUnit) -> Callable[[], int]:
        """What counts ``unit``: a function, looked up once per phase, not once per step."""
        if isinstance(unit, EnvironmentSteps):
            return self._total_env_steps
        if isinstance(unit, EnvironmentEpisodes):
            return self._episodes
        if isinstance(unit, TrainingSteps):
            return lambda: self.training_steps
        raise CoachError(f"cannot count a budget in {type(unit).__name__}")

    def _count(self, unit: StepUnit) -> int:
        return self._counter(unit)()

    # -- phases -----------------------------------------------------------------------------

    @property
    def phase(self) -> RunPhase:
        return self._phase

    @phase.setter
    def phase(self, phase: RunPhase) -> None:
        if phase is RunPhase.EVALUATE and self._phase is not RunPhase.EVALUATE:
            self._frozen_env_steps = self.env_steps
        self._phase = phase
        self.top_level.phase = phase

    def _reset(self) -> None:
        # Seeded once; later resets continue each environment's own random stream.
        self.top_level.reset(None if self._seeded else self.context.seed)
        self._seeded = True

    def _run(self, budget: StepUnit, on_response: Any = None) -> None:
        top = self.top_level
        if top.last_response is None:
            self._reset()
        count = self._counter(budget)
        end = count() + budget.num_steps
        last_time = time.perf_counter()
        last_steps = self._total_env_steps()
        step = top.step
        while count() < end:
            response = step()
            if on_response is not None and on_response(response):
                break
            now = time.perf_counter()
            if now - last_time >= self.context.progress_seconds:
                self._progress(now - last_time, self._total_env_steps() - last_steps)
                last_time, last_steps = now, self._total_env_steps()

    def _progress(self, seconds: float, steps: int) -> None:
        if self.logger is None:
            return
        rate = steps / seconds if seconds > 0 else 0.0
        self.logger.progress(self.phase, rate)
        if self.phase is not RunPhase.EVALUATE:
            self.logger.scalar("graph", "Time/env_steps_per_second", rate)
            for level in self.levels:
                if level.agent.memory is not None:
                    self.logger.scalar(
                        f"{level.name}.{level.agent.name}", "Memory/size", len(level.agent.memory)
                    )

    def heatup(self, steps: StepUnit) -> None:
        """Act at random for ``steps``: the memories fill, nothing trains."""
        if steps.num_steps == 0:
            return
        self.phase = RunPhase.HEATUP
        started = time.perf_counter()
        before = self._total_env_steps()
        self._run(steps)
        self._progress(time.perf_counter() - started, self._total_env_steps() - before)

    def train_and_act(self, steps: StepUnit) -> None:
        """Act with exploration, store and train for ``steps``."""
        self.phase = RunPhase.TRAIN
        self._run(steps)

    def evaluate(self, steps: StepUnit) -> EvaluationResult:
        """Act greedily for ``steps`` on fresh episodes; nothing is stored or trained.

        With an episode budget the episodes are split evenly over the env copies (copy ``i``
        runs ``(n + i) // num_envs`` of them), so short episodes are not favoured.
        """
        self.phase = RunPhase.EVALUATE
        started = time.perf_counter()
        before = self._total_env_steps()
        episodes_before = self._episodes()
        self._reset()
        num_envs = self.top_level.num_envs
        by_episodes = isinstance(steps, EnvironmentEpisodes)
        quota = [(steps.num_steps + i) // num_envs for i in range(num_envs)]
        counts = [0] * num_envs
        rewards: list[float] = []
        lengths: list[int] = []

        def record(response: Any) -> bool:
            for i in np.flatnonzero(response.terminated | response.truncated):
                if by_episodes and counts[i] >= quota[i]:
                    continue
                counts[i] += 1
                rewards.append(float(response.episode_return[i]))
                lengths.append(int(response.episode_length[i]))
            return by_episodes and counts == quota

        # An episode budget ends in `record`, once every copy has run its share.
        budget = EnvironmentEpisodes(2**62) if by_episodes else steps
        self._run(budget, on_response=record)
        self._evaluation_env_steps += self._total_env_steps() - before
        self._evaluation_episodes += self._episodes() - episodes_before
        result = EvaluationResult(self._frozen_env_steps, rewards, lengths)
        self.evaluations.append(result)
        if self.logger is not None:
            if rewards:
                self.logger.evaluation("graph", rewards, lengths)
            else:
                self.logger.info("evaluation finished no episode; raise evaluation_steps")
            self._progress(time.perf_counter() - started, self._total_env_steps() - before)
        self.top_level.last_response = None  # training starts on fresh episodes
        return result

    def _training_count(self, unit: StepUnit) -> int:
        """Like `_count`, leaving out what evaluations spent."""
        count = self._count(unit)
        if isinstance(unit, EnvironmentSteps):
            return count - self._evaluation_env_steps
        if isinstance(unit, EnvironmentEpisodes):
            return count - self._evaluation_episodes
        return count

    def improve(self) -> None:
        """The whole run: heatup, then training with periodic evaluation."""
        schedule = self.schedule_params
        self.heatup(schedule.heatup_steps)
        improve = schedule.improve_steps
        start = self._training_count(improve)
        while (remaining := improve.num_steps - (self._training_count(improve) - start)) > 0:
            period = schedule.steps_between_evaluation_periods
            if type(period) is type(improve):
                period = type(period)(min(period.num_steps, remaining))
            self.train_and_act(period)
            if schedule.evaluation_steps.num_steps > 0:
                self.evaluate(schedule.evaluation_steps)

    def close(self) -> None:
        """Close the environments and flush the logs."""
        if self.environment is not None:
            self.environment.close()
        if self.logger is not None:
            self.logger.close()
