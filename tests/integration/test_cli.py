"""The ``coach`` command in real subprocesses, its experiment folder read back with
TensorBoard's own reader."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from tests.integration.coach_cli import SMALL, coach, experiment, rewards


@pytest.fixture(scope="module")
def small_result(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """A short run with its console on a pipe, and its experiment folder."""
    root = tmp_path_factory.mktemp("experiments")
    result = coach("-p", "CartPole_DQN", "-ep", str(root), "--seed", "3", *SMALL, cwd=root)
    assert result.returncode == 0, result.stderr
    return result, experiment(root)


@pytest.fixture(scope="module")
def small_run(small_result: tuple[subprocess.CompletedProcess[str], Path]) -> Path:
    return small_result[1]


def test_run_writes_the_experiment_folder(small_run: Path) -> None:
    assert (small_run / "params.yaml").is_file()
    assert (small_run / "log.txt").is_file()
    assert (small_run / "progress.csv").is_file()
    assert sorted(p.name for p in (small_run / "tensorboard").iterdir()) == [
        "graph",
        "main_level.agent",
    ]
    log = (small_run / "log.txt").read_text()
    assert "heatup" in log and "evaluate" in log and "steps/s" in log


def test_a_pipe_gets_the_log_lines_without_progress_bars(
    small_result: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    """Live bars are for terminals (tests/integration/test_progress_cli.py)."""
    result, run = small_result
    assert "heatup   env steps" in result.stdout and "done: best evaluation" in result.stdout
    for text in (result.stdout, result.stderr, (run / "log.txt").read_text()):
        assert not any(mark in text for mark in ("\r", "█", "% |"))


def test_progress_csv_has_episodes_and_evaluations(small_run: Path) -> None:
    rows = rewards(small_run)
    phases = [phase for phase, _, _ in rows]
    assert phases.count("evaluate") == 2
    assert "heatup" in phases and "train" in phases
    steps = [int(s) for phase, s, _ in rows if phase != "evaluate"]
    assert steps == sorted(steps) and steps[-1] <= 1500


def test_tensorboard_events_read_back(small_run: Path) -> None:
    agent = EventAccumulator(str(small_run / "tensorboard" / "main_level.agent"))
    agent.Reload()
    tags = set(agent.Tags()["scalars"])
    assert {"Train/episode_reward", "Train/episode_length", "Loss/q_loss",
            "Exploration/epsilon", "Memory/size"} <= tags  # fmt: skip
    episode_steps = [e.step for e in agent.Scalars("Train/episode_reward")]
    assert episode_steps == sorted(episode_steps) and 0 < episode_steps[-1] <= 1500
    assert all(e.value >= 8 for e in agent.Scalars("Train/episode_reward"))  # CartPole >= 8

    graph = EventAccumulator(str(small_run / "tensorboard" / "graph"))
    graph.Reload()
    evaluation = graph.Scalars("Evaluation/mean_reward")
    # The x axis is training env steps: evaluations after 300 + 600 and 300 + 1200 steps.
    assert [e.step for e in evaluation] == [900, 1500]
    assert "Time/env_steps_per_second" in graph.Tags()["scalars"]

    csv_evaluations = [float(r) for phase, _, r in rewards(small_run) if phase == "evaluate"]
    assert [e.value for e in evaluation] == pytest.approx(csv_evaluations)


def test_params_yaml_records_the_run(small_run: Path) -> None:
    document = yaml.safe_load((small_run / "params.yaml").read_text())
    assert document["preset"] == "CartPole_DQN" and document["seed"] == 3
    parameters = document["parameters"]
    assert parameters["schedule.improve_steps"] == "EnvironmentSteps(1200)"
    assert parameters["agent.algorithm.num_consecutive_training_steps"] == 8
    assert parameters["environment.level"] == "CartPole-v1"
    assert {"coach", "torch", "gymnasium", "numpy", "python"} <= set(document["versions"])


def test_same_seed_same_numbers(small_run: Path, tmp_path: Path) -> None:
    """Determinism: the same preset and seed give identical reward columns."""
    result = coach("-p", "CartPole_DQN", "-ep", str(tmp_path), "--seed", "3", *SMALL, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert rewards(experiment(tmp_path)) == rewards(small_run)


def test_params_yaml_repeats_the_run(small_run: Path, tmp_path: Path) -> None:
    result = coach("-p", str(small_run / "params.yaml"), "-ep", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert rewards(experiment(tmp_path)) == rewards(small_run)


def test_list_presets(tmp_path: Path) -> None:
    result = coach("-l", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("CartPole_DQN "))
    assert "CartPole-v1" in line and "DQN" in line


def test_wrong_preset_name_suggests_the_close_one(tmp_path: Path) -> None:
    result = coach("-p", "CartPoleDQN", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "CartPole_DQN" in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "experiments").exists()


def test_bad_override_names_the_valid_fields(tmp_path: Path) -> None:
    result = coach("-p", "CartPole_DQN", "-cp", "agent.algorithm.discont=0.9", cwd=tmp_path)
    assert result.returncode == 2
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "discont" in message and "discount" in message and "batch_size" in message
    assert not (tmp_path / "experiments").exists()


def test_bad_override_type(tmp_path: Path) -> None:
    result = coach("-p", "CartPole_DQN", "-cp", "agent.algorithm.batch_size=0.5", cwd=tmp_path)
    assert result.returncode == 2
    assert "agent.algorithm.batch_size takes int" in result.stderr


def test_preset_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    preset = tmp_path / "broken.py"
    preset.write_text("from coach import *\n\nx = 1\ny = = 2\n")
    result = coach("-p", str(preset), cwd=tmp_path)
    assert result.returncode == 2
    assert f"{preset}:4" in result.stderr and "syntax error" in result.stderr
    assert "Traceback" not in result.stderr


def test_preset_by_path_and_module_attr(tmp_path: Path) -> None:
    preset = tmp_path / "my_preset.py"
    preset.write_text(
        "from coach import *\n"
        "agent = DQNAgentParameters()\n"
        "graph_manager = BasicRLGraphManager(\n"
        "    agent, GymEnvironmentParameters(level='CartPole-v1'),\n"
        "    ScheduleParameters(heatup_steps=EnvironmentSteps(50),\n"
        "                       improve_steps=EnvironmentSteps(100),\n"
        "                       steps_between_evaluation_periods=EnvironmentSteps(100),\n"
        "                       evaluation_steps=EnvironmentEpisodes(1)))\n"
    )
    by_path = coach("-p", str(preset), "-ep", str(tmp_path / "a"), cwd=tmp_path)
    assert by_path.returncode == 0, by_path.stderr
    assert (tmp_path / "a" / "my_preset").is_dir()
    by_module = coach("-p", "my_preset:graph_manager", "-ep", str(tmp_path / "b"),
                      "-e", "named", cwd=tmp_path)  # fmt: skip
    assert by_module.returncode == 0, by_module.stderr
    assert (tmp_path / "b" / "named").is_dir()


def test_ctrl_c_closes_the_run_cleanly(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "coach.cli", "-p", "CartPole_DQN", "-ep", str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:  # wait until training has begun
        if "heatup" in line:
            break
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    run = experiment(tmp_path)
    assert "interrupted at" in (run / "log.txt").read_text()
    assert any(phase == "heatup" for phase, _, _ in rewards(run))  # flushed before exit


ATARI_TINY = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(50)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(50)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(50)",
    "-cp", "schedule.evaluation_steps=EnvironmentSteps(20)",
    "-cp", "agent.memory.max_size=1000",
]  # fmt: skip


@pytest.mark.parametrize(("level", "game"), [("breakout", "Breakout"), ("pong", "Pong")])
def test_level_picks_the_atari_game(level: str, game: str, tmp_path: Path) -> None:
    result = coach("-p", "Atari_DQN", "-lvl", level, *ATARI_TINY, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run = experiment(tmp_path / "experiments", f"Atari_DQN_{level}")
    assert f"Atari_DQN on ALE/{game}-v5: seed 0" in (run / "log.txt").read_text()
    params = yaml.safe_load((run / "params.yaml").read_text())
    assert params["parameters"]["environment.level"] == f"ALE/{game}-v5"


def test_a_checkpoint_of_another_level_is_refused(tmp_path: Path) -> None:
    result = coach("-p", "Atari_DQN", "-lvl", "breakout", *ATARI_TINY, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run = experiment(tmp_path / "experiments", "Atari_DQN_breakout")
    result = coach("-p", "Atari_DQN", "-lvl", "pong", "--evaluate", "1", "-crd", str(run),
                   cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "from level 'ALE/Breakout-v5', this run is on 'ALE/Pong-v5'" in result.stderr


def test_an_unknown_level_lists_the_valid_ones(tmp_path: Path) -> None:
    result = coach("-p", "Atari_DQN", "-lvl", "pongg", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "did you mean pong?" in message
    assert all(game in message for game in ("breakout", "space_invaders", "montezuma_revenge"))
    assert not (tmp_path / "experiments").exists()


def test_a_preset_without_levels_refuses_a_level(tmp_path: Path) -> None:
    result = coach("-p", "CartPole_DQN", "-lvl", "pong", cwd=tmp_path)
    assert result.returncode == 2 and "no level set" in result.stderr


def test_an_environment_that_refuses_its_arguments_leaves_no_experiment(tmp_path: Path) -> None:
    result = coach("-p", "BitFlip_DQN", "-cp", "environment.kwargs.n_bits=0", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "n_bits must be at least 1" in result.stderr
    assert not (tmp_path / "experiments").exists()


def test_a_run_of_a_preset_file_repeats_and_resumes_from_its_params_yaml_anywhere(
    tmp_path: Path,
) -> None:
    from coach.presets import presets_dir

    preset = tmp_path / "mine" / "My_DQN.py"
    preset.parent.mkdir()
    preset.write_text((presets_dir() / "CartPole_DQN.py").read_text())
    done = coach("-p", "mine/My_DQN.py", *SMALL, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = experiment(tmp_path / "experiments", "My_DQN")
    params = yaml.safe_load((run / "params.yaml").read_text())
    assert (params["preset"], params["name"]) == (str(preset.resolve()), "My_DQN")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # params.yaml names the preset file, which runs only where its user allows it.
    refused = coach("-p", str(run / "params.yaml"), "-e", "again", cwd=elsewhere)
    assert refused.returncode == 2 and f"--allow-import {preset.resolve()}" in refused.stderr
    allowed = ("--allow-import", str(preset))
    again = coach("-p", str(run / "params.yaml"), "-e", "again", *allowed, cwd=elsewhere)
    assert again.returncode == 0, again.stderr
    assert rewards(experiment(elsewhere / "experiments", "again")) == rewards(run)
    resumed = coach("--resume", str(run), *allowed, cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr
