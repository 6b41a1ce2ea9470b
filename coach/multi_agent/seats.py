"""Who plays which agent id: the seats of a multi-agent level.

Each agent of a multi-agent level acts in a number of slots (its copies, in the agent's own
terms), and each slot plays one agent id in one environment copy: its seat. A shared agent has
a slot per id and copy, the ids stacked along its batch (slot ``k * B + c`` plays the agent's
``k``-th id in copy ``c``); an agent per id has one slot per copy. Self-play moves a learner's
seats between episodes (`coach.multi_agent.self_play`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import numpy as np

from coach.errors import CoachError


@dataclass(slots=True)
class Seats:
    """The seats of one agent's slots."""

    ids: np.ndarray
    """(S,) int: the index (in the environment's ``agent_ids``) of the id each slot plays."""
    copies: np.ndarray
    """(S,) int: the environment copy each slot plays in."""

    @classmethod
    def stacked(cls, id_indices: list[int], num_envs: int) -> Seats:
        """Slot ``k * num_envs + c`` plays id ``id_indices[k]`` in copy ``c``."""
        return cls(
            ids=np.repeat(np.asarray(id_indices, dtype=np.int64), num_envs),
            copies=np.tile(np.arange(num_envs, dtype=np.int64), len(id_indices)),
        )

    def __len__(self) -> int:
        return len(self.ids)


def assign_ids(
    agent_ids: tuple[str, ...], agents: list[str], mapping: dict[str, str]
) -> dict[str, list[str]]:
    """Which ids each agent plays, in the environment's order.

    Args:
        agent_ids: The environment's ids.
        agents: The level's agent names.
        mapping: Id patterns (``fnmatch``: ``agent_*``, ``adversary_0``, ``*``) to agent
            names; the first pattern (in the mapping's order) that matches an id decides.

    Raises:
        CoachError: when an id matches no pattern, a pattern names no agent of the level, or
            an agent is left without an id.
    """
    unknown = sorted(set(mapping.values()) - set(agents))
    if unknown:
        raise CoachError(f"the mapping names agents {unknown}; the level's agents are {agents}")
    played: dict[str, list[str]] = {name: [] for name in agents}
    for agent_id in agent_ids:
        for pattern, name in mapping.items():
            if fnmatch.fnmatchcase(agent_id, pattern):
                played[name].append(agent_id)
                break
        else:
            raise CoachError(
                f"agent id {agent_id!r} matches none of the mapping's patterns "
                f'{list(mapping)}; add one ("*" matches every id)'
            )
    idle = [name for name, ids in played.items() if not ids]
    if idle:
        raise CoachError(
            f"agents {idle} play no id of {list(agent_ids)} under the mapping {mapping}"
        )
    return played
