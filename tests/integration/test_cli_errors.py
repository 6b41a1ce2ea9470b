"""What the ``coach`` command does with bad input: one ``coach: error:`` line and exit 2,
nothing written; and with an error of its own during a run: exit 1, the folder kept, the
traceback in its log.txt.

The option checks run in this process (click parses before anything is loaded); the runs
that get as far as a folder run in subprocesses.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.integration.coach_cli import coach, experiment, refused

TINY = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(1)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(1)",
    "-cp", "schedule.evaluation_steps=EnvironmentSteps(1)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(1)",
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--seed", "abc"], ["'--seed'", "'abc'"]),
        (["--seed", "-1"], ["'--seed'", "0<=x<=4294967295"]),
        (["--seed", str(2**32)], ["'--seed'", "4294967296 is not in the range"]),
        (["--threads", "0"], ["'--threads'", "0 is not in the range 1<=x<="]),
        (["--threads", str((os.cpu_count() or 1) + 1)], ["'--threads'", "not in the range"]),
        (["--threads", "two"], ["'--threads'", "'two'"]),
        (["--evaluate", "0"], ["'--evaluate'", "x>=1"]),
        (["--evaluate", "ten"], ["'--evaluate'", "'ten' is not a valid integer"]),
        (["-n", "0"], ["'--num-workers'", "x>=1"]),
        (["-n", "1.5"], ["'--num-workers'", "'1.5'"]),
        (["-s", "0"], ["'--checkpoint-save-secs'", "'0' is not a number of seconds > 0"]),
        (["-s", "nan"], ["'--checkpoint-save-secs'", "'nan'"]),
        (["-s", "inf"], ["'--checkpoint-save-secs'", "'inf'"]),
        (["-s", "soon"], ["'--checkpoint-save-secs'", "'soon' is not a number of seconds"]),
        (["--device", "gpu"], ["'--device'", "'gpu' is not a device of this machine; it has cpu"]),
        (["--device", "cuda:99"], ["'--device'", "'cuda:99'"]),
        (["--device", ""], ["'--device'", "'' is not a device"]),
        (["--backend", "spark"], ["'--backend'", "'spark' is not one of 'local', 'ray'"]),
        (["-e", "a/b"], ["'--experiment-name'", "'a/b' is not a folder name"]),
        (["-e", ".."], ["'--experiment-name'", "not a folder name"]),
        (["-p", "CartPole_DQN", "-crd", "no/such/run"], ["no checkpoint folder", "no/such/run"]),
        (["--resume", "no/such/run"], ["'--resume'", "does not exist"]),
        (["-p", "Cart\nPole"], ["'--preset'", "control character '\\n'"]),
        (["-lvl", "pong\r"], ["'--level'", "control character '\\r'"]),
        (["--record-dataset", "a\x1bb"], ["'--record-dataset'", "control character"]),
        (["--sed", "1"], ["No such option", "--seed"]),
        (["-p"], ["'-p' requires an argument"]),
        (["extra"], ["No such command 'extra'"]),  # coach's commands: plot, export
    ],
)
def test_a_malformed_option_is_one_error_line(
    args: list[str],
    fragments: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    line = refused(["-p", "CartPole_DQN", *args], capsys)
    assert all(fragment in line for fragment in fragments), line
    assert list(tmp_path.iterdir()) == []


def test_paths_are_checked_for_what_they_must_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("")
    line = refused(["-p", "CartPole_DQN", "-ep", "a_file"], capsys)
    assert "'--experiment-path'" in line and "is a file" in line
    line = refused(["-p", "CartPole_DQN", "--resume", "a_file"], capsys)
    assert "'--resume'" in line and "is a file" in line
    line = refused(["-p", "CartPole_DQN", "-crd", "a_file"], capsys)
    assert "a_file" in line  # an existing file, but no checkpoint
    assert [p.name for p in tmp_path.iterdir()] == ["a_file"]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("schedule.heatup_steps=TrainingSteps(100)",
         "schedule.heatup_steps must be counted in EnvironmentSteps or EnvironmentEpisodes "
         "(nothing trains in heatup), got TrainingSteps(100)"),
        ("schedule.steps_between_evaluation_periods=EnvironmentSteps(0)",
         "schedule.steps_between_evaluation_periods must be > 0 steps, got EnvironmentSteps(0)"),
        ("schedule.evaluation_steps=TrainingSteps(10)",
         "schedule.evaluation_steps must be counted in EnvironmentSteps or EnvironmentEpisodes"),
        ("agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(0)",
         "agent.algorithm.num_consecutive_playing_steps must be > 0 steps"),
        ("agent.algorithm.num_consecutive_training_steps=0",
         "agent.algorithm.num_consecutive_training_steps must be a whole number >= 1, got 0"),
        ("agent.algorithm.discount=1.5", "agent.algorithm.discount must be in [0, 1], got 1.5"),
        ("agent.memory.max_size=8", "agent.memory.max_size must be >= algorithm.batch_size"),
    ],
)  # fmt: skip
def test_a_value_out_of_range_is_refused_before_anything_is_written(
    override: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The hazards of a run that never ends (a heatup counted in training steps, an
    evaluation period of 0) or divides by zero are refused with the field's path."""
    monkeypatch.chdir(tmp_path)
    line = refused(["-p", "CartPole_DQN", "-cp", override], capsys)
    assert line == f"coach: error: {message}" or message in line, line
    assert list(tmp_path.iterdir()) == []


