"""Where the trials of ``coach tune`` run: worker processes on this machine, or Ray tasks.

Both runners take a `TrialJob`, run `coach.studies.trials.run_trial` on it somewhere, and hand
back its `TrialOutcome`; the driver keeps at most ``-j`` of them running. ``interrupt`` sends
each running trial one SIGINT, which stops its run after the current step with a checkpoint
(a second one stops it at once). The workers never see the terminal's Ctrl-C themselves: the
local processes run in sessions of their own and Ray's workers are Ray's, so the driver passes
each signal it gets on, once.

The workers reach the study's storage as `StorageAddress` says: local processes open the
SQLite file; Ray tasks, which may run on other machines, talk to a gRPC proxy of it
(``optuna.storages.run_grpc_proxy_server``) that the driver serves. The proxy has no
authentication, so it listens on one interface only, never on all of them: the loopback one
for a Ray runtime of the driver's own, and on a cluster the address Ray gives the driver's
node (the one the other nodes reach it by; ``ray start --node-ip-address`` sets it), which
the user chose by joining the cluster.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import threading
import traceback
import warnings
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any, Protocol

from coach.errors import CoachError
from coach.studies.trials import FAILED, INTERRUPTED, StorageAddress, TrialJob, TrialOutcome

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from optuna.storages import BaseStorage


class TrialRunner(Protocol):
    """Runs trials somewhere, a few at a time."""

    address: StorageAddress
    """How the workers reach the study's storage."""

    def submit(self, job: TrialJob) -> None:
        """Start ``job`` (the driver submits no more than the runner's slots)."""

    def next_outcome(self, timeout: float) -> TrialOutcome | None:
        """The outcome of a trial that ended, or None after ``timeout`` seconds."""

    def interrupt(self) -> None:
        """Send every running trial one SIGINT."""

    def close(self) -> None:
        """Stop the workers (a trial still running is killed)."""


def run_trial_guarded(job: TrialJob) -> TrialOutcome:
    """`run_trial`, with an error outside the run (the storage unreachable, say) as a failed
    trial rather than a dead worker."""
    from coach.studies.trials import run_trial

    try:
        return run_trial(job)
    except KeyboardInterrupt:
        return TrialOutcome(job.number, INTERRUPTED)
    except Exception as error:
        lines = traceback.format_exception_only(error)
        return TrialOutcome(job.number, FAILED, message=lines[-1].strip())


def _serve(connection: Connection) -> None:
    """A local worker process: run the trials it is sent, one at a time, until told to stop."""
    os.setsid()  # a terminal's Ctrl-C reaches the driver alone, which passes it on
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # between trials there is nothing to stop
    while True:
        try:
            job = connection.recv()
        except (EOFError, OSError):  # the driver is gone
            return
        if job is None:
            return
        connection.send(run_trial_guarded(job))


@dataclass(slots=True)
class _Worker:
    process: BaseProcess
    connection: Connection
    job: TrialJob | None = None


PRELOAD = [
    "coach.studies.trial_runners",
    "coach.cli_run",
    "coach.graph_managers.basic_rl",
    "coach.agents",
    "optuna",
]
"""What the fork server imports once, for every worker it forks (as `coach.parallel.local`
does): two workers importing torch side by side on a busy machine take several times
longer than one import and a fork each."""


