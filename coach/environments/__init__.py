"""The environment interfaces (single- and multi-agent), the gymnasium and PettingZoo
adapters, Atari and the level sets."""

from coach.environments.atari import AtariEnvironmentParameters
from coach.environments.doom import DoomEnvironmentParameters
from coach.environments.environment import Environment
from coach.environments.gym_environment import GymEnvironment
from coach.environments.levels import LEVEL_SETS, levels, resolve_level
from coach.environments.multi_agent import MultiAgentEnvironment, MultiAgentResponse
from coach.environments.parameters import GymEnvironmentParameters
from coach.environments.pettingzoo_environment import PettingZooEnvironmentParameters

__all__ = [
    "LEVEL_SETS",
    "AtariEnvironmentParameters",
    "DoomEnvironmentParameters",
    "Environment",
    "GymEnvironment",
    "GymEnvironmentParameters",
    "MultiAgentEnvironment",
    "MultiAgentResponse",
    "PettingZooEnvironmentParameters",
    "levels",
    "resolve_level",
]