def test_a_checkpoint_that_does_not_fit_leaves_no_folder(tmp_path: Path) -> None:
    """A user error found after the run's folder was made (the agents of a -crd checkpoint
    do not fit the preset's) removes that folder again."""
    first = coach("-p", "CartPole_DQN", "-ep", "runs", "-q", *TINY, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    source = experiment(tmp_path / "runs")
    narrower = "agent.network_wrappers.main.middleware.scheme=[8]"
    result = coach("-p", "CartPole_DQN", "-ep", "other", "-crd", str(source), *TINY,
                   "-cp", narrower, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("coach: error: ") and "does not fit this preset's agents" in line
    assert not (tmp_path / "other").exists()


BROKEN_ENV = '''
import gymnasium as gym
import numpy as np

from coach.errors import CoachError


class BrokenEnv(gym.Env):
    """Breaks on its third step: with a RuntimeError, or a CoachError."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, coach_error=False):
        self.coach_error = coach_error
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.steps += 1
        if self.steps == 3:
            if self.coach_error:
                raise CoachError("the third step is refused")
            raise RuntimeError("the environment broke on its third step")
        return np.zeros(2, np.float32), 1.0, False, False, {}
'''

BROKEN_PRESET = """
from coach import *

graph_manager = BasicRLGraphManager(
    DQNAgentParameters(),
    GymEnvironmentParameters(level="broken_env:BrokenEnv", kwargs={KWARGS}),
    ScheduleParameters(
        heatup_steps=EnvironmentSteps(10),
        improve_steps=EnvironmentSteps(10),
        steps_between_evaluation_periods=EnvironmentSteps(10),
        evaluation_steps=EnvironmentEpisodes(1),
    ),
)
"""


def _broken_preset(folder: Path, coach_error: bool) -> Path:
    (folder / "broken_env.py").write_text(BROKEN_ENV)
    preset = folder / "broken.py"
    kwargs = "{'coach_error': True}" if coach_error else "{}"
    preset.write_text(BROKEN_PRESET.replace("{KWARGS}", kwargs))
    return preset


def test_an_internal_error_keeps_the_run_and_its_traceback(tmp_path: Path) -> None:
    preset = _broken_preset(tmp_path, coach_error=False)
    result = coach("-p", str(preset), "-ep", "runs", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    run = experiment(tmp_path / "runs", "broken")
    log = run / "log.txt"
    assert line == (
        "coach: internal error: RuntimeError: the environment broke on its third step; "
        f"the traceback is in {log.relative_to(tmp_path)}"
    )
    text = log.read_text()
    assert "internal error:\nTraceback (most recent call last):" in text
    assert 'broken_env.py", line' in text and "RuntimeError: the environment broke" in text
    assert "writing to" in text  # the run's own log is still there, above it
    assert (run / "params.yaml").is_file()


def test_a_coach_error_during_the_run_is_one_line_and_logged(tmp_path: Path) -> None:
    preset = _broken_preset(tmp_path, coach_error=True)
    result = coach("-p", str(preset), "-ep", "runs", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == ["coach: error: the third step is refused"]
    log = (experiment(tmp_path / "runs", "broken") / "log.txt").read_text()
    assert "coach: error: the third step is refused" in log
