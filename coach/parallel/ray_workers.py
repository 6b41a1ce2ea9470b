"""Rollout workers as Ray actors (``--backend ray``): the same `RolloutWorker` in each.

Without an address the pool starts a Ray runtime of its own on this machine (even if a
cluster runs there), bound to the loopback interface, and shuts it down when the run ends
(normally, on an error or on Ctrl-C). With
``--ray-address auto|HOST:PORT`` it joins that cluster and leaves it running. A new policy
is put into Ray's object store once; each command carries a reference to it, which a worker
fetches only when its own policy is older. Ray is an optional dependency: ``pip install
'coach[ray]'``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

from coach.errors import CoachError
from coach.parallel.pool import WorkerFailed, WorkerPool, worker_failed
from coach.parallel.worker import PolicySnapshot, WorkerSpec, start_worker
from coach.run_failures import ErrorAccount, account


class _RayWorker:
    """The actor: a `RolloutWorker` (or the worker its spec names) that fetches the policy it
    is pointed to when newer. An error its worker raises comes back as the worker's own
    account of it (`coach.run_failures.ErrorAccount`: the user's file and line, the
    traceback), which Ray's wrapping of a remote error would lose."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.worker: Any = None
        self.failure: ErrorAccount | None = None
        try:
            self.worker = start_worker(spec)
        except Exception as error:
            self.failure = account(error)

    def pid(self) -> int | ErrorAccount:
        """The worker's process id, or why it could not start."""
        return self.failure if self.failure is not None else int(self.worker.pid())

    def call(self, method: str, args: tuple[Any, ...], policy: list[Any], version: int) -> Any:
        import ray

        try:
            snapshot = None
            if policy and version != self.worker.version:
                snapshot = ray.get(policy[0])  # a reference in a list: not fetched unless needed
            return getattr(self.worker, method)(*args, snapshot)
        except Exception as error:
            return account(error)


class RayWorkerPool(WorkerPool):
    """Rollout workers as Ray actors, on a local runtime or a cluster.

    Args:
        address: The cluster to join (``auto`` or ``HOST:PORT``); ``None`` starts a local
            runtime on the loopback interface, stopped by `close`.
        The other arguments are `WorkerPool`'s.
    """

    def __init__(self, *args: Any, address: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Room for every worker, whatever the cores: they mostly wait on each other.
        self.ray, self.owns_runtime = start_ray(address, len(self.ranks))
        ray = self.ray
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0)(_RayWorker)
        self.actors: dict[int, Any] = {}
        self._pids: dict[int, int] = {}
        self.refs: dict[Any, int] = {}
        """The reference of each pending command's result -> its rank."""
        self.policy: Any = None
        self.version = -1
        try:
            starting = {rank: self._launch(rank) for rank in self.ranks}
            for rank, ref in starting.items():
                self._await_ready(rank, ref)
        except BaseException:
            self.close()
            raise

    def _launch(self, rank: int) -> Any:
        spec = self.make_spec(rank, self.starts[rank])
        self.starts[rank] += 1
        actor = self.actor_class.remote(spec)
        self.actors[rank] = actor
        return actor.pid.remote()

    def _await_ready(self, rank: int, ref: Any) -> None:
        try:
            pid = self.ray.get(ref)
        except self.ray.exceptions.RayError as error:
            raise CoachError(f"worker {rank} could not start: {_cause(error)}") from None
        if isinstance(pid, ErrorAccount):
            raise worker_failed(rank, pid, "could not start")
        self._pids[rank] = int(pid)

    def publish(self, snapshot: PolicySnapshot) -> None:
        self.policy = self.ray.put(snapshot)
        self.version = snapshot.version

    def submit(self, rank: int, method: str, *args: Any) -> None:
        self._queue(rank, method, args)
        policy = [self.policy] if self.policy is not None else []
        ref = self.actors[rank].call.remote(method, args, policy, self.version)
        self.refs[ref] = rank

    def next_result(self) -> tuple[int, Any]:
        ray = self.ray
        while True:
            if not self.refs:
                raise CoachError("no worker has anything to do")
            (ready,), _ = ray.wait(list(self.refs), num_returns=1)
            rank = self.refs.pop(ready)
            try:
                result = ray.get(ready)
            except ray.exceptions.RayActorError:
                self._restart(rank)
                continue
            except ray.exceptions.RayTaskError as error:  # past the actor's own account
                self._done(rank)
                told = ErrorAccount(_cause(error), None, str(error), refused=False)
                raise WorkerFailed(f"worker {rank}", told) from None
            # An actor runs its calls in order: the one that finished was the oldest.
            self._done(rank)
            if isinstance(result, ErrorAccount):
                raise worker_failed(rank, result)
            return rank, result

    def _restart(self, rank: int) -> None:
        """The actor of ``rank`` died: start a new one and give it its commands again."""
        old_pid = self._pids.get(rank)
        self.refs = {ref: r for ref, r in self.refs.items() if r != rank}
        self.ray.kill(self.actors[rank], no_restart=True)
        self._await_ready(rank, self._launch(rank))
        seed = self.make_spec(rank, self.starts[rank] - 1).seed
        self.on_restart(
            f"worker {rank} (pid {old_pid}) died; restarted as pid {self._pids[rank]} with "
            f"seed {seed}"
        )
        for method, args in self.pending.pop(rank):
            self.submit(rank, method, *args)

    def pids(self) -> dict[int, int]:
        return dict(self._pids)

    def close(self) -> None:
        ray = self.ray
        for actor in self.actors.values():
            with contextlib.suppress(ray.exceptions.RayError):
                ray.kill(actor, no_restart=True)
        self.actors.clear()
        self.refs.clear()
        self.pending.clear()
        self.policy = None
        if self.owns_runtime and ray.is_initialized():
            ray.shutdown()
            self.owns_runtime = False


