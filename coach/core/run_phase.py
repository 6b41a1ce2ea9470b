"""The phases a run goes through."""

from __future__ import annotations

from enum import Enum


class RunPhase(Enum):
    """What the agents are doing: it decides how they act, and whether they store and train."""

    HEATUP = "heatup"
    """Random acting to fill the memories; no training."""
    TRAIN = "train"
    """Exploratory acting, storing and training."""
    EVALUATE = "evaluate"
    """Greedy acting; nothing is stored and nothing trains."""
