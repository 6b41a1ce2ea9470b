"""Where a run reports: TensorBoard event files, progress.csv, the console and log.txt.

Where the console is a terminal, live progress bars (`coach.logging.progress`) share its
last line with the log lines, which print above them; log.txt gets the log lines only.

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
from coach.logging.progress import ConsoleHandler, ProgressLine

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
    "success_rate",
]
"""progress.csv: one row per training episode (reward, length) and one per evaluation
(reward is the mean; std, min, max, the number of episodes and, in goal-based tasks, the
success rate beside it)."""

_NO_SUMMARY = ("",) * (len(CSV_COLUMNS) - CSV_COLUMNS.index("reward_std"))
"""An episode row's blank evaluation columns."""


class ExperimentLogger:
    """Writes the run's figures; one per run.

    Args:
        directory: The experiment folder (``experiments/<name>/<timestamp>``).
        env_steps: Returns the run's total environment steps, the x axis of every curve.
        training_steps: Returns the run's total gradient steps.
        quiet: Keep the console silent (log.txt is still written).
        resume: A `state_dict` of a previous logger of this folder: its files are cut back to
            where that state was taken and carried on.
    """

    def __init__(
        self,
        directory: Path,
        env_steps: Callable[[], int],
        training_steps: Callable[[], int],
        quiet: bool = False,
        resume: dict[str, Any] | None = None,
    ) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.env_steps = env_steps
        self.training_steps = training_steps
        self.start = time.perf_counter()
        self._writers: dict[str, EventWriter] = {}
        if resume is None:
            self._csv_file = open(directory / "progress.csv", "w", newline="")  # noqa: SIM115
            self._csv = csv.writer(self._csv_file)
            self._csv.writerow(CSV_COLUMNS)
        else:
            with open(directory / "progress.csv", "r+b") as f:
                f.truncate(resume["csv_offset"])
            self._csv_file = open(directory / "progress.csv", "a", newline="")  # noqa: SIM115
            self._csv = csv.writer(self._csv_file)
            self._resume_event_files(resume["runs"])
        self.console = logging.getLogger(f"coach.run.{id(self)}")
        self.console.setLevel(logging.INFO)
        self.console.propagate = False
        formatter = logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S")
        file_handler = logging.FileHandler(directory / "log.txt")
        file_handler.setFormatter(formatter)
        self.console.addHandler(file_handler)
        self.terminal = ProgressLine(sys.stdout, enabled=not quiet)
        """The console's last line, where live progress bars go (drawn on a terminal only)."""
        if not quiet:
            stream = ConsoleHandler(self.terminal)
            stream.setFormatter(formatter)
            self.console.addHandler(stream)
        self.episodes = 0
        """Episodes of the environment finished outside evaluations (a hierarchy's
        sub-episodes not counted)."""
        self._sub_evaluations: dict[str, tuple[list[float], list[int], list[float]]] = {}
        """The sub-episodes of each hierarchy level in the evaluation under way, by run."""
        self.last_episode_reward: float | None = None
        self.last_evaluation: float | None = None
        self.last_success_rate: float | None = None
        """The last evaluation's success rate, in goal-based tasks."""
        if resume is not None:
            self.episodes = int(resume["episodes"])
            self.last_episode_reward = resume["last_episode_reward"]
            self.last_evaluation = resume["last_evaluation"]
            self.last_success_rate = resume.get("last_success_rate")
            self.start -= float(resume["seconds"])

    def _resume_event_files(self, runs: dict[str, dict[str, Any]]) -> None:
        """Cut each run's event file back to the checkpoint; drop files written after it."""
        root = self.directory / "tensorboard"
        for run_dir in root.iterdir() if root.is_dir() else []:
            kept = runs.get(run_dir.name)
            for events in run_dir.glob("events.out.tfevents.*"):
                if kept is None or events.name != kept["file"]:
                    events.unlink()
        for run, kept in runs.items():
            self._writers[run] = EventWriter(root / run, resume=(kept["file"], kept["offset"]))

    def state_dict(self) -> dict[str, Any]:
        """Where every file stands (after a flush) and the counters, for a checkpoint."""
        self.flush()
        return {
            "csv_offset": self._csv_file.tell(),
            "runs": {
                run: {"file": w.path.name, "offset": w.offset} for run, w in self._writers.items()
            },
            "episodes": self.episodes,
            "last_episode_reward": self.last_episode_reward,
            "last_evaluation": self.last_evaluation,
            "last_success_rate": self.last_success_rate,
            "seconds": self.seconds,
        }

    @property
    def seconds(self) -> float:
        """The run's wall time so far, across its resumptions."""
        return time.perf_counter() - self.start

    def writer(self, run: str) -> EventWriter:
        if run not in self._writers:
            self._writers[run] = EventWriter(self.directory / "tensorboard" / run)
        return self._writers[run]

    def scalar(self, run: str, tag: str, value: float) -> None:
        self.writer(run).scalar(tag, value, self.env_steps())

    def hparams(self, run: str, values: dict[str, Any], metrics: list[str]) -> None:
        """Write TensorBoard hparams (the HPARAMS tab) for ``run`` against its ``metrics``."""
        from torch.utils.tensorboard.summary import hparams

        plain = {k: v for k, v in values.items() if isinstance(v, bool | int | float | str)}
        experiment, start, end = hparams(plain, {m: 0.0 for m in metrics})
        writer = self.writer(run)
        for summary in (experiment, start, end):
            writer.write_summary(summary)

    def info(self, message: str) -> None:
        self.console.info(message)

    def _row(self, **values: Any) -> None:
        # The columns in order, blank where a row has no value (a plain writer, without a
        # DictWriter's check of every row's keys).
        values["wall_time"] = f"{self.seconds:.3f}"
        self._csv.writerow([values.get(column, "") for column in CSV_COLUMNS])

    def episode(
        self,
        run: str,
        phase: RunPhase,
        reward: float,
        length: int,
        success: float | None = None,
        sub_episode: bool = False,
    ) -> None:
        """A finished episode of an agent, with its ``is_success`` in goal-based tasks.

        A ``sub_episode`` is one goal of a level below the top of a hierarchy: it is not an
        episode of the environment, so the progress line does not count it. Evaluation
        episodes are summarised by `evaluation` (a level's sub-episodes by level).
        """
        if phase is RunPhase.EVALUATE:
            if sub_episode:
                rewards, lengths, successes = self._sub_evaluations.setdefault(run, ([], [], []))
                rewards.append(reward)
                lengths.append(length)
                if success is not None:
                    successes.append(success)
            return
        if not sub_episode:
            self.episodes += 1
            self.last_episode_reward = reward
        step = self.env_steps()
        writer = self.writer(run)
        writer.scalar("Train/episode_reward", reward, step)
        writer.scalar("Train/episode_length", length, step)
        if success is not None:
            writer.scalar("Train/success", success, step)
        # The row in `CSV_COLUMNS`' order, made directly: an episode's row is written as
        # often as every twentieth env step (a random CartPole heatup).
        self._csv.writerow(
            (
                f"{time.perf_counter() - self.start:.3f}",
                phase.value,
                run,
                step,
                self.training_steps(),
                self.episodes,
                reward,
                length,
                *_NO_SUMMARY,
            )
        )

    def evaluation(
        self,
        run: str,
        rewards: list[float],
        lengths: list[int],
        successes: list[float] | None = None,
    ) -> None:
        """The summary of an evaluation period (with its success rate in goal-based tasks),
        and of each hierarchy level's sub-episodes in it, in that level's run."""
        if rewards:
            self.last_evaluation = float(np.mean(rewards))
            self.last_success_rate = float(np.mean(successes)) if successes else None
            self._summarise(run, rewards, lengths, successes)
        else:
            self.info("evaluation finished no episode; raise evaluation_steps")
        for level_run, (level_rewards, level_lengths, level_successes) in sorted(
            self._sub_evaluations.items()
        ):
            self._summarise(level_run, level_rewards, level_lengths, level_successes)
        self._sub_evaluations.clear()
        self.flush()

    def _summarise(
        self, run: str, rewards: list[float], lengths: list[int], successes: list[float] | None
    ) -> None:
        """``Evaluation/`` scalars in ``run`` and a progress.csv row."""
        r = np.asarray(rewards, dtype=np.float64)
        mean, std = float(r.mean()), float(r.std())
        step = self.env_steps()
        writer = self.writer(run)
        writer.scalar("Evaluation/mean_reward", mean, step)
        writer.scalar("Evaluation/std_reward", std, step)
        writer.scalar("Evaluation/mean_length", float(np.mean(lengths)), step)
        success_rate = float(np.mean(successes)) if successes else None
        if success_rate is not None:
            writer.scalar("Evaluation/success_rate", success_rate, step)
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
            success_rate="" if success_rate is None else success_rate,
        )

    def progress(
        self, phase: RunPhase, steps_per_second: float, memory_sizes: dict[str, int] | None = None
    ) -> None:
        """The console's progress line; outside evaluations also the env steps per second
        and each agent's memory size (by its run's name) in TensorBoard."""
        if phase is not RunPhase.EVALUATE:
            self.scalar("graph", "Time/env_steps_per_second", steps_per_second)
            for run, size in (memory_sizes or {}).items():
                self.scalar(run, "Memory/size", size)
        episode = "-" if self.last_episode_reward is None else f"{self.last_episode_reward:.1f}"
        evaluation = "-" if self.last_evaluation is None else f"{self.last_evaluation:.1f}"
        success = (
            "" if self.last_success_rate is None else f"eval success {self.last_success_rate:.2f}  "
        )
        # An evaluation's steps are greedy acting alone, many times faster than training's:
        # its rate is labelled as its own, not read as the run's.
        rate = "evaluation steps/s" if phase is RunPhase.EVALUATE else "steps/s"
        self.info(
            f"{phase.value:<8} env steps {self.env_steps():>8}  episodes {self.episodes:>5}  "
            f"last reward {episode:>7}  eval reward {evaluation:>7}  {success}"
            f"{steps_per_second:,.0f} {rate}"
        )
        self.flush()

    def flush(self) -> None:
        self._csv_file.flush()
        for writer in self._writers.values():
            writer.flush()

    def close(self) -> None:
        self.terminal.close()
        self.flush()
        for writer in self._writers.values():
            writer.close()
        self._csv_file.close()
        for handler in list(self.console.handlers):
            handler.close()
            self.console.removeHandler(handler)


class AgentLogger:
    """The `AgentLog` an agent writes to: its own TensorBoard run in the experiment's log.

    Args:
        logger: The run's logger.
        run: The agent's TensorBoard run (``<level>.<agent>``).
        sub_episodes: The agent is on a level below the top of a hierarchy: its episodes are
            sub-episodes (one per goal), summarised per evaluation in its run.
    """

    def __init__(self, logger: ExperimentLogger, run: str, sub_episodes: bool = False) -> None:
        self.logger = logger
        self.run = run
        self.sub_episodes = sub_episodes

    def scalar(self, tag: str, value: float) -> None:
        self.logger.scalar(self.run, tag, value)

    def episode(
        self, phase: RunPhase, reward: float, length: int, success: float | None = None
    ) -> None:
        self.logger.episode(self.run, phase, reward, length, success, self.sub_episodes)
