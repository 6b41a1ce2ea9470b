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
from tests.processes import wait_for_exit

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


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid``, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _listening_addresses(pids: set[int]) -> set[str]:
    """The local addresses of the TCP sockets ``pids`` listen on (IPv4 and IPv6)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    addresses = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                addresses.add(_address(fields[1].split(":")[0]))
    return addresses


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return ".".join(str(b) for b in raw[::-1])
    words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
    flat = b"".join(words)
    if flat[:12] == b"\x00" * 10 + b"\xff\xff":  # an IPv4-mapped address
        return ".".join(str(b) for b in flat[12:])
    return flat.hex()


def test_ray_workers_run_like_local_ones_on_loopback_and_leave_nothing(tmp_path: Path) -> None:
    weights = {}
    for backend in ("local", "ray"):
        others = _descendants(os.getpid())  # the local backend's fork server, and the like
        graph = _graph("CartPole_ClippedPPO", tmp_path / backend, backend)
        try:
            graph.train_and_act(EnvironmentSteps(2 * 2 * 2 * graph.agents["agent"].rollout.length))
            networks = graph.agents["agent"].networks.values()
            weights[backend] = [p.clone() for n in networks for p in n.online.parameters()]
            if backend == "ray":
                assert ray.is_initialized()
                ray_processes = _descendants(os.getpid()) - others
                addresses = _listening_addresses(ray_processes)
                assert addresses and addresses <= {"127.0.0.1"}, addresses
        finally:
            graph.close()
    # The same seed, the same blocks, the same updates, whichever backend ran the workers.
    assert all(torch.equal(a, b) for a, b in zip(weights["local"], weights["ray"], strict=True))
    assert not ray.is_initialized()
    assert not wait_for_exit(ray_processes, timeout=20)
