"""The DeepMind Control Suite (coach/environments/control_suite.py and the control_suite
level set): the tasks resolve by name, the state arrives flattened into one float32 vector,
pixels as frames of the asked size, actions repeat, seeds repeat episodes, and
ControlSuite_DDPG runs 2,000 steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coach.core.step_units import EnvironmentSteps
from coach.environments.control_suite import ControlSuiteEnvironmentParameters
from coach.environments.levels import levels, resolve_level
from coach.errors import CoachError
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset

pytest.importorskip("dm_control")


def test_the_tasks_resolve_by_name() -> None:
    tasks = levels("control_suite")
    assert {"cartpole_swingup", "cheetah_run", "walker_walk", "reacher_easy"} <= set(tasks)
    assert resolve_level("control_suite", "ball_in_cup_catch") == "dm_control/ball_in_cup-catch-v0"
    assert resolve_level("control_suite", "Cheetah-Run") == "dm_control/cheetah-run-v0"
    with pytest.raises(CoachError, match="did you mean walker_walk"):
        resolve_level("control_suite", "walker_wlk")


def test_the_state_is_one_float32_vector_and_episodes_last_1000_steps() -> None:
    environment = ControlSuiteEnvironmentParameters(level="walker_walk").build()
    try:
        first = environment.reset(seed=0)
        state = first.observation["observation"]
        # walker: orientations (14), height (a 0-d array: 1), velocity (9)
        assert state.shape == (1, 24) and state.dtype == np.float32
        rewards, ends = [], []
        for _ in range(1000):
            response = environment.step(np.zeros((1, 6), np.float32))
            rewards.append(float(response.reward[0]))
            ends.append((bool(response.terminated[0]), bool(response.truncated[0])))
        assert ends == [(False, False)] * 999 + [(False, True)]  # truncated at 1,000
        assert min(rewards) >= 0.0 and max(rewards) <= 1.0
    finally:
        environment.close()


def test_pixels_and_action_repeat() -> None:
    params = ControlSuiteEnvironmentParameters(
        level="cartpole_swingup", pixels=True, pixel_size=64, action_repeat=4
    )
    environment = params.build()
    try:
        frame = environment.reset(seed=0).observation["observation"]
        assert frame.shape == (1, 64, 64, 3) and frame.dtype == np.uint8 and frame.std() > 0
        steps = 0
        while True:
            response = environment.step(np.zeros((1, 1), np.float32))
            steps += 1
            if response.truncated[0]:
                break
        assert steps == 250  # 1,000 env steps, 4 a step
    finally:
        environment.close()


def test_the_same_seed_gives_the_same_episode() -> None:
    states = []
    for _ in range(2):
        environment = ControlSuiteEnvironmentParameters(level="cheetah_run").build()
        try:
            environment.reset(seed=7)
            for _ in range(20):
                response = environment.step(np.full((1, 6), 0.5, np.float32))
            states.append(response.next_observation["observation"].copy())
        finally:
            environment.close()
    np.testing.assert_array_equal(states[0], states[1])


def test_control_suite_ddpg_runs_2000_steps_on_a_chosen_task(tmp_path: Path) -> None:
    preset = load_preset("ControlSuite_DDPG")
    roots = preset.graph_manager.parameters()
    set_parameter(roots, "environment.level", "reacher_easy")
    # A gradient step every 5 env steps (the preset: every step), 200 in all.
    set_parameter(roots, "agent.algorithm.num_consecutive_playing_steps", "EnvironmentSteps(5)")
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    try:
        graph.heatup(EnvironmentSteps(1000))
        graph.train_and_act(EnvironmentSteps(1000))
        agent = graph.top_level.agent
        assert graph.env_steps >= 2000 and agent.training_steps >= 200
        assert agent.state["observation"].shape == (1, 6)  # reacher: position, to_target, velocity
    finally:
        graph.close()
