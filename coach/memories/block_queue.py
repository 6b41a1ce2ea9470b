"""The trajectory queue of an asynchronous actor-learner (IMPALA's, APPO's).

Each source (the learner's own env copies, or a rollout worker: `Memory.stream`) fills T x B
blocks of its own, T steps of each of its B copies in time order, as an on-policy agent fills
its `Rollout`. A full block joins the queue of ready blocks, oldest first, and the source
starts the next one. The learner's batch is the ``blocks_per_batch`` oldest ready blocks side
by side, T x (blocks_per_batch * B), one `Rollout` (`BlockQueue.take`): the on-policy
learners' machinery (their minibatches, sequences for recurrent networks, the successor
values of each column's last step) reads it as it reads a synchronous block.

Unlike a synchronous block, the steps of a batch may come from policies older than the
learner's, and from different ones: each step keeps the version of the policy it was acted
with (the agent's ``policy_version`` column), and the learner corrects for the difference
(V-trace, `coach.agents.vtrace`).

The queue is bounded: it holds at most ``capacity`` ready blocks; a block that would make
it longer pushes the oldest out (the most stale, which Sample Factory's and RLlib's learners
drop alike), and the drop is counted (`BlockQueue.dropped`). A learner that trains whenever
a batch is ready keeps no more than ``blocks_per_batch`` waiting.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from coach import validation as check
from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.memory import Memory
from coach.memories.rollout import Rollout, RolloutParameters


@dataclass(slots=True, kw_only=True)
class BlockQueueParameters(RolloutParameters):
    """The blocks of an asynchronous actor-learner and the learner's batch of them."""

    ordered: ClassVar[bool] = False
    """Every step holds every copy of its source: no slot column."""

    rollout_length: int = 32
    """Steps per env copy in one block (T, IMPALA's unroll length)."""
    blocks_per_batch: int = 1
    """Ready blocks the learner learns from at once, side by side."""
    capacity: int | None = None
    """The most ready blocks the queue holds (``None``: twice ``blocks_per_batch``); the
    oldest is dropped past it."""

    def validate(self) -> None:
        RolloutParameters.validate(self)
        check.whole("blocks_per_batch", self.blocks_per_batch, 1)
        if self.capacity is not None:
            check.whole("capacity", self.capacity, self.blocks_per_batch)

    def build(  # type: ignore[override]  # a queue of rollouts, not one
        self,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> BlockQueue:
        capacity = self.capacity if self.capacity is not None else 2 * self.blocks_per_batch
        return BlockQueue(
            self.rollout_length,
            self.blocks_per_batch,
            capacity,
            observation_space,
            action_space,
            rng,
            extra_spaces,
        )


class BlockQueue(Memory):
    """Blocks filling per source, a bounded queue of full ones, and the learner's batch.

    Args:
        length: T, the steps per copy of a block.
        blocks_per_batch: Ready blocks per learner batch.
        capacity: The most ready blocks kept (the oldest are dropped past it).
        observation_space: The agent's observation space.
        action_space: The agent's action space.
        rng: Shuffles the batch's minibatches.
        extra_spaces: Further per-step columns by name.
    """

    def __init__(
        self,
        length: int,
        blocks_per_batch: int,
        capacity: int,
        observation_space: spaces.Dict,
        action_space: spaces.Space[Any],
        rng: np.random.Generator,
        extra_spaces: dict[str, spaces.Space[Any]] | None = None,
    ) -> None:
        if capacity < blocks_per_batch:
            raise CoachError(
                f"a block queue of {capacity} blocks cannot hold a batch of {blocks_per_batch}"
            )
        self.length = length
        self.blocks_per_batch = blocks_per_batch
        self.capacity = capacity
        self.rng = rng
        self._spaces = (observation_space, action_space, dict(extra_spaces or {}))
        self.filling: dict[int, Rollout] = {}
        """The block each source is filling, by source."""
        self.ready: deque[Rollout] = deque()
        """Full blocks, oldest first."""
        self.dropped = 0
        """Ready blocks pushed out of the full queue, over the run."""
        self.batch: Rollout = self._rollout()
        """The batch the learner took last (`take`); empty before the first."""

    def _rollout(self) -> Rollout:
        observation_space, action_space, extras = self._spaces
        return Rollout(self.length, observation_space, action_space, self.rng, extras)

    # -- filling ----------------------------------------------------------------------------

    def stream(self, key: int) -> Memory:
        return _Source(self, key)

    def store(self, transition: Transition) -> None:
        self.store_from(0, transition)

    def store_from(self, source: int, transition: Transition) -> None:
        """One step of every copy of ``source``; a block it fills joins the queue."""
        block = self.filling.get(source)
        if block is None:
            block = self.filling[source] = self._rollout()
        block.store(transition)
        if block.full:
            del self.filling[source]
            self.ready.append(block)
            if len(self.ready) > self.capacity:  # one block over at most
                self.ready.popleft()
                self.dropped += 1

    def end_episodes(self) -> None:
        # The episodes in the blocks being filled stop here (as `Rollout.cut` marks them);
        # the blocks fill on with the new ones.
        for block in self.filling.values():
            if block.stored:
                block.cut()

    # -- the learner's side -----------------------------------------------------------------

    @property
    def full(self) -> bool:
        """A batch is ready."""
        return len(self.ready) >= self.blocks_per_batch

    def take(self) -> Rollout:
        """The oldest ``blocks_per_batch`` ready blocks side by side, T x (n B), removed from
        the queue (also kept as `batch`)."""
        if not self.full:
            raise CoachError(
                f"the learner's batch takes {self.blocks_per_batch} ready blocks; "
                f"{len(self.ready)} are ready"
            )
        blocks = [self.ready.popleft() for _ in range(self.blocks_per_batch)]
        self.batch = blocks[0] if len(blocks) == 1 else self._rollout().join(blocks)
        return self.batch

    def __len__(self) -> int:
        return sum(len(block) for block in self.ready)

    def sample(self, batch_size: int) -> Batch:
        raise CoachError("a block queue is learned from in batches of blocks (take), not sampled")

    def state_dict(self) -> dict[str, Any]:
        """The blocks being filled and the ready ones (a checkpoint resumes exactly)."""
        return {
            "filling": {source: block.state_dict() for source, block in self.filling.items()},
            "ready": [block.state_dict() for block in self.ready],
            "dropped": self.dropped,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.clear()
        for source, saved in state["filling"].items():
            self.filling[int(source)] = block = self._rollout()
            block.load_state_dict(saved)
        for saved in state["ready"]:
            block = self._rollout()
            block.load_state_dict(saved)
            self.ready.append(block)
        self.dropped = int(state["dropped"])

    def clear(self) -> None:
        self.filling.clear()
        self.ready.clear()
        self.batch = self._rollout()


class _Source(Memory):
    """Where one source of a `BlockQueue` stores."""

    def __init__(self, queue: BlockQueue, key: int) -> None:
        self.queue = queue
        self.key = key

    def store(self, transition: Transition) -> None:
        self.queue.store_from(self.key, transition)

    def sample(self, batch_size: int) -> Batch:
        return self.queue.sample(batch_size)

    def __len__(self) -> int:
        return len(self.queue)
