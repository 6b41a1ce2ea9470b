"""The experiment lifecycle through the real command: checkpoints, interrupt and resume,
restore and evaluate, refusal of bad input, the TensorBoard dashboard."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from coach.checkpoints import find_checkpoint
from coach.logging.dashboard import start_dashboard
from tests.integration.coach_cli import (
    COMMAND,
    SMALL,
    coach,
    experiment,
    overriding,
    rewards,
    snapshot,
    start,
    wait_for,
)
from tests.processes import descendants, listening

LONGER = overriding(SMALL, [
    "-cp", "schedule.improve_steps=EnvironmentSteps(6000)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(1500)",
    "-cp", "agent.algorithm.num_consecutive_training_steps=16",
])  # fmt: skip
"""About ten seconds of CartPole_DQN: long enough to stop it half-way."""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The uninterrupted run the interrupted ones must match."""
    root = tmp_path_factory.mktemp("reference")
    result = coach("-p", "CartPole_DQN", "--seed", "5", "-ep", str(root), *LONGER, cwd=root)
    assert result.returncode == 0, result.stderr
    return experiment(root)


def test_a_finished_run_leaves_a_final_checkpoint(reference: Path) -> None:
    checkpoint = find_checkpoint(reference)
    assert checkpoint.name == "checkpoint_6300.pt"  # heatup 300 + 6000 training steps
    state = torch.load(checkpoint, weights_only=True)  # nothing but tensors and plain values
    assert state["preset"] == "CartPole_DQN" and state["seed"] == 5


def test_sigint_then_resume_ends_exactly_like_an_uninterrupted_run(
    reference: Path, tmp_path: Path
) -> None:
    process = start("-p", "CartPole_DQN", "--seed", "5", "-ep", str(tmp_path), "--save-memory",
                    *LONGER, cwd=tmp_path)  # fmt: skip
    wait_for(process, "evaluate env steps     3300")  # about half of the budget
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    run = experiment(tmp_path)
    stopped_at = int(find_checkpoint(run).stem.removeprefix("checkpoint_"))
    assert 3300 <= stopped_at < 6300
    assert rewards(run) != rewards(reference)  # it did stop early

    result = coach("--resume", str(run), "--save-memory", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert rewards(run) == rewards(reference)
    log = (run / "log.txt").read_text()
    assert "continue with: coach --resume" in log and f"at {stopped_at} env steps" in log


DURING_EVALUATION = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(200)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(600)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(300)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(20)",
    "-cp", "schedule.checkpoint_steps=EnvironmentSteps(500)",
]  # fmt: skip
"""Two evaluations of 20 greedy episodes (seconds each), after a checkpoint at the end of
the first training period: a signal sent when that checkpoint is written lands in the
evaluation."""


