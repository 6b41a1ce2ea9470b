"""Off-policy evaluation of an agent on the dataset it learns from, after every epoch.

What every epoch's estimates share is prepared once (`prepare_off_policy`): the dataset's
states through the agent's input filter, its actions, its rewards as the agent learns them
(after its reward filters, as its Q-values are), the behaviour's logged probability of each
action, and a reward model fitted on the data (`coach.networks.reward_model`). Each epoch
then asks the agent's policy for Q(s, .) and its probabilities and runs the estimators of
`coach.batch.ope` (`estimate_off_policy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from coach.agents.agent import Agent
from coach.batch.ope import OPEEpisode, estimate
from coach.core.spaces import first_action
from coach.networks.parameters import NetworkParameters
from coach.networks.reward_model import RewardModel


@runtime_checkable
class EvaluatesOffPolicy(Protocol):
    """An agent whose policy off-policy evaluation can score: Q-values and the probability
    of every action, for a whole dataset's states."""

    def evaluation_policy(self, states: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Q(s, .) and the evaluated policy's probabilities of every action, (N, A) each."""
        ...


@dataclass(slots=True)
class OffPolicyData:
    """A dataset as the estimators read it, (N, ...) per field, episodes one after another."""

    states: dict[str, np.ndarray]
    """The states through the agent's input filter."""
    actions: np.ndarray
    """The actions taken, as indices from 0."""
    rewards: np.ndarray
    """The rewards the agent learns from (through its reward filters)."""
    behaviour: np.ndarray
    """The behaviour's probability of each action taken (at least 1e-12)."""
    reward_model: np.ndarray
    """The fitted reward model's r(s, .), (N, A)."""
    bounds: list[tuple[int, int]]
    """Each episode's rows, [start, end)."""


def prepare_off_policy(
    agent: Agent, columns: dict[str, Any], reward_model: NetworkParameters, epochs: int
) -> OffPolicyData | str:
    """What every epoch's estimates share, from a dataset's transition ``columns``
    (`coach.batch.datasets.transitions`); or why the estimates cannot be made."""
    if "action_probabilities" not in columns["extras"]:
        return "the dataset did not log its action probabilities"
    if not isinstance(agent, EvaluatesOffPolicy):
        return f"{type(agent).__name__} gives no action probabilities"
    states = agent.input_filter.filter_observation(columns["state"], False)
    actions = np.asarray(columns["action"], dtype=np.int64) - first_action(agent.action_space)
    rewards = agent.input_filter.filter_reward(
        columns["reward"].astype(np.float32), update=False
    ).astype(np.float64)
    logged = np.asarray(columns["extras"]["action_probabilities"], dtype=np.float64)
    behaviour = logged[np.arange(len(actions)), actions]
    model = RewardModel(
        reward_model, agent.observation_space, agent.action_space, agent.torch_generator
    )
    model.fit(
        states,
        actions,
        rewards.astype(np.float32),
        epochs=epochs,
        batch_size=agent.params.algorithm.batch_size,
    )
    starts = np.flatnonzero(columns["episode_starts"])
    return OffPolicyData(
        states=states,
        actions=actions,
        rewards=rewards,
        behaviour=np.clip(behaviour, 1e-12, 1.0),
        reward_model=model.predict(states),
        bounds=list(zip(starts, [*starts[1:], len(actions)], strict=True)),
    )


def estimate_off_policy(agent: Agent, data: OffPolicyData) -> dict[str, float]:
    """IPS, DM, DR, WIS and SDR of the agent's current policy on the prepared dataset."""
    assert isinstance(agent, EvaluatesOffPolicy)
    with torch.no_grad():
        q_values, probabilities = agent.evaluation_policy(data.states)
    episodes = [
        OPEEpisode(
            actions=data.actions[a:b],
            rewards=data.rewards[a:b],
            behaviour_probabilities=data.behaviour[a:b],
            target_probabilities=probabilities[a:b],
            reward_model=data.reward_model[a:b],
            q_values=q_values[a:b],
        )
        for a, b in data.bounds
    ]
    return estimate(episodes, agent.params.algorithm.discount).as_dict()
