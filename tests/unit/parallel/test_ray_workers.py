"""Unit tests for coach/parallel/ray_workers.py: a real local Ray runtime started by the run,
bound to loopback and shut down by it, with the same results as local processes. (A killed
actor is restarted: tests/unit/parallel/test_distributed.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from coach.core.step_units import EnvironmentSteps
from coach.graph_managers.parameters import RunContext
from coach.memories.rollout import RolloutParameters
from coach.parallel.distributed import DistributedGraphManager
from coach.parallel.parameters import DistributedParameters
from coach.presets import load_preset
from tests.processes import descendants, listening, wait_for_exit

ray = pytest.importorskip("ray")


def _graph(preset: str, tmp_path: Path, backend: str, **params: object) -> DistributedGraphManager:
    graph = load_preset(preset).graph_manager
    graph.env_params.num_envs = 2
    if isinstance(graph.agent_params.memory, RolloutParameters):
        # A minibatch no bigger than the workers' block: 32 steps x 2 copies x 2 workers.
        graph.agent_params.algorithm.batch_size = min(graph.agent_params.algorithm.batch_size, 128)
    distributed = DistributedGraphManager(
        graph,
        DistributedParameters(**{"num_workers": 2, "backend": backend, **params}),  # type: ignore[arg-type]
    )
    return distributed.create_graph(RunContext(seed=4, experiment_dir=tmp_path, quiet=True))


def test_ray_workers_run_like_local_ones_on_loopback_and_leave_nothing(tmp_path: Path) -> None:
    weights = {}
    for backend in ("local", "ray"):
        others = descendants(os.getpid())  # the local backend's fork server, and the like
        graph = _graph("CartPole_ClippedPPO", tmp_path / backend, backend)
        try:
            graph.train_and_act(EnvironmentSteps(2 * 2 * 2 * graph.agents["agent"].rollout.length))
            networks = graph.agents["agent"].networks.values()
            weights[backend] = [p.clone() for n in networks for p in n.online.parameters()]
            if backend == "ray":
                assert ray.is_initialized()
                ray_processes = descendants(os.getpid()) - others
                sockets = listening(ray_processes)  # the GCS, the raylet, its workers, ...
                assert sockets and {host for host, _ in sockets} == {"127.0.0.1"}, sockets
        finally:
            graph.close()
    # The same seed, the same blocks, the same updates, whichever backend ran the workers.
    assert all(torch.equal(a, b) for a, b in zip(weights["local"], weights["ray"], strict=True))
    assert not ray.is_initialized()
    assert not wait_for_exit(ray_processes, timeout=20)
