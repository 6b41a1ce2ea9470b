"""A group of seeds of one experiment: ``coach -p PRESET --seeds 0-4 [-j N]``.

experiments/<name>/<timestamp>/
  group.yaml     the group's preset, seeds and options, and where each seed stands
  log.txt        the group's console: seeds started and ended, failures, the summary
  seed_<k>/      each seed's run, a normal experiment folder

Seeds run ``-j`` at once (by default as many as the machine has cores), in processes here or
on Ray (`coach.studies.seed_runs`). A seed that fails is reported and the others go on. The
first Ctrl-C asks every running seed to stop with a checkpoint and starts no more; a second
one ends them at once. ``coach --resume <group>`` runs what is left: a seed stopped with a
checkpoint continues from it, a seed that never checkpointed starts again, a finished seed
is left as it is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import yaml

from coach.errors import CoachError, on_stop_signals
from coach.experiment import write_atomically
from coach.trust import read_yaml

if TYPE_CHECKING:
    from coach.cli_run import RunOptions
    from coach.studies.seed_runs import SeedOutcome, SeedRunner, SeedTask

GROUP_FILE = "group.yaml"
LOG_EVERY = 30.0
"""Seconds between the group's progress lines where no terminal shows a live one."""

_SEED_OPTIONS = [
    *("preset", "level", "experiment_name", "custom_parameters", "device", "threads"),
    *("checkpoint_save_secs", "save_memory", "checkpoint_restore_dir", "dump_mp4"),
    *("dump_gifs", "num_workers", "evaluation_worker"),
]
"""What a group keeps of its command line for each seed (the rest is the group's own)."""


def is_group(path: Path) -> bool:
    """Whether ``path`` is a group's folder."""
    return (path / GROUP_FILE).is_file()


def check_group_options(opts: RunOptions) -> None:
    """Refuse what a group cannot do (before anything is written)."""
    refused = {
        "seed": "--seed (the group's seeds are --seeds)",
        "evaluate": "--evaluate (evaluate one run: give -crd RUN)",
        "render": "-r (several seeds cannot share one window)",
        "record_dataset": "--record-dataset (record one run)",
    }
    for name, what in refused.items():
        if getattr(opts, name) not in (None, False):
            raise CoachError(f"--seeds does not take {what}")


def run_group(opts: RunOptions) -> int:
    """Run (or, with ``--resume``, continue) a group; its exit status: 0 when every seed
    finished, 130 when stopped, 1 when a seed failed."""
    if opts.resume is not None:
        if opts.preset or opts.checkpoint_restore_dir or opts.custom_parameters or opts.level:
            raise CoachError("--resume takes the group's preset and options from its folder")
        group = Group.load(opts.resume, opts.quiet, opts.allow_import)
        group.check()
    else:
        check_group_options(opts)
        group = Group.create(opts)
    if opts.open_dashboard:
        from coach.logging.dashboard import start_dashboard

        url, server = start_dashboard(group.path.parent)
        group.log(f"TensorBoard on {url} (it keeps running; stop it with: kill {server.pid})")
    return group.run(opts.jobs or os.cpu_count() or 1, opts.backend, opts.ray_address)