def start_ray(address: str | None, slots: int) -> tuple[Any, bool]:
    """The ``ray`` module, initialized: joined to the cluster at ``address`` (``auto`` or
    ``HOST:PORT``), or with no address a runtime of its own on the loopback interface with
    CPUs for at least ``slots`` tasks, whose workers run at the learner's priority. Also
    whether this call started the runtime (its caller then shuts it down).

    Raises:
        CoachError: Ray is not installed, or the runtime cannot be started or joined.
    """
    if address is None:
        _loopback_only()
        _workers_at_normal_priority()
    try:
        import ray
    except ImportError:
        raise CoachError("--backend ray needs Ray: pip install 'coach[ray]'") from None
    if ray.is_initialized():
        return ray, False
    options: dict[str, Any] = {
        # Coach reports a run itself (its log, TensorBoard): no dashboard, no port of it.
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": False,
    }
    if address is None:
        options["num_cpus"] = max(os.cpu_count() or 1, slots)
    try:
        # "local": a runtime of its own, even where `ray start` runs a cluster.
        ray.init(address=address or "local", **options)
    except (ConnectionError, ValueError, RuntimeError) as error:
        raise CoachError(f"cannot start or join Ray at {address!r}: {error}") from None
    return ray, True


def _loopback_only() -> None:
    """Make the local runtime about to start listen on the loopback interface only.

    Ray binds its servers to the node's address. With clusters "disabled" (a switch meant for
    laptops, `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`) that address is the loopback one, and
    nothing listens on the machine's other interfaces. (``ray.init(_node_ip_address=
    "127.0.0.1")`` cannot do it: Ray replaces a loopback node address with the machine's
    own, and its gRPC servers then listen on every interface.) The variable is read when ray is
    imported, here and in every process the runtime starts; if ray was imported already, its
    copy of the switch is set too.
    """
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = False  # type: ignore[attr-defined]


def _workers_at_normal_priority() -> None:
    """Have the local runtime about to start run its worker processes at niceness 0, as the
    local backend's workers run, instead of Ray's 15 (`RAY_worker_niceness`, read by the
    runtime's processes when they start), unless the variable is set already. At 15 the
    rollout workers yield their cores to the learner and to anything else on the machine:
    beside two busy processes on two cores, two DQN workers took 41 s to start and a
    restarted one 44 s, against 2.5 s and 3 s at 0. A cluster's nodes keep their own setting.
    """
    os.environ.setdefault("RAY_worker_niceness", "0")


def _cause(error: BaseException) -> str:
    """The worker's own error message, without Ray's wrapping."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, CoachError):
        return str(cause)
    return str(cause or error).strip().splitlines()[-1]
