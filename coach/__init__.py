"""Coach: a preset-driven experiment runner for reinforcement learning.

The names a preset writer needs::

    from coach import (BasicRLGraphManager, DQNAgentParameters, EnvironmentSteps,
                       GymEnvironmentParameters, ScheduleParameters)
"""

import gc as _gc

# Importing torch and the framework makes a few hundred thousand objects that live as long as
# the process. The collector, run over and over while they are made, frees none of them and
# costs about a second of every start (each `coach` command, rollout worker and test
# process): it waits until the imports are done, and what exists then is frozen (never
# examined again; freed as usual when its last reference goes, not if it ends in a cycle).
_collecting = _gc.isenabled()
_gc.disable()
try:
    from coach.agents import (
        ACERAgentParameters,
        ActorCriticAgentParameters,
        Agent,
        AgentParameters,
        AlgorithmParameters,
        BootstrappedDQNAgentParameters,
        CategoricalDQNAgentParameters,
        ClippedPPOAgentParameters,
        DDPGAgentParameters,
        DDQNAgentParameters,
        DFPAgentParameters,
        DQNAgent,
        DQNAgentParameters,
        DQNLearner,
        MMCAgentParameters,
        NAFAgentParameters,
        NECAgentParameters,
        NStepQAgentParameters,
        PALAgentParameters,
        PolicyGradientsAgentParameters,
        PPOAgentParameters,
        QRDQNAgentParameters,
        R2D2AgentParameters,
        RainbowAgentParameters,
        RolloutNStepQAgentParameters,
        SACAgentParameters,
        TD3AgentParameters,
    )
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
    from coach.environments.pettingzoo_environment import PettingZooEnvironmentParameters
    from coach.errors import CoachError
    from coach.exploration import EGreedyParameters
    from coach.exploration.boltzmann import BoltzmannParameters
    from coach.exploration.ensemble import BootstrappedParameters, UCBParameters
    from coach.exploration.parameter_noise import ParameterNoiseParameters
    from coach.filters import InputFilter, OutputFilter
    from coach.graph_managers import (
        BasicRLGraphManager,
        GraphManager,
        RunContext,
        ScheduleParameters,
    )
    from coach.level_manager import LevelManager
    from coach.memories import (
        ExperienceReplayParameters,
        PrioritizedExperienceReplayParameters,
        SequenceReplayParameters,
    )
    from coach.multi_agent import MultiAgentGraphManager, SelfPlayParameters
    from coach.networks import (
        BootstrappedQHeadParameters,
        CategoricalQHeadParameters,
        InputEmbedderParameters,
        MiddlewareParameters,
        NetworkParameters,
        QHeadParameters,
        QuantileQHeadParameters,
        RecurrentParameters,
    )
    from coach.presets import PresetValidation
    from coach.schedules import (
        ConstantSchedule,
        ExponentialSchedule,
        LinearSchedule,
        PieceWiseSchedule,
    )
    from coach.trained_agent import TrainedAgent, load_agent
finally:
    _gc.freeze()
    if _collecting:
        _gc.enable()
    del _collecting

__version__ = "0.1.0"

__all__ = [
    "ACERAgentParameters",
    "ActionInfo",
    "ActorCriticAgentParameters",
    "Agent",
    "AgentParameters",
    "AlgorithmParameters",
    "BasicRLGraphManager",
    "Batch",
    "BoltzmannParameters",
    "BootstrappedDQNAgentParameters",
    "BootstrappedParameters",
    "BootstrappedQHeadParameters",
    "CategoricalDQNAgentParameters",
    "CategoricalQHeadParameters",
    "ClippedPPOAgentParameters",
    "CoachError",
    "ConstantSchedule",
    "DDPGAgentParameters",
    "DDQNAgentParameters",
    "DFPAgentParameters",
    "DQNAgent",
    "DQNAgentParameters",
    "DQNLearner",
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
    "MMCAgentParameters",
    "MiddlewareParameters",
    "MultiAgentGraphManager",
    "NAFAgentParameters",
    "NECAgentParameters",
    "NStepQAgentParameters",
    "NetworkParameters",
    "OutputFilter",
    "PALAgentParameters",
    "PPOAgentParameters",
    "ParameterNoiseParameters",
    "PettingZooEnvironmentParameters",
    "PieceWiseSchedule",
    "PolicyGradientsAgentParameters",
    "PresetValidation",
    "PrioritizedExperienceReplayParameters",
    "QHeadParameters",
    "QRDQNAgentParameters",
    "QuantileQHeadParameters",
    "R2D2AgentParameters",
    "RainbowAgentParameters",
    "RecurrentParameters",
    "RolloutNStepQAgentParameters",
    "RunContext",
    "RunPhase",
    "SACAgentParameters",
    "ScheduleParameters",
    "SelfPlayParameters",
    "SequenceReplayParameters",
    "TD3AgentParameters",
    "TrainedAgent",
    "TrainingSteps",
    "Transition",
    "UCBParameters",
    "load_agent",
]
