"""A run's progress on the console: the periodic progress line and the live bars.

The progress line (`ExperimentLogger.progress`: phase, env steps, rewards, steps/s) goes to
log.txt and the console every ``context.progress_seconds`` and at the end of each heatup
and evaluation, as before. Where the console is a terminal (`ExperimentLogger.terminal`),
each phase also draws a live bar (`coach.logging.progress`) below the log lines: heatup to
its budget, training to ``improve_steps`` across the evaluation periods, each evaluation to
its episodes (drawn over the training bar while it runs), a batch run's epochs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from coach.core.run_phase import RunPhase
from coach.core.step_units import (
    EnvironmentEpisodes,
    EnvironmentSteps,
    Epochs,
    StepUnit,
    TrainingSteps,
)
from coach.graph_managers.evaluation import EvaluationEpisodes
from coach.graph_managers.parameters import RunContext
from coach.level_manager import Level
from coach.logging.experiment_logger import ExperimentLogger
from coach.logging.progress import ProgressBar

UNIT_NAMES: dict[type[StepUnit], str] = {
    EnvironmentSteps: "env steps",
    EnvironmentEpisodes: "episodes",
    TrainingSteps: "training steps",
    Epochs: "epochs",
}
"""What a bar calls each step unit."""


class Reported(Protocol):
    """What a progress report reads of its run (a `GraphManager`)."""

    logger: ExperimentLogger | None
    context: RunContext
    levels: list[Level]

    @property
    def phase(self) -> RunPhase: ...

    def _total_env_steps(self) -> int: ...


def since(count: Callable[[], float]) -> Callable[[], float]:
    """What ``count`` adds from now on: a bar's ``done`` for a budget that starts now."""
    start = count()
    return lambda: count() - start


class ProgressReport:
    """The progress line and the live bars of one run.

    Args:
        run: The graph manager whose steps it reports.
    """

    def __init__(self, run: Reported) -> None:
        self.run = run
        self._last = (0.0, 0)
        """When the last progress line was written, and the run's env steps then."""
        self._due = 0.0
        """When the next progress line is due (`time.perf_counter`)."""
        self._bars: list[tuple[ProgressBar, Callable[[], float], Callable[[], str]]] = []
        """The open bars, each with what it shows (done, postfix); the last one is drawn."""

    def restart(self) -> None:
        """Steps start (a phase, a training period): the next progress line is due a
        ``progress_seconds`` from now."""
        self._last = (time.perf_counter(), self.run._total_env_steps())
        self._due = self._last[0] + self.run.context.progress_seconds

    def step(self) -> None:
        """After each step (or block of steps): the progress line and the bar, when due."""
        now = time.perf_counter()
        if now >= self._due:  # once a step: the due time is kept, not worked out
            last_time, last_steps = self._last
            steps = self.run._total_env_steps()
            self.line(now - last_time, steps - last_steps)
            self._last = (now, steps)
            self._due = now + self.run.context.progress_seconds
        if self._bars:
            self.tick()

    def tick(self) -> None:
        """Redraw the live bar, if it is due (at most ten times a second)."""
        if self._bars:
            bar, done, postfix = self._bars[-1]
            if bar.due():
                bar.update(done(), postfix())

    def line(self, seconds: float, steps: int) -> None:
        """The progress line, with the env steps per second of ``steps`` in ``seconds`` and
        each agent's memory size."""
        logger = self.run.logger
        if logger is None:
            return
        sizes = {
            f"{level.name}.{name}": len(agent.memory)
            for level in self.run.levels
            for name, agent in level.agents.items()
            if agent.memory is not None
        }
        logger.progress(self.run.phase, steps / seconds if seconds > 0 else 0.0, sizes)

    @contextmanager
    def bar(
        self,
        label: str,
        budget: StepUnit,
        done: Callable[[], float],
        postfix: Callable[[], str] | None = None,
        leave: bool = False,
    ) -> Iterator[None]:
        """A live bar while the block runs, over the bars open; nothing where the console
        is not a terminal.

        Args:
            label: What progresses.
            budget: Where the bar is full, and the unit it counts.
            done: The progress so far, in the budget's unit.
            postfix: The text after the numbers (default: the last episode's reward and
                the last evaluation's).
            leave: Keep the bar's last frame on the screen when it closes.
        """
        logger = self.run.logger
        if logger is None or not logger.terminal.live:
            yield
            return
        unit = UNIT_NAMES.get(type(budget), type(budget).__name__.lower())
        entry = (
            logger.terminal.bar(f"{label:<8}", budget.num_steps, unit, initial=done(), leave=leave),
            done,
            postfix or self._rewards,
        )
        if self._bars:  # the bar beneath, covered now, shows where it stopped when it comes back
            below, below_done, below_postfix = self._bars[-1]
            below.update(below_done(), below_postfix())
        self._bars.append(entry)
        bar = entry[0]
        try:
            bar.update(done(), entry[2]())
            yield
            bar.update(done(), entry[2]())  # where the phase ended: 100% unless stopped
        finally:
            self._bars.remove(entry)
            bar.close()

    def evaluation_bar(
        self, budget: StepUnit, episodes: EvaluationEpisodes
    ) -> AbstractContextManager[None]:
        """The bar of an evaluation: its episodes (or steps), their mean reward so far."""
        if episodes.by_episodes:
            done: Callable[[], float] = lambda: len(episodes.rewards)  # noqa: E731
        else:
            done = since(self.run._total_env_steps)
        return self.bar("evaluate", budget, done, lambda: _mean_reward(episodes.rewards))

    def _rewards(self) -> str:
        logger = self.run.logger
        if logger is None:
            return ""
        parts = []
        if logger.last_episode_reward is not None:
            parts.append(f"reward {logger.last_episode_reward:.1f}")
        if logger.last_evaluation is not None:
            parts.append(f"eval {logger.last_evaluation:.1f}")
        return " · ".join(parts)


def _mean_reward(rewards: list[float]) -> str:
    return f"mean reward {math.fsum(rewards) / len(rewards):.1f}" if rewards else ""
