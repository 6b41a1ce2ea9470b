"""What a run is given: its schedule (the preset's) and its context (the command line's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coach import validation as check
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, StepUnit
from coach.errors import CoachError

ENV_STEP_BUDGETS = ("heatup_steps", "improve_steps", "steps_between_evaluation_periods")
"""The phases a run acts in for a number of steps (evaluations are counted apart)."""


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

    def validate_for_copies(self, num_envs: int, workers: int = 1) -> None:
        """Refuse more environment copies than the phases can use: one step of a vectorised
        environment takes an env step in each of its ``num_envs`` copies at once (in each of
        ``workers`` rollout workers, whose steps come in together), so a phase counted in
        fewer env steps than that would run past its budget on its first step.

        Raises:
            CoachError: naming the phase, its budget and the most copies (or workers) it
                can use.
        """
        short = self._shorter_than(num_envs)
        if short is not None:
            name, budget = short
            raise CoachError(
                f"environment.num_envs={num_envs} copies take {num_envs} env steps at every "
                f"step, more than schedule.{name} ({budget!r}) can use: give at most "
                f"{budget.num_steps} copies, or a longer {name}"
            )
        short = self._shorter_than(num_envs * workers)
        if short is not None:
            name, budget = short
            each = f"{num_envs} environment {'copy' if num_envs == 1 else 'copies'} each"
            most = budget.num_steps // num_envs
            raise CoachError(
                f"{workers} workers of {each} take {num_envs * workers} env steps at every "
                f"step, more than schedule.{name} ({budget!r}) can use: give at most {most} "
                f"worker{'s' if most > 1 else ''}, or a longer {name}"
            )

    def _shorter_than(self, env_steps: int) -> tuple[str, EnvironmentSteps] | None:
        """The first phase counted in fewer env steps than ``env_steps`` (but some)."""
        for name in ENV_STEP_BUDGETS:
            budget = getattr(self, name)
            # A phase counted in episodes or training steps, or not run at all, is not.
            if isinstance(budget, EnvironmentSteps) and 0 < budget.num_steps < env_steps:
                return name, budget
        return None


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
    """A checkpoint to carry on, in the experiment folder it was written to; `create_graph`
    restores it and sets this back to ``None``."""
