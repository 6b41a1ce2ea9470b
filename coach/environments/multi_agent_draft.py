"""A `MultiAgentResponse` as an adapter's call fills it in, row by row.

An adapter steps its copies one after another; for each it learns, id by id, who decides next
(`AgentDraft.act`), whose action the step closed (`AgentDraft.close`) and whether the copy's
episode is over (`ResponseDraft.end_copy`). The drafts gather that in plain lists, which cost
a few tens of nanoseconds a row, and make the arrays once, at the end of the call.

Observation arrays are new for every response that writes them and never written after it
(an id with no row written in a call hands on its last response's arrays): an agent may keep
them without a copy. Rows that no mask makes valid keep their last values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from coach.core.types import EnvResponse, Observation
from coach.environments.multi_agent import MultiAgentResponse

ObservationWriter = Callable[[Observation, int, Any, Any], None]
"""Writes one id's observation (and info, for a mask it carries) into row ``i`` of arrays."""


def _flags(constants: tuple[np.ndarray, np.ndarray], values: list[bool] | None) -> np.ndarray:
    """``values`` as an array: the shared one where none or every row is set (``None``: no
    row was set)."""
    if values is None or not any(values):
        return constants[0]
    return constants[1] if all(values) else np.array(values, dtype=bool)


class AgentDraft:
    """One agent id's rows over the copies, as a call learns them.

    Args:
        write: Writes one of the id's observations (with its info) into a row of arrays.
        previous: The id's observation arrays of the last response.
        constants: Shared read-only flag arrays, all False and all True, (B,) each.
    """

    __slots__ = (
        "acting",
        "constants",
        "ended",
        "finals",
        "observation",
        "outcome",
        "previous",
        "reward",
        "started",
        "terminated",
        "truncated",
        "write",
    )

    def __init__(
        self,
        write: ObservationWriter,
        previous: Observation,
        constants: tuple[np.ndarray, np.ndarray],
    ) -> None:
        num_envs = len(constants[0])
        self.write = write
        self.previous = previous
        self.constants = constants
        self.observation: Observation | None = None
        self.acting = [False] * num_envs
        self.outcome = [False] * num_envs
        self.reward = [0.0] * num_envs
        # The rarely set flags get their rows at the first one set (most calls set none).
        self.started: list[bool] | None = None
        self.terminated: list[bool] | None = None
        self.truncated: list[bool] | None = None
        self.finals: list[tuple[int, Any, Any]] = []
        """(copy, observation, info) of outcomes whose next observation is no decision's."""
        self.ended: list[tuple[int, float, int]] = []
        """(copy, return, length) of outcomes whose episode ended with their copy's."""

    def act(self, copy: int, observation: Any, info: Any, started: bool) -> None:
        """The id decides next in ``copy``, on ``observation`` (its first of an episode if
        ``started``)."""
        if self.observation is None:  # new arrays for this response, last values elsewhere
            self.observation = {key: value.copy() for key, value in self.previous.items()}
        self.write(self.observation, copy, observation, info)
        self.acting[copy] = True
        if started:
            if self.started is None:
                self.started = [False] * len(self.acting)
            self.started[copy] = True

    def close(
        self,
        copy: int,
        reward: float,
        terminated: bool,
        truncated: bool,
        final: tuple[Any, Any] | None = None,
    ) -> None:
        """The step closed the id's last action in ``copy``.

        Args:
            copy: The copy.
            reward: The id's rewards since that action.
            terminated: The id's episode reached a terminal state.
            truncated: The id's episode was cut.
            final: ``(observation, info)`` where the next observation is no decision of the
                id (it left, or its copy's episode ended); ``None`` where the id decides next
                on it (`act`). A final observation of ``None`` keeps the last one.
        """
        self.outcome[copy] = True
        self.reward[copy] = reward
        if terminated:
            if self.terminated is None:
                self.terminated = [False] * len(self.acting)
            self.terminated[copy] = True
        if truncated:
            if self.truncated is None:
                self.truncated = [False] * len(self.acting)
            self.truncated[copy] = True
        if final is not None:
            self.finals.append((copy, *final))

    def response(
        self, returns: list[float], lengths: list[int]
    ) -> tuple[EnvResponse, np.ndarray, np.ndarray]:
        """The id's `EnvResponse`, its ``acting`` and its ``outcome`` masks.

        Args:
            returns: The id's episode return so far per copy (after any reset).
            lengths: The id's decisions this episode per copy (after any reset).
        """
        observation = self.previous if self.observation is None else self.observation
        next_observation = observation
        if self.finals:
            next_observation = {key: value.copy() for key, value in observation.items()}
            for copy, final, info in self.finals:
                if final is not None:
                    self.write(next_observation, copy, final, info)
        episode_return = np.array(returns)
        episode_length = np.array(lengths, dtype=np.int64)
        for copy, value, length in self.ended:  # where the copy was reset since
            episode_return[copy] = value
            episode_length[copy] = length
        response = EnvResponse(
            observation,
            np.array(self.reward, dtype=np.float32),
            _flags(self.constants, self.terminated),
            _flags(self.constants, self.truncated),
            next_observation,
            episode_return,
            episode_length,
            [],  # infos: the response's own, per copy and id
            _flags(self.constants, self.started),
        )
        return response, _flags(self.constants, self.acting), _flags(self.constants, self.outcome)


class ResponseDraft:
    """A call's `MultiAgentResponse` over the copies, as the call learns it.

    Args:
        agents: Each id's draft.
        num_envs: How many copies.
    """

    __slots__ = ("agents", "copy_done", "ended", "infos")

    def __init__(self, agents: dict[str, AgentDraft], num_envs: int) -> None:
        self.agents = agents
        self.copy_done = [False] * num_envs
        self.ended: list[tuple[int, float, int]] = []
        """(copy, return, length) of the copies whose episode ended."""
        self.infos: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        """Per copy, the infos of the ids the call heard from, by id."""

    def end_copy(
        self,
        copy: int,
        copy_return: float,
        copy_length: int,
        returns: dict[str, list[float]],
        lengths: dict[str, list[int]],
    ) -> None:
        """The episode of ``copy`` ended: its values and those of the ids it closed are
        kept before the adapter zeroes them for the next episode."""
        self.copy_done[copy] = True
        self.ended.append((copy, copy_return, copy_length))
        for agent_id, draft in self.agents.items():
            if draft.outcome[copy]:
                draft.ended.append((copy, returns[agent_id][copy], lengths[agent_id][copy]))

    def response(
        self,
        returns: dict[str, list[float]],
        lengths: dict[str, list[int]],
        copy_returns: list[float],
        copy_lengths: list[int],
    ) -> MultiAgentResponse:
        """The `MultiAgentResponse`, from each id's draft and the episode values so far."""
        responses, acting, outcome = {}, {}, {}
        for agent_id, draft in self.agents.items():
            responses[agent_id], acting[agent_id], outcome[agent_id] = draft.response(
                returns[agent_id], lengths[agent_id]
            )
        copy_return = np.array(copy_returns)
        copy_length = np.array(copy_lengths, dtype=np.int64)
        for copy, value, length in self.ended:  # the finished episodes', not the new ones'
            copy_return[copy] = value
            copy_length[copy] = length
        return MultiAgentResponse(
            responses,
            acting,
            outcome,
            np.array(self.copy_done, dtype=bool),
            copy_return,
            copy_length,
            self.infos,
        )
