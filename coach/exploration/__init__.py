"""Exploration policies: how agents pick actions from what their policies computed."""

from coach.exploration.e_greedy import EGreedy, EGreedyParameters
from coach.exploration.exploration_policy import ExplorationPolicy, random_actions

__all__ = ["EGreedy", "EGreedyParameters", "ExplorationPolicy", "random_actions"]
