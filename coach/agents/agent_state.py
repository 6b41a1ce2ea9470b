"""What a checkpoint holds of an agent (`agent_state`), and how an agent is restored from it
(`restore_agent`): the networks, optimizers (in the learner), filters, the policy with its
exploration, counters, random generators and the current state; the memory when asked."""

from __future__ import annotations

from typing import Any

from coach.errors import CoachError

COUNTERS = ("env_steps", "training_env_steps", "training_rounds", "training_steps", "episodes")
"""An agent's clocks, as its checkpoints keep them."""


def agent_state(agent: Any, include_memory: bool = False) -> dict[str, Any]:
    """Everything of ``agent`` (a `coach.agents.agent.Agent`) a run needs to carry on; the
    memory's contents only with ``include_memory``."""
    return {
        "memory": agent.memory.state_dict() if include_memory and agent.memory else None,
        "rng": agent.rng.bit_generator.state,
        "torch_rng": agent.torch_generator.get_state(),
        "current_state": agent.state,
        "networks": {name: net.state_dict() for name, net in agent.networks.items()},
        "input_filter": agent.input_filter.state_dict(),
        "output_filter": agent.output_filter.state_dict(),
        "policy": agent.policy.state_dict(),
        "learner": agent.learner.state_dict() if agent.learner is not None else {},
        "counters": {name: getattr(agent, name) for name in COUNTERS},
    }


def restore_agent(agent: Any, state: dict[str, Any], episodes_in_flight: bool = True) -> None:
    """Restore what `agent_state` returned into ``agent``; the current state only with
    ``episodes_in_flight`` (when the environment's episodes were restored too).

    Raises:
        CoachError: the checkpoint's networks are not the agent's.
    """
    if set(state["networks"]) != set(agent.networks):
        raise CoachError(
            f"the checkpoint has networks {sorted(state['networks'])}, agent {agent.name!r} "
            f"has {sorted(agent.networks)}"
        )
    if state.get("memory") is not None and agent.memory is not None:
        agent.memory.load_state_dict(state["memory"])
    agent.rng.bit_generator.state = state["rng"]
    agent.torch_generator.set_state(state["torch_rng"])
    if episodes_in_flight:
        agent.state = state["current_state"]
    for name, net in agent.networks.items():
        net.load_state_dict(state["networks"][name])
    agent.input_filter.load_state_dict(state["input_filter"])
    agent.output_filter.load_state_dict(state["output_filter"])
    agent.policy.load_state_dict(state["policy"])
    if agent.learner is not None:
        agent.learner.load_state_dict(state["learner"])
    for name, value in state["counters"].items():
        setattr(agent, name, int(value))
