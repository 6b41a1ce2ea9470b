"""Where a run of the command line acts: in this process, in rollout workers (``-n``,
``--backend``, ``--ray-address``, ``-ew``: `coach.parallel.distributed`), or in an
asynchronous preset's own workers, which the same options set."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:  # imported when a run starts, not for --help
    from coach.graph_managers.graph_manager import GraphManager
    from coach.parallel.asynchronous import AsynchronousGraphManager


def distribute(
    graph: GraphManager,
    num_workers: int | None,
    backend: str,
    ray_address: str | None,
    evaluation_worker: bool,
) -> GraphManager:
    """``graph`` as it is, or its learner when any worker option is given (``-n``,
    ``--backend ray``, ``--ray-address``, ``-ew``); an asynchronous preset's graph with its
    workers set by those options."""
    asked = num_workers is not None or backend != "local" or ray_address or evaluation_worker
    if is_asynchronous(graph):
        graph.take_worker_options(num_workers, backend, ray_address, evaluation_worker)
        return graph
    if not asked:
        return graph
    from coach.parallel.distributed import DistributedGraphManager
    from coach.parallel.parameters import DistributedParameters

    params = DistributedParameters(
        num_workers=num_workers if num_workers is not None else 1,
        backend=backend,
        ray_address=ray_address,
        evaluation_worker=evaluation_worker,
    )
    return DistributedGraphManager(graph, params)


def is_asynchronous(graph: GraphManager) -> TypeGuard[AsynchronousGraphManager]:
    """Whether ``graph`` trains in asynchronous workers (A3C's: they act and learn)."""
    from coach.parallel.asynchronous import AsynchronousGraphManager

    return isinstance(graph, AsynchronousGraphManager)
