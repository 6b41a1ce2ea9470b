"""The graph manager: builds the levels and drives a run through its phases.

    improve():
        heatup(heatup_steps)                       # random acting, memories fill
        while improve_steps not spent:
            train_and_act(steps_between_evaluation_periods)
            evaluate(evaluation_steps)             # greedy, nothing stored or trained

Every phase steps the top level until the phase's budget, counted in its own step unit, is
spent. Episodes in flight are dropped when an evaluation starts and when it ends, so an
evaluation always scores whole, fresh episodes.

The loop keeps its place in counters (`RunProgress`: where the current training period ends,
whether heatup is done), so a run restored from a checkpoint carries on exactly where it
stopped; what a checkpoint holds is `coach.graph_managers.run_state`, what an evaluation gives
back `coach.graph_managers.evaluation`, what the console shows of the run (the progress
line, the live bars) `coach.graph_managers.progress_report`.
"""

from __future__ import annotations

import copy
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coach import validation as check
from coach.checkpoints import CheckpointSchedule, save_best, save_checkpoint
from coach.core.run_phase import EVALUATE, RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, StepUnit, TrainingSteps
from coach.environments.environment import Environment
from coach.errors import CoachError, RunInterrupted
from coach.graph_managers.evaluation import EvaluationEpisodes, EvaluationResult
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.graph_managers.progress_report import ProgressReport, since
from coach.graph_managers.run_state import RunProgress, restore_run, run_state, with_memories
from coach.level_manager import Level
from coach.logging.experiment_logger import ExperimentLogger
from coach.logging.video import EvaluationVideo
from coach.parameter_tree import validate_parameters


