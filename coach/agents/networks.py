"""An agent's networks, built from its parameters: each with the inputs it reads, and only
of the kinds its algorithm learns (a recurrent middleware only where the algorithm learns
over sequences)."""

from __future__ import annotations

import torch
from gymnasium import spaces

from coach.errors import CoachError
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import NetworkParameters


def inputs_space(
    network: NetworkParameters, observation_space: spaces.Dict, action_space: spaces.Space
) -> spaces.Dict:
    """What a network may read: the observation, and the action if it embeds one (the
    critic of a continuous-action agent, Q(s, a))."""
    if "action" not in network.input_embedders or "action" in observation_space.spaces:
        return observation_space
    return spaces.Dict({**observation_space.spaces, "action": action_space})


def build_networks(
    agent: str,
    recurrent: bool,
    networks: dict[str, NetworkParameters],
    observation_space: spaces.Dict,
    action_space: spaces.Space,
    device: torch.device,
    generator: torch.Generator,
    learns: bool,
) -> dict[str, NetworkWrapper]:
    """The agent's networks by name (`NetworkWrapper`), in the order of ``networks``.

    Args:
        agent: The agent's class name, for errors.
        recurrent: Whether the algorithm learns recurrent networks.
        networks: The networks' parameters by name.
        observation_space: The agent's (filtered) observation space.
        action_space: The agent's action space.
        device: Where the networks live.
        generator: Draws the initial weights, network after network.
        learns: Build the target copies and optimizers too.

    Raises:
        CoachError: where a network has a recurrent middleware and the algorithm learns only
            feed-forward ones.
    """
    with_state = sorted(name for name, p in networks.items() if p.recurrent)
    if with_state and not recurrent:
        raise CoachError(
            f"{agent} learns feed-forward networks only, but its networks {with_state} have a "
            f"recurrent middleware; recurrent networks are for the agents that learn over "
            f"sequences: the on-policy ones (policy gradients, A2C, PPO, Clipped PPO) and R2D2"
        )
    return {
        name: NetworkWrapper(
            p,
            inputs_space(p, observation_space, action_space),
            action_space,
            device,
            generator,
            learns,
        )
        for name, p in networks.items()
    }
