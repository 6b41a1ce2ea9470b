"""What the MuJoCo presets of the off-policy continuous-control agents share (after RL Zoo's
MuJoCo settings). Not a preset itself (its name starts with an underscore).

HalfCheetah-v5 by default, any MuJoCo task by ``-lvl``; 10,000 random steps first, then a
gradient step per env step, evaluated every 5,000 steps over 5 episodes, 1,000,000 env steps
in all. The agent acts in [-1, 1], mapped linearly onto the task's action bounds.
"""

from __future__ import annotations

from coach import (
    EnvironmentEpisodes,
    EnvironmentSteps,
    GymEnvironmentParameters,
    OutputFilter,
    ScheduleParameters,
)
from coach.agents.parameters import AgentParameters
from coach.filters.action import LinearBoxToBoxMap


def schedule() -> ScheduleParameters:
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(10_000),
        improve_steps=EnvironmentSteps(990_000),
        steps_between_evaluation_periods=EnvironmentSteps(5000),
        evaluation_steps=EnvironmentEpisodes(5),
    )


def act_in_unit_box(agent: AgentParameters) -> None:
    agent.output_filter = OutputFilter(action_filters=[LinearBoxToBoxMap(-1.0, 1.0)])


def environment() -> GymEnvironmentParameters:
    return GymEnvironmentParameters(level="HalfCheetah-v5", level_set="mujoco")
