"""The environment interface and the gymnasium adapter."""

from coach.environments.environment import Environment
from coach.environments.gym_environment import (
    GymEnvironment,
    GymEnvironmentParameters,
    make_gym_env,
)

__all__ = ["Environment", "GymEnvironment", "GymEnvironmentParameters", "make_gym_env"]
