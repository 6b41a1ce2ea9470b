"""The driver of ``coach tune``: an Optuna study over a preset's parameters, its trials run
by workers, the whole kept in an SQLite file so that a stopped study resumes.

    experiments/<name>/<timestamp>/
      tune.yaml       what it was started with (preset, seeds, trials, overrides, space)
      study.db        the Optuna study (SQLite)
      log.txt         the console output: one line per finished trial, the summary
      trial_<k>/      trial k's experiment folder: params.yaml, log.txt, progress.csv, ...
                      (with --seeds, one per run: trial_<k>/seed_<s>/)
      best.yaml       the best trial as a YAML preset (`coach.studies.tuning_results`)
      optimization_history.png/.svg, param_importances.png/.svg, intermediate_values.png/.svg
      trials.csv      every trial: its number, state, value, parameters, times

The driver alone samples: it asks the study for a trial (TPE, seeded), sends it to a free
worker (`coach.studies.trial_runners`) and, when the worker answers, tells the study how the
trial ended. So the study has exactly ``--trials`` trials that count (complete, pruned or
failed) whatever ``-j`` is, and TPE sees the running trials (its constant liar) when it
samples the next. The workers report each evaluation to the study themselves, where the
pruner reads it.

Stopping: the first Ctrl-C (SIGINT or SIGTERM) is passed on to the running trials, which
checkpoint and stop; the driver marks them interrupted (failed, in Optuna's terms, and
listed in the study's ``interrupted`` attribute), enqueues their parameters to run again from
the start, writes the summary and exits 130. A second Ctrl-C stops the trials at once, a
third the driver. ``coach tune --resume DIR`` continues: finished trials stay as they are,
the enqueued ones run first (a trial left running by a driver that was killed is found and
enqueued the same way), and new ones are sampled until ``--trials`` count.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import numpy as np
import yaml

from coach.errors import CoachError, on_stop_signals
from coach.studies.search_space import SearchSpace
from coach.studies.trials import (
    COMPLETE,
    FAILED,
    INTERRUPTED,
    PRUNED,
    TrialJob,
    TrialOutcome,
    sqlite_storage,
)
from coach.studies.tuning_results import (
    INTERRUPTED_ATTR,
    RERUNS_ATTR,
    count_states,
    describe,
    interrupted,
    report,
    trial_line,
)
from coach.trust import read_yaml

if TYPE_CHECKING:
    from optuna import Study
    from optuna.storages import BaseStorage
    from optuna.trial import Trial

    from coach.studies.trial_runners import TrialRunner

SETTINGS, DATABASE, LOG = "tune.yaml", "study.db", "log.txt"


@dataclass(slots=True)
class StudySettings:
    """What a study was started with; ``tune.yaml`` in its folder (``--resume`` reads it)."""

    preset: str
    """The base preset: a shipped preset's name, or the absolute path of a file."""
    seeds: list[int]
    """Every trial runs on each, one after another, and scores their mean; the first seeds
    the sampler."""
    trials: int
    """Trials to finish (complete, pruned or failed)."""
    jobs: int
    """Trials at once."""
    device: str
    name: str
    """The study's name in its storage."""
    space: dict[str, Any]
    """The search space, as its file said."""
    overrides: list[str] = field(default_factory=list)
    """The study's own ``-cp`` overrides, under every trial's."""

    def write(self, folder: Path) -> None:
        header = (
            f"# A coach tune study of {self.preset}; continue it with: "
            f"coach tune --resume {folder}\n"
        )
        text = yaml.safe_dump(asdict(self), sort_keys=False, width=100)
        (folder / SETTINGS).write_text(header + text)

    @classmethod
    def read(cls, folder: Path) -> StudySettings:
        path = folder / SETTINGS
        if not path.is_file() or not (folder / DATABASE).is_file():
            raise CoachError(f"{folder} is not a coach tune study (no {SETTINGS} and {DATABASE})")
        document = read_yaml(path)
        try:
            return cls(**document)
        except TypeError as error:
            raise CoachError(f"{path} is not a study's settings: {error}") from None


def storage_url(folder: Path) -> str:
    return f"sqlite:///{(folder / DATABASE).resolve()}"


class StudyLog:
    """The study's console lines, also kept in its log.txt with the time; where the console
    is a terminal, the lines go above the study's progress bar (`terminal`)."""

    def __init__(self, folder: Path) -> None:
        from coach.logging.progress import ProgressLine

        self.path = folder / LOG
        self.terminal = ProgressLine()

    def line(self, text: str) -> None:
        self.terminal.clear()
        click.echo(text)
        self.terminal.redraw()
        with open(self.path, "a") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n")