@pytest.mark.parametrize(
    "preset", ["CartPole_DQN", "CartPole_Rainbow", "CartPole_NEC", "CartPole_DFP"]
)
def test_sigint_during_an_evaluation_then_resume_ends_exactly_like_an_uninterrupted_run(
    preset: str, tmp_path: Path
) -> None:
    """The evaluation runs again on resume from the run as it was before it: agents that
    hold steps back (Rainbow's n-step windows, NEC's and DFP's held episodes) store the
    training episodes the evaluation cut once, as the uninterrupted run does."""
    args = ["-p", preset, "--seed", "5", "--save-memory", *DURING_EVALUATION]
    assert coach(*args, "-ep", str(tmp_path / "reference"), cwd=tmp_path).returncode == 0
    reference = experiment(tmp_path / "reference", preset)

    process = start(*args, "-ep", str(tmp_path / "stopped"), cwd=tmp_path)
    wait_for(process, "checkpoint saved at 500 env steps")  # the first evaluation starts
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    run = experiment(tmp_path / "stopped", preset)
    state = torch.load(find_checkpoint(run), weights_only=True)
    # Stopped in the first evaluation: the checkpoint is the run as it was before it.
    assert (state["env_total_steps"], state["evaluations"]) == (500, [])

    result = coach("--resume", str(run), "--save-memory", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert rewards(run) == rewards(reference)


def test_sigkill_loses_only_the_work_since_the_last_checkpoint(
    reference: Path, tmp_path: Path
) -> None:
    process = start("-p", "CartPole_DQN", "--seed", "5", "-ep", str(tmp_path), "--save-memory",
                    "-cp", "schedule.checkpoint_steps=EnvironmentSteps(1000)", *LONGER,
                    cwd=tmp_path)  # fmt: skip
    wait_for(process, "checkpoint saved at 3000 env steps")
    process.kill()  # SIGKILL: no handler runs
    process.communicate(timeout=60)
    run = experiment(tmp_path)
    checkpoint = find_checkpoint(run)
    kept = int(checkpoint.stem.removeprefix("checkpoint_"))
    assert kept >= 3000

    result = coach("--resume", str(run), "--save-memory", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"resumed from {checkpoint} at {kept} env steps" in (run / "log.txt").read_text()
    # What the killed process wrote after its checkpoint was cut away and redone.
    assert rewards(run) == rewards(reference)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="--threads 2 needs two CPUs")
def test_resume_carries_on_with_the_device_and_threads_the_run_had(tmp_path: Path) -> None:
    process = start("-p", "CartPole_DQN", "-ep", str(tmp_path), "--threads", "2", *LONGER,
                    cwd=tmp_path)  # fmt: skip
    wait_for(process, "evaluate env steps")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    run = experiment(tmp_path)
    assert torch.load(find_checkpoint(run), weights_only=True)["threads"] == 2

    result = coach("--resume", str(run), cwd=tmp_path)  # no --threads: the run's own
    assert result.returncode == 0, result.stderr
    final = torch.load(find_checkpoint(run), weights_only=True)
    assert final["env_total_steps"] >= 6300 and (final["device"], final["threads"]) == ("cpu", 2)
    assert "will differ" not in (run / "log.txt").read_text()


def test_sigterm_saves_a_checkpoint_and_exits_143(tmp_path: Path) -> None:
    process = start("-p", "CartPole_DQN", "-ep", str(tmp_path), *LONGER, cwd=tmp_path)
    wait_for(process, "evaluate env steps")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    assert find_checkpoint(experiment(tmp_path)).is_file()


def test_evaluate_a_restored_agent(reference: Path, tmp_path: Path) -> None:
    result = coach("-p", "CartPole_DQN", "--evaluate", "4", "-crd", str(reference),
                   "-ep", str(tmp_path), cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if "evaluation over 4 episodes" in x)
    words = line.split()
    stats = {name: float(words[words.index(name) + 1]) for name in ("mean", "std", "min", "max")}
    assert stats["min"] <= stats["mean"] <= stats["max"] and stats["std"] >= 0
    run = experiment(tmp_path)
    ((phase, _, reward),) = rewards(run)  # evaluation only: one row, no training
    # The console shows the mean to one decimal, as it formats the row's full figure.
    shown = words[words.index("mean") + 1]
    assert phase == "evaluate" and f"{float(reward):.1f}" == shown
    assert "agents restored from" in (run / "log.txt").read_text()


def test_the_best_agent_is_kept_and_can_be_evaluated(reference: Path, tmp_path: Path) -> None:
    """checkpoints/best.pt is the run after its best evaluation; the run's last line names
    it, and ``-crd .../best.pt`` evaluates it."""
    evaluations = [(int(steps), float(r)) for phase, steps, r in rewards(reference)
                   if phase == "evaluate"]  # fmt: skip
    best_steps, best_reward = max(evaluations, key=lambda e: e[1])
    best = reference / "checkpoints" / "best.pt"
    state = torch.load(best, weights_only=True)
    assert state["evaluations"][-1][0] == best_steps  # the state right after that evaluation
    log = (reference / "log.txt").read_text()
    assert f"best evaluation mean reward {best_reward:.1f} at {best_steps} env steps" in log
    assert f"the best agent in {best}" in log
    result = coach("-p", "CartPole_DQN", "--evaluate", "2", "-crd", str(best),
                   "-ep", str(tmp_path), cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"agents restored from {best}" in (experiment(tmp_path) / "log.txt").read_text()


def test_restored_agent_acts_like_the_trained_one(reference: Path, tmp_path: Path) -> None:
    trained = coach("-p", "CartPole_DQN", "--seed", "9", "--evaluate", "3", "-crd",
                    str(reference), "-ep", str(tmp_path / "a"), cwd=tmp_path)  # fmt: skip
    untrained = coach("-p", "CartPole_DQN", "--seed", "9", "--evaluate", "3",
                      "-ep", str(tmp_path / "b"), cwd=tmp_path)  # fmt: skip
    assert trained.returncode == 0 and untrained.returncode == 0
    assert rewards(experiment(tmp_path / "a")) != rewards(experiment(tmp_path / "b"))


def _copy(run: Path, to: Path) -> Path:
    """A copy of the experiment folder ``run`` at ``to``."""
    for path, content in snapshot(run).items():
        target = to / Path(path).relative_to(run)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return to


def _refused(result: object, *needles: str) -> None:
    assert result.returncode == 2, result.stdout  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_missing_checkpoint_folder_is_refused(tmp_path: Path) -> None:
    result = coach("-p", "CartPole_DQN", "-crd", str(tmp_path / "nowhere"),
                   "-ep", str(tmp_path / "experiments"), cwd=tmp_path)  # fmt: skip
    _refused(result, "no checkpoint folder", "nowhere")
    assert not (tmp_path / "experiments").exists()


@pytest.mark.parametrize("flag", ["-crd", "--resume"])
def test_truncated_checkpoint_is_refused_with_its_path(
    reference: Path, tmp_path: Path, flag: str
) -> None:
    copy = _copy(reference, tmp_path / "run")
    latest = find_checkpoint(copy)
    latest.write_bytes(latest.read_bytes()[: latest.stat().st_size // 2])
    before = snapshot(copy)
    args = ["-p", "CartPole_DQN", "-crd", str(copy)] if flag == "-crd" else ["--resume", str(copy)]
    result = coach(*args, "-ep", str(tmp_path / "experiments"), cwd=tmp_path)
    _refused(result, str(latest), "corrupted")
    assert snapshot(copy) == before and not (tmp_path / "experiments").exists()


def test_resume_on_a_machine_without_the_runs_device_asks_for_one(
    reference: Path, tmp_path: Path
) -> None:
    copy = _copy(reference, tmp_path / "run")
    latest = find_checkpoint(copy)
    torch.save({**torch.load(latest, weights_only=True), "device": "cuda:99"}, latest)
    before = snapshot(copy)
    result = coach("--resume", str(copy), cwd=tmp_path)
    _refused(result, "this run trained on cuda:99, which this machine lacks: give --device")
    assert snapshot(copy) == before


def test_checkpoint_of_another_preset_is_refused(reference: Path, tmp_path: Path) -> None:
    other = tmp_path / "Other.py"
    other.write_text("from coach_presets.CartPole_DQN import graph_manager\n")
    before = snapshot(reference)
    result = coach("-p", str(other), "-crd", str(reference), "-ep", str(tmp_path / "e"),
                   cwd=tmp_path)  # fmt: skip
    _refused(result, "from preset 'CartPole_DQN', not 'Other'")
    assert snapshot(reference) == before and not (tmp_path / "e").exists()


def test_unwritable_experiment_path_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    result = coach("-p", "CartPole_DQN", "-ep", str(blocker / "experiments"), cwd=tmp_path)
    _refused(result, "cannot write to the experiment path", str(blocker))
    assert blocker.read_text() == "not a folder"


def test_yaml_without_a_base_preset_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run.yaml"
    run.write_text("parameters:\n  agent.algorithm.discount: 0.9\n")
    result = coach("-p", str(run), "-ep", str(tmp_path / "e"), cwd=tmp_path)
    _refused(result, str(run), "'preset' key")
    assert not (tmp_path / "e").exists()


def test_dashboard_serves_the_evaluation_curve(reference: Path) -> None:
    url, server = start_dashboard(reference.parent.parent)
    try:
        assert url.startswith("http://127.0.0.1:")
        runs = json.load(urllib.request.urlopen(url + "data/runs", timeout=30))
        run = next(r for r in runs if r.endswith("tensorboard/graph"))
        query = urllib.parse.urlencode({"run": run, "tag": "Evaluation/mean_reward"})
        series = json.load(
            urllib.request.urlopen(f"{url}data/plugin/scalars/scalars?{query}", timeout=30)
        )
    finally:
        server.kill()
        server.wait()
    evaluations = [(s, r) for phase, s, r in rewards(reference) if phase == "evaluate"]
    assert [(str(step), value) for _, step, value in series] == [
        (s, pytest.approx(float(r))) for s, r in evaluations
    ]


def test_videos_dashboard_and_hparams(tmp_path: Path) -> None:
    result = coach("-p", "CartPole_DQN", "-ep", str(tmp_path), "-dg", "-dm", "-d", *SMALL,
                   cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    run = experiment(tmp_path)
    log = (run / "log.txt").read_text()
    url = log.split("TensorBoard on ")[1].split()[0]
    pid = int(log.split("stop it with: kill ")[1].split(")")[0])
    try:
        assert url.startswith("http://127.0.0.1:")
        assert urllib.request.urlopen(url, timeout=30).status == 200  # it outlived the run
        # TensorBoard listens on loopback alone, at the URL printed; so does its data server
        # (a process of its own, on a port of its own).
        sockets = listening({pid} | descendants(pid))
        assert ("127.0.0.1", int(url.rstrip("/").rsplit(":", 1)[1])) in sockets
        assert {host for host, _ in sockets} == {"127.0.0.1"}, sockets
    finally:
        os.kill(pid, signal.SIGKILL)
    # One episode of each of the two evaluations, as files and in TensorBoard.
    videos = sorted(p.name for p in (run / "videos").iterdir())
    assert videos == ["eval_1500.gif", "eval_1500.mp4", "eval_900.gif", "eval_900.mp4"]
    graph = EventAccumulator(str(run / "tensorboard" / "graph"), size_guidance={"images": 0})
    graph.Reload()
    images = graph.Images("Evaluation/episode")
    assert [i.step for i in images] == [900, 1500]
    assert images[0].encoded_image_string.startswith(b"GIF8")
    hparams = graph.PluginTagToContent("hparams")
    assert (
        "_hparams_/experiment" in hparams
        and b"CartPole_DQN" in hparams["_hparams_/session_start_info"]
    )


def test_render_opens_the_environment_window(tmp_path: Path) -> None:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    result = subprocess.run(
        [*COMMAND, "-p", "CartPole_DQN", "-ep", str(tmp_path), "-r", "--evaluate", "1"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    params = (experiment(tmp_path) / "params.yaml").read_text()
    assert "environment.render_mode: human" in params
