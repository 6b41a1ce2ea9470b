"""``coach -p PRESET --seeds ...``: a group of seeds, run at once, stopped and resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.integration.coach_cli import COMMAND, ENV, SMALL, coach, experiment, rewards

LONGER = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(300)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(8000)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(500)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(2)",
    "-cp", "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(64)",
    "-cp", "agent.algorithm.num_consecutive_training_steps=8",
]  # fmt: skip
"""A CartPole_DQN run of some seconds: 7,200 env steps after both seeds first evaluated,
long enough to be stopped on the way."""


def _group(root: Path, name: str = "CartPole_DQN") -> Path:
    return experiment(root, name)


def _status(group: Path) -> dict[int, str]:
    return yaml.safe_load((group / "group.yaml").read_text())["seed_status"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "4-0"], "'4-0' is a range from high to low"),
        (["--seeds", "x"], "'x' is not a list of seeds such as 0-4 or 0,3,7"),
        (["--seeds", "0-2,1"], "names seed 1 twice"),
        (["--seeds", "0-1", "--seed", "3"], "--seeds does not take --seed"),
        (["--seeds", "0-1", "--evaluate"], "--seeds does not take --evaluate"),
        (["--seeds", "0-1", "-j", "0"], "'-j'"),
        (["-j", "2"], "-j runs the seeds of a group at once: give --seeds too"),
    ],
)
def test_refusals_are_one_line_and_write_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = coach("-p", "CartPole_DQN", "-ep", "runs", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("coach: error: ") and message in line
    assert not (tmp_path / "runs").exists()


def test_a_group_runs_each_seed_as_its_own_run_would(tmp_path: Path) -> None:
    result = coach(
        "-p", "CartPole_DQN", "-ep", "runs", "--seeds", "0,1", "-j", "2", *SMALL, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    group = _group(tmp_path / "runs")
    assert sorted(p.name for p in group.iterdir()) == ["group.yaml", "log.txt", "seed_0", "seed_1"]
    assert _status(group) == {0: "done", 1: "done"}
    for seed in (0, 1):
        params = yaml.safe_load((group / f"seed_{seed}" / "params.yaml").read_text())
        assert params["seed"] == seed
        assert (group / f"seed_{seed}" / "checkpoints" / "best.pt").is_file()
    log = (group / "log.txt").read_text()
    assert "seed 0 finished" in log and "seed 1 finished" in log and "coach plot" in log
    alone = coach("-p", "CartPole_DQN", "-ep", "alone", "--seed", "1", *SMALL, cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    group_rows = [r for r in rewards(group / "seed_1") if r[0] == "evaluate"]
    assert group_rows and group_rows == [
        r for r in rewards(experiment(tmp_path / "alone")) if r[0] == "evaluate"
    ]


FLAKY_ENV = '''
import gymnasium as gym
from gymnasium.envs.classic_control import CartPoleEnv


class FlakyCartPole(CartPoleEnv):
    """CartPole that breaks on its 50th step when seeded with 1."""

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.breaks, self.steps = seed == 1, 0
        return super().reset(seed=seed, options=options)

    def step(self, action):
        self.steps += 1
        if self.breaks and self.steps == 50:
            raise RuntimeError("seed 1 broke its cart")
        return super().step(action)
'''

FLAKY_PRESET = """
from coach import *
from coach_presets import _cartpole
from coach_presets.CartPole_DQN import agent

graph_manager = BasicRLGraphManager(
    agent, GymEnvironmentParameters(level="flaky_env:FlakyCartPole"), _cartpole.schedule(49_000)
)
"""


def test_a_failing_seed_is_reported_and_the_others_finish(tmp_path: Path) -> None:
    (tmp_path / "flaky_env.py").write_text(FLAKY_ENV)
    (tmp_path / "flaky.py").write_text(FLAKY_PRESET)
    result = coach(
        "-p", "flaky.py", "-ep", "runs", "--seeds", "0-2", "-j", "2", *SMALL, cwd=tmp_path
    )
    assert result.returncode == 1, result.stderr
    group = _group(tmp_path / "runs", "flaky")
    assert _status(group) == {0: "done", 1: "failed", 2: "done"}
    log = (group / "log.txt").read_text()
    assert f"seed 1 FAILED (exit 1) in {group / 'seed_1'}: internal error" in log
    assert "seeds 1 failed; the others went on" in log
    assert "RuntimeError: seed 1 broke its cart" in (group / "seed_1" / "log.txt").read_text()


def test_ctrl_c_checkpoints_every_running_seed_and_resume_finishes_the_group(
    tmp_path: Path,
) -> None:
    process = subprocess.Popen(
        [*COMMAND, "-p", "CartPole_DQN", "-ep", "runs", "--seeds", "0-2", "-j", "2", *LONGER],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches it
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # both running seeds have evaluated once
            evaluated = [
                p for p in (tmp_path / "runs").rglob("progress.csv") if "evaluate" in p.read_text()
            ]
            if len(evaluated) == 2:
                break
            time.sleep(0.2)
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, output
    group = _group(tmp_path / "runs")
    assert _status(group) == {0: "interrupted", 1: "interrupted", 2: "waiting"}
    for seed in (0, 1):
        assert (group / f"seed_{seed}" / "checkpoints" / "latest").is_file()
    assert f"continue with: coach --resume {group}" in output
    assert "seed    2  not started" in output

    resumed = coach("--resume", str(group), "-j", "2", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _status(group) == {0: "done", 1: "done", 2: "done"}
    for seed in (0, 1):
        log = (group / f"seed_{seed}" / "log.txt").read_text()
        assert "resumed from" in log
    assert "resumed from" not in (group / "seed_2" / "log.txt").read_text()
    again = coach("--resume", str(group), cwd=tmp_path)  # nothing left: nothing runs again
    assert again.returncode == 0 and "seeds (none left)" in again.stdout


def test_a_group_on_ray_gives_the_numbers_of_local_processes(tmp_path: Path) -> None:
    args = ["-p", "CartPole_DQN", "--seeds", "0,1", "-j", "2", *SMALL]
    on_ray = coach(*args, "-ep", "ray", "--backend", "ray", cwd=tmp_path)
    assert on_ray.returncode == 0, on_ray.stderr
    local = coach(*args, "-ep", "local", cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    for seed in (0, 1):
        ray_rows = rewards(_group(tmp_path / "ray") / f"seed_{seed}")
        assert [r for r in ray_rows if r[0] == "evaluate"] == [
            r for r in rewards(_group(tmp_path / "local") / f"seed_{seed}") if r[0] == "evaluate"
        ]
