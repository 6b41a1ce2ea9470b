"""The interface the learner drives its workers through, whatever runs them.

A pool holds N rollout workers (ranks 1 to N) and optionally an evaluation worker (rank 0).
The learner publishes each new policy once (`publish`); it then asks workers for blocks
(`submit`), which act with the latest published policy, and takes the results as they come
(`next_result`). A worker may be given a second command before it finishes the first: it
runs them in order, without waiting between them. A worker that dies is restarted with a
fresh seed and given its commands again; `on_restart` is told, for the log.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from coach.errors import CoachError
from coach.parallel.worker import PolicySnapshot, WorkerSpec
from coach.run_failures import ErrorAccount, FailedElsewhere

SpecFactory = Callable[[int, int], WorkerSpec]
"""Builds the spec of the worker of a rank, for its n-th start (0 for the first)."""


class WorkerFailed(FailedElsewhere):
    """A worker raised where code failed (its environment, its agent, the user's or Coach's
    own), not where an input was refused: the run cannot go on, and reports the worker's
    error as its own (`coach.run_failures.failed_run`)."""


def worker_failed(rank: int, error: ErrorAccount, doing: str = "failed") -> Exception:
    """The learner's exception for the error a worker told: a refused input stays a
    `CoachError` (one line, nothing kept), anything else a `WorkerFailed`."""
    if error.refused:
        return CoachError(f"worker {rank} {doing}: {error.what}")
    return WorkerFailed(f"worker {rank}", error)


class WorkerPool(ABC):
    """Rollout workers (and an evaluation worker) on one backend.

    Args:
        make_spec: The spec of the worker of rank r at its n-th start.
        num_workers: N, the rollout workers (ranks 1 to N).
        evaluation_worker: Also start the evaluation worker (rank 0).
        on_restart: Told what happened when a dead worker is restarted.
    """

    def __init__(
        self,
        make_spec: SpecFactory,
        num_workers: int,
        evaluation_worker: bool,
        on_restart: Callable[[str], None],
    ) -> None:
        self.make_spec = make_spec
        self.ranks = ([0] if evaluation_worker else []) + list(range(1, num_workers + 1))
        self.on_restart = on_restart
        self.starts = dict.fromkeys(self.ranks, 0)
        """How many times each rank was started (restarts included)."""
        self.pending: dict[int, list[tuple[str, tuple[Any, ...]]]] = {}
        """The commands each busy rank is running or has queued, oldest first."""

    @property
    def restarts(self) -> int:
        """Workers restarted after dying, over the whole run."""
        return sum(self.starts.values()) - len(self.starts)

    @abstractmethod
    def publish(self, snapshot: PolicySnapshot) -> None:
        """Make ``snapshot`` the policy every later command acts with (one broadcast)."""

    @abstractmethod
    def submit(self, rank: int, method: str, *args: Any) -> None:
        """Start ``RolloutWorker.<method>(*args, snapshot)`` on the worker of ``rank``, the
        latest published snapshot appended as the last argument."""

    @abstractmethod
    def next_result(self) -> tuple[int, Any]:
        """Wait for a submitted command to finish: its rank and result. Dead workers are
        restarted and their commands run again meanwhile.

        Raises:
            WorkerFailed: a command raised in the worker.
        """

    @abstractmethod
    def pids(self) -> dict[int, int]:
        """Each rank's process id."""

    @abstractmethod
    def close(self) -> None:
        """Stop every worker (and the runtime the pool started, if any)."""

    def idle(self, ranks: list[int] | None = None, depth: int = 1) -> list[int]:
        """The ranks (of ``ranks``, by default the rollout workers) with fewer than ``depth``
        commands running or queued."""
        candidates = ranks if ranks is not None else [r for r in self.ranks if r > 0]
        return [r for r in candidates if len(self.pending.get(r, ())) < depth]

    def _queue(self, rank: int, method: str, args: tuple[Any, ...]) -> None:
        self.pending.setdefault(rank, []).append((method, args))

    def _done(self, rank: int) -> None:
        """The oldest command of ``rank`` finished."""
        commands = self.pending[rank]
        commands.pop(0)
        if not commands:
            del self.pending[rank]
