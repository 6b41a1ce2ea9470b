"""The environment interface, the gymnasium adapter, Atari and the level sets."""

from coach.environments.atari import AtariEnvironmentParameters
from coach.environments.environment import Environment
from coach.environments.gym_environment import GymEnvironment
from coach.environments.levels import LEVEL_SETS, levels, resolve_level
from coach.environments.parameters import GymEnvironmentParameters

__all__ = [
    "LEVEL_SETS",
    "AtariEnvironmentParameters",
    "Environment",
    "GymEnvironment",
    "GymEnvironmentParameters",
    "levels",
    "resolve_level",
]
