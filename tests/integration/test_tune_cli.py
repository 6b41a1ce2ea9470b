"""``coach tune``: its refusals (one ``coach: error:`` line, exit 2, no folder), and a small
study run for real in subprocesses: on local processes (or on Ray) until Ctrl-C, then
resumed on local processes to its total, without running a finished trial again.

The refusals run the command in this process (everything is checked before a folder is
made, nothing runs); one of them also through the installed entry point.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from coach.graph_managers.parameters import RunContext
from coach.presets import load_preset
from tests.integration.coach_cli import COMMAND, ENV, coach, refused, start
from tests.processes import Console, descendants, listening

optuna = pytest.importorskip("optuna")

SMALL = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(300)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(1800)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(600)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(3)",
    "-cp", "agent.algorithm.num_consecutive_playing_steps=EnvironmentSteps(64)",
    "-cp", "agent.algorithm.num_consecutive_training_steps=8",
]  # fmt: skip
"""Trials of CartPole_DQN of a second or two each."""

LR = "agent.network_wrappers.main.learning_rate"
TARGET = "agent.algorithm.num_steps_between_copying_online_weights_to_target"
SPACE = f"""\
parameters:
  {LR}: {{float: [1.0e-4, 1.0e-2], log: true}}
  agent.algorithm.batch_size: {{categorical: [32, 64, 128]}}
  {TARGET}: {{int: [64, 1024], log: true, unit: EnvironmentSteps}}
