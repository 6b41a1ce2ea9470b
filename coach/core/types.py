"""The records that flow between environments, agents and memories.

Observations are dictionaries of arrays keyed by name. Everything that crosses the
environment boundary is batched over the environment copies: a single environment is a batch
of one. ``terminated`` and ``truncated`` stay apart everywhere, because a time-limit
truncation still bootstraps from the next state's value and a termination does not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

Observation = dict[str, np.ndarray]
"""A batch of observations: one array per observation key, the leading axis over envs."""


@dataclass(slots=True)
class Transition:
    """One step of one environment, as a user would write it down."""

    state: dict[str, np.ndarray]
    """The observation the action was taken in, keyed by name."""
    action: Any
    """The agent's action."""
    reward: float
    """The reward for the step."""
    next_state: dict[str, np.ndarray]
    """The observation the step led to (the final one when the episode ended)."""
    terminated: bool
    """The episode ended in a terminal state: nothing to bootstrap from."""
    truncated: bool
    """The episode was cut (a time limit): the next state's value still counts."""
    info: dict[str, Any] = field(default_factory=dict)
    """Whatever the environment said about the step."""

    @property
    def done(self) -> bool:
        """Whether the episode ended, either way."""
        return self.terminated or self.truncated


@dataclass(slots=True)
class EnvResponse:
    """An environment's answer to a reset or a step, batched over its copies.

    Where an episode ended, the environment has already reset that copy: ``observation``
    holds the first observation of the new episode (what to act on next), while
    ``next_observation`` holds the last one of the finished episode (what to learn from).
    Where no episode ended the two are the same object.
    """

    observation: Observation
    """What to act on next, per env."""
    reward: np.ndarray
    """The reward of the step, shape (B,)."""
    terminated: np.ndarray
    """Episode reached a terminal state, shape (B,), bool."""
    truncated: np.ndarray
    """Episode was cut short (time limit), shape (B,), bool."""
    next_observation: Observation
    """The successor of the step's state: the final observation where an episode ended."""
    episode_return: np.ndarray
    """Undiscounted return of each env's episode up to and including this step."""
    episode_length: np.ndarray
    """Length of each env's episode up to and including this step."""
    infos: list[dict[str, Any]] = field(default_factory=list)
    """The environment's info dictionary for each env (may be empty)."""

    @classmethod
    def first(
        cls, observation: Observation, num_envs: int, infos: list[dict[str, Any]] | None = None
    ) -> EnvResponse:
        """The response of a reset: new episodes start at ``observation`` in every env."""
        return cls(
            observation=observation,
            reward=np.zeros(num_envs, dtype=np.float32),
            terminated=np.zeros(num_envs, dtype=bool),
            truncated=np.zeros(num_envs, dtype=bool),
            next_observation=observation,
            episode_return=np.zeros(num_envs),
            episode_length=np.zeros(num_envs, dtype=np.int64),
            infos=infos if infos is not None else [],
        )

    @property
    def done(self) -> np.ndarray:
        """Episode ended, either way, shape (B,)."""
        return self.terminated | self.truncated

    @property
    def num_envs(self) -> int:
        return len(self.reward)

    def transitions(self, state: Observation, action: np.ndarray) -> list[Transition]:
        """The step as one `Transition` per env, given the state and action that led to it."""
        return [
            Transition(
                state={k: v[i] for k, v in state.items()},
                action=action[i],
                reward=float(self.reward[i]),
                next_state={k: v[i] for k, v in self.next_observation.items()},
                terminated=bool(self.terminated[i]),
                truncated=bool(self.truncated[i]),
                info=self.infos[i] if self.infos else {},
            )
            for i in range(self.num_envs)
        ]


@dataclass(slots=True)
class ActionInfo:
    """What an agent decided for a batch of observations."""

    action: np.ndarray
    """The action per env, shape (B, *action_shape)."""
    action_values: np.ndarray | None = None
    """Values behind the choice where the agent has them (Q-values, shape (B, A))."""
    log_prob: np.ndarray | None = None
    """Log-probability of the action under the acting policy, where it has one."""
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    """Anything else an algorithm wants to keep with the action."""


@dataclass(slots=True)
class Batch:
    """Stacked transitions, as a memory samples them: named fields, never tuples by position."""

    states: dict[str, Any]
    """Observations per key, shape (N, ...)."""
    actions: Any
    """Actions, shape (N, *action_shape)."""
    rewards: Any
    """Rewards, shape (N,)."""
    next_states: dict[str, Any]
    """Successor observations per key, shape (N, ...)."""
    terminated: Any
    """Terminal flags, shape (N,)."""
    truncated: Any
    """Truncation flags, shape (N,)."""
    indices: Any = None
    """Positions of the rows in the memory (for priority updates), shape (N,)."""
    weights: Any = None
    """Importance weights of the rows, shape (N,), where the memory gives them."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Further named columns (log-probabilities, returns, advantages, ...)."""

    def __len__(self) -> int:
        return len(self.rewards)

    def map(self, fn: Callable[[Any], Any]) -> Batch:
        """A new batch with ``fn`` applied to every array (``None`` fields stay ``None``).

        Agents use it to move a batch to torch: ``batch.map(torch.as_tensor)``.
        """
        values: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, dict):
                values[f.name] = {k: fn(v) for k, v in value.items()}
            elif value is not None:
                values[f.name] = fn(value)
            else:
                values[f.name] = None
        return Batch(**values)
