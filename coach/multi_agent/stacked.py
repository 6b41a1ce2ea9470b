"""A multi-agent response stacked over the agent ids, so that each agent of a level gathers
its slots' rows with one index per field (`Seats`: which id in which copy each slot plays)."""

from __future__ import annotations

import numpy as np

from coach.core.types import EnvResponse, Observation
from coach.environments.multi_agent import MultiAgentResponse
from coach.multi_agent.seats import Seats


class StackedResponse:
    """A `MultiAgentResponse`'s fields stacked over the ids, (n_ids, B) each, so that an
    agent's slots gather theirs with one index per field; the observations stay per id (ids
    may observe different shapes) and are stacked over the ids of one agent at a time."""

    __slots__ = (
        "acting",
        "episode_length",
        "episode_return",
        "next_observation",
        "observation",
        "outcome",
        "reward",
        "started",
        "terminated",
        "truncated",
    )

    def __init__(self, response: MultiAgentResponse, agent_ids: tuple[str, ...]) -> None:
        per_id = [response.responses[i] for i in agent_ids]
        self.observation = [r.observation for r in per_id]
        self.next_observation = [r.next_observation for r in per_id]
        self.reward = np.stack([r.reward for r in per_id])
        self.terminated = np.stack([r.terminated for r in per_id])
        self.truncated = np.stack([r.truncated for r in per_id])
        self.started = np.stack([r.episode_started for r in per_id])
        self.episode_return = np.stack([r.episode_return for r in per_id])
        self.episode_length = np.stack([r.episode_length for r in per_id])
        self.acting = np.stack([response.acting[i] for i in agent_ids])
        self.outcome = np.stack([response.outcome[i] for i in agent_ids])

    def outcomes(self, seats: Seats, rows: np.ndarray | None) -> EnvResponse:
        """The outcomes of the slots ``rows`` of ``seats`` (every slot for ``None``)."""
        ids, copies = (
            (seats.ids, seats.copies) if rows is None else (seats.ids[rows], seats.copies[rows])
        )
        return EnvResponse(
            gather(self.observation, ids, copies),
            self.reward[ids, copies],
            self.terminated[ids, copies],
            self.truncated[ids, copies],
            gather(self.next_observation, ids, copies),
            self.episode_return[ids, copies],
            self.episode_length[ids, copies],
            [],
            self.started[ids, copies] & self.acting[ids, copies],
        )

    def observations(self, seats: Seats, rows: np.ndarray) -> Observation:
        """The observations the slots ``rows`` act on next."""
        return gather(self.observation, seats.ids[rows], seats.copies[rows])


def gather(per_id: list[Observation], ids: np.ndarray, copies: np.ndarray) -> Observation:
    """Row ``j`` is id ``ids[j]``'s observation in copy ``copies[j]`` (the ids observe alike:
    one agent's)."""
    used = np.unique(ids)
    if len(used) == 1:  # an agent of one id: no stacking
        return {key: value[copies] for key, value in per_id[used[0]].items()}
    local = np.searchsorted(used, ids)
    return {key: np.stack([per_id[i][key] for i in used])[local, copies] for key in per_id[used[0]]}
