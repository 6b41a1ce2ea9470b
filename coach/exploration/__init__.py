"""Exploration policies: how agents pick actions from what their policies computed."""

from coach.exploration.additive_noise import AdditiveNoise, AdditiveNoiseParameters
from coach.exploration.e_greedy import EGreedy, EGreedyParameters
from coach.exploration.exploration_policy import ExplorationPolicy, random_actions
from coach.exploration.ou_process import OUProcess, OUProcessParameters
from coach.exploration.parameter_noise import ParameterNoise, ParameterNoiseParameters
from coach.exploration.truncated_normal import TruncatedNormal, TruncatedNormalParameters

__all__ = [
    "AdditiveNoise",
    "AdditiveNoiseParameters",
    "EGreedy",
    "EGreedyParameters",
    "ExplorationPolicy",
    "OUProcess",
    "OUProcessParameters",
    "ParameterNoise",
    "ParameterNoiseParameters",
    "TruncatedNormal",
    "TruncatedNormalParameters",
    "random_actions",
]
