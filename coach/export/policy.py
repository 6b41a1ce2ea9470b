"""An agent's acting policy as one torch module: observations in, the environment's actions out.

`ExportedPolicy` is what Coach's greedy evaluation does with a batch of observations, as a
pure function of them:

    observation (float32, one input per key)
      -> the key's dtype in the environment's space
      -> the input filter's observation filters (normalization frozen at its statistics)
      -> the policy's greedy action (`Policy.greedy`: argmax of Q, the most probable action
         or the mean action, squashed and scaled into the bounds)
      -> the output filter's action filters
      -> int64 (an environment of integer actions) or float32 (continuous actions)

Its networks are the agent's online networks themselves, so that tracing it records their
weights; the filters are their torch twins (`coach.export.transforms`).

What is not a function of one observation is refused (a `CoachError`): a recurrent policy,
which carries a hidden state per environment copy, a frame stack or any other filter with
history per copy, a noisy network, which draws new weights before every decision, and a
policy that says why it cannot be (`Policy.not_exportable`: NEC's nearest-neighbour search,
DFP's goal input).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from coach.agents.agent import Agent
from coach.errors import CoachError
from coach.export.transforms import action_transform, observation_transform, torch_dtype


class ExportedPolicy(nn.Module):
    """An agent's greedy policy from the environment's observations to its actions.

    Args:
        agent: The agent, restored from its checkpoint; its networks become this module's.
        observation_space: The environment's observation space (before the input filter).
        action_space: The environment's action space (after the output filter).

    Raises:
        CoachError: the agent's policy is not a function of one observation, or one of its
            filters has no exported form.
    """

    def __init__(
        self, agent: Agent, observation_space: spaces.Dict, action_space: spaces.Space[Any]
    ) -> None:
        super().__init__()
        policy = agent.policy
        if policy.hidden:
            raise CoachError(
                f"{type(agent).__name__} has recurrent networks "
                f"({', '.join(policy.hidden.networks)}): its actions depend on a hidden state "
                f"carried from step to step, so it cannot be exported as a function of one "
                f"observation"
            )
        if policy.not_exportable is not None:
            raise CoachError(f"{type(agent).__name__} cannot be exported: {policy.not_exportable}")
        input_filter = agent.input_filter
        select = input_filter.select_keys
        self.keys = list(select.keys if select is not None else observation_space.spaces)
        """The observation keys the policy reads, in the order of its inputs."""
        self.shapes = {key: tuple(observation_space[key].shape or ()) for key in self.keys}
        """The shape of one observation of each key."""
        self.dtypes = {key: torch_dtype(observation_space[key].dtype) for key in self.keys}
        """The dtype of each key as the environment gives it (the float32 inputs become it)."""
        filters = input_filter.observation_filters
        self.observation_filters = nn.ModuleList(  # by input (a key may hold a '.')
            nn.Sequential(*map(observation_transform, filters.get(key, []))) for key in self.keys
        )
        self.action_filters = nn.Sequential(
            *map(action_transform, agent.output_filter.action_filters)
        )
        # Registered, so that an export records their weights as the module's parameters;
        # frozen, so that the file computes no gradients (the agent only acts from now on).
        self.networks = nn.ModuleDict({name: n.online for name, n in agent.networks.items()})
        self.networks.requires_grad_(False)
        self.greedy: Callable[[dict[str, torch.Tensor]], torch.Tensor] = policy.greedy
        self.integer_actions = action_space.dtype is not None and np.issubdtype(
            action_space.dtype, np.integer
        )
        """The environment's actions are integers (int64 out), else float32 out."""
        with torch.no_grad():  # what cannot run is refused now, not while it is written
            self(*self.example_inputs())

    def example_inputs(self, batch: int = 2) -> tuple[torch.Tensor, ...]:
        """Zero observations, ``batch`` of each key: what tracing runs the module on."""
        return tuple(
            torch.zeros((batch, *self.shapes[key]), dtype=torch.float32) for key in self.keys
        )

    def forward(self, *observations: torch.Tensor) -> torch.Tensor:
        inputs = {}
        for key, observation, through in zip(
            self.keys, observations, self.observation_filters, strict=True
        ):
            inputs[key] = through(observation.to(self.dtypes[key]))  # an empty one: as it is
        action: torch.Tensor = self.action_filters(self.greedy(inputs))
        return action.long() if self.integer_actions else action.float()
