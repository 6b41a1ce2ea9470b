"""gymnasium-robotics' Fetch tasks (the fetch level set): the tasks resolve by name, their
goal-based observations arrive as Coach's dict, the success flag reaches the episode log,
and Fetch_DDPG_HER runs 2,000 steps on reach and on push."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coach.core.step_units import EnvironmentSteps
from coach.environments.levels import levels, resolve_level
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset

pytest.importorskip("gymnasium_robotics")


def test_the_tasks_resolve_by_name() -> None:
    assert set(levels("fetch")) == {
        "reach",
        "push",
        "slide",
        "pick_and_place",
        "reach_dense",
        "push_dense",
        "slide_dense",
        "pick_and_place_dense",
    }
    assert resolve_level("fetch", "PickAndPlace") == "FetchPickAndPlace-v4"
    assert resolve_level("fetch", "FetchPush-v4") == "FetchPush-v4"


def test_goal_based_observations_and_50_step_episodes() -> None:
    environment = GymEnvironmentParameters(level="push", level_set="fetch").build()
    try:
        first = environment.reset(seed=0)
        keys = {"observation", "achieved_goal", "desired_goal"}
        assert set(first.observation) == keys
        assert first.observation["observation"].shape == (1, 25)
        assert first.observation["desired_goal"].shape == (1, 3)
        ends = []
        for _ in range(50):
            response = environment.step(np.zeros((1, 4), np.float32))
            ends.append(bool(response.truncated[0]))
            assert "is_success" in response.infos[0]
        assert ends == [False] * 49 + [True]
    finally:
        environment.close()


@pytest.mark.parametrize("level", ["reach", "push"])
def test_fetch_ddpg_her_runs_2000_steps(level: str, tmp_path: Path) -> None:
    preset = load_preset("Fetch_DDPG_HER")
    roots = preset.graph_manager.parameters()
    set_parameter(roots, "environment.level", level)
    # A round of 10 gradient steps an episode (the preset: 40), 200 in all.
    set_parameter(roots, "agent.algorithm.num_consecutive_training_steps", "10")
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    try:
        graph.heatup(EnvironmentSteps(1000))
        graph.train_and_act(EnvironmentSteps(1000))
        agent = graph.top_level.agent
        assert graph.env_steps >= 2000 and agent.training_steps >= 200
        assert len(agent.memory) > 2000  # relabeled copies too
    finally:
        graph.close()
