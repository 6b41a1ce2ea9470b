"""The run's reporting: event files TensorBoard reads back, progress.csv, log.txt."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from coach.core.run_phase import RunPhase
from coach.logging.event_writer import EventWriter
from coach.logging.experiment_logger import CSV_COLUMNS, AgentLogger, ExperimentLogger


def read(directory: Path) -> EventAccumulator:
    accumulator = EventAccumulator(str(directory))
    accumulator.Reload()
    return accumulator


def test_event_writer_buffers_until_flush(tmp_path: Path) -> None:
    writer = EventWriter(tmp_path / "run")
    writer.scalar("Train/x", 1.5, 10)
    writer.scalar("Train/x", 2.5, 20)
    assert "Train/x" not in read(tmp_path / "run").Tags()["scalars"]
    writer.flush()
    writer.scalar("Loss/y", -1.0, 30)
    writer.close()
    events = read(tmp_path / "run")
    assert [(e.step, e.value) for e in events.Scalars("Train/x")] == [(10, 1.5), (20, 2.5)]
    assert [(e.step, e.value) for e in events.Scalars("Loss/y")] == [(30, -1.0)]


def test_logger_writes_csv_tensorboard_and_log(tmp_path: Path) -> None:
    steps = {"env": 0}
    logger = ExperimentLogger(tmp_path, lambda: steps["env"], lambda: 7, quiet=True)
    agent = AgentLogger(logger, "main_level.agent")
    steps["env"] = 100
    agent.episode(RunPhase.HEATUP, 12.0, 12)
    steps["env"] = 250
    agent.episode(RunPhase.TRAIN, 30.0, 30)
    agent.episode(RunPhase.EVALUATE, 99.0, 99)  # evaluation episodes are summarised instead
    agent.scalar("Loss/q_loss", 0.5)
    logger.evaluation("graph", [10.0, 20.0, 30.0], [10, 20, 30])
    logger.progress(RunPhase.TRAIN, 1234.0)
    logger.close()

    with open(tmp_path / "progress.csv") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == CSV_COLUMNS
        rows = list(reader)
    assert [(r["phase"], r["env_steps"], r["reward"]) for r in rows] == [
        ("heatup", "100", "12.0"),
        ("train", "250", "30.0"),
        ("evaluate", "250", "20.0"),
    ]
    episode = rows[1]  # every column, the evaluation summary's blank
    assert {k: v for k, v in episode.items() if k != "wall_time"} == {
        "phase": "train",
        "agent": "main_level.agent",
        "env_steps": "250",
        "training_steps": "7",
        "episode": "2",
        "reward": "30.0",
        "length": "30",
        **dict.fromkeys(["reward_std", "reward_min", "reward_max", "episodes", "success_rate"], ""),
    }
    assert float(episode["wall_time"]) >= 0.0
    evaluation = rows[-1]
    assert float(evaluation["reward_std"]) == pytest.approx(8.16496, rel=1e-4)
    assert (evaluation["reward_min"], evaluation["reward_max"], evaluation["episodes"]) == (
        "10.0",
        "30.0",
        "3",
    )
    assert evaluation["training_steps"] == "7" and evaluation["success_rate"] == ""

    agent_events = read(tmp_path / "tensorboard" / "main_level.agent")
    rewards = agent_events.Scalars("Train/episode_reward")
    assert [(e.step, e.value) for e in rewards] == [(100, 12.0), (250, 30.0)]
    assert agent_events.Scalars("Loss/q_loss")[0].step == 250
    graph_events = read(tmp_path / "tensorboard" / "graph")
    assert graph_events.Scalars("Evaluation/mean_reward")[0].value == 20.0

    log = (tmp_path / "log.txt").read_text()
    assert "env steps      250" in log and "1,234 steps/s" in log and "eval reward    20.0" in log


def test_goal_based_evaluations_log_their_success_rate(tmp_path: Path) -> None:
    logger = ExperimentLogger(tmp_path, lambda: 500, lambda: 0, quiet=True)
    logger.evaluation("graph", [0.0, -3.0, -20.0, 0.0], [4, 7, 20, 2], [1.0, 1.0, 0.0, 1.0])
    logger.progress(RunPhase.TRAIN, 10.0)
    resumed = ExperimentLogger(tmp_path, lambda: 600, lambda: 0, True, logger.state_dict())
    logger.close()
    resumed.progress(RunPhase.TRAIN, 10.0)
    resumed.close()
    with open(tmp_path / "progress.csv") as f:
        (row,) = list(csv.DictReader(f))
    assert float(row["success_rate"]) == 0.75
    lines = [line for line in (tmp_path / "log.txt").read_text().splitlines() if "train" in line]
    assert len(lines) == 2 and all("eval success 0.75" in line for line in lines)
    events = read(tmp_path / "tensorboard" / "graph").Scalars("Evaluation/success_rate")
    assert [(e.step, e.value) for e in events] == [(500, 0.75)]


def test_sub_episodes_of_a_level_below_are_not_counted_as_episodes(tmp_path: Path) -> None:
    logger = ExperimentLogger(tmp_path, lambda: 40, lambda: 0, quiet=True)
    top = AgentLogger(logger, "level_0.top")
    bottom = AgentLogger(logger, "level_1.bottom", sub_episodes=True)
    for _ in range(4):
        bottom.episode(RunPhase.TRAIN, -10.0, 10, success=0.0)
    top.episode(RunPhase.TRAIN, -4.0, 4, success=1.0)
    for success in (1.0, 1.0, 0.0):  # an evaluation: sub-episodes, summarised by level
        bottom.episode(RunPhase.EVALUATE, -5.0, 5, success=success)
    top.episode(RunPhase.EVALUATE, -3.0, 3, success=1.0)
    logger.evaluation("graph", [-3.0], [3], [1.0])
    logger.progress(RunPhase.TRAIN, 10.0)
    logger.close()

    assert logger.episodes == 1 and logger.last_episode_reward == -4.0
    assert "episodes     1" in (tmp_path / "log.txt").read_text()
    with open(tmp_path / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    evaluations = {r["agent"]: r for r in rows if r["phase"] == "evaluate"}
    assert set(evaluations) == {"graph", "level_1.bottom"}
    level = evaluations["level_1.bottom"]
    assert (level["episodes"], level["reward"]) == ("3", "-5.0")
    assert float(level["success_rate"]) == pytest.approx(2 / 3)
    bottom_events = read(tmp_path / "tensorboard" / "level_1.bottom")
    assert [e.value for e in bottom_events.Scalars("Train/success")] == [0.0] * 4
    assert bottom_events.Scalars("Evaluation/success_rate")[0].value == pytest.approx(2 / 3)
    top_events = read(tmp_path / "tensorboard" / "level_0.top")
    assert "Evaluation/success_rate" not in top_events.Tags()["scalars"]


def test_an_evaluation_without_episodes_is_reported(tmp_path: Path) -> None:
    logger = ExperimentLogger(tmp_path, lambda: 0, lambda: 0, quiet=True)
    logger.evaluation("graph", [], [])
    logger.close()
    assert (
        "evaluation finished no episode; raise evaluation_steps"
        in (tmp_path / "log.txt").read_text()
    )
    assert logger.last_evaluation is None
