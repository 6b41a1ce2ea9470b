"""One trial of ``coach tune``, where a worker runs it (a local process or a Ray task).

A trial is a normal run of the preset (`coach.cli_run.run`) with the study's overrides and
the trial's sampled values as ``-cp`` overrides, in its own experiment folder
(``trial_<number>/`` in the study folder, quiet on the console, its log.txt written); or,
with several seeds, one such run per seed after another (``trial_<number>/seed_<s>/``).
After each periodic evaluation it reports to the study the mean of the trial's evaluations
so far (the objective, had the trial ended there) at its env steps, counted on from its
earlier runs' (so that every trial reports at the same steps); when the study's pruner says the
trial is behind, the run ends there, as cleanly as at the end of its budget (a checkpoint,
``best.pt`` kept), and the trial is pruned. The pruner is not asked at the last run's
last evaluation: a trial that ran its whole budget is complete, however it compares.

The worker only reports; the study's driver (`coach.studies.tuning`) tells Optuna how each
trial ended, from the `TrialOutcome` it gets back. A SIGINT to the worker (the driver's way
to stop a trial, on either backend) stops the run after its current step with a checkpoint,
as Ctrl-C does a ``coach`` run; the trial is then ``interrupted``.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coach.errors import CoachError, on_stop_signals
from coach.studies.search_space import Pruning

if TYPE_CHECKING:
    from optuna.storages import BaseStorage
    from optuna.trial import Trial

    from coach.graph_managers.evaluation import EvaluationResult
    from coach.graph_managers.graph_manager import GraphManager

COMPLETE, PRUNED, FAILED, INTERRUPTED = "complete", "pruned", "failed", "interrupted"
"""How a trial can end."""


@dataclass(frozen=True, slots=True)
class StorageAddress:
    """Where a worker finds the study's storage: the SQLite file, or a gRPC proxy of it
    (Ray workers, which may run on other machines)."""

    url: str | None = None
    """``sqlite:////path/to/study.db``."""
    host: str | None = None
    port: int | None = None

    def connect(self) -> BaseStorage:
        """The storage, as this process reaches it."""
        if self.url is not None:
            return sqlite_storage(self.url)
        from optuna.storages import GrpcStorageProxy

        assert self.host is not None and self.port is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Optuna calls the proxy experimental
            proxy = GrpcStorageProxy(host=self.host, port=self.port)
        proxy.wait_server_ready(timeout=60)
        return proxy


def sqlite_storage(url: str) -> BaseStorage:
    """Optuna's storage on an SQLite file, waiting for the file's lock as long as a slow
    disk might need while the driver and the workers write to it."""
    from optuna.storages import RDBStorage

    return RDBStorage(url, engine_kwargs={"connect_args": {"timeout": 60}})


@dataclass(frozen=True, slots=True)
class TrialJob:
    """What a worker needs to run one trial."""

    number: int
    trial_id: int
    study_name: str
    storage: StorageAddress
    pruning: Pruning
    preset: str
    overrides: tuple[str, ...]
    """The study's ``-cp`` overrides, then the trial's values."""
    seeds: tuple[int, ...]
    """A run on each, one after the other (in ``seed_<s>/`` folders when more than one)."""
    device: str
    directory: Path
    """The trial's experiment folder (made by the run)."""
    allow_import: tuple[str, ...] = ()
    """``--allow-import`` of ``coach tune``: what the preset's files may name (never kept in
    the study's folder)."""


@dataclass(frozen=True, slots=True)
class TrialOutcome:
    """How a trial ended."""

    number: int
    state: str
    """`COMPLETE`, `PRUNED`, `FAILED` or `INTERRUPTED`."""
    value: float | None = None
    """The objective (complete), or the last value reported (pruned, interrupted)."""
    env_steps: int = 0
    """The env steps of the last evaluation."""
    message: str = ""
    """Why it failed."""
    seed: int | None = None
    """The seed of the run it ended in, for a trial of several runs."""