@dataclass(slots=True)
class _Stop:
    """The signals the driver got: the first stops the study, each is passed on to the
    running trials once, the third stops the driver."""

    signum: int | None = None
    count: int = 0
    passed_on: int = 0

    def __call__(self, signum: int, frame: Any) -> None:
        self.count += 1
        self.signum = self.signum or signum
        if self.count >= 3:
            raise KeyboardInterrupt


@contextlib.contextmanager
def _only_driver(folder: Path) -> Iterator[None]:
    """Hold the study's lock: two drivers on one study would both run its trials."""
    import fcntl

    with open(folder / ".lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CoachError(f"another coach tune is running the study in {folder}") from None
        yield


def open_study(
    storage: BaseStorage, settings: StudySettings, space: SearchSpace, create: bool
) -> Study:
    """The study in ``storage``: made new, or loaded. The sampler's seed is derived from the
    study's seed and how many trials it has, so a resumed study does not sample the same
    values again."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    pruner = space.pruning.pruner()
    if create:
        return optuna.create_study(
            storage=storage,
            study_name=settings.name,
            direction="maximize",
            sampler=optuna.samplers.TPESampler(seed=settings.seeds[0]),
            pruner=pruner,
        )
    study = optuna.load_study(study_name=settings.name, storage=storage, pruner=pruner)
    entropy = [settings.seeds[0], len(study.get_trials(deepcopy=False))]
    seed = int(np.random.SeedSequence(entropy).generate_state(1)[0])
    study.sampler = optuna.samplers.TPESampler(seed=seed)
    return study


class Tuning:
    """The driver's loop: keep up to ``jobs`` trials running until ``settings.trials`` have
    finished, or a signal stops it."""

    def __init__(
        self,
        folder: Path,
        settings: StudySettings,
        space: SearchSpace,
        study: Study,
        runner: TrialRunner,
        log: StudyLog,
        allow_import: tuple[str, ...] = (),
    ) -> None:
        self.folder, self.settings, self.space = folder, settings, space
        self.study, self.runner, self.log = study, runner, log
        self.allow_import = allow_import
        """``--allow-import`` of the command, for every trial."""
        self.distributions = {d.path: d.distribution() for d in space.dimensions}
        self.running: dict[int, Trial] = {}
        self.stop = _Stop()

    def finished(self) -> int:
        """Trials that count towards the total: complete, pruned, or failed by an error."""
        counts = count_states(self.study.get_trials(deepcopy=False), interrupted(self.study))
        return counts[COMPLETE] + counts[PRUNED] + counts[FAILED]

    def recover(self) -> None:
        """Trials a killed driver left running: interrupted, their parameters enqueued."""
        from optuna.trial import TrialState

        for trial in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            self.study.tell(trial.number, state=TrialState.FAIL)
            self._interrupted(trial.number, trial.params)
            self.log.line(f"trial {trial.number} was left running; its parameters run again")

    def _interrupted(self, number: int, params: dict[str, Any]) -> None:
        self.study.set_user_attr(INTERRUPTED_ATTR, sorted(interrupted(self.study) | {number}))
        if params:
            self.study.enqueue_trial(params, user_attrs={RERUNS_ATTR: number})

    def run(self) -> None:
        """Run trials until enough have finished or a signal stops the study."""
        finished = self.finished()
        total = self.settings.trials
        bar = self.log.terminal.bar("trials", total, "trials", initial=finished, leave=True)
        try:
            with on_stop_signals(self.stop):
                while True:
                    if bar.due() or finished >= total:  # (the postfix reads the study)
                        bar.update(finished, self._postfix(finished))
                    while (
                        self.stop.signum is None
                        and len(self.running) < self.settings.jobs
                        and finished + len(self.running) < self.settings.trials
                    ):
                        self._launch()
                    if not self.running:
                        return
                    self._pass_on_signals()
                    outcome = self.runner.next_outcome(timeout=0.5)
                    if outcome is not None:
                        self._finish(outcome)
                        finished += outcome.state != INTERRUPTED
        finally:
            bar.close()
            self._abandon()

    def _postfix(self, finished: int) -> str:
        """What the progress bar says beside the trials: how many run, the best so far."""
        from optuna.trial import TrialState

        values = [
            t.value
            for t in self.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.value is not None
        ]
        best = f" · best {max(values):.4g}" if values else ""
        return f"trials {finished}/{self.settings.trials} done · {len(self.running)} running{best}"

    def _launch(self) -> None:
        trial = self.study.ask(self.distributions)
        overrides = [d.override(trial.params[d.path]) for d in self.space.dimensions]
        self.runner.submit(
            TrialJob(
                number=trial.number,
                trial_id=trial._trial_id,  # the worker's handle on the same trial
                study_name=self.settings.name,
                storage=self.runner.address,
                pruning=self.space.pruning,
                preset=self.settings.preset,
                overrides=(*self.settings.overrides, *overrides),
                seeds=tuple(self.settings.seeds),
                device=self.settings.device,
                directory=self.folder / f"trial_{trial.number}",
                allow_import=self.allow_import,
            )
        )
        self.running[trial.number] = trial

    def _pass_on_signals(self) -> None:
        while self.stop.passed_on < self.stop.count:
            self.stop.passed_on += 1
            if self.stop.passed_on == 1:
                self.log.line(
                    "stopping: the running trials checkpoint and stop, and run again on "
                    "--resume (Ctrl-C again to stop them at once)"
                )
            else:
                self.log.line("stopping the running trials at once")
            self.runner.interrupt()

    def _finish(self, outcome: TrialOutcome) -> None:
        from optuna.trial import TrialState

        trial = self.running.pop(outcome.number)
        if outcome.state == COMPLETE:
            self.study.tell(trial, outcome.value)
        elif outcome.state == PRUNED:
            self.study.tell(trial, state=TrialState.PRUNED)
        else:
            if outcome.message:
                trial.set_user_attr("error", outcome.message)
            self.study.tell(trial, state=TrialState.FAIL)
            if outcome.state == INTERRUPTED:
                self._interrupted(trial.number, trial.params)
        reruns = trial.user_attrs.get(RERUNS_ATTR)
        self.log.line(trial_line(outcome, describe(self.space, trial.params), reruns))

    def _abandon(self) -> None:
        """Trials still running when the driver stops (a third Ctrl-C, an error): marked
        interrupted, their parameters enqueued, so the study on disk says what happened."""
        from optuna.trial import TrialState

        for number, trial in list(self.running.items()):
            with contextlib.suppress(Exception):
                self.study.tell(trial, state=TrialState.FAIL, skip_if_finished=True)
                self._interrupted(number, trial.params)
            del self.running[number]


def _listed(seeds: list[int]) -> str:
    return ", ".join(map(str, seeds))


def tune(
    folder: Path,
    settings: StudySettings,
    space: SearchSpace,
    backend: str,
    ray_address: str | None,
    resuming: bool,
    allow_import: tuple[str, ...] = (),
) -> int:
    """Run (or go on with) the study in ``folder``; returns the exit status: 0, or 128 plus
    the signal that stopped it. ``allow_import`` is what the preset's files may name
    (`coach.trust`), for every trial.

    Raises:
        CoachError: the study is run by another driver, or Ray cannot be started.
    """
    from coach.studies.trial_runners import LocalTrials, RayTrials

    with _only_driver(folder):
        log = StudyLog(folder)
        storage = sqlite_storage(storage_url(folder))
        study = open_study(storage, settings, space, create=not resuming)
        runner: TrialRunner
        if backend == "ray":
            runner = RayTrials(settings.jobs, ray_address, storage)
        else:
            runner = LocalTrials(settings.jobs, storage_url(folder))
        tuning = Tuning(folder, settings, space, study, runner, log, allow_import)
        try:
            if resuming:
                log.line(
                    f"resuming the study in {folder}: {tuning.finished()} of {settings.trials} "
                    f"trials finished"
                )
                tuning.recover()
            else:
                where = "processes"
                if backend == "ray":  # what the study serves, and on which interface
                    served = runner.address
                    where = f"Ray tasks, served the study's storage on {served.host}:{served.port}"
                log.line(
                    f"tuning {settings.preset}: {settings.trials} trials, {settings.jobs} at a "
                    f"time ({where}), seeds {_listed(settings.seeds)}; the study is "
                    f"in {folder}"
                )
            tuning.run()
        except KeyboardInterrupt:
            tuning.stop.signum = tuning.stop.signum or signal.SIGINT
        finally:
            runner.close()
        for line in report(
            study, settings.preset, settings.overrides, space, folder, settings.seeds
        ):
            log.line(line)
        if tuning.stop.signum is not None or tuning.finished() < settings.trials:
            log.line(f"continue with: coach tune --resume {folder}")
        return 0 if tuning.stop.signum is None else 128 + tuning.stop.signum