class LocalTrials:
    """Trials in up to ``jobs`` worker processes on this machine, started as needed and
    kept for the next trial (a process that dies is replaced, its trial failed). They are
    forked by a fork server that has imported Coach, torch and Optuna once (`PRELOAD`).

    Args:
        jobs: The most trials at once.
        url: The study's SQLite storage.
    """

    def __init__(self, jobs: int, url: str) -> None:
        self.jobs = jobs
        self.address = StorageAddress(url=url)
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(PRELOAD)
        self.workers: list[_Worker] = []

    def _start(self) -> _Worker:
        ours, theirs = self.context.Pipe()
        process = self.context.Process(target=_serve, args=(theirs,), name="coach-tune-trials")
        process.start()
        theirs.close()
        return _Worker(process, ours)

    def submit(self, job: TrialJob) -> None:
        idle = [w for w in self.workers if w.job is None and w.process.is_alive()]
        if idle:
            worker = idle[0]
        else:
            self.workers = [w for w in self.workers if w.process.is_alive() or w.job]
            assert len(self.workers) < self.jobs, "every worker is busy"
            worker = self._start()
            self.workers.append(worker)
        worker.connection.send(job)
        worker.job = job

    def next_outcome(self, timeout: float) -> TrialOutcome | None:
        busy = {w.connection: w for w in self.workers if w.job is not None}
        for connection in wait(list(busy), timeout):
            worker = busy[connection]  # type: ignore[index]
            job, worker.job = worker.job, None
            assert job is not None
            try:
                outcome: TrialOutcome = worker.connection.recv()
            except (EOFError, OSError):
                worker.process.join(5)
                self.workers.remove(worker)
                code = worker.process.exitcode
                return TrialOutcome(
                    job.number, FAILED, message=f"its worker process died (exit code {code})"
                )
            return outcome
        return None

    def interrupt(self) -> None:
        for worker in self.workers:
            if worker.job is not None and worker.process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.process.pid, signal.SIGINT)

    def close(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(OSError, ValueError):
                worker.connection.send(None)
        for worker in self.workers:
            worker.process.join(None if worker.job is None else 10)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.connection.close()
        self.workers.clear()


class RayTrials:
    """Trials as Ray tasks, one CPU each, on a Ray runtime of this process's own or on a
    cluster; the driver serves the study's storage to them through a gRPC proxy.

    Args:
        jobs: The most trials at once (the local runtime gets at least as many CPUs).
        address: The cluster to join (``auto`` or ``HOST:PORT``), or None for a runtime of
            this process's own on the loopback interface.
        storage: The study's storage, which the proxy serves.
    """

    def __init__(self, jobs: int, address: str | None, storage: BaseStorage) -> None:
        from coach.parallel.ray_workers import start_ray

        self.ray, self.owns_runtime = start_ray(address, jobs)
        self.refs: dict[Any, TrialJob] = {}
        host = "127.0.0.1" if address is None else self.ray.util.get_node_ip_address()
        port = _free_port(host)
        self.address = StorageAddress(host=host, port=port)
        threading.Thread(
            target=_serve_storage, args=(storage, host, port), daemon=True, name="study-proxy"
        ).start()
        try:
            _wait_for_proxy(host, port)  # the trials, and the study's first line, come after
        except CoachError:
            self.close()
            raise
        self.task = self.ray.remote(num_cpus=1, max_retries=0)(run_trial_guarded)

    def submit(self, job: TrialJob) -> None:
        self.refs[self.task.remote(job)] = job

    def next_outcome(self, timeout: float) -> TrialOutcome | None:
        ray = self.ray
        if not self.refs:
            return None
        ready, _ = ray.wait(list(self.refs), num_returns=1, timeout=timeout)
        if not ready:
            return None
        job = self.refs.pop(ready[0])
        try:
            outcome: TrialOutcome = ray.get(ready[0])
        except ray.exceptions.TaskCancelledError:
            return TrialOutcome(job.number, INTERRUPTED)
        except ray.exceptions.RayError as error:
            lines = str(getattr(error, "cause", None) or error).strip().splitlines()
            return TrialOutcome(job.number, FAILED, message=lines[-1] if lines else "Ray error")
        return outcome

    def interrupt(self) -> None:
        for ref in self.refs:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref)  # a SIGINT in the task's worker, or never started

    def close(self) -> None:
        for ref in self.refs:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)
        self.refs.clear()
        if self.owns_runtime and self.ray.is_initialized():
            self.ray.shutdown()
            self.owns_runtime = False


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _wait_for_proxy(host: str, port: int, timeout: float = 60.0) -> None:
    """Wait until the storage proxy on ``host:port`` answers.

    Raises:
        CoachError: it did not answer within ``timeout`` seconds.
    """
    from optuna.storages import GrpcStorageProxy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna calls the proxy experimental
        proxy = GrpcStorageProxy(host=host, port=port)
    try:
        proxy.wait_server_ready(timeout=timeout)
    except ConnectionError:
        raise CoachError(
            f"the study's storage proxy did not answer on {host}:{port} within {timeout:.0f} s"
        ) from None
    finally:
        proxy.close()


def _serve_storage(storage: BaseStorage, host: str, port: int) -> None:
    from optuna.storages import run_grpc_proxy_server

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna calls the proxy experimental
        run_grpc_proxy_server(storage, host=host, port=port)
