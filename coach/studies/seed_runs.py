"""Where the seeds of a group run: each in a process of its own on this machine, or in a Ray
task (on a local runtime or a cluster).

Every seed runs as ``coach -p PRESET --seed K`` would (`coach.cli_run.run`, quiet), so a seed
of a group gives the numbers its single run gives. A seed reports how much of its budget it
has spent through its channel, and stops when the group asks: its run then checkpoints, as
after a Ctrl-C. The group alone takes the terminal's signals: a seed ignores SIGINT, so a
Ctrl-C stops each seed once, through the group.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coach.errors import CoachError

FOLLOW_SECONDS = 0.5
"""How often a seed reports its progress and looks for a stop."""


@dataclass(slots=True)
class SeedTask:
    """One seed to run: its options (`RunOptions` fields), its folder and whether it
    continues the run already there."""

    seed: int
    options: dict[str, Any]
    directory: Path
    resume: bool


@dataclass(slots=True)
class SeedOutcome:
    """How a seed's run ended: ``done``, ``failed`` or ``interrupted``, with the run's exit
    status and, for a failure, what went wrong."""

    seed: int
    status: str
    code: int
    message: str = ""


@dataclass(slots=True)
class Progress:
    """What each running seed has spent of its budget (``improve_steps``, in its unit)."""

    spent: dict[int, int] = field(default_factory=dict)


def run_seed(
    task: SeedTask, report: Callable[[int, int], None], stopped: Callable[[], bool]
) -> SeedOutcome:
    """Run one seed here; ``report(seed, spent)`` is told what it has spent of its budget
    and ``stopped()`` says when the group asks it to stop."""
    from coach.cli_run import RunOptions, run

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the group stops it (module docstring)
    done = threading.Event()

    def follow(graph: Any) -> None:
        while True:  # from the start: the group shows the seed running at once
            with contextlib.suppress(Exception):  # a count read mid-step is only a report
                report(task.seed, graph.budget_spent())
            if stopped() and graph.stop_requested is None:
                graph.stop_requested = signal.SIGINT
            if done.wait(FOLLOW_SECONDS):
                return

    def watch(graph: Any) -> None:
        threading.Thread(target=follow, args=(graph,), daemon=True).start()

    options = dict(task.options, quiet=True)
    if task.resume:
        options.update(preset=None, seed=None, custom_parameters=(), resume=task.directory)
        options.update(level=None, checkpoint_restore_dir=None)
    else:
        options.update(seed=task.seed, run_dir=task.directory)
    try:
        code = run(RunOptions(**options), watch=watch, signals=False)
    except CoachError as error:
        return SeedOutcome(task.seed, "failed", 2, str(error))
    except KeyboardInterrupt:
        return SeedOutcome(task.seed, "interrupted", 130, "stopped before its first checkpoint")
    except Exception as error:
        trace = "".join(traceback.format_exception(error)).rstrip()
        return SeedOutcome(task.seed, "failed", 1, f"internal error:\n{trace}")
    finally:
        done.set()
    if code == 0:
        return SeedOutcome(task.seed, "done", 0)
    if code == 1:
        return SeedOutcome(
            task.seed,
            "failed",
            1,
            f"internal error; the traceback is in {task.directory / 'log.txt'}",
        )
    return SeedOutcome(task.seed, "interrupted", code)


class SeedRunner:
    """Runs seeds, at most ``jobs`` at once, and gives their outcomes as they end."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.progress = Progress()

    def outcomes(
        self, tasks: list[SeedTask], stop: threading.Event
    ) -> Iterator[SeedOutcome | None]:
        """Start the tasks in order, as slots free up; yield each one's outcome as it ends,
        and ``None`` every `FOLLOW_SECONDS` between (`progress` is then fresh). Once
        ``stop`` is set, no task starts and the running ones are asked to stop; the tasks
        never started are not yielded."""
        raise NotImplementedError

    def kill(self) -> None:
        """End every running seed at once (a second Ctrl-C)."""

    def close(self) -> None:
        """Release what the runner holds."""


