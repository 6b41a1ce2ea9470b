"""Every family acts and learns on the run's device: its networks (online and target), their
buffers, its generator and every tensor it keeps live there.

Parametrized over the devices this machine has: CUDA runs wherever a GPU exists, and is
skipped with the reason elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from coach.agents.agent import Agent
from coach.graph_managers.parameters import RunContext
from coach.parameters import set_parameter
from coach.presets import load_preset
from tests.devices import DEVICES

FAMILIES = {
    "CartPole_DQN": "value (DQN)",
    "CartPole_C51": "value (C51)",
    "CartPole_QR_DQN": "value (QR-DQN)",
    "CartPole_Rainbow": "value (noisy, prioritized, n-step)",
    "CartPole_Bootstrapped_DQN": "value (ensemble)",
    "CartPole_ClippedPPO": "on-policy (discrete)",
    "Pendulum_ClippedPPO": "on-policy (Gaussian)",
    "Pendulum_DDPG": "deterministic actor-critic",
    "Pendulum_TD3": "twin critics, target smoothing",
    "Pendulum_SAC": "squashed Gaussian, learned temperature",
    "Pendulum_HAC": "hierarchy",
}

TINY = {
    "schedule.heatup_steps": "EnvironmentSteps(300)",
    "schedule.improve_steps": "EnvironmentSteps(200)",
    "schedule.steps_between_evaluation_periods": "EnvironmentSteps(200)",
    "schedule.evaluation_steps": "EnvironmentSteps(20)",
}


def _tensors_of(agent: Agent) -> dict[str, torch.Tensor]:
    """Every tensor the agent and its learner keep as an attribute, by name (the networks'
    aside)."""
    owners = {"agent": vars(agent), "learner": vars(agent.learner) if agent.learner else {}}
    return {
        f"{owner}.{name}": value
        for owner, attributes in owners.items()
        for name, value in attributes.items()
        if isinstance(value, torch.Tensor)
    }


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(FAMILIES), ids=lambda n: n)
def test_a_family_acts_and_learns_on_the_runs_device(
    name: str, device: str, tmp_path: Path
) -> None:
    preset = load_preset(name)
    roots = preset.graph_manager.parameters()
    for path, value in TINY.items():
        set_parameter(roots, path, value)
    if name.endswith("ClippedPPO"):  # a block that fills within the tiny budget
        set_parameter(roots, "agent.memory.rollout_length", "16")
        set_parameter(roots, "agent.algorithm.batch_size", "16")
    elif name.startswith("CartPole"):  # a training round within the tiny budget
        set_parameter(
            roots, "agent.algorithm.num_consecutive_playing_steps", "EnvironmentSteps(25)"
        )
    graph = preset.graph_manager.create_graph(RunContext(seed=0, device=device))
    try:
        graph.improve()
    finally:
        graph.close()
    expected = torch.device(device).type
    for level in graph.levels:
        agent = level.agent
        assert agent.training_steps > 0, f"{name} must learn in this test"
        assert agent.torch_generator.device.type == expected
        assert agent.policy.device.type == expected
        assert agent.policy.torch_generator is agent.torch_generator
        for network_name, network in agent.networks.items():
            modules = [network.online] + ([network.target] if network.target else [])
            for module in modules:
                for tensor in [*module.parameters(), *module.buffers()]:
                    assert tensor.device.type == expected, f"{network_name} has a stray tensor"
        for attribute, tensor in _tensors_of(agent).items():
            assert tensor.device.type == expected, f"{name}: {attribute} is on {tensor.device}"