class Group:
    """A group's folder and where each of its seeds stands."""

    def __init__(
        self,
        path: Path,
        document: dict[str, Any],
        quiet: bool,
        allow_import: tuple[str, ...] = (),
        read_from: Path | None = None,
    ) -> None:
        from coach.logging.progress import ProgressLine

        self.path = path
        self.document = document
        self.quiet = quiet
        self.allow_import = allow_import
        """``--allow-import`` of the command that runs the group: never kept in its file."""
        self.read_from = read_from
        """The file the seeds' options were read from (a resumed group's ``group.yaml``):
        they name code only as ``allow_import`` allows (`coach.trust`)."""
        self.line = ProgressLine(enabled=not quiet)
        """The group's one progress line, where the console is a terminal."""

    @property
    def seeds(self) -> list[int]:
        return [int(s) for s in self.document["seeds"]]

    def folder(self, seed: int) -> Path:
        return self.path / f"seed_{seed}"

    @classmethod
    def create(cls, opts: RunOptions) -> Group:
        """A new group's folder, once its command line proved good: the preset loads, the
        overrides apply and the checkpoint to start from is one."""
        from coach.cli_run import _prepare
        from coach.experiment import experiment_dir

        assert opts.seeds is not None
        preset, _ = _prepare(opts)
        options = {name: getattr(opts, name) for name in _SEED_OPTIONS}
        options["custom_parameters"] = list(opts.custom_parameters)
        for name in ("preset", "checkpoint_restore_dir"):  # a seed may run in another folder
            value = options[name]
            if value is not None and Path(value).exists():
                options[name] = str(Path(value).resolve())
        default_name = preset.name if opts.level is None else f"{preset.name}_{opts.level}"
        root = opts.experiment_path.resolve()
        path = experiment_dir(root, opts.experiment_name or default_name).path
        from coach.graph_managers.progress_report import UNIT_NAMES

        improve = preset.graph_manager.schedule_params.improve_steps
        document = {
            "preset": preset.name,
            "budget": [improve.num_steps, UNIT_NAMES.get(type(improve), "steps")],
            "seeds": list(opts.seeds),
            "options": options,
            "seed_status": {seed: "waiting" for seed in opts.seeds},
        }
        group = cls(path, document, opts.quiet, opts.allow_import)
        group.save()
        return group

    @classmethod
    def load(cls, path: Path, quiet: bool, allow_import: tuple[str, ...] = ()) -> Group:
        """The group in ``path``, to continue it."""
        document = read_yaml(path / GROUP_FILE)
        try:
            missing = {"budget", "seeds", "options", "seed_status"} - set(document)
            if missing:
                raise KeyError(", ".join(sorted(missing)))
            # Only what a group keeps of its command line: never what says how far to trust it.
            unknown = set(document["options"]) - set(_SEED_OPTIONS)
            if unknown:
                raise KeyError(f"options it never holds: {', '.join(sorted(map(str, unknown)))}")
        except (TypeError, KeyError) as error:
            raise CoachError(f"{path / GROUP_FILE} is not a group's file: {error}") from None
        path = path.resolve()
        return cls(path, document, quiet, allow_import, path / GROUP_FILE)

    def check(self) -> None:
        """Refuse, before any seed runs, what a seed's options cannot do: as `Group.create`
        checks a new group's command line, with the options read from the group's file."""
        from coach.cli_run import RunOptions, _prepare

        _prepare(RunOptions(**self.seed_options()))

    def seed_options(self) -> dict[str, Any]:
        """The `RunOptions` fields every seed runs with (each adds its own seed and folder)."""
        options = dict(self.document["options"])
        options["custom_parameters"] = tuple(options["custom_parameters"])
        options["experiment_path"] = self.path
        if options["checkpoint_restore_dir"] is not None:
            options["checkpoint_restore_dir"] = Path(options["checkpoint_restore_dir"])
        options["allow_import"] = self.allow_import
        options["read_from"] = None if self.read_from is None else str(self.read_from)
        return options

    def save(self) -> None:
        """Write group.yaml whole, or not at all."""
        text = yaml.safe_dump(self.document, sort_keys=False).encode()
        write_atomically(self.path / GROUP_FILE, lambda f: f.write(text), "group.yaml is as before")

    def log(self, message: str) -> None:
        """A line of the group's log, and of its console (above the progress line) unless
        quiet."""
        with open(self.path / "log.txt", "a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} {message}\n")
        if not self.quiet:
            self.line.clear()
            click.echo(message)
            self.line.redraw()

    def set_status(self, seed: int, status: str) -> None:
        self.document["seed_status"][seed] = status
        self.save()

    def tasks(self) -> list[SeedTask]:
        """The seeds left to run: each continues from its checkpoint, or starts afresh in
        its folder; a finished seed is not run again."""
        from coach.checkpoints import LATEST
        from coach.studies.seed_runs import SeedTask

        options = self.seed_options()  # the rest as a run's defaults
        tasks = []
        for seed in self.seeds:
            if self.document["seed_status"].get(seed) == "done":
                continue
            folder = self.folder(seed)
            resume = (folder / "checkpoints" / LATEST).is_file()
            if not resume:  # nothing to continue: whatever it wrote is started over
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
            tasks.append(SeedTask(seed, options, folder, resume))
        return tasks

    def run(self, jobs: int, backend: str, ray_address: str | None) -> int:
        """Run the seeds left, ``jobs`` at once; report each as it ends, and the whole."""
        from coach.studies.seed_runs import LocalSeedRunner, RaySeedRunner

        tasks = self.tasks()
        jobs = max(1, min(jobs, len(tasks)))
        names = ", ".join(str(t.seed) for t in tasks)
        self.log(
            f"{self.document['preset']}: seeds {names or '(none left)'}; {jobs} at a time"
            f"{' on Ray' if backend == 'ray' else ''}; writing to {self.path}"
        )
        runner: SeedRunner = (
            RaySeedRunner(jobs, ray_address) if backend == "ray" else LocalSeedRunner(jobs)
        )
        stop = threading.Event()
        interrupted: list[int] = []
        with _group_signals(stop, runner, interrupted, self):
            try:
                outcomes = self._follow(runner, tasks, stop)
            finally:
                runner.close()
        return self._summary(outcomes, interrupted[0] if interrupted else None)

    def _follow(
        self, runner: SeedRunner, tasks: list[SeedTask], stop: threading.Event
    ) -> list[SeedOutcome]:
        from coach.logging.progress import group_postfix

        budget, unit = self.document["budget"]
        started: set[int] = set()
        outcomes: list[SeedOutcome] = []
        last_log = time.monotonic()
        with self.line.bar("seeds", len(tasks) * budget, unit, leave=True) as bar:
            for outcome in runner.outcomes(tasks, stop):
                for seed in runner.progress.spent.keys() - started:
                    started.add(seed)
                    self.set_status(seed, "running")
                if outcome is not None:  # None: a tick, to redraw the progress
                    outcomes.append(outcome)
                    started.add(outcome.seed)
                    self.set_status(outcome.seed, outcome.status)
                    self.log(_ended(outcome, self.folder(outcome.seed)))
                running = {
                    f"seed_{k}": (v, budget) for k, v in sorted(runner.progress.spent.items())
                }
                done = len(outcomes) * budget + sum(v for v, _ in running.values())
                postfix = group_postfix("seeds", len(outcomes), len(tasks), running)
                bar.update(done, postfix)
                if not self.line.live and time.monotonic() - last_log >= LOG_EVERY:
                    last_log = time.monotonic()
                    self.log(postfix)
        return outcomes

    def _summary(self, outcomes: list[SeedOutcome], signum: int | None) -> int:
        from coach.studies.runs import read_run

        rows = []
        for outcome in sorted(outcomes, key=lambda o: o.seed):
            best = ""
            with contextlib.suppress(CoachError, OSError, ValueError):
                run = read_run(self.folder(outcome.seed))
                if len(run.reward):
                    i = int(run.reward.argmax())
                    at = int(run.env_steps[i])
                    best = f"best evaluation {run.reward[i]:.1f} at {at} env steps"
            rows.append(f"  seed {outcome.seed:>4}  {outcome.status:<11}  {best}")
        ended = {o.seed for o in outcomes}
        rows += [f"  seed {s:>4}  not started" for s in self.seeds if s not in ended]
        self.log("\n".join([f"group summary ({self.path}):", *rows]))
        failed = [o.seed for o in outcomes if o.status == "failed"]
        if failed:
            self.log(f"seeds {', '.join(map(str, failed))} failed; the others went on")
        if signum is not None:
            self.log(f"stopped; continue with: coach --resume {self.path}")
            return 128 + signum
        if failed:
            return 1
        self.log(f"done; plot it with: coach plot {self.path}")
        return 0


def _ended(outcome: SeedOutcome, folder: Path) -> str:
    what = {"done": "finished", "failed": "FAILED", "interrupted": "stopped"}[outcome.status]
    message = f": {outcome.message}" if outcome.message else ""
    return f"seed {outcome.seed} {what} (exit {outcome.code}) in {folder}{message}"


@contextlib.contextmanager
def _group_signals(
    stop: threading.Event, runner: SeedRunner, interrupted: list[int], group: Group
) -> Any:
    """The first Ctrl-C (or SIGTERM) asks the seeds to stop with a checkpoint; the second
    ends them at once."""

    def handler(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        if stop.is_set():
            runner.kill()
            return
        stop.set()
        group.log("stopping: each running seed checkpoints (Ctrl-C again ends them at once)")

    with on_stop_signals(handler):
        yield