class GraphManager(ABC):
    """Owns the levels, the environment at the bottom, the phases and the logger.

    Args:
        name: The graph's name (a preset's name by default).
        schedule_params: How long each phase lasts.
    """

    def __init__(self, name: str, schedule_params: ScheduleParameters) -> None:
        self.name = name
        self.schedule_params = schedule_params
        self.levels: list[Level] = []
        self.environment: Environment | None = None
        self.logger: ExperimentLogger | None = None
        self.context = RunContext()
        self.evaluations: list[EvaluationResult] = []
        self.stop_requested: int | None = None
        """Set (to the signal number) by a signal handler: the run stops after this step."""
        self._phase = RunPhase.HEATUP
        self.progress = RunProgress()
        self.fresh_episodes = True
        """The next phase starts new episodes rather than going on with those in flight."""
        self._checkpoints: CheckpointSchedule | None = None
        self._snapshot: dict[str, Any] | None = None
        self.video: EvaluationVideo | None = None
        """Records evaluation episodes, when set."""
        self.stop_when: Callable[[EvaluationResult], bool] | None = None
        """Ends `improve` early after an evaluation for which it returns true."""
        self.stopped_early = False
        """`stop_when` returned true."""
        self.report = ProgressReport(self)
        """The console's progress line and live bars."""

    # -- building ---------------------------------------------------------------------------

    budget_units: tuple[type[StepUnit], ...] = (
        EnvironmentSteps,
        EnvironmentEpisodes,
        TrainingSteps,
    )
    """What the training budget and the evaluation period may be counted in."""

    def parameters(self) -> dict[str, Any]:
        """The parameter objects a ``-cp path=value`` override may start from, by name."""
        return {"schedule": self.schedule_params}

    def validate(self, workers: int = 1) -> None:
        """Check every parameter's value, and the combinations the graph makes of them, before
        anything is built or written; raise a `CoachError` naming the first wrong one. With
        ``workers``, the agents learn from the env copies of that many rollout workers."""
        validate_parameters(self.parameters())
        for name in ("improve_steps", "steps_between_evaluation_periods"):
            check.steps(
                f"schedule.{name}", getattr(self.schedule_params, name), self.budget_units, 0
            )

    @abstractmethod
    def _build(self, context: RunContext) -> tuple[Environment, Sequence[Level]]:
        """Build the real environment and the levels on it, bottom level first."""

    def create_graph(self, context: RunContext | None = None) -> GraphManager:
        """Build environments, agents and the logger for a run (or for its resumption)."""
        self.validate()
        self.context = context or RunContext()
        torch.set_num_threads(self.context.num_threads)
        resume = self.context.resume
        if self.context.experiment_dir is not None:
            self.logger = ExperimentLogger(
                self.context.experiment_dir,
                lambda: self.env_steps,
                lambda: self.training_steps,
                quiet=self.context.quiet,
                resume=resume["logger"] if resume is not None else None,
            )
        self.environment, levels = self._build(self.context)
        self.levels = list(levels)
        if resume is not None:
            self.load_state_dict(resume)
            # Consumed: the run does not hold a second copy of its replay (an Atari one's
            # frames are about 7 GB).
            self.context.resume = None
        seconds, steps = self.context.checkpoint_seconds, self.schedule_params.checkpoint_steps
        if self.context.experiment_dir is not None and (seconds or steps):
            self._checkpoints = CheckpointSchedule(
                seconds, steps.num_steps if steps else None, start_steps=self.env_steps
            )
        return self

    def agent_seed(self, index: int) -> int:
        """A seed for the ``index``-th agent, derived from the run's seed."""
        return int(np.random.SeedSequence([self.context.seed, index]).generate_state(1)[0])

    @property
    def top_level(self) -> Level:
        if not self.levels:
            raise CoachError("the graph is not built: call create_graph() first")
        return self.levels[-1]

    # -- counters ---------------------------------------------------------------------------

    @property
    def env_steps(self) -> int:
        """Env steps in heatup and training (evaluation excluded): the x axis of the logs."""
        if self._phase is RunPhase.EVALUATE or self.environment is None:
            return self.progress.frozen_env_steps
        return self._total_env_steps() - self.progress.evaluation_env_steps

    @property
    def training_steps(self) -> int:
        return sum(agent.training_steps for level in self.levels for agent in level.agents.values())

    @property
    def training_episodes(self) -> int:
        """Episodes finished in heatup and training (evaluation excluded)."""
        return self._training_count(EnvironmentEpisodes(0))

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

    def _training_count(self, unit: StepUnit) -> int:
        """What has been spent in ``unit`` outside evaluations."""
        count = self._counter(unit)()
        if isinstance(unit, EnvironmentSteps):
            return count - self.progress.evaluation_env_steps
        if isinstance(unit, EnvironmentEpisodes):
            return count - self.progress.evaluation_episodes
        return count

    # -- phases -----------------------------------------------------------------------------

    @property
    def phase(self) -> RunPhase:
        return self._phase

    @phase.setter
    def phase(self, phase: RunPhase) -> None:
        if phase is RunPhase.EVALUATE and self._phase is not RunPhase.EVALUATE:
            self.progress.frozen_env_steps = self.env_steps
        self._phase = phase
        self.top_level.phase = phase

    def _reset(self) -> None:
        # Seeded once; later resets continue each environment's own random stream.
        self.top_level.reset(None if self.progress.seeded else self.context.seed)
        self.progress.seeded = True
        self.fresh_episodes = False

    def _run(self, budget: StepUnit, on_response: Any = None) -> None:
        if self.fresh_episodes:
            self._reset()
        count = self._counter(budget)
        end = count() + budget.num_steps
        report = self.report
        report.restart()
        step = self.top_level.step
        # Checkpoints are not taken inside an evaluation (the phase is set for the whole run).
        checkpoints = self._checkpoints if self._phase is not EVALUATE else None
        while count() < end:
            response = step()
            if on_response is not None and on_response(response):
                break
            if self.stop_requested is not None:
                raise RunInterrupted(self.stop_requested)
            if checkpoints is not None and checkpoints.due(self.env_steps):
                self.save_checkpoint()
            report.step()

    def heatup(self, steps: StepUnit) -> None:
        """Act at random for ``steps``: the memories fill, nothing trains."""
        if steps.num_steps == 0:
            return
        self.phase = RunPhase.HEATUP
        started = time.perf_counter()
        before = self._total_env_steps()
        with self.report.bar("heatup", steps, since(self._counter(steps))):
            self._run(steps)
        self.report.line(time.perf_counter() - started, self._total_env_steps() - before)

    def train_and_act(self, steps: StepUnit) -> None:
        """Act with exploration, store and train for ``steps``."""
        self.phase = RunPhase.TRAIN
        self._run(steps)

    def evaluate(self, steps: StepUnit) -> EvaluationResult:
        """Act greedily for ``steps`` on fresh episodes, nothing stored or trained; an episode
        budget is split evenly over the env copies (see `EvaluationEpisodes`)."""
        if not self.fresh_episodes:  # what agents held back of them is stored before the snapshot
            for level in self.levels:
                level.end_episodes()
        if self._checkpoints is not None or self.logger is not None:
            # What a checkpoint taken during the evaluation holds: the run as it was before
            # it, copied (greedy acting changes noisy layers' noise and a DND's use in place).
            self._snapshot = copy.deepcopy(self.state_dict())
        self.phase = RunPhase.EVALUATE
        self.fresh_episodes = True
        started = time.perf_counter()
        before, episodes_before = self._total_env_steps(), self._episodes()
        episodes = EvaluationEpisodes(steps, self.top_level.num_envs)
        video = self.video
        if video is not None:
            video.start(self.environment)

        def record(response: Any) -> bool:
            if video is not None:
                video.capture(self.environment, bool(response.done[0]))
            return episodes.record(response)

        # An episode budget ends in `record`, once every copy has run its share.
        by_episodes = isinstance(steps, EnvironmentEpisodes)
        with self.report.evaluation_bar(steps, episodes):
            self._run(EnvironmentEpisodes(2**62) if by_episodes else steps, on_response=record)
        rewards, lengths = episodes.rewards, episodes.lengths
        self.progress.evaluation_env_steps += self._total_env_steps() - before
        self.progress.evaluation_episodes += self._episodes() - episodes_before
        result = EvaluationResult(
            self.progress.frozen_env_steps, rewards, lengths, episodes.successes
        )
        if video is not None:
            paths, summary = video.finish(self.progress.frozen_env_steps)
            if self.logger is not None and summary is not None:
                self.logger.writer("graph").write_summary(summary, self.progress.frozen_env_steps)
                self.logger.info(f"evaluation videos: {', '.join(str(p) for p in paths)}")
        self.record_evaluation(result)
        self.report.line(time.perf_counter() - started, self._total_env_steps() - before)
        self.fresh_episodes = True  # training goes on with fresh episodes
        self._snapshot = None
        return result

    def evaluation_period(self, steps: StepUnit) -> None:
        """The periodic evaluation of `improve` (a distributed run may run it aside). The run
        after its best evaluation so far (`score`) is kept as ``checkpoints/best.pt``,
        without the memories: ``-crd .../best.pt`` acts with it."""
        result = self.evaluate(steps)
        directory = self.context.experiment_dir
        if directory is None or not result.rewards:
            return
        earlier = (self.score(e) for e in self.evaluations[:-1] if e.rewards)
        score, best = self.score(result), max(earlier, default=-np.inf)
        if score < best or (score == best and not self.later_on_ties):
            return
        path = save_best(directory / "checkpoints", self.state_dict())
        if self.logger is not None:
            self.logger.info(f"best evaluation so far ({score:.2f}): {path}")

    later_on_ties = False  # whether a later evaluation as good as the best replaces it

    def score(self, result: EvaluationResult) -> float:
        """What makes an evaluation the best so far: its mean reward (a game's: its wins)."""
        return result.mean_reward

    def record_evaluation(self, result: EvaluationResult) -> None:
        """Keep and log an evaluation's result; `stop_when` may end the run here."""
        self.evaluations.append(result)
        if self.logger is not None:
            self.logger.evaluation("graph", result.rewards, result.lengths, result.successes)
        if self.stop_when is not None and self.stop_when(result):
            self.stopped_early = True

    def improve(self) -> None:
        """The whole run: heatup, then training with periodic evaluation."""
        schedule = self.schedule_params
        if not self.progress.heatup_done:
            heatup = schedule.heatup_steps
            remaining = heatup.num_steps - self._training_count(heatup)
            if remaining > 0:
                self.heatup(type(heatup)(remaining))
            self.progress.heatup_done = True
        improve, period = schedule.improve_steps, schedule.steps_between_evaluation_periods
        if self.progress.improve_start is None:
            self.progress.improve_start = self._training_count(improve)
        with self.report.bar("train", improve, self.budget_spent, leave=True):
            while True:
                if (
                    self.progress.period_end is not None
                    and self._training_count(period) >= self.progress.period_end
                ):
                    # The period ends after its evaluation: a checkpoint taken during the
                    # evaluation (the run as it was before it) runs the evaluation again.
                    if schedule.evaluation_steps.num_steps > 0:
                        self.evaluation_period(schedule.evaluation_steps)
                    self.progress.period_end = None
                    if self.stopped_early:
                        return
                    continue
                remaining = improve.num_steps - self.budget_spent()
                if remaining <= 0:
                    break
                if self.progress.period_end is None:
                    length = period.num_steps
                    if type(period) is type(improve):
                        length = min(length, remaining)
                    self.progress.period_end = self._training_count(period) + length
                self.train_and_act(
                    type(period)(self.progress.period_end - self._training_count(period))
                )
                if self.stopped_early:  # an evaluation run aside (in parallel) said so
                    return

    def budget_spent(self) -> int:
        """What training has spent of its budget (``improve_steps``, in its unit) so far;
        heatup is not part of it."""
        start = self.progress.improve_start or 0
        return self._training_count(self.schedule_params.improve_steps) - start

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self, include_memory: bool = False) -> dict[str, Any]:
        """Everything a run needs to carry on exactly (see `coach.graph_managers.run_state`)."""
        return run_state(self, include_memory)

    def load_state_dict(self, state: dict[str, Any], whole_run: bool = True) -> None:
        """Restore a checkpoint: the whole run, or (``whole_run=False``) only the agents."""
        restore_run(self, state, whole_run)

    def save_checkpoint(self) -> Path | None:
        """Write a checkpoint now (during an evaluation: the run as it was before it)."""
        directory = self.context.experiment_dir
        if directory is None:
            return None
        snapshot = self._snapshot if self._phase is RunPhase.EVALUATE else None
        if snapshot is not None:  # the evaluation stores nothing: the memories are as before
            state = with_memories(snapshot, self.levels) if self.context.save_memory else snapshot
        else:
            state = self.state_dict(include_memory=self.context.save_memory)
        path = save_checkpoint(
            directory / "checkpoints", state, self.env_steps, self.context.keep_checkpoints
        )
        if self._checkpoints is not None:
            self._checkpoints.saved(self.env_steps)
        if self.logger is not None:
            self.logger.info(f"checkpoint saved at {self.env_steps} env steps: {path}")
        return path

    def close(self) -> None:
        """Close the environments and flush the logs."""
        if self.environment is not None:
            self.environment.close()
        if self.logger is not None:
            self.logger.close()
