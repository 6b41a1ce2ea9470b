"""Unit tests for coach/environments/levels.py and level selection on the parameters."""

from __future__ import annotations

import pytest

from coach.environments.atari import AtariEnvironmentParameters
from coach.environments.levels import levels, resolve_level
from coach.environments.parameters import GymEnvironmentParameters
from coach.errors import CoachError


@pytest.mark.parametrize(
    ("level_set", "name", "level"),
    [
        ("atari", "breakout", "ALE/Breakout-v5"),
        ("atari", "Space_Invaders", "ALE/SpaceInvaders-v5"),
        ("atari", "MontezumaRevenge", "ALE/MontezumaRevenge-v5"),
        ("atari", "ALE/Pong-v5", "ALE/Pong-v5"),
        ("mujoco", "half_cheetah", "HalfCheetah-v5"),
        ("mujoco", "Walker2d", "Walker2d-v5"),
        ("mujoco", "humanoid", "Humanoid-v5"),
        ("box2d", "bipedal-walker", "BipedalWalker-v3"),
        ("box2d", "LunarLanderContinuous", "LunarLanderContinuous-v3"),
    ],
)
def test_short_names_resolve_to_gymnasium_ids(level_set: str, name: str, level: str) -> None:
    assert resolve_level(level_set, name) == level


def test_the_sets_hold_the_whole_suites() -> None:
    assert len(levels("atari")) > 100
    assert {"hopper", "walker2d", "ant", "humanoid", "halfcheetah"} <= set(levels("mujoco"))
    assert {"lunarlander", "bipedalwalker", "carracing"} <= set(levels("box2d"))


def test_an_unknown_level_names_close_matches_and_every_valid_one() -> None:
    with pytest.raises(CoachError) as error:
        resolve_level("mujoco", "hoper")
    message = str(error.value)
    assert "did you mean hopper" in message
    assert all(name in message for name in levels("mujoco"))


def test_an_unknown_level_set_is_refused() -> None:
    with pytest.raises(
        CoachError, match="level sets: atari, box2d, control_suite, doom, fetch, mujoco"
    ):
        resolve_level("procgen", "coinrun")


def test_select_level_sets_the_id() -> None:
    params = GymEnvironmentParameters(level="HalfCheetah-v5", level_set="mujoco")
    params.select_level("hopper")
    assert params.level == "Hopper-v5"
    atari = AtariEnvironmentParameters()
    atari.select_level("pong")
    assert atari.level == "ALE/Pong-v5"


def test_without_a_level_set_there_is_nothing_to_select() -> None:
    with pytest.raises(CoachError, match="no level set"):
        GymEnvironmentParameters(level="CartPole-v1").select_level("Acrobot-v1")
