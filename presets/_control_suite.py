"""What the Control Suite presets share. Not a preset itself (its name starts with an
underscore).

A task of the ``control_suite`` level set (``-lvl``), its state flattened into one vector;
1,000-step episodes paying up to 1 a step. 10,000 random steps first, then a gradient step
per env step, evaluated every 10,000 steps over 5 episodes. The tasks' actions are in
[-1, 1] already.
"""

from __future__ import annotations

from coach import EnvironmentEpisodes, EnvironmentSteps, ScheduleParameters
from coach.environments.control_suite import ControlSuiteEnvironmentParameters


def schedule(budget: int) -> ScheduleParameters:
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(10_000),
        improve_steps=EnvironmentSteps(budget - 10_000),
        steps_between_evaluation_periods=EnvironmentSteps(10_000),
        evaluation_steps=EnvironmentEpisodes(5),
    )


def environment(level: str) -> ControlSuiteEnvironmentParameters:
    return ControlSuiteEnvironmentParameters(level=level)
