"""What a run is given (schedule, run context) and what an evaluation gives back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from coach import validation as check
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, StepUnit
from coach.core.types import EnvResponse


@dataclass(slots=True, kw_only=True)
class ScheduleParameters:
    """How long each phase of a run lasts, and how often it is checkpointed."""

    heatup_steps: StepUnit = field(default_factory=lambda: EnvironmentSteps(1000))
    """Random acting before training starts (env steps or episodes)."""
    improve_steps: StepUnit = field(default_factory=lambda: EnvironmentSteps(100_000))
    """The training budget of the whole run, heatup excluded."""
    steps_between_evaluation_periods: StepUnit = field(
        default_factory=lambda: EnvironmentSteps(5000)
    )
    """Training between two evaluations."""
    evaluation_steps: StepUnit = field(default_factory=lambda: EnvironmentEpisodes(10))
    """The length of one evaluation (episodes are split evenly over the env copies); 0 runs
    no evaluations."""
    checkpoint_steps: EnvironmentSteps | None = None
    """Env steps between two checkpoints; ``None`` leaves it to ``-s`` seconds, if given."""

    def validate(self) -> None:
        """Refuse phases that never end or never start. Which units ``improve_steps`` and
        the evaluation period may count in depends on the graph (`GraphManager.validate`)."""
        acting = (EnvironmentSteps, EnvironmentEpisodes)
        check.steps("heatup_steps", self.heatup_steps, acting, 0, why="nothing trains in heatup")
        check.steps("improve_steps", self.improve_steps, (StepUnit,), 0)
        check.steps(
            "steps_between_evaluation_periods",
            self.steps_between_evaluation_periods,
            (StepUnit,),
            1,
        )
        check.steps(
            "evaluation_steps",
            self.evaluation_steps,
            acting,
            0,
            why="nothing trains in an evaluation",
        )
        if self.checkpoint_steps is not None:
            check.steps("checkpoint_steps", self.checkpoint_steps, (EnvironmentSteps,), 1)


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
    checkpoint_seconds: float | None = None
    """Wall-clock seconds between two checkpoints (``-s``)."""
    save_memory: bool = False
    """Checkpoints also hold the replay memories (exact resumes of off-policy agents)."""
    keep_checkpoints: int = 5
    """How many checkpoints are kept; older ones are deleted."""
    resume: dict[str, Any] | None = None
    """A checkpoint to carry on, in the experiment folder it was written to."""


@dataclass(slots=True)
class RunProgress:
    """Where a run stands: what its loop needs to carry on exactly after a restore."""

    evaluation_env_steps: int = 0
    """Env steps spent in evaluations (off the training clock)."""
    evaluation_episodes: int = 0
    """Episodes finished in evaluations."""
    frozen_env_steps: int = 0
    """The training clock while an evaluation runs."""
    seeded: bool = False
    """The environments had their seeded reset."""
    heatup_done: bool = False
    """Heatup has spent its budget."""
    improve_start: int | None = None
    """The training count at which `improve` began, in the improve budget's unit."""
    period_end: int | None = None
    """Where the current training period ends, in its own unit; ``None`` between periods."""


@dataclass(slots=True)
class EvaluationResult:
    """The episodes of one evaluation period."""

    env_steps: int
    """The run's training env steps when the evaluation ran."""
    rewards: list[float]
    """Each episode's undiscounted return."""
    lengths: list[int]
    """Each episode's length."""
    successes: list[float] = field(default_factory=list)
    """Each episode's ``is_success`` (goal-based environments report it in the last step's
    info); empty when the environment reports none."""

    @property
    def mean_reward(self) -> float:
        return float(np.mean(self.rewards)) if self.rewards else float("nan")

    @property
    def success_rate(self) -> float:
        """The fraction of episodes that reached their goal (nan without successes)."""
        return float(np.mean(self.successes)) if self.successes else float("nan")


class EvaluationEpisodes:
    """Collects the finished episodes of an evaluation.

    With an episode budget of ``n`` over ``num_envs`` copies, copy ``i`` contributes its first
    ``(n + i) // num_envs`` episodes: short episodes, which end first, are not favoured.
    With a step budget every finished episode counts.
    """

    def __init__(self, budget: StepUnit, num_envs: int) -> None:
        self.by_episodes = isinstance(budget, EnvironmentEpisodes)
        self.quota = [(budget.num_steps + i) // num_envs for i in range(num_envs)]
        self.counts = [0] * num_envs
        self.rewards: list[float] = []
        self.lengths: list[int] = []
        self.successes: list[float] = []

    def record(self, response: EnvResponse) -> bool:
        """Take a step's finished episodes; true once every copy has run its share."""
        for i in np.flatnonzero(response.terminated | response.truncated):
            if self.by_episodes and self.counts[i] >= self.quota[i]:
                continue
            self.counts[i] += 1
            self.rewards.append(float(response.episode_return[i]))
            self.lengths.append(int(response.episode_length[i]))
            info = response.infos[i] if response.infos else {}
            if "is_success" in info:
                self.successes.append(float(info["is_success"]))
        return self.by_episodes and self.counts == self.quota
