"""Recording datasets and learning from them with the ``coach`` command, in real
subprocesses: ``--record-dataset`` on a training run and on the evaluation of a checkpoint,
then a batch preset on the recorded data."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from coach.batch.datasets import load_dataset
from tests.integration.coach_cli import COMMAND, SMALL, experiment


def _coach(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MINARI_DATASETS_PATH": str(root / "minari")}
    return subprocess.run(
        [*COMMAND, "-ep", str(root / "experiments"), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_record_then_learn_from_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    run = _coach(
        tmp_path, "-p", "CartPole_DQN", "-e", "source", *SMALL, "--record-dataset", "test/run"
    )
    assert run.returncode == 0, run.stderr
    assert "dataset test/run: " in run.stdout
    dataset = load_dataset("test/run")
    assert 0 < dataset.total_steps <= 1500 and dataset.num_episodes > 5
    assert dataset.episodes[0].behaviour["action_probabilities"].shape[1] == 2
    assert "CartPole_DQN" in str(dataset.metadata.get("description", ""))

    # The name is taken: refused before anything runs or is written.
    again = _coach(
        tmp_path, "-p", "CartPole_DQN", "-e", "again", *SMALL, "--record-dataset", "test/run"
    )
    assert again.returncode == 2 and "already exists" in again.stderr
    assert not (tmp_path / "experiments" / "again").exists()

    # The evaluation of a checkpoint, recorded.
    source = experiment(tmp_path / "experiments", "source")
    evaluation = _coach(tmp_path, "-p", "CartPole_DQN", "-e", "eval", "-crd", str(source),
                        "--evaluate", "3", "--record-dataset", "test/eval")  # fmt: skip
    assert evaluation.returncode == 0, evaluation.stderr
    assert load_dataset("test/eval").num_episodes == 3

    # A batch preset learns from the recorded run.
    batch = _coach(tmp_path, "-p", "CartPole_DDQN_BCQ_BatchRL", "-e", "batch",
                   "-cp", "batch.dataset='test/run'", "-cp", "schedule.improve_steps=Epochs(1)",
                   "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)")  # fmt: skip
    assert batch.returncode == 0, batch.stderr
    assert "epoch   1/1" in batch.stdout and "off-policy evaluation: ips" in batch.stdout

    # Recording goes with this process's environment only.
    workers = _coach(tmp_path, "-p", "CartPole_DQN", "-n", "2", "--record-dataset", "test/w")
    assert workers.returncode == 2 and "does not go with rollout workers" in workers.stderr


def test_a_multi_agent_run_records_a_dataset_per_agent_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    short = [
        "-cp", "schedule.heatup_steps=EnvironmentSteps(300)",
        "-cp", "schedule.improve_steps=EnvironmentSteps(600)",
        "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(600)",
        "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(4)",
    ]  # fmt: skip
    run = _coach(
        tmp_path, "-p", "TicTacToe_SelfPlay_DQN", *short, "--record-dataset", "games/selfplay"
    )
    assert run.returncode == 0, run.stderr
    for player in ("player_1", "player_2"):
        assert f"dataset games/selfplay_{player}: " in run.stdout
        dataset = load_dataset(f"games/selfplay_{player}")
        assert dataset.num_episodes > 5
        for episode in dataset.episodes:
            masks = episode.observations["action_mask"][:-1]  # before each of its moves
            assert masks[np.arange(len(episode.actions)), episode.actions].all()  # legal
            assert episode.terminations[-1] and episode.rewards[-1] in (-1.0, 0.0, 1.0)
            assert (episode.rewards[:-1] == 0).all()
            probabilities = episode.behaviour["action_probabilities"]
            assert (probabilities[masks == 0] == 0).all()


PENDULUM = [
    "-cp", "schedule.heatup_steps=EnvironmentSteps(200)",
    "-cp", "schedule.improve_steps=EnvironmentSteps(200)",
    "-cp", "schedule.steps_between_evaluation_periods=EnvironmentSteps(200)",
    "-cp", "schedule.evaluation_steps=EnvironmentEpisodes(1)",
]  # fmt: skip
"""One Pendulum episode of heatup, one of training."""


@pytest.mark.parametrize(("preset", "behaviour"), [
    ("Pendulum_TD3", []),  # a deterministic actor's noisy actions have no density
    ("Pendulum_SAC", ["action_log_prob"]),  # heatup's uniform one, then SAC's own
])  # fmt: skip
def test_a_continuous_run_records_the_behaviour_every_episode_has(
    preset: str, behaviour: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    run = _coach(tmp_path, "-p", preset, *PENDULUM, "--record-dataset", "test/pendulum")
    assert run.returncode == 0, run.stderr
    assert "dataset test/pendulum: 2 episodes, 400 steps" in run.stdout
    assert ("behaviour action_log_prob not recorded" in run.stdout) == (not behaviour)
    dataset = load_dataset("test/pendulum")
    for episode in dataset.episodes:
        assert sorted(episode.behaviour) == behaviour
    if behaviour:
        heatup, trained = (e.behaviour["action_log_prob"] for e in dataset.episodes)
        # Uniform over the agent's actions, [-1, 1] before its output filter scales them.
        np.testing.assert_allclose(heatup, -np.log(2.0))
        assert np.isfinite(trained).all() and np.ptp(trained) > 0


def test_a_hierarchy_is_refused_for_recording_before_anything_runs(tmp_path: Path) -> None:
    run = _coach(tmp_path, "-p", "Pendulum_HAC", "--record-dataset", "test/hac")
    assert run.returncode == 2 and not run.stdout
    (line,) = run.stderr.splitlines()
    assert line.startswith("coach: error: --record-dataset records a graph of one level"), line
    assert not (tmp_path / "experiments").exists() and not (tmp_path / "minari").exists()
