"""``coach -n N`` in real subprocesses: runs on both backends, refusals, and Ctrl-C that
saves a checkpoint and leaves no worker (and no Ray runtime) behind."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.integration.coach_cli import COMMAND, ENV, SMALL, coach, experiment, rewards
from tests.processes import Console, wait_for_exit

SMALL_PPO = [
    "-cp", "schedule.improve_steps=EnvironmentSteps(2048)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(1024)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(2)",
]  # fmt: skip


def _processes(names: tuple[str, ...]) -> set[int]:
    """The pids of running processes whose command name is one of ``names``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in names:
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_a_run_on_workers(backend: str, tmp_path: Path) -> None:
    if backend == "ray":
        pytest.importorskip("ray")
    result = coach("-p", "CartPole_ClippedPPO", "-n", "2", "--backend", backend, *SMALL_PPO,
                   cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    run = experiment(tmp_path / "experiments", "CartPole_ClippedPPO")
    log = (run / "log.txt").read_text()
    assert f"2 rollout workers on the {backend} backend" in log and "done:" in log
    phases = [phase for phase, _, _ in rewards(run)]
    assert "train" in phases and phases.count("evaluate") == 2
    runs = {p.name for p in (run / "tensorboard").iterdir()}
    assert {"worker_1", "worker_2", "graph"} <= runs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "Pendulum_HAC", "-n", "2"], "presets of one agent"),
        (["-p", "CartPole_DQN", "-n", "0"], "0 is not in the range x>=1"),
        (["-p", "CartPole_DQN", "-n", "2", "--ray-address", "auto"], "goes with --backend ray"),
        (["-p", "CartPole_DQN", "--backend", "mpi"], "Invalid value for '--backend'"),
    ],
)
def test_what_workers_cannot_run_is_refused_before_anything_is_written(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = coach(*args, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "experiments").exists()


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_ctrl_c_saves_a_checkpoint_and_stops_every_worker(backend: str, tmp_path: Path) -> None:
    if backend == "ray":
        pytest.importorskip("ray")
    ray_names = ("gcs_server", "raylet")
    before = _processes(ray_names)
    # A new session, as a terminal's: Ctrl-C reaches the whole foreground process group.
    process = subprocess.Popen(
        [*COMMAND, "-p", "CartPole_DQN", "-n", "2", "--backend", backend, *SMALL[:2],
         "-ep", str(tmp_path)],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    console = Console(process)
    line = console.wait_for(lambda line: "rollout workers on the" in line, timeout=120)
    pids = [int(p) for p in line.split("(pids ")[1].rstrip(")\n").split(", ")]
    # The heatup's last progress line (at its 300 steps): training starts.
    console.wait_for(_heatup_done, timeout=120)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = console.finish(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    run = experiment(tmp_path)
    log = (run / "log.txt").read_text()
    assert "interrupted at" in log and "died" not in log
    assert list((run / "checkpoints").glob("checkpoint_*.pt"))
    # The workers, and a Ray runtime's processes, exit (the run may leave their reaping to
    # the system after its own exit).
    assert not wait_for_exit([*pids, *(_processes(ray_names) - before)], timeout=30)


def _heatup_done(line: str) -> bool:
    """A progress line of heatup at 300 env steps or more."""
    words = line.split()
    return "heatup" in words and int(words[words.index("steps") + 1]) >= 300


def test_acer_learns_from_what_its_rollout_workers_collect(tmp_path: Path) -> None:
    # ACER learns from whole blocks: the workers collect them together, the learner stores
    # them side by side in its replay and learns; the workers' acting-only agents keep none.
    result = coach(
        "-p", "CartPole_ACER", "-n", "2",
        "-cp", "schedule.improve_steps=EnvironmentSteps(300)",
        "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(150)",
        "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)",
        "-cp", "agent.algorithm.num_transitions_to_start_replay=100",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    run = experiment(tmp_path / "experiments", "CartPole_ACER")
    assert "done:" in (run / "log.txt").read_text()
    with open(run / "progress.csv") as f:
        trained = [int(row["training_steps"]) for row in csv.DictReader(f)]
    # One on-policy update per round of blocks at least, and replayed ones once the replay
    # held 100 steps: more updates than rounds (10 env steps each).
    assert trained and max(trained) > 300 // 10


def test_an_on_policy_run_on_workers_ends_on_its_budgets(tmp_path: Path) -> None:
    # 2 workers of 8 copies: each phase ends within one step of the 16 copies of its budget,
    # as a single process acting in 16 copies would; not in whole blocks (32 x 8 a worker).
    result = coach(
        "-p", "CartPole_ClippedPPO", "-n", "2",
        "-cp", "schedule.heatup_steps=EnvironmentSteps(100)",
        "-cp", "schedule.improve_steps=EnvironmentSteps(1000)",
        "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(500)",
        "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    run = experiment(tmp_path / "experiments", "CartPole_ClippedPPO")
    with open(run / "progress.csv") as f:
        rows = [(r["phase"], int(r["env_steps"]), int(r["training_steps"]))
                for r in csv.DictReader(f)]  # fmt: skip
    evaluations = [steps for phase, steps, _ in rows if phase == "evaluate"]
    log = (run / "log.txt").read_text()
    heatup = int(log.split("heatup   env steps")[-1].split()[0])  # its last progress line
    assert 100 <= heatup < 116, heatup
    first, last = evaluations
    assert 500 <= first - heatup < 516 and 1000 <= last - heatup < 1016, (heatup, evaluations)
    assert max(t for _, _, t in rows) > 0  # the blocks the budget cut short were learned from
