"""What a learner and its rollout workers exchange about an agent: the policy a worker acts
with (`policy_state`, `load_policy_state`), and the steps a worker acted, taken into the
learner's agent as if observed there (`ingest`, `ingest_slots`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from coach.agents.agent import Agent
from coach.core.run_phase import RunPhase
from coach.core.types import Transition
from coach.memories.memory import SLOT
from coach.memories.rollout import Rollout


def policy_state(agent: Agent) -> dict[str, Any]:
    """What an acting copy of ``agent`` needs from it: the online weights of every network,
    the filters' running statistics, the exploration clock (training env steps acted so
    far) and the training rounds the weights are the outcome of (their version)."""
    exploration = agent.exploration
    return {
        "networks": {name: net.online.state_dict() for name, net in agent.networks.items()},
        "statistics": [s.state_dict() for s in agent.input_filter.running_statistics()],
        "exploration_steps": exploration.steps if exploration is not None else 0,
        "training_rounds": agent.training_rounds,
    }


def load_policy_state(agent: Agent, state: dict[str, Any]) -> None:
    """``agent`` acts with the weights of `policy_state` (its exploration schedules move on
    from the learner's clock)."""
    for name, net in agent.networks.items():
        net.online.load_state_dict(state["networks"][name])
    statistics = agent.input_filter.running_statistics()
    for stats, saved in zip(statistics, state["statistics"], strict=True):
        stats.load_state_dict(saved)
    if agent.exploration is not None:
        agent.exploration.steps = int(state["exploration_steps"])
    # The weights' version: what a step acted with them can record of its policy.
    agent.training_rounds = int(state["training_rounds"])


def ingest(
    agent: Agent, steps: list[Transition], env_steps: int, phase: RunPhase, source: int = 0
) -> None:
    """Take steps acted elsewhere into ``agent`` as if it had observed them: each is what one
    `Memory.store` call stored in a worker, ``env_steps`` the env steps they took, ``source``
    who took them (`Memory.stream`).

    The agent's training schedule and exploration clock count them as its own.
    """
    if agent.memory is not None:
        memory = agent.memory.stream(source)
        for step in steps:
            memory.store(step)
    agent.env_steps += env_steps
    if phase is RunPhase.TRAIN:
        agent.training_env_steps += env_steps
        if agent.exploration is not None:
            agent.exploration.steps += env_steps


def ingest_slots(
    agent: Agent,
    steps: dict[int, list[Transition]],
    env_steps: int,
    phase: RunPhase,
    workers: int,
) -> None:
    """`ingest` into an on-policy agent on a multi-agent level: ``steps`` by worker rank,
    where some stored only some of their slots (their rows name them, `SLOT`). Worker
    ``r``'s slots are the block's slots ``(r - 1) * agent.num_envs`` onwards, so that every
    worker copy's steps go on in one column of the learner's block from block to block; the
    block has the slots of all ``workers``."""
    rollout = agent.memory
    assert isinstance(rollout, Rollout)
    width = agent.num_envs
    rollout.reserve(workers * width)
    for rank, calls in steps.items():
        for step in calls:
            slots = step.extras.get(SLOT, np.arange(len(step)))
            placed = {**step.extras, SLOT: (rank - 1) * width + np.asarray(slots)}
            rollout.store(replace(step, extras=placed))
    ingest(agent, [], env_steps, phase)
