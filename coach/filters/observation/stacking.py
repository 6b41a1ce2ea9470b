"""Stack the last frames of each environment's episode into one observation."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.spaces import StackedFrames
from coach.errors import CoachError
from coach.filters.filter import ObservationFilter


class ObservationStackingFilter(ObservationFilter):
    """The last ``stack_size`` observations of each env, stacked along a new first axis.

    Mnih et al., "Human-level control through deep reinforcement learning", Nature 2015: a
    stack of the last four frames shows motion a single frame cannot. At the start of an
    episode the stack is the first observation repeated (gymnasium's ``"reset"`` padding).
    The history moves on in every phase (it is the episode's, not a learned statistic) and is
    saved in checkpoints, so an episode in flight continues after a restore.

    The output space is a `StackedFrames` Box: a replay memory stores its frames once each,
    not ``stack_size`` times (`coach.memories.frame_store`). Put this filter last on its key,
    so that the space the memory sees is still the stack.

    Args:
        stack_size: How many consecutive observations are stacked.
    """

    per_copy_state = True

    def __init__(self, stack_size: int = 4) -> None:
        if stack_size < 1:
            raise CoachError(f"ObservationStackingFilter needs stack_size >= 1, got {stack_size}")
        self.stack_size = stack_size
        self.history: np.ndarray | None = None
        """Each env's current stack, ``(num_envs, stack_size, *frame)``."""

    def __repr__(self) -> str:
        return f"ObservationStackingFilter({self.stack_size})"

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(input_space, spaces.Box):
            raise CoachError(
                f"ObservationStackingFilter needs a Box observation, got {input_space}"
            )
        return StackedFrames(input_space, self.stack_size)

    def filter(
        self, observation: np.ndarray, update: bool = True, rows: np.ndarray | None = None
    ) -> np.ndarray:
        if rows is not None:  # some copies stepped: theirs move on
            if self.history is None or (len(rows) and rows.max() >= len(self.history)):
                raise CoachError(
                    "ObservationStackingFilter got a step of a copy before the first "
                    "observation of its episode (start_episodes)"
                )
            stacks = np.concatenate([self.history[rows, 1:], observation[:, None]], axis=1)
            self.history = self.history.copy()  # stacks handed out earlier stay as they are
            self.history[rows] = stacks
            return stacks
        if self.history is None or len(self.history) != len(observation):
            raise CoachError(
                "ObservationStackingFilter got a step before the first observations of its "
                "episodes (start_episodes)"
            )
        # A new array every step: stacks handed out earlier are never written again.
        self.history = np.concatenate([self.history[:, 1:], observation[:, None]], axis=1)
        return self.history

    def start_episodes(self, observation: np.ndarray, rows: np.ndarray) -> np.ndarray:
        first = np.repeat(observation[:, None], self.stack_size, axis=1)
        needed = int(rows.max()) + 1 if len(rows) else 0
        if self.history is None or len(self.history) < needed:
            grown = np.zeros((needed, *first.shape[1:]), dtype=first.dtype)
            if self.history is not None:
                grown[: len(self.history)] = self.history
            self.history = grown
        else:
            self.history = self.history.copy()
        self.history[rows] = first
        return first

    def state_dict(self) -> dict[str, Any]:
        return {"history": None if self.history is None else self.history.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        history = state["history"]
        self.history = None if history is None else np.array(history)
