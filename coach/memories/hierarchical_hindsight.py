"""Hindsight replay for a level that sets subgoals: HAC's three kinds of transitions.

Levy, Konidaris, Platt and Saenko, "Learning Multi-Level Hierarchies with Hindsight", ICLR
2019 (arXiv:1712.00948). A level above the bottom of a hierarchy acts by proposing subgoals
to the level below, which is still learning and often misses them. Its memory therefore
stores each step as if the level below were optimal (a hindsight action transition: the
action is the subgoal actually reached), relabels the level's own goal in hindsight over its
episodes as `EpisodicHindsightExperienceReplay` does (hindsight goal transitions), and takes
the penalty transitions of missed subgoal tests as they are (`store_subgoal_penalty`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.core.types import Transition
from coach.errors import CoachError
from coach.memories.experience_replay import ExperienceReplay
from coach.memories.hindsight import (
    EpisodicHindsightExperienceReplay,
    EpisodicHindsightExperienceReplayParameters,
)


@dataclass(slots=True, kw_only=True)
class HierarchicalHindsightExperienceReplayParameters(EpisodicHindsightExperienceReplayParameters):
    """Hindsight replay for a HAC level that sets subgoals (every level but the bottom)."""

    def memory_class(self) -> type[HierarchicalHindsightExperienceReplay]:
        return HierarchicalHindsightExperienceReplay


class HierarchicalHindsightExperienceReplay(EpisodicHindsightExperienceReplay):
    """`EpisodicHindsightExperienceReplay` whose actions are subgoals, replaced in hindsight.

    The subgoal a level proposed is replaced, in every step it stores, by the goal its next
    state achieved: the level below is taken to have reached what it was asked (a hindsight
    action transition). The step and its ``k`` relabeled copies (hindsight goal transitions)
    are then stored at the episode's end as `EpisodicHindsightExperienceReplay` stores them,
    the copies with the replaced action too. `store_subgoal_penalty` stores the proposed
    subgoals of missed subgoal tests at once, as they are.

    The action space is the achieved goal's: a ``Box`` of the achieved goal's shape.
    The arguments are those of `EpisodicHindsightExperienceReplay`.
    """

    def __init__(
        self,
        capacity: int,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
        **hindsight: object,
    ) -> None:
        super().__init__(
            capacity,
            observation_space,
            action_space,
            rng,
            extra_spaces,
            **hindsight,  # type: ignore[arg-type]
        )
        achieved = observation_space[self.achieved_goal_key]
        if not isinstance(action_space, spaces.Box) or action_space.shape != achieved.shape:
            raise CoachError(
                f"hierarchical hindsight replay stores the achieved goal "
                f"{self.achieved_goal_key!r} {achieved} as the action, so the action space must "
                f"be a Box of its shape, got {action_space}: only levels that set subgoals use "
                f"it (the bottom level takes EpisodicHindsightExperienceReplayParameters)"
            )

    def store(self, transition: Transition, stream: int = 0) -> None:
        """Add one step of every env with its action replaced by the subgoal reached."""
        if not self._restoring:  # saved rows hold the replaced actions already
            reached = transition.next_state[self.achieved_goal_key]
            transition = dataclasses.replace(
                transition, action=np.asarray(reached, dtype=self.actions.dtype)
            )
        super().store(transition, stream)

    def store_subgoal_penalty(
        self,
        state: dict[str, np.ndarray],
        subgoal: np.ndarray,
        penalty: float,
        next_state: dict[str, np.ndarray],
    ) -> None:
        """Store missed subgoal tests at once: the proposed ``subgoal``, rewarded ``penalty``
        and terminated (nothing to bootstrap from), with no relabeled copies."""
        rows = len(subgoal)
        ExperienceReplay.store(
            self,
            Transition(
                state=state,
                action=np.asarray(subgoal, dtype=self.actions.dtype),
                reward=np.full(rows, penalty, dtype=np.float32),
                next_state=next_state,
                terminated=np.ones(rows, dtype=bool),
                truncated=np.zeros(rows, dtype=bool),
            ),
        )
