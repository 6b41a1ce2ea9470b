"""A reward model: the expected reward of every discrete action in a state, r(s, .).

Off-policy evaluation (`coach.batch.ope`) needs it for its direct-method and doubly-robust
estimates. It is fitted once on a dataset by regressing the output of each logged action
on its reward (the other outputs get no gradient from that row).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from coach.networks.heads import QHeadParameters
from coach.networks.network_wrapper import NetworkWrapper
from coach.networks.parameters import NetworkParameters

CHUNK = 8192
"""Rows per forward pass when predicting for a whole dataset."""


class RewardModel:
    """An MLP from the state to one reward per action.

    Args:
        params: Its layers and optimizer (its heads are replaced by one output per action).
        observation_space: The agent's (filtered) observation space.
        action_space: A ``spaces.Discrete`` action space.
        generator: Torch generator for the initial weights and the minibatch order.
    """

    def __init__(
        self,
        params: NetworkParameters,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        generator: torch.Generator,
    ) -> None:
        params = dataclasses.replace(
            params, heads=[QHeadParameters(name="reward")], create_target_network=False
        )
        self.generator = generator
        self.network = NetworkWrapper(
            params, observation_space, action_space, torch.device("cpu"), generator
        )

    def fit(
        self,
        states: dict[str, np.ndarray],
        actions: np.ndarray,
        rewards: np.ndarray,
        epochs: int,
        batch_size: int,
    ) -> float:
        """Regress r(s, a) on the logged rewards for ``epochs`` passes; returns the last
        pass's mean squared error."""
        inputs = {k: torch.as_tensor(v) for k, v in states.items()}
        taken = torch.as_tensor(actions, dtype=torch.long)
        targets = torch.as_tensor(rewards, dtype=torch.float32)
        count, loss_sum = len(taken), 0.0
        for _ in range(epochs):
            loss_sum = 0.0
            order = torch.randperm(count, generator=self.generator)
            for start in range(0, count, batch_size):
                rows = order[start : start + batch_size]
                predicted = self.network({k: v[rows] for k, v in inputs.items()})["reward"]
                loss = F.mse_loss(predicted.gather(1, taken[rows, None]).squeeze(1), targets[rows])
                self.network.train_step(loss)
                loss_sum += loss.item() * len(rows)
        return loss_sum / max(count, 1)

    def predict(self, states: dict[str, np.ndarray]) -> np.ndarray:
        """r(s, .) for every state, shape (N, A)."""
        count = len(next(iter(states.values())))
        parts = []
        with torch.no_grad():
            for start in range(0, count, CHUNK):
                chunk = {k: torch.as_tensor(v[start : start + CHUNK]) for k, v in states.items()}
                parts.append(self.network(chunk)["reward"].numpy())
        return np.concatenate(parts).astype(np.float64)
