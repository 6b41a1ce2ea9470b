"""ViZDoom (coach/environments/doom.py and the doom level set): the scenarios resolve by
name, the screen and the game variables arrive as ``observation`` and ``measurements``, the
action repeats for ``frame_skip`` tics, seeds repeat episodes, and Doom_Basic_DQN runs
2,000 steps through the Atari-style filters and the frame store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coach.core.step_units import EnvironmentSteps
from coach.environments import DoomEnvironmentParameters, levels, resolve_level
from coach.environments.doom import MEASUREMENTS
from coach.environments.levels import DOOM_SCENARIOS
from coach.errors import CoachError
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset


def test_every_scenario_of_the_level_set_resolves() -> None:
    doom = levels("doom")
    assert set(doom) == set(DOOM_SCENARIOS)
    assert resolve_level("doom", "health_gathering") == "VizdoomHealthGathering-v1"
    assert resolve_level("doom", "Defend-The-Center") == "VizdoomDefendCenter-v1"
    assert resolve_level("doom", "VizdoomTakeCover-v1") == "VizdoomTakeCover-v1"
    with pytest.raises(CoachError, match="did you mean health_gathering"):
        resolve_level("doom", "health_gatherin")


def test_the_screen_and_the_game_variables_arrive_as_observation_and_measurements() -> None:
    environment = DoomEnvironmentParameters(level="health_gathering").build()
    try:
        assert set(environment.observation_space.spaces) == {"observation", MEASUREMENTS}
        first = environment.reset(seed=0)
        screen, health = first.observation["observation"], first.observation[MEASUREMENTS]
        assert screen.shape == (1, 240, 320, 3) and screen.dtype == np.uint8
        assert health.shape == (1, 1) and 0.0 < health[0, 0] <= 100.0  # the player's health
        for _ in range(40):  # the acid floor takes health away
            response = environment.step(np.array([0]))
        assert response.next_observation[MEASUREMENTS][0, 0] < health[0, 0]
    finally:
        environment.close()


@pytest.mark.parametrize("frame_skip", [1, 4])
def test_an_action_repeats_for_frame_skip_tics(frame_skip: int) -> None:
    # Health gathering rewards every tic survived with 1.
    environment = DoomEnvironmentParameters(level="health_gathering", frame_skip=frame_skip)
    built = environment.build()
    try:
        built.reset(seed=0)
        assert float(built.step(np.array([2])).reward[0]) == frame_skip
    finally:
        built.close()


def test_the_same_seed_gives_the_same_episode() -> None:
    screens = []
    for _ in range(2):
        environment = DoomEnvironmentParameters(level="basic").build()
        try:
            environment.reset(seed=3)
            for action in (1, 2, 0, 3, 1):
                response = environment.step(np.array([action]))
            screens.append(response.next_observation["observation"].copy())
        finally:
            environment.close()
    np.testing.assert_array_equal(screens[0], screens[1])


def test_lvl_picks_a_scenario() -> None:
    parameters = DoomEnvironmentParameters()
    parameters.select_level("take_cover")
    assert parameters.level == "VizdoomTakeCover-v1"


def test_doom_basic_dqn_runs_2000_steps(tmp_path: Path) -> None:
    preset = load_preset("Doom_Basic_DQN")
    roots = preset.graph_manager.parameters()
    set_parameter(roots, "schedule.heatup_steps", "EnvironmentSteps(1000)")
    # A gradient step every 20 env steps: 50 of them show the convolutions learn.
    set_parameter(roots, "agent.algorithm.num_consecutive_playing_steps", "EnvironmentSteps(20)")
    graph = preset.graph_manager.create_graph(
        RunContext(seed=0, experiment_dir=tmp_path, quiet=True)
    )
    try:
        graph.heatup(EnvironmentSteps(1000))
        graph.train_and_act(EnvironmentSteps(1000))
        agent = graph.top_level.agent
        assert graph.env_steps >= 2000 and agent.training_steps >= 50
        assert agent.state["observation"].shape == (1, 4, 84, 84)  # luminance, 4 stacked
    finally:
        graph.close()
