"""Coach: a preset-driven experiment runner for reinforcement learning.

The names a preset writer needs::

    from coach import (BasicRLGraphManager, DQNAgentParameters, EnvironmentSteps,
                       GymEnvironmentParameters, ScheduleParameters)
"""

from coach.agents import Agent, AgentParameters, AlgorithmParameters, DQNAgent, DQNAgentParameters
from coach.core import (
    ActionInfo,
    Batch,
    EnvironmentEpisodes,
    EnvironmentSteps,
    EnvResponse,
    RunPhase,
    TrainingSteps,
    Transition,
)
from coach.environments import GymEnvironmentParameters
from coach.errors import CoachError
from coach.exploration import EGreedyParameters
from coach.filters import InputFilter, OutputFilter
from coach.graph_managers import BasicRLGraphManager, GraphManager, RunContext, ScheduleParameters
from coach.level_manager import LevelManager
from coach.memories import ExperienceReplayParameters
from coach.networks import (
    InputEmbedderParameters,
    MiddlewareParameters,
    NetworkParameters,
    QHeadParameters,
)
from coach.presets import PresetValidation
from coach.schedules import (
    ConstantSchedule,
    ExponentialSchedule,
    LinearSchedule,
    PieceWiseSchedule,
)

__version__ = "0.1.0"

__all__ = [
    "ActionInfo",
    "Agent",
    "AgentParameters",
    "AlgorithmParameters",
    "BasicRLGraphManager",
    "Batch",
    "CoachError",
    "ConstantSchedule",
    "DQNAgent",
    "DQNAgentParameters",
    "EGreedyParameters",
    "EnvResponse",
    "EnvironmentEpisodes",
    "EnvironmentSteps",
    "ExperienceReplayParameters",
    "ExponentialSchedule",
    "GraphManager",
    "GymEnvironmentParameters",
    "InputEmbedderParameters",
    "InputFilter",
    "LevelManager",
    "LinearSchedule",
    "MiddlewareParameters",
    "NetworkParameters",
    "OutputFilter",
    "PieceWiseSchedule",
    "PresetValidation",
    "QHeadParameters",
    "RunContext",
    "RunPhase",
    "ScheduleParameters",
    "TrainingSteps",
    "Transition",
]
