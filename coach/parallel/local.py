"""Rollout workers in local processes (``--backend local``, the default).

Each worker is a process serving commands over a pipe. Workers are forked by a fork
server: "fork" from the learner is unsafe (it runs torch's threads), and "spawn" would
import torch and build its optimizer machinery afresh in every worker, about 2 s of CPU
each; the fork server does that once (`PRELOAD`), so later workers and restarts start at
once. A new policy is written once into shared
memory, where every worker reads it when a command finds its own policy older: one write
per update, however many workers.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import signal
import struct
from multiprocessing import connection
from multiprocessing.shared_memory import SharedMemory
from typing import Any

from coach.errors import CoachError
from coach.parallel.pool import WorkerPool, worker_failed
from coach.parallel.worker import PolicySnapshot, WorkerSpec, start_worker
from coach.run_failures import account

PRELOAD = [
    "coach.parallel.worker",
    "coach.parallel.asynchronous_worker",
    "coach.agents",
]
"""Imported once by the fork server. Not ``torch._dynamo``: Coach's optimizers do not import
it (`coach.networks.optimizer.defer_dynamo_import`), and a worker that compiles imports it
itself."""

_HEADER = struct.Struct("<qq")
"""The board's header: the snapshot's version and its pickled length."""


class SnapshotBoard:
    """The latest policy snapshot, pickled once into shared memory for every worker."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.memory: SharedMemory | None = None
        self.version = -1

    def write(self, snapshot: PolicySnapshot) -> None:
        data = pickle.dumps(snapshot, protocol=pickle.HIGHEST_PROTOCOL)
        with self.lock:
            if self.memory is None or self.memory.size < _HEADER.size + len(data):
                old = self.memory
                # Room to grow, so that a board is rarely replaced.
                self.memory = SharedMemory(create=True, size=2 * (_HEADER.size + len(data)))
                if old is not None:  # workers that mapped it keep their mapping until closed
                    old.close()
                    old.unlink()
            buffer = self.memory.buf
            assert buffer is not None
            _HEADER.pack_into(buffer, 0, snapshot.version, len(data))
            buffer[_HEADER.size : _HEADER.size + len(data)] = data
        self.version = snapshot.version

    @property
    def name(self) -> str | None:
        return self.memory.name if self.memory is not None else None

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory.unlink()
            self.memory = None


class _BoardReader:
    """A worker's view of the board: attached by name, read under the board's lock."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.memory: SharedMemory | None = None

    def read(self, name: str) -> PolicySnapshot:
        if self.memory is None or self.memory.name.lstrip("/") != name.lstrip("/"):
            if self.memory is not None:
                self.memory.close()
            # Spawned workers share the learner's resource tracker, which unlinks the
            # segment if the learner dies without doing so.
            self.memory = SharedMemory(name=name)
        buffer = self.memory.buf
        assert buffer is not None
        with self.lock:
            _, length = _HEADER.unpack_from(buffer, 0)
            data = bytes(buffer[_HEADER.size : _HEADER.size + length])
        snapshot: PolicySnapshot = pickle.loads(data)
        return snapshot


def _serve(conn: connection.Connection, spec: WorkerSpec, lock: Any) -> None:
    """A worker process: build the worker, then run the commands that come down the pipe."""
    # Ctrl-C in the terminal reaches the whole process group: the learner alone handles it
    # (it saves a checkpoint, then stops its workers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker = start_worker(spec)
    except BaseException as error:
        conn.send(("error", account(error)))
        return
    board = _BoardReader(lock)
    conn.send(("ready", worker.pid()))
    try:
        while True:
            message = conn.recv()
            if message is None:
                break
            method, args, board_name, version = message
            try:
                snapshot = None
                if board_name is not None and version != worker.version:
                    snapshot = board.read(board_name)
                result = getattr(worker, method)(*args, snapshot)
            except BaseException as error:
                conn.send(("error", account(error)))
                continue
            conn.send(("ok", result))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass  # the learner went away
    finally:
        worker.close()


class LocalWorkerPool(WorkerPool):
    """Rollout workers in processes on this machine."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(PRELOAD)
        self.board = SnapshotBoard(self.context.Lock())
        self.processes: dict[int, Any] = {}
        self.connections: dict[int, connection.Connection] = {}
        self._pids: dict[int, int] = {}
        try:
            for rank in self.ranks:
                self._launch(rank)
            for rank in self.ranks:
                self._await_ready(rank)
        except BaseException:
            self.close()
            raise

    def _launch(self, rank: int) -> None:
        spec = self.make_spec(rank, self.starts[rank])
        self.starts[rank] += 1
        ours, theirs = self.context.Pipe()
        process = self.context.Process(
            target=_serve, args=(theirs, spec, self.board.lock), name=f"coach-worker-{rank}"
        )
        process.daemon = True
        process.start()
        theirs.close()
        self.processes[rank], self.connections[rank] = process, ours

    def _await_ready(self, rank: int) -> None:
        process, conn = self.processes[rank], self.connections[rank]
        ready = connection.wait([conn, process.sentinel])
        if conn not in ready:
            process.join(timeout=5)
            raise CoachError(
                f"worker {rank} exited with code {process.exitcode} before it was ready"
            )
        tag, value = conn.recv()
        if tag == "error":
            raise worker_failed(rank, value, "could not start")
        self._pids[rank] = int(value)

    def publish(self, snapshot: PolicySnapshot) -> None:
        self.board.write(snapshot)

    def submit(self, rank: int, method: str, *args: Any) -> None:
        self._queue(rank, method, args)
        # A worker that died while idle: `next_result` restarts it and sends this again.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.connections[rank].send((method, args, self.board.name, self.board.version))

    def next_result(self) -> tuple[int, Any]:
        while True:
            busy = list(self.pending)
            if not busy:
                raise CoachError("no worker has anything to do")
            waitables: dict[Any, int] = {self.connections[r]: r for r in busy}
            waitables |= {self.processes[r].sentinel: r for r in busy}
            for ready in connection.wait(list(waitables)):
                rank = waitables[ready]
                conn = self.connections[rank]
                if ready is conn:
                    try:
                        tag, value = conn.recv()
                    except (EOFError, OSError):
                        self._restart(rank)
                        break
                    self._done(rank)
                    if tag == "error":
                        raise worker_failed(rank, value)
                    return rank, value
                if rank in self.pending and not conn.poll():
                    self._restart(rank)
                    break

    def _restart(self, rank: int) -> None:
        """The worker of ``rank`` died: start a new one and give it its commands again."""
        process = self.processes[rank]
        process.join(timeout=5)
        old_pid = self._pids.get(rank)
        self.connections[rank].close()
        self._launch(rank)
        self._await_ready(rank)
        spec_seed = self.make_spec(rank, self.starts[rank] - 1).seed
        self.on_restart(
            f"worker {rank} (pid {old_pid}) died with exit code {process.exitcode}; restarted "
            f"as pid {self._pids[rank]} with seed {spec_seed}"
        )
        for method, args in self.pending.pop(rank):
            self.submit(rank, method, *args)

    def pids(self) -> dict[int, int]:
        return dict(self._pids)

    def close(self) -> None:
        for rank, conn in self.connections.items():
            with contextlib.suppress(OSError, BrokenPipeError):
                conn.send(None)
            process = self.processes[rank]
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
            conn.close()
        self.connections.clear()
        self.processes.clear()
        self.pending.clear()
        self.board.close()
