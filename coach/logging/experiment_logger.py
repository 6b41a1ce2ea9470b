"""Where a run reports: TensorBoard event files, progress.csv, the console and log.txt.

Every scalar goes to TensorBoard against the run's total environment steps (heatup and
training, not evaluation), grouped under Train/, Evaluation/, Loss/, Exploration/, Memory/
and Time/. Each agent writes its own TensorBoard run (``tensorboard/<level>.<agent>``);
the graph manager's figures go to the ``graph`` run.
"""

from __future__ import annotations

import csv
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from coach.core.run_phase import RunPhase
from coach.logging.event_writer import EventWriter

CSV_COLUMNS = [
    "wall_time",
    "phase",
    "agent",
    "env_steps",
    "training_steps",
    "episode",
    "reward",
    "length",
    "reward_std",
    "reward_min",
    "reward_max",
    "episodes",
]
"""progress.csv: one row per training episode (reward, length) and one per evaluation
(reward is the mean; std, min, max and the number of episodes beside it)."""


class ExperimentLogger:
    """Writes the run's figures; one per run.

    Args:
        directory: The experiment folder (``experiments/<name>/<timestamp>``).
        env_steps: Returns the run's total environment steps, the x axis of every curve.
        training_steps: Returns the run's total gradient steps.
        quiet: Keep the console silent (log.txt is still written).
    """

    def __init__(
        self,
        directory: Path,
        env_steps: Callable[[], int],
        training_steps: Callable[[], int],
        quiet: bool = False,
    ) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.env_steps = env_steps
        self.training_steps = training_steps
        self.start = time.perf_counter()
        self._writers: dict[str, EventWriter] = {}
        self._csv_file = open(directory / "progress.csv", "w", newline="")  # noqa: SIM115
        self._csv = csv.DictWriter(self._csv_file, CSV_COLUMNS)
        self._csv.writeheader()
        self.console = logging.getLogger(f"coach.run.{id(self)}")
        self.console.setLevel(logging.INFO)
        self.console.propagate = False
        formatter = logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S")
        file_handler = logging.FileHandler(directory / "log.txt")
        file_handler.setFormatter(formatter)
        self.console.addHandler(file_handler)
        if not quiet:
            stream = logging.StreamHandler(sys.stdout)
            stream.setFormatter(formatter)
            self.console.addHandler(stream)
        self.episodes = 0
        self.last_episode_reward: float | None = None
        self.last_evaluation: float | None = None

    def writer(self, run: str) -> EventWriter:
        if run not in self._writers:
            self._writers[run] = EventWriter(self.directory / "tensorboard" / run)
        return self._writers[run]

    def scalar(self, run: str, tag: str, value: float) -> None:
        self.writer(run).scalar(tag, value, self.env_steps())

    def info(self, message: str) -> None:
        self.console.info(message)

    def _row(self, **values: Any) -> None:
        row = {"wall_time": f"{time.perf_counter() - self.start:.3f}"}
        row.update({k: v for k, v in values.items()})
        self._csv.writerow(row)

    def episode(self, run: str, phase: RunPhase, reward: float, length: int) -> None:
        """A finished episode of an agent; evaluation episodes are summarised by `evaluation`."""
        if phase is RunPhase.EVALUATE:
            return
        self.episodes += 1
        self.last_episode_reward = reward
        step = self.env_steps()
        writer = self.writer(run)
        writer.scalar("Train/episode_reward", reward, step)
        writer.scalar("Train/episode_length", length, step)
        self._row(
            phase=phase.value,
            agent=run,
            env_steps=step,
            training_steps=self.training_steps(),
            episode=self.episodes,
            reward=reward,
            length=length,
        )

    def evaluation(self, run: str, rewards: list[float], lengths: list[int]) -> None:
        """The summary of an evaluation period."""
        r = np.asarray(rewards, dtype=np.float64)
        mean, std = float(r.mean()), float(r.std())
        self.last_evaluation = mean
        step = self.env_steps()
        writer = self.writer(run)
        writer.scalar("Evaluation/mean_reward", mean, step)
        writer.scalar("Evaluation/std_reward", std, step)
        writer.scalar("Evaluation/mean_length", float(np.mean(lengths)), step)
        self._row(
            phase=RunPhase.EVALUATE.value,
            agent=run,
            env_steps=step,
            training_steps=self.training_steps(),
            episode=self.episodes,
            reward=mean,
            length=float(np.mean(lengths)),
            reward_std=std,
            reward_min=float(r.min()),
            reward_max=float(r.max()),
            episodes=len(rewards),
        )
        self.flush()

    def progress(self, phase: RunPhase, steps_per_second: float) -> None:
        """The console's progress line."""
        episode = "-" if self.last_episode_reward is None else f"{self.last_episode_reward:.1f}"
        evaluation = "-" if self.last_evaluation is None else f"{self.last_evaluation:.1f}"
        self.info(
            f"{phase.value:<8} env steps {self.env_steps():>8}  episodes {self.episodes:>5}  "
            f"last reward {episode:>7}  eval reward {evaluation:>7}  "
            f"{steps_per_second:,.0f} steps/s"
        )
        self.flush()

    def flush(self) -> None:
        self._csv_file.flush()
        for writer in self._writers.values():
            writer.flush()

    def close(self) -> None:
        self.flush()
        for writer in self._writers.values():
            writer.close()
        self._csv_file.close()
        for handler in list(self.console.handlers):
            handler.close()
            self.console.removeHandler(handler)


class AgentLogger:
    """The `AgentLog` an agent writes to: its own TensorBoard run in the experiment's log."""

    def __init__(self, logger: ExperimentLogger, run: str) -> None:
        self.logger = logger
        self.run = run

    def scalar(self, tag: str, value: float) -> None:
        self.logger.scalar(self.run, tag, value)

    def episode(self, phase: RunPhase, reward: float, length: int) -> None:
        self.logger.episode(self.run, phase, reward, length)
