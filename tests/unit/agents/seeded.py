"""Short seeded runs for the agents' determinism tests: a preset-like graph trained in
process, and what a test reads from its agent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import torch

from coach.agents.agent import Agent
from coach.agents.parameters import AgentParameters
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps
from coach.environments.parameters import GymEnvironmentParameters
from coach.graph_managers.basic_rl import BasicRLGraphManager
from coach.graph_managers.parameters import RunContext, ScheduleParameters

T = TypeVar("T")


def short_schedule(improve: int = 300) -> ScheduleParameters:
    """100 steps of heatup, ``improve`` of training, one evaluation episode at the end."""
    return ScheduleParameters(
        heatup_steps=EnvironmentSteps(100),
        improve_steps=EnvironmentSteps(improve),
        steps_between_evaluation_periods=EnvironmentSteps(improve),
        evaluation_steps=EnvironmentEpisodes(1),
    )


def after_run(
    params: AgentParameters,
    environment: GymEnvironmentParameters,
    schedule: ScheduleParameters,
    seed: int,
    directory: Path,
    read: Callable[[Agent], T],
) -> T:
    """What ``read`` gives of the agent after a whole run of ``params`` on ``seed``."""
    run = BasicRLGraphManager(params, environment, schedule).create_graph(
        RunContext(seed=seed, experiment_dir=directory, quiet=True)
    )
    try:
        run.improve()
        return read(run.top_level.agent)
    finally:
        run.close()


def main_weights(agent: Agent) -> tuple[int, torch.Tensor]:
    """The gradient steps taken and the ``main`` network's online weights, flat."""
    online = agent.networks["main"].online
    return agent.training_steps, torch.cat([p.detach().flatten() for p in online.parameters()])
