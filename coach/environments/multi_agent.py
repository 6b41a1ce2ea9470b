"""The interface of an environment with several agents: what a multi-agent level talks to.

A multi-agent environment is a batch of ``num_envs`` copies, like every environment, whose
steps are taken by several agents, each under an agent id (``agent_0``, ``player_1``). Each
id has its own observation and action space, and its own stream of experience: it acts at its
decision points and learns what its action led to when its next decision point comes (or its
episode ends). In a simultaneous (parallel) environment every id in play decides at every
step; in a turn-based (AEC) one a single id decides per step and copy, and the rewards an id
collects while the others move are summed into its next outcome.

`MultiAgentResponse` carries, per id and batched over the copies, an `EnvResponse` and two
masks that say which of its rows are valid:

- ``acting``: the id decides next in the copy. Its ``observation`` is what it acts on, and
  ``episode_started`` says that this is the id's first decision of a new episode.
- ``outcome``: the step closed the id's previous action in the copy. ``reward`` (summed
  since that action), ``next_observation`` (the final one where its episode ended),
  ``terminated`` and ``truncated`` are valid, and ``episode_return`` / ``episode_length`` are
  the id's episode so far (the finished one's, where it ended).

Where neither mask is set the row's values mean nothing. An id that leaves mid-episode has an
outcome with ``terminated`` (or ``truncated``) set, then no decisions until its copy's episode
ends. When every id of a copy is done the copy resets in the same step (SAME_STEP, as the
gymnasium adapter does): ``copy_done`` is set, and the new episode's first decisions are in
the response. ``actions`` given to `step` are read only where the id was ``acting``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.types import EnvResponse


@dataclass(slots=True)
class MultiAgentResponse:
    """A multi-agent environment's answer to a reset or a step, batched over its copies."""

    responses: dict[str, EnvResponse]
    """Per agent id, its rows over the copies (valid where ``acting`` or ``outcome`` say)."""
    acting: dict[str, np.ndarray]
    """Per agent id, (B,) bool: the id decides next in the copy."""
    outcome: dict[str, np.ndarray]
    """Per agent id, (B,) bool: the step closed the id's previous action in the copy."""
    copy_done: np.ndarray
    """(B,) bool: the copy's episode ended in this step (and the copy was reset)."""
    copy_return: np.ndarray
    """(B,) float: the copy's episode return so far, summed over its ids (the finished
    episode's where ``copy_done``): the team's return."""
    copy_length: np.ndarray
    """(B,) int: the copy's episode length so far, in environment steps."""
    infos: list[dict[str, Any]] = field(default_factory=list)
    """Per copy, its environment's info (may be empty)."""

    @property
    def num_envs(self) -> int:
        return len(self.copy_done)


class MultiAgentEnvironment(ABC):
    """A batch of ``num_envs`` copies of an environment that several agent ids act in.

    Attributes:
        agent_ids: Every id that may act, in a fixed order (PettingZoo's ``possible_agents``).
        observation_spaces: Per id, the space of its observation: always a ``spaces.Dict``
            (a flat observation under ``observation``; an action mask under ``action_mask``).
        action_spaces: Per id, the space of its action.
        num_envs: How many copies step together.
        turn_based: The ids take turns (AEC): at most one decides per copy and step.
        total_steps: Environment steps taken since construction, summed over copies (a
            turn-based game counts each move).
        total_episodes: Episodes finished since construction, summed over copies.
    """

    agent_ids: tuple[str, ...]
    observation_spaces: dict[str, spaces.Dict]
    action_spaces: dict[str, spaces.Space[Any]]
    num_envs: int
    turn_based: bool = False
    total_steps: int = 0
    total_episodes: int = 0

    @abstractmethod
    def reset(self, seed: int | None = None) -> MultiAgentResponse:
        """Start new episodes in every copy; with a seed, copy ``i`` is seeded ``seed + i``."""

    @abstractmethod
    def step(self, actions: dict[str, np.ndarray]) -> MultiAgentResponse:
        """Act: ``actions[id]`` is (B, *action_shape), read where the id was acting."""

    def close(self) -> None:  # noqa: B027 - an optional hook
        """Release what the environment holds."""

    def state_dict(self) -> dict[str, Any] | None:
        """The episodes in flight and the counters, or ``None`` if they cannot be saved."""
        return None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the episodes saved by `state_dict`."""
        raise NotImplementedError(f"{type(self).__name__} cannot restore episodes in flight")