pruning: {{startup_trials: 1}}
"""


@pytest.mark.parametrize(
    ("space", "args", "message"),
    [
        ("parameters: {agent.algorithm.discont: {float: [0.9, 0.99]}}", [],
         "space.yaml: agent.algorithm has no field 'discont'; valid fields: discount, "),
        ("parameters: {agent.algorithm.discount: {float: [0.99, 0.9]}}", [],
         "space.yaml: agent.algorithm.discount: the range [0.99, 0.9] is empty"),
        ("parameters: {agent.algorithm.discount: {float: [0.0, 0.9], log: true}}", [],
         "a log range needs low > 0"),
        ("parameters: {agent.algorithm.discount: {float: [0.9, 1.5]}}", [],
         "agent.algorithm.discount must be in [0, 1], got 1.5 (the high end of its range)"),
        ("parameters: {agent.algorithm.batch_size: {categorical: []}}", [],
         "categorical takes a list of one or more choices"),
        ("parameters: {agent.algorithm.discount: {normal: [0.9, 0.1]}}", [],
         "unknown kind 'normal'"),
        ("parameters: {agent.algorithm.discount: [0.9", [], "space.yaml:1:44: not valid YAML"),
        ("parameters: {agent.algorithm.discount: {float: [0.9, 0.99]}}",
         ["-cp", "agent.algorithm.discont=0.9"], "agent.algorithm has no field 'discont'"),
        ("parameters: {agent.algorithm.discount: {float: [0.9, 0.99]}}",
         ["-cp", "schedule.evaluation_steps=EnvironmentEpisodes(0)"],
         "CartPole_DQN makes no evaluations"),
        ("parameters: {agent.algorithm.discount: {float: [0.9, 0.99]}}",
         ["-cp", "agent.algorithm.discount=0.95"],
         "space.yaml: agent.algorithm.discount is searched and set by -cp: give one"),
        ("parameters: {agent.algorithm.discount: {float: [0.9, 0.99]}}",
         ["-cp", "agent.algorithm.batch_size=32", "-cp", "agent.algorithm.batch_size=64"],
         "-cp agent.algorithm.batch_size is given twice, as '32' and '64': give it once"),
        ("parameters: {agent.algorithm.discount: {float: [0.9, 0.99]}}",
         ["--ray-address", "auto"], "--ray-address goes with --backend ray"),
        ("parameters: {agent.algorithm.discount: {float: [0.9, 0.99]}}",
         ["--seed", "1", "--seeds", "0-2"], "give --seed or --seeds, not both"),
        ("parameters: {agent.algorithm.discount: {float: [0.9, 0.99]}}",
         ["--seeds", "2-0"], "'2-0' is a range from high to low"),
    ],
)  # fmt: skip
def test_a_space_or_command_that_cannot_run_is_refused_in_one_line(
    space: str,
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("space.yaml").write_text(space)
    command = ["tune", "-p", "CartPole_DQN", "--space", "space.yaml", "--trials", "2", *args]
    assert message in refused(command, capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["space.yaml"]


def test_what_a_resume_or_a_new_study_lacks_isrefused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("space.yaml").write_text(SPACE)
    line = refused(["tune", "-p", "CartPole_DQN", "--space", "space.yaml"], capsys)
    assert "coach tune needs -p PRESET, --space FILE and --trials N" in line
    Path("not_a_study").mkdir()
    line = refused(["tune", "--resume", "not_a_study"], capsys)
    assert "not_a_study is not a coach tune study (no tune.yaml and study.db)" in line
    line = refused(["tune", "--resume", "not_a_study", "-p", "CartPole_DQN"], capsys)
    assert "--resume takes the preset, space, seeds and overrides from" in line
    assert "--trials" in refused(["tune", "--resume", "not_a_study", "--trials", "0"], capsys)


def test_the_command_refuses_a_bad_space_in_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "space.yaml").write_text("parameters: {agents.x: {float: [0.1, 1.0]}}\n")
    result = coach("tune", "-p", "CartPole_DQN", "--space", "space.yaml", "--trials", "2",
                   cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        "coach: error: space.yaml: no parameters named 'agents'; valid roots: agent, "
        "environment, schedule\n"
    )
    assert not (tmp_path / "experiments").exists()


def _finished(study: object) -> dict[int, tuple[str, dict[str, object], float | None]]:
    """The trials that count, by number: complete, pruned, or failed but not interrupted."""
    stopped = set(study.user_attrs.get("interrupted", []))  # type: ignore[attr-defined]
    return {
        t.number: (t.state.name, t.params, t.value)
        for t in study.get_trials()  # type: ignore[attr-defined]
        if t.state.name in ("COMPLETE", "PRUNED")
        or (t.state.name == "FAIL" and t.number not in stopped)
    }


@pytest.mark.parametrize(
    "backend",
    [
        "local",
        # Ray's runtime and its workers' start take this machine another 40 s or so: kept
        # out of the default run (the same driver and trials, reached by the gRPC proxy).
        pytest.param("ray", marks=pytest.mark.learning),
    ],
)
def test_a_study_stopped_by_ctrl_c_resumes_to_its_total_without_repeating_a_trial(
    backend: str, tmp_path: Path
) -> None:
    if backend == "ray":
        pytest.importorskip("ray")
    (tmp_path / "space.yaml").write_text(SPACE)
    # A new session, as a terminal's: Ctrl-C reaches the whole foreground process group.
    process = subprocess.Popen(
        [*COMMAND, "tune", "-p", "CartPole_DQN", "--space", "space.yaml", "--trials", "4",
         "-j", "2", "--backend", backend, *SMALL],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    console = Console(process)
    console.wait_for(lambda line: line.startswith("trial "), timeout=240)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = console.finish(timeout=120)
    assert process.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr
    (folder,) = (tmp_path / "experiments" / "CartPole_DQN_tune").iterdir()
    assert f"continue with: coach tune --resume {folder.relative_to(tmp_path)}" in stdout
    url = f"sqlite:///{folder / 'study.db'}"
    study = optuna.load_study(study_name="CartPole_DQN_tune", storage=url)
    before = _finished(study)
    stopped = study.user_attrs.get("interrupted", [])
    assert before and len(before) < 4
    states = {t.number: t.state.name for t in study.get_trials()}
    assert "RUNNING" not in states.values()  # the study on disk says how each trial ended
    assert all(states[n] == "FAIL" for n in stopped)

    result = coach("tune", "--resume", str(folder.relative_to(tmp_path)), "-j", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    study = optuna.load_study(study_name="CartPole_DQN_tune", storage=url)
    after = _finished(study)
    assert len(after) == 4
    assert {n: after[n] for n in before} == before  # finished trials are not run again
    trials = study.get_trials()
    for number in stopped:  # an interrupted trial's values ran again, once
        (again,) = [t for t in trials if t.user_attrs.get("reruns") == number]
        assert again.params == trials[number].params and again.number in after
    for number, (state, _, _) in after.items():
        run = folder / f"trial_{number}"
        assert (run / "params.yaml").is_file() and (run / "progress.csv").is_file()
        assert (run / "checkpoints" / "best.pt").is_file(), state
    for name in ("optimization_history", "intermediate_values"):
        assert (folder / f"{name}.png").is_file() and (folder / f"{name}.svg").is_file()

    best = yaml.safe_load((folder / "best.yaml").read_text())
    top = study.best_trial
    assert best["parameters"][LR] == top.params[LR]
    assert best["parameters"][TARGET] == f"EnvironmentSteps({top.params[TARGET]})"
    assert f"best: trial {top.number}, {top.value:.2f}" in result.stdout
    graph = load_preset(str(folder / "best.yaml")).graph_manager
    graph.create_graph(RunContext(seed=0, experiment_dir=tmp_path / "best", quiet=True))
    try:
        graph.improve()  # the study's short schedule, with the best trial's values
        assert (
            graph.top_level.agent.params.algorithm.batch_size
            == top.params["agent.algorithm.batch_size"]
        )
        assert [e.env_steps for e in graph.evaluations] == [900, 1500, 2100]
    finally:
        graph.close()


def test_a_study_runs_its_trials_as_ray_tasks_served_on_loopback(tmp_path: Path) -> None:
    """The trials as Ray tasks on a runtime of the study's own, reporting to the study
    through the driver's gRPC proxy of its SQLite file, which listens on loopback alone, as
    Ray does (the Ctrl-C path is the local one's, above, on the Ray backend under the
    `learning` mark)."""
    pytest.importorskip("ray")
    # Without pruning: with both trials at once, which one completes first (and so whether
    # the median pruner may stop the other) depends on the machine's load.
    (tmp_path / "space.yaml").write_text(SPACE.replace("pruning: {startup_trials: 1}\n", ""))
    process = start(
        "tune", "-p", "CartPole_DQN", "--space", "space.yaml", "--trials", "2", "-j", "2",
        "--backend", "ray", *SMALL, cwd=tmp_path,
    )  # fmt: skip
    console = Console(process)
    try:
        # The study's first line comes once Ray is up and the proxy answers, before a trial
        # has run: the driver, its Ray runtime and the proxy are all listening then.
        first = console.wait_for(lambda line: line.startswith("tuning "), timeout=240)
        served = first.split("served the study's storage on ")[1].split(")")[0]
        sockets = listening({process.pid} | descendants(process.pid))
    finally:
        stdout, stderr = console.finish(timeout=300)
    assert process.returncode == 0, stdout + stderr
    assert served.startswith("127.0.0.1:")
    assert ("127.0.0.1", int(served.split(":")[1])) in sockets
    assert {host for host, _ in sockets} == {"127.0.0.1"}, sockets  # Ray's GCS, raylet, ...
    (folder,) = (tmp_path / "experiments" / "CartPole_DQN_tune").iterdir()
    study = optuna.load_study(
        study_name="CartPole_DQN_tune", storage=f"sqlite:///{folder / 'study.db'}"
    )
    finished = _finished(study)
    assert sorted(finished) == [0, 1]
    for number, (state, _, value) in finished.items():
        assert state == "COMPLETE" and value is not None
        # Each trial reported its evaluations to the study from its Ray task.
        assert len(study.trials[number].intermediate_values) == 3
        assert (folder / f"trial_{number}" / "checkpoints" / "best.pt").is_file()
    assert (folder / "best.yaml").is_file()
