"""What a multi-agent level keeps of the actions its agents' slots took, until their outcomes
come.

A slot (an agent id in one environment copy) decides only when its id does, and the outcome
of its action may come several steps later, after other slots of the same agent acted. The
level keeps each slot's last action record (`ActionRecords`) and hands it back with the
outcome (`Agent.observe` with ``rows`` and ``info``), so that the step the agent stores is
the one the slot took.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coach.core.types import ActionInfo


class ActionRecords:
    """The last action record of each slot: its action and the columns stored with it.

    Args:
        num_slots: How many slots (the agent's copies).
    """

    def __init__(self, num_slots: int) -> None:
        self.num_slots = num_slots
        self.action: np.ndarray | None = None
        self.memory_extras: dict[str, np.ndarray] = {}

    def put(self, rows: np.ndarray | slice, info: ActionInfo) -> None:
        """The slots ``rows`` acted: ``info`` holds their records, row for row."""
        if self.action is None:
            self.action = _like(info.action, self.num_slots)
        self.action[rows] = info.action
        for key, value in info.memory_extras.items():
            column = self.memory_extras.get(key)
            if column is None:
                column = self.memory_extras[key] = _like(value, self.num_slots)
            column[rows] = value

    def take(self, rows: np.ndarray) -> ActionInfo:
        """The records of the slots ``rows``, row for row (copies)."""
        assert self.action is not None, "a slot's outcome follows its action"
        return ActionInfo(
            action=self.action[rows],
            memory_extras={key: value[rows] for key, value in self.memory_extras.items()},
        )

    def state_dict(self) -> dict[str, Any]:
        """The records, for checkpoints (a slot's outcome may come after a restore)."""
        return {"action": self.action, "memory_extras": self.memory_extras}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""
        self.action = state["action"]
        self.memory_extras = dict(state["memory_extras"])


def _like(value: np.ndarray, rows: int) -> np.ndarray:
    """A zeroed column of ``rows`` rows shaped and typed like ``value``'s rows."""
    value = np.asarray(value)
    return np.zeros((rows, *value.shape[1:]), dtype=value.dtype)