class LocalSeedRunner(SeedRunner):
    """Each seed in a fresh process of this machine (spawned: nothing of this process's
    state, torch's threads included, leaks into it)."""

    def __init__(self, jobs: int) -> None:
        super().__init__(jobs)
        self.context = multiprocessing.get_context("spawn")
        self.messages: Any = self.context.Queue()
        self.stop = self.context.Event()
        self.processes: dict[int, Any] = {}

    def outcomes(
        self, tasks: list[SeedTask], stop: threading.Event
    ) -> Iterator[SeedOutcome | None]:
        waiting = list(tasks)
        while waiting or self.processes:
            if stop.is_set():
                self.stop.set()
                waiting.clear()
            while waiting and len(self.processes) < self.jobs:
                task = waiting.pop(0)
                process = self.context.Process(
                    target=_local_seed, args=(task, self.messages, self.stop), daemon=False
                )
                process.start()
                self.processes[task.seed] = process
            yield from self._collect()

    def _collect(self) -> Iterator[SeedOutcome | None]:
        try:
            message = self.messages.get(timeout=FOLLOW_SECONDS)
        except queue.Empty:
            message = None
            yield None
        if isinstance(message, SeedOutcome):
            self.progress.spent.pop(message.seed, None)
            self.processes.pop(message.seed).join()
            yield message
        elif message is not None:
            seed, spent = message
            if seed in self.processes:
                self.progress.spent[seed] = spent
            yield None
        for seed, process in list(self.processes.items()):
            if process.exitcode is not None and self.messages.empty():
                # It ended without a word: killed, or died in C code.
                time.sleep(FOLLOW_SECONDS)  # its last message may still be in the pipe
                if seed in self.processes and self.messages.empty():
                    del self.processes[seed]
                    self.progress.spent.pop(seed, None)
                    # Stopped before it could take the group's stop (a Ctrl-C while it started).
                    status = "interrupted" if self.stop.is_set() else "failed"
                    yield SeedOutcome(
                        seed, status, process.exitcode, f"its process ended ({process.exitcode})"
                    )

    def kill(self) -> None:
        for process in self.processes.values():
            process.kill()

    def close(self) -> None:
        self.kill()
        for process in self.processes.values():
            process.join()
        self.messages.close()


def _local_seed(task: SeedTask, messages: Any, stop: Any) -> None:
    """A seed's process: run it, and put its outcome on the group's queue."""
    outcome = run_seed(task, lambda *report: messages.put(report), stop.is_set)
    messages.put(outcome)
    messages.close()
    messages.join_thread()


class RaySeedRunner(SeedRunner):
    """Each seed in a Ray task. On a cluster the tasks write their folders on the node that
    runs them: the experiment path has to be one every node shares."""

    def __init__(self, jobs: int, address: str | None) -> None:
        super().__init__(jobs)
        from coach.parallel.ray_workers import start_ray

        self.ray, self.owns_runtime = start_ray(address, jobs)
        self.board = self.ray.remote(num_cpus=0)(_Board).remote()
        self.task = self.ray.remote(num_cpus=1, max_retries=0)(_ray_seed)
        self.running: dict[Any, int] = {}

    def outcomes(
        self, tasks: list[SeedTask], stop: threading.Event
    ) -> Iterator[SeedOutcome | None]:
        ray = self.ray
        waiting = list(tasks)
        asked = False
        while waiting or self.running:
            if stop.is_set() and not asked:
                ray.get(self.board.ask_stop.remote())
                waiting.clear()
                asked = True
            while waiting and len(self.running) < self.jobs:
                task = waiting.pop(0)
                self.running[self.task.remote(task, self.board)] = task.seed
            ready, _ = ray.wait(list(self.running), num_returns=1, timeout=FOLLOW_SECONDS)
            self.progress.spent = {
                s: p
                for s, p in ray.get(self.board.read.remote()).items()
                if s in self.running.values()
            }
            for ref in ready:
                seed = self.running.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as error:
                    outcome = SeedOutcome(seed, "failed", 1, f"its Ray task failed: {error}")
                self.progress.spent.pop(seed, None)
                yield outcome
            yield None

    def kill(self) -> None:
        for ref in self.running:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)

    def close(self) -> None:
        self.kill()
        with contextlib.suppress(Exception):
            self.ray.kill(self.board)
        if self.owns_runtime and self.ray.is_initialized():
            self.ray.shutdown()


class _Board:
    """A Ray actor between the group and its seeds: their progress, and the group's stop."""

    def __init__(self) -> None:
        self.spent: dict[int, int] = {}
        self.stop = False

    def report(self, seed: int, spent: int) -> None:
        self.spent[seed] = spent

    def read(self) -> dict[int, int]:
        return dict(self.spent)

    def ask_stop(self) -> None:
        self.stop = True

    def stopped(self) -> bool:
        return self.stop


def _ray_seed(task: SeedTask, board: Any) -> SeedOutcome:
    """A seed's Ray task: run it, telling the board its progress."""
    import ray

    def report(seed: int, spent: int) -> None:
        board.report.remote(seed, spent)

    def stopped() -> bool:
        return bool(ray.get(board.stopped.remote()))

    with _signals_kept():
        return run_seed(task, report, stopped)


@contextlib.contextmanager
def _signals_kept() -> Iterator[None]:
    """A Ray worker runs other tasks after this one: its SIGINT handler is put back."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if main else None
    try:
        yield
    finally:
        if main and before is not None:
            signal.signal(signal.SIGINT, before)
