"""What the ``coach`` command does with bad input: one ``coach: error:`` line and exit 2,
nothing written; and with an error of its own during a run: exit 1, the folder kept, the
traceback in its log.txt.

The option checks run in this process (click parses before anything is loaded); the runs
that get as far as a folder run in subprocesses.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from tests.integration.coach_cli import COMMAND, ENV, TINY, coach, experiment, refused


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


def test_an_error_in_the_users_code_keeps_the_run_and_its_traceback(tmp_path: Path) -> None:
    """The user's environment fails: the console's one line names the user's file and line
    (Coach's own code failing says ``internal error``: tests/unit/test_user_code_line.py)."""
    preset = _broken_preset(tmp_path, coach_error=False)
    result = coach("-p", str(preset), "-ep", "runs", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    run = experiment(tmp_path / "runs", "broken")
    log = run / "log.txt"
    raised = BROKEN_ENV.splitlines().index(
        '            raise RuntimeError("the environment broke on its third step")'
    )
    assert line == (
        f"coach: error in {tmp_path / 'broken_env.py'}:{raised + 1}, in step: "
        "RuntimeError: the environment broke on its third step; "
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


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one ``coach: error:`` line of a refused command (after checking it is one)."""
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("coach: error: "), line
    return line


MOST_WORKERS = 4 * (os.cpu_count() or 1)


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["-n", str(MOST_WORKERS + 1)],
         [f"-n {MOST_WORKERS + 1} is too many rollout workers: at most {MOST_WORKERS} on this "
          f"machine (4 per CPU of its {os.cpu_count()}", "--ray-address"]),
        (["-n", "100000", "--backend", "ray"], [f"at most {MOST_WORKERS} on this machine"]),
        (["-cp", "environment.num_envs=100000"],
         ["environment.num_envs=100000 copies take 100000 env steps at every step, more than "
          "schedule.heatup_steps (EnvironmentSteps(1000)) can use: give at most 1000 copies"]),
        (["-n", "2", "-cp", "schedule.improve_steps=EnvironmentSteps(1)"],
         ["2 workers of 1 environment copy each take 2 env steps at every step, more than "
          "schedule.improve_steps (EnvironmentSteps(1)) can use: give at most 1 worker, "]),
        (["-p", "CartPole_A3C", "-n", "100000"],
         [f"parallel.num_workers (-n) must be at most {MOST_WORKERS} on this machine",
          "got 100000"]),
        (["-p", "CartPole_A3C", "-cp", "schedule.improve_steps=EnvironmentSteps(1500)",
          "-cp", "environment.num_envs=1000"],
         ["2 workers of 1000 environment copies each take 2000 env steps at every step, more "
          "than schedule.improve_steps (EnvironmentSteps(1500)) can use: give at most 1 worker"]),
    ],
)  # fmt: skip
def test_more_workers_or_copies_than_the_machine_and_budget_take_are_refused(
    args: list[str], fragments: list[str], tmp_path: Path
) -> None:
    """A typo such as ``-n 100000`` once spawned workers for minutes, and ``num_envs=100000``
    ran a heatup 100 times past its budget: refused before a folder or a process is made."""
    preset = [] if "-p" in args else ["-p", "CartPole_DQN"]
    line = _one_error_line(coach(*preset, *args, cwd=tmp_path))
    assert all(fragment in line for fragment in fragments), line
    assert list(tmp_path.iterdir()) == []


def test_a_path_overridden_twice_with_different_values_is_refused(tmp_path: Path) -> None:
    first, second = "agent.algorithm.discount=0.9", "agent.algorithm.discount=0.5"
    result = coach("-p", "CartPole_DQN", "-cp", first, "-cp", second, cwd=tmp_path)
    line = _one_error_line(result)
    assert line == (
        "coach: error: -cp agent.algorithm.discount is given twice, as '0.9' and '0.5': "
        "give it once"
    )
    assert list(tmp_path.iterdir()) == []


def _plot_run(folder: Path, progress: bytes) -> Path:
    """A run folder as coach writes one (params.yaml), with ``progress`` as its progress.csv."""
    folder.mkdir(parents=True)
    (folder / "params.yaml").write_text("preset: CartPole_DQN\nseed: 0\nparameters: {}\n")
    (folder / "progress.csv").write_bytes(progress)
    return folder


HEADER = b"wall_time,phase,agent,env_steps,reward,success_rate\n"


@pytest.mark.parametrize(
    ("progress", "fragment"),
    [
        (bytes(range(256)) * 8, "progress.csv is not a run's progress.csv: byte 128 is not UTF-8"),
        (HEADER + b"1.0,evaluate,graph,100,12.5,\n2.0,evaluate,graph,200,ten,\n",
         "progress.csv, line 3, column reward: 'ten' is not a number"),
        (HEADER + b"1.0,evaluate,graph,1e2\n", "progress.csv, line 2, column reward: '' is not"),
        (b"a,b\n1,2\n", "progress.csv is not a run's progress.csv: it has no column 'phase'"),
    ],
)  # fmt: skip
def test_a_progress_csv_that_is_not_one_is_refused_by_plot(
    progress: bytes, fragment: str, tmp_path: Path
) -> None:
    run = _plot_run(tmp_path / "run", progress)
    line = _one_error_line(coach("plot", str(run), "-o", "plots", cwd=tmp_path))
    assert fragment in line and str(run / "progress.csv") in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no plots folder


UNBUILDABLE_ENV = """
import gymnasium as gym
import numpy as np


class Unbuildable(gym.Env):
    def __init__(self):
        raise RuntimeError("no display to open")


class Image(gym.Env):
    observation_space = gym.spaces.Box(0, 255, (8, 8, 3), np.uint8)
    action_space = gym.spaces.Discrete(2)
"""


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CartPole_DQN run with its checkpoint, copied by each test that edits it."""
    root = tmp_path_factory.mktemp("tiny")
    result = coach("-p", "CartPole_DQN", "-ep", "runs", "-q", *TINY, cwd=root)
    assert result.returncode == 0, result.stderr
    return experiment(root / "runs")


@pytest.mark.parametrize(
    ("edits", "fragment"),
    [
        ({"environment.level: CartPole-v1": "environment.level: unbuildable_env:Unbuildable"},
         "RuntimeError: no display to open"),
        ({"environment.level: CartPole-v1": "environment.level: unbuildable_env:Image",
          "observation.conv: []": "observation.conv: [[4, 64, 1]]"},
         "RuntimeError: Calculated padded input size"),
    ],
)  # fmt: skip
def test_export_of_a_run_whose_parameters_do_not_build_is_one_line(
    edits: dict[str, str], fragment: str, tiny_run: Path, tmp_path: Path
) -> None:
    """params.yaml edited so that the environment or a network cannot be made: a user's
    file to mend, said in a line (export keeps no log to put a traceback in)."""
    (tmp_path / "unbuildable_env.py").write_text(UNBUILDABLE_ENV)
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    params = run / "params.yaml"
    text = params.read_text()
    for old, new in edits.items():
        assert old in text
        text = text.replace(old, new)
    params.write_text(text)
    # The run's own module, allowed as its user would (the file names it: `coach.trust`).
    allowed = ("--allow-import", "unbuildable_env")
    line = _one_error_line(coach("export", "-crd", "run", *allowed, cwd=tmp_path))
    assert line.startswith(
        "coach: error: the parameters in run/params.yaml do not build the run's agent and "
        "environment: "
    ), line
    assert fragment in line
    assert not (run / "export").exists()


def _file_size_limit(limit: int) -> None:
    # Python ignores SIGXFSZ: a write past the limit fails with EFBIG instead of killing.
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_checkpoint_the_disk_refuses_ends_the_run_with_the_last_one_intact(
    tiny_run: Path, tmp_path: Path
) -> None:
    """Past a file-size limit (or on a full disk) torch said only ``unexpected pos`` and left
    a temporary file behind. The run ends in one line that says why and what is intact;
    nothing half-written stays, and the run resumes from its last checkpoint."""
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    checkpoints = run / "checkpoints"
    latest = checkpoints / (checkpoints / "latest").read_text().strip()
    before = {p.name: p.read_bytes() for p in checkpoints.iterdir()}
    longer = "schedule.improve_steps=EnvironmentSteps(3)"
    resume = [*COMMAND, "--resume", "run", "-q", "-cp", longer]
    limit = latest.stat().st_size // 2  # the logs fit, a checkpoint does not
    result = subprocess.run(
        resume,
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: _file_size_limit(limit),
    )
    line = _one_error_line(result)
    assert line.startswith("coach: error: could not write run/checkpoints/"), line
    assert "the file grew past this process's file-size limit (ulimit -f)" in line
    assert f"its latest checkpoint, run/checkpoints/{latest.name}, is intact" in line
    assert "coach --resume run goes on from it" in line
    assert {p.name: p.read_bytes() for p in checkpoints.iterdir()} == before  # no .tmp either
    assert line.removeprefix("coach: ") in (run / "log.txt").read_text()
    again = coach("--resume", "run", "-q", "-cp", longer, cwd=tmp_path)
    assert again.returncode == 0, again.stderr


class Payload:
    """What a crafted file pickles: an object of a class no checkpoint holds."""

    def __init__(self) -> None:
        self.note = "unpickled"


@pytest.mark.parametrize(
    "command",
    [["--evaluate", "1", "-p", "CartPole_DQN", "-crd"], ["export", "-crd"]],
)
def test_a_crafted_checkpoint_is_refused_without_advice_to_trust_it(
    command: list[str], tmp_path: Path
) -> None:
    """torch's refusal advises loading with ``weights_only=False``, the one thing not to do
    with a file one does not trust: Coach says what the file holds, and that it will not."""
    crafted = tmp_path / "crafted.pt"
    torch.save({"format": 1, "agents": [Payload()]}, crafted)
    result = coach(*command, str(crafted), cwd=tmp_path)
    line = _one_error_line(result)
    name = f"{Payload.__module__}.{Payload.__qualname__}"
    assert line == (
        f"coach: error: {crafted} holds pickled objects ({name}) that a Coach "
        f"checkpoint never holds: Coach will not load it, since unpickling them could run "
        f"any code"
    )
    assert "weights_only" not in result.stderr and "trust" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crafted.pt"]
