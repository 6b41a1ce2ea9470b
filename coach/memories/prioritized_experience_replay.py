"""Prioritized experience replay, proportional variant (Schaul et al., 2016).

The ring buffer of `ExperienceReplay`, with a priority per row kept in two segment trees: a
sum tree to draw rows in proportion to their priority, and a min tree for the largest
importance weight. Storing, sampling and updating priorities are all batched numpy
operations; none of them loops in Python over the rows of a batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.experience_replay import ExperienceReplay
from coach.memories.segment_tree import MinTree, SumTree
from coach.schedules import LinearSchedule, Schedule


def _default_beta_schedule() -> Schedule:
    # The paper's choice for the proportional variant: beta from 0.4 up to 1 (a full
    # correction) by the end of learning, here over 100k sampling calls.
    return LinearSchedule(0.4, 1.0, 100_000)


@dataclass(slots=True, kw_only=True)
class PrioritizedExperienceReplayParameters:
    """A prioritized replay memory (proportional variant)."""

    max_size: int = 1_000_000
    """Capacity in transitions; the oldest are overwritten first."""
    alpha: float = 0.6
    """How much priorities count: 0 samples uniformly, 1 in proportion to ``|TD error|``."""
    beta_schedule: Schedule = field(default_factory=_default_beta_schedule)
    """Importance-weight exponent per number of sample() calls; 1 fully corrects the bias."""
    epsilon: float = 1e-6
    """Added to ``|TD error|`` so that no transition's priority is ever 0."""

    def validate(self) -> None:
        check.whole("max_size", self.max_size, 1)
        check.number("alpha", self.alpha, 0, why="0 samples uniformly")
        check.schedule("beta_schedule", self.beta_schedule, 0, 1)
        check.number("epsilon", self.epsilon, 0, low_open=True)

    def build(
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> PrioritizedExperienceReplay:
        """The memory these parameters describe, for the given spaces, sampling with ``rng``."""
        return PrioritizedExperienceReplay(
            self.max_size,
            observation_space,
            action_space,
            rng,
            extra_spaces,
            alpha=self.alpha,
            beta_schedule=self.beta_schedule,
            epsilon=self.epsilon,
        )


class PrioritizedExperienceReplay(ExperienceReplay):
    """A ring buffer of transitions sampled in proportion to their priority.

    Schaul, Quan, Antonoglou and Silver, "Prioritized Experience Replay", ICLR 2016
    (arXiv:1511.05952), proportional variant. Row ``i`` is drawn with probability
    ``P(i) = p_i / sum_k p_k``, where its priority ``p_i = (|delta_i| + epsilon) ** alpha``
    comes from its latest TD error ``delta_i``. A new row gets the largest priority given so
    far (1.0 before any), so that it is replayed soon at least once.

    A sample is stratified, as in the paper: the total priority is cut into ``batch_size``
    equal segments and one row is drawn in each, which keeps a batch's make-up close to the
    distribution. Drawing rows unevenly biases the expected update, and the batch's
    ``weights`` undo that: ``w_i = (N * P(i)) ** -beta / max_j w_j``, the maximum taken over
    every stored row (from the smallest priority), so weights are at most 1 and only ever
    scale updates down. ``beta`` follows ``beta_schedule`` over the number of `sample` calls
    made so far (see `beta`).

    The learner weighs its loss by ``batch.weights`` and then calls
    ``update_priorities(batch.indices, td_errors)``. Rows overwritten between the two would
    take the old rows' priorities; the agent's training step stores nothing in between.

    Args:
        capacity: How many transitions it holds.
        observation_space: The agent's (filtered) observation space, a ``spaces.Dict``.
        action_space: The agent's action space.
        rng: The generator the samples are drawn with.
        extra_spaces: Further per-transition columns an agent keeps, by name; they come back
            in ``Batch.extras``.
        alpha: How much priorities count: 0 samples uniformly, 1 in proportion to them.
        beta_schedule: The importance-weight exponent per number of `sample` calls;
            ``LinearSchedule(0.4, 1.0, 100_000)`` when not given.
        epsilon: Added to ``|TD error|`` so that no priority is ever 0.
    """

    def __init__(
        self,
        capacity: int,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
        *,
        alpha: float = 0.6,
        beta_schedule: Schedule | None = None,
        epsilon: float = 1e-6,
    ) -> None:
        if not alpha >= 0:
            raise CoachError(f"prioritized replay needs alpha >= 0 (0 is uniform), got {alpha}")
        if not epsilon > 0:
            raise CoachError(
                f"prioritized replay needs epsilon > 0 so that no priority is 0, got {epsilon}"
            )
        super().__init__(capacity, observation_space, action_space, rng, extra_spaces)
        self.alpha = alpha
        self.epsilon = epsilon
        self.beta_schedule = (
            beta_schedule if beta_schedule is not None else _default_beta_schedule()
        )
        self.sum_tree = SumTree(capacity)
        """Row priorities, to draw rows in proportion to them."""
        self.min_tree = MinTree(capacity)
        """Row priorities, for the smallest one (the largest importance weight)."""
        self._max_priority = 1.0
        self.sample_calls = 0
        """How many times `sample` has run: the step count of ``beta_schedule``."""

    @property
    def beta(self) -> float:
        """The exponent the next `sample` uses: ``beta_schedule.value(sample_calls)``."""
        return self.beta_schedule.value(self.sample_calls)

    @property
    def max_priority(self) -> float:
        """The largest priority given so far (1.0 before any): what a new row gets."""
        return self._max_priority

    def store(self, transition: Transition) -> None:
        # The rows are those the ring writes next, taken before storing moves its position.
        where = self._positions(len(transition))
        rows = np.arange(where.start, where.stop) if isinstance(where, slice) else where
        super().store(transition)
        self.sum_tree.update(rows, self._max_priority)
        self.min_tree.update(rows, self._max_priority)

    def _forget(self, rows: np.ndarray) -> None:
        self.sum_tree.update(rows, 0.0)
        self.min_tree.update(rows, np.inf)

    def sample(self, batch_size: int) -> Batch:
        """``batch_size`` rows drawn by priority, with ``indices`` and ``weights`` set."""
        if self._size == 0:
            raise CoachError("cannot sample from an empty replay memory")
        if batch_size < 1:
            raise CoachError(f"a sample needs a batch size >= 1, got {batch_size}")
        total = self.sum_tree.total()
        segment = total / batch_size
        # One uniform draw inside each of the batch_size equal segments of the total mass.
        prefix_sums = (np.arange(batch_size) + self.rng.random(batch_size)) * segment
        indices = self.sum_tree.find_prefix_sum(prefix_sums)

        # w_i / max_j w_j = (N P(i)) ** -beta / (N P_min) ** -beta = (p_i / p_min) ** -beta:
        # N and the total cancel, and the largest weight belongs to the smallest priority.
        beta = self.beta
        weights = (self.sum_tree[indices] / self.min_tree.min()) ** -beta
        self.sample_calls += 1

        batch = self.get(indices)
        batch.weights = weights.astype(np.float32)
        return batch

    def update_priorities(self, indices: np.ndarray, td_errors: np.ndarray) -> None:
        """Set the priorities of rows from their new TD errors: ``(|td| + epsilon) ** alpha``.

        Args:
            indices: Rows, as a sample's ``batch.indices`` gives them, shape (n,). A row given
                twice keeps its last priority.
            td_errors: The rows' TD errors, shape (n,) (or any shape of n values).
        """
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        td_errors = np.asarray(td_errors, dtype=np.float64).reshape(-1)
        if indices.shape != td_errors.shape:
            raise CoachError(
                f"update_priorities needs one TD error per row: got {indices.size} rows and "
                f"{td_errors.size} TD errors"
            )
        if indices.size == 0:
            return
        if indices.min() < 0 or indices.max() >= self._size:
            raise CoachError(
                f"update_priorities got rows {indices.min()} to {indices.max()}, but only rows "
                f"0 to {self._size - 1} hold transitions"
            )
        finite = np.isfinite(td_errors)
        if not finite.all():
            raise CoachError(
                f"update_priorities got non-finite TD errors {td_errors[~finite][:5].tolist()} "
                f"(rows {indices[~finite][:5].tolist()}): the learning has diverged"
            )
        priorities = (np.abs(td_errors) + self.epsilon) ** self.alpha
        self.sum_tree.update(indices, priorities)
        self.min_tree.update(indices, priorities)
        self._max_priority = max(self._max_priority, float(priorities.max()))

    def state_dict(self) -> dict[str, Any]:
        """The stored rows as `ExperienceReplay` saves them, with their priorities, the
        largest priority so far, alpha and the number of sample calls."""
        state = super().state_dict()
        state["priorities"] = self.sum_tree[np.arange(self._filled)]
        state["max_priority"] = self._max_priority
        state["alpha"] = self.alpha
        state["sample_calls"] = self.sample_calls
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned, into a memory of the same capacity.

        The priorities are tied to the rows' positions in the ring, which a memory of another
        capacity would lay out anew, so that is refused. Saved with another alpha, the
        priorities are carried over exactly (``p ** (alpha / saved_alpha)``). The state of a
        uniform `ExperienceReplay` (no priorities) loads into any capacity it fits, every row
        at priority 1.0, as if newly stored.
        """
        if "priorities" not in state:
            super().load_state_dict(state)
            priorities = np.zeros(self._filled)
            priorities[self._live_rows()] = 1.0
            self._reset_priorities(priorities, max_priority=1.0, sample_calls=0)
            return

        saved_capacity = int(state["capacity"])
        if saved_capacity != self.capacity:
            raise CoachError(
                f"a prioritized replay memory of capacity {saved_capacity} cannot be restored "
                f"into one of capacity {self.capacity}: its priorities belong to positions in "
                f"the ring; restore it with max_size={saved_capacity}"
            )
        filled = int(state.get("filled", state["size"]))
        priorities = np.asarray(state["priorities"], dtype=np.float64)
        max_priority = float(state["max_priority"])
        live = int(state["position"]) - int(state["size"]) + np.arange(int(state["size"]))
        if (
            priorities.shape != (filled,)
            or not np.all(priorities >= 0)
            or not np.all(priorities[live % saved_capacity] > 0)
            or not max_priority > 0
        ):
            raise CoachError(
                f"the saved prioritized replay memory is corrupted: it needs {filled} "
                f"priorities, positive for its {state['size']} live rows, and a positive max "
                f"priority, got shape {priorities.shape}"
            )
        saved_alpha = float(state["alpha"])
        if saved_alpha != self.alpha and saved_alpha > 0:
            # p = x ** saved_alpha with x = |TD error| + epsilon, so x ** alpha is
            # p ** (alpha / saved_alpha). (Saved with alpha 0, every p is 1 and stays 1.)
            exponent = self.alpha / saved_alpha
            priorities = priorities**exponent
            max_priority = max_priority**exponent
        super().load_state_dict(state)
        self._reset_priorities(priorities, max_priority, int(state["sample_calls"]))

    def _reset_priorities(
        self, priorities: np.ndarray, max_priority: float, sample_calls: int
    ) -> None:
        """Trees holding ``priorities`` for rows ``0 .. len - 1`` (0 for rows that hold no
        live transition) and nothing else."""
        # New trees, so that no priority of a row this memory held before loading survives.
        self.sum_tree = SumTree(self.capacity)
        self.min_tree = MinTree(self.capacity)
        rows = np.arange(len(priorities))
        self.sum_tree.update(rows, priorities)
        self.min_tree.update(rows, np.where(priorities > 0, priorities, np.inf))
        self._max_priority = max_priority
        self.sample_calls = sample_calls
