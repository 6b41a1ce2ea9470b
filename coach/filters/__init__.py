"""Filters: how a preset adapts an environment to an agent without writing code."""

from coach.filters.filter import ActionFilter, Filter, ObservationFilter, RewardFilter
from coach.filters.pipeline import InputFilter, OutputFilter

__all__ = [
    "ActionFilter",
    "Filter",
    "InputFilter",
    "ObservationFilter",
    "OutputFilter",
    "RewardFilter",
]