@dataclass(slots=True)
class _Reporter:
    """Reports a run's evaluations to its trial, and ends the run when the trial is pruned."""

    trial: Trial
    scores: list[float] = field(default_factory=list)
    """Every evaluation's score, over the trial's runs so far."""
    env_steps: int = 0
    """The current run's env steps at its last evaluation."""
    offset: int = 0
    """The env steps of the trial's earlier runs: a report's step is offset + env steps,
    the same for every trial of a study whose schedule is not tuned."""
    last_run: bool = True
    pruned: bool = False
    graph: Any = None
    signum: int | None = None
    """A stop signal that came before the run was built."""

    def attach(self, graph: GraphManager) -> None:
        self.graph = graph
        graph.stop_when = self.evaluated
        if self.signum is not None:
            graph.stop_requested = self.signum

    def next_run(self) -> None:
        self.offset += self.env_steps
        self.env_steps = 0

    def evaluated(self, result: EvaluationResult) -> bool:
        score = self.graph.score(result)
        if math.isnan(score):
            return False
        self.scores.append(score)
        self.env_steps = result.env_steps
        self.trial.report(sum(self.scores) / len(self.scores), self.offset + result.env_steps)
        spent = self.graph.budget_spent() >= self.graph.schedule_params.improve_steps.num_steps
        if (self.last_run and spent) or not self.trial.should_prune():
            return False  # the trial's last evaluation completes it, whatever the others did
        self.pruned = True
        self.graph.logger.info(
            f"pruned by the study at {result.env_steps} env steps "
            f"(mean evaluation so far {self.value():.2f})"
        )
        return True

    def value(self) -> float | None:
        return sum(self.scores) / len(self.scores) if self.scores else None

    def stop(self, signum: int, frame: Any) -> None:
        self.signum = signum
        if self.graph is not None and self.graph.stop_requested is None:
            self.graph.stop_requested = signum


def _options(job: TrialJob, seed: int, directory: Path) -> Any:
    """The command line of one of a trial's runs."""
    from coach.cli_run import RunOptions

    return RunOptions(
        preset=job.preset,
        experiment_path=directory.parent,
        seed=seed,
        custom_parameters=job.overrides,
        device=job.device,
        quiet=True,
        run_dir=directory,
        allow_import=job.allow_import,
    )


def run_trial(job: TrialJob) -> TrialOutcome:
    """Run one trial (a run per seed, one after another) to its end, its pruning, a stop
    signal or an error; say which."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name=job.study_name,
        storage=job.storage.connect(),
        sampler=optuna.samplers.RandomSampler(),  # the driver samples; nothing here does
        pruner=job.pruning.pruner(),
    )
    reporter = _Reporter(optuna.trial.Trial(study, job.trial_id))
    # Until a run installs its own handlers (and after it), a stop signal is kept here.
    with on_stop_signals(reporter.stop):
        for index, seed in enumerate(job.seeds):
            reporter.last_run = index == len(job.seeds) - 1
            ended = _run(job, seed, reporter)
            if ended is not None:
                return ended
            if not reporter.last_run:
                reporter.next_run()
    final = reporter.value()
    if final is None:
        return TrialOutcome(job.number, FAILED, message="the run made no evaluation")
    return TrialOutcome(job.number, COMPLETE, final, reporter.env_steps)


def _run(job: TrialJob, seed: int, reporter: _Reporter) -> TrialOutcome | None:
    """One of a trial's runs: None when it ran its whole budget, else how the trial ended."""
    from coach.cli_run import run
    from coach.run_failures import EXIT_INTERNAL

    several = len(job.seeds) > 1
    directory = job.directory / f"seed_{seed}" if several else job.directory
    ended = partial(TrialOutcome, job.number, seed=seed if several else None)
    directory.mkdir(parents=True)  # a run's folder given to it is made by its caller
    try:
        status = run(_options(job, seed, directory), watch=reporter.attach)
    except CoachError as error:
        # Refused before it ran (values the preset refuses together): no folder is left.
        shutil.rmtree(directory, ignore_errors=True)
        with contextlib.suppress(OSError):
            job.directory.rmdir()
        return ended(FAILED, message=str(error))
    except KeyboardInterrupt:
        return ended(INTERRUPTED, reporter.value(), env_steps=reporter.env_steps)
    value, steps = reporter.value(), reporter.env_steps
    if status == EXIT_INTERNAL:
        message = f"internal error; the traceback is in {directory / 'log.txt'}"
        return ended(FAILED, value, env_steps=steps, message=message)
    if status != 0:
        return ended(INTERRUPTED, value, env_steps=steps)
    if reporter.pruned:
        return ended(PRUNED, value, env_steps=steps)
    return None
