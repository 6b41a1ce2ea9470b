"""Step units, run phases and the records that flow between the parts of Coach."""

from coach.core.run_phase import RunPhase
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, StepUnit, TrainingSteps
from coach.core.types import ActionInfo, Batch, EnvResponse, Observation, Transition

__all__ = [
    "ActionInfo",
    "Batch",
    "EnvResponse",
    "EnvironmentEpisodes",
    "EnvironmentSteps",
    "Observation",
    "RunPhase",
    "StepUnit",
    "TrainingSteps",
    "Transition",
]
