"""Agents: the shared base and one algorithm per module."""

from coach.agents.agent import Agent, AgentParameters, AlgorithmParameters
from coach.agents.dqn import DQNAgent, DQNAgentParameters, DQNAlgorithmParameters

__all__ = [
    "Agent",
    "AgentParameters",
    "AlgorithmParameters",
    "DQNAgent",
    "DQNAgentParameters",
    "DQNAlgorithmParameters",
]
