"""Unit tests for coach/graph_managers/hrl.py: a hierarchy of real agents on a goal-based
environment builds, runs, logs each level apart, checkpoints and resumes mid-episode."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from coach.agents.ddpg import DDPGAgentParameters
from coach.checkpoints import find_checkpoint, load_checkpoint
from coach.core.goals import GoalReward
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError, RunInterrupted
from coach.graph_managers.hrl import HierarchyParameters, HRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters
from coach.level_manager import LevelGoals


def _agent(name: str) -> DDPGAgentParameters:
    params = DDPGAgentParameters(name=name)
    for network in params.network_wrappers.values():
        network.middleware.scheme = [16]
        network.input_embedders = {
            key: type(network.input_embedders["observation"])()
            for key in (
                "observation",
                "desired_goal",
                *(("action",) if "action" in network.input_embedders else ()),
            )
        }
    params.algorithm.batch_size = 8
    return params


def _graph(levels: int, horizons: list[int]) -> HRLGraphManager:
    schedule = ScheduleParameters(
        heatup_steps=EnvironmentSteps(60),
        improve_steps=EnvironmentSteps(120),
        steps_between_evaluation_periods=EnvironmentSteps(120),
        evaluation_steps=EnvironmentEpisodes(1),
    )
    environment = GymEnvironmentParameters(
        level="coach/PendulumWithGoals-v0", kwargs={"time_limit": 40}
    )
    hierarchy = HierarchyParameters(
        horizons=horizons,
        goals=LevelGoals(goal_reward=GoalReward(distance="max_abs", threshold=0.1)),
    )
    agents = [_agent(f"agent_{i}") for i in range(levels)]
    return HRLGraphManager(agents, environment, schedule, hierarchy)


@pytest.mark.parametrize(("levels", "horizons"), [(2, [5]), (3, [3, 4])])
def test_a_hierarchy_runs_with_each_level_logged_apart(
    levels: int, horizons: list[int], tmp_path: Path
) -> None:
    graph = _graph(levels, horizons).create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    try:
        graph.improve()
        assert len(graph.levels) == levels
        top, bottom = graph.top_level, graph.levels[0]
        goal_space = graph.environment.observation_space["achieved_goal"]
        assert top.agent.action_space == goal_space
        assert bottom.agent.observation_space["desired_goal"] == goal_space
        assert bottom.agent.action_space == graph.environment.action_space
        assert 180 <= graph.env_steps <= 180 + 2 * int(np.prod(horizons))
        assert all(level.agent.training_steps > 0 for level in graph.levels)
        assert graph.evaluations and graph.evaluations[-1].successes
        # The progress line counts the environment's episodes, not the levels' sub-episodes.
        assert graph.logger is not None
        training_episodes = graph.environment.total_episodes - graph.progress.evaluation_episodes
        assert graph.logger.episodes == training_episodes == 180 // 40
        graph.save_checkpoint()
    finally:
        graph.close()
    runs = {p.name for p in (tmp_path / "tensorboard").iterdir()}
    assert {f"level_{i}.agent_{i}" for i in range(levels)} <= runs
    for i in range(levels):
        events = EventAccumulator(str(tmp_path / "tensorboard" / f"level_{i}.agent_{i}"))
        events.Reload()
        tags = set(events.Tags()["scalars"])
        assert {"Train/episode_reward", "Train/episode_length", "Train/success"} <= tags
        # Each level below the top summarises its evaluation sub-episodes in its own run;
        # the top level's evaluation is the graph's.
        evaluation = {"Evaluation/mean_reward", "Evaluation/success_rate"}
        assert evaluation <= tags if i > 0 else not evaluation & tags
    with open(tmp_path / "progress.csv") as f:
        rows = [row for row in csv.DictReader(f) if row["phase"] == "evaluate"]
    assert {row["agent"] for row in rows} == {"graph"} | {
        f"level_{i}.agent_{i}" for i in range(1, levels)
    }
    assert all(0.0 <= float(row["success_rate"]) <= 1.0 for row in rows)
    top_rows = [r for r in rows if r["agent"] == "graph"]
    level_rows = [r for r in rows if r["agent"] == f"level_{levels - 1}.agent_{levels - 1}"]
    # An evaluation episode of 40 steps holds at least 40 / horizon sub-episodes below.
    assert int(level_rows[0]["episodes"]) >= 40 // horizons[-1] * int(top_rows[0]["episodes"])


def test_the_horizons_must_match_the_levels() -> None:
    with pytest.raises(CoachError, match="3 levels need 2 horizons"):
        _graph(3, [5])
    with pytest.raises(CoachError, match="at least two levels"):
        HRLGraphManager([_agent("a")], GymEnvironmentParameters(level="x"), ScheduleParameters())


def _run(
    levels: int,
    horizons: list[int],
    folder: Path,
    resume: dict | None = None,
    stop_at: int | None = None,
) -> HRLGraphManager:
    """A hierarchy run whole, or stopped as SIGTERM does once ``stop_at`` env steps are done
    (and checkpointed, as `coach` does then)."""
    graph = _graph(levels, horizons).create_graph(
        RunContext(seed=0, experiment_dir=folder, quiet=True, resume=resume, save_memory=True)
    )
    if stop_at is not None:
        step = graph.top_level.step

        def step_then_stop(action: object = None) -> object:
            response = step(action)
            if graph.env_steps >= stop_at:
                graph.stop_requested = 15
            return response

        graph.top_level.step = step_then_stop  # type: ignore[method-assign]
    try:
        graph.improve()
    except RunInterrupted:
        graph.save_checkpoint()
    finally:
        graph.close()
    return graph


def _stopped_mid_episode(levels: int, horizons: list[int], folder: Path) -> dict:
    """The checkpoint of a run stopped in training, in its environment's third episode."""
    _run(levels, horizons, folder, stop_at=100)
    state = load_checkpoint(find_checkpoint(folder))
    assert state["environment"] is not None and state["env_total_steps"] % 40 != 0
    return state


@pytest.mark.parametrize(("levels", "horizons"), [(2, [5]), (3, [3, 4])])
def test_a_hierarchy_stopped_mid_episode_resumes_and_ends_the_same(
    levels: int, horizons: list[int], tmp_path: Path
) -> None:
    uninterrupted = _run(levels, horizons, tmp_path / "whole")
    state = _stopped_mid_episode(levels, horizons, tmp_path / "stopped")
    resumed = _run(levels, horizons, tmp_path / "stopped", resume=state)
    assert resumed.env_steps == uninterrupted.env_steps
    assert resumed.evaluations == uninterrupted.evaluations
    for ours, theirs in zip(resumed.levels, uninterrupted.levels, strict=True):
        networks = ours.agent.state_dict()["networks"]
        torch.testing.assert_close(networks, theirs.agent.state_dict()["networks"], rtol=0, atol=0)


def test_a_checkpoint_without_the_goal_levels_observation_restarts_the_episodes(
    tmp_path: Path,
) -> None:
    state = _stopped_mid_episode(2, [5], tmp_path)
    del state["levels"]  # as checkpoints written before goal levels kept it
    resumed = _run(2, [5], tmp_path, resume=state)
    assert resumed.env_steps >= 180 and resumed.evaluations
    assert "the episodes in flight restart" in (tmp_path / "log.txt").read_text()
