"""``--ray-address``: a run, a group of seeds and a study join a Ray cluster that is already
running, and leave it running (the cluster here is a real one-node cluster started with
``ray start``, on loopback); the study serves its storage on the node's cluster address."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.coach_cli import COMMAND, ENV, SMALL, experiment
from tests.processes import Console, descendants, listening

pytest.importorskip("ray")
RAY = str(Path(sys.executable).parent / "ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _status(address: str, env: dict[str, str]) -> int:
    return subprocess.run(
        [RAY, "status", f"--address={address}"], env=env, capture_output=True, timeout=60
    ).returncode


def test_a_run_and_a_group_join_a_running_cluster_and_leave_it_running(tmp_path: Path) -> None:
    address = f"127.0.0.1:{_free_port()}"
    # A cluster on loopback, without Ray's token authentication (a real cluster hands its
    # token to the run in RAY_AUTH_TOKEN), its workers at the priority of the suite's other
    # processes (at Ray's niceness of 15 they wait for every busy test on the machine).
    env = {
        **ENV, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled",
        "RAY_worker_niceness": "0",
    }  # fmt: skip
    # In the foreground (--block) and a session of its own: the test stops exactly it.
    head = subprocess.Popen(
        [RAY, "start", "--head", f"--port={address.split(':')[1]}", "--num-cpus=3",
         "--include-dashboard=false", "--disable-usage-stats", "--block"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        # `ray start` says so once its head node is up.
        Console(head).wait_for(lambda line: "Ray runtime started" in line, timeout=120)
        assert _status(address, env) == 0
        result = subprocess.run(
            [*COMMAND, "-p", "CartPole_ClippedPPO", "-n", "2", "--backend", "ray",
             "--ray-address", address,
             "-cp", "schedule.improve_steps=EnvironmentSteps(1024)",
             "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        run = experiment(tmp_path / "experiments", "CartPole_ClippedPPO")
        assert "2 rollout workers on the ray backend" in (run / "log.txt").read_text()
        assert head.poll() is None and _status(address, env) == 0  # the cluster outlived it
        # A group's seeds as tasks of the cluster (its one node shares this file system).
        group = subprocess.run(
            [*COMMAND, "-p", "CartPole_DQN", "--seeds", "0,1", "--backend", "ray",
             "--ray-address", address, *SMALL, "-ep", "groups"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert group.returncode == 0, group.stdout + group.stderr
        folder = experiment(tmp_path / "groups", "CartPole_DQN")
        for seed in (0, 1):
            assert (folder / f"seed_{seed}" / "checkpoints" / "best.pt").is_file()
        assert "on Ray" in (folder / "log.txt").read_text()
        assert head.poll() is None and _status(address, env) == 0
        # A study serves its storage to the cluster on the address the cluster knows this
        # node by (loopback, for this cluster): stopped once it does.
        (tmp_path / "space.yaml").write_text(
            "parameters: {agent.algorithm.discount: {float: [0.9, 0.99]}}\n"
        )
        study = subprocess.Popen(
            [*COMMAND, "tune", "-p", "CartPole_DQN", "--space", "space.yaml", "--trials", "1",
             "-j", "1", "--backend", "ray", "--ray-address", address, *SMALL],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        console = Console(study)
        first = console.wait_for(lambda line: line.startswith("tuning "), timeout=240)
        sockets = listening({study.pid} | descendants(study.pid))
        study.send_signal(signal.SIGINT)
        stdout, stderr = console.finish(timeout=120)
        assert study.returncode in (0, 130), stdout + stderr  # 0: its one trial was done
        served = first.split("served the study's storage on ")[1].split(")")[0]
        assert served.startswith("127.0.0.1:")
        assert ("127.0.0.1", int(served.split(":")[1])) in sockets
        assert {host for host, _ in sockets} == {"127.0.0.1"}, sockets
        assert head.poll() is None and _status(address, env) == 0
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait(timeout=60)
