"""The blocks rollout workers are collecting for the learner, and how the learner paces them.

Every block handed to a worker is remembered with the policy version it was handed out
under and its env steps, until its result comes back. From that the learner knows how much
of a phase's budget is already on its way (it hands out no more than the budget needs), and
how old the oldest policy still acting is (`DistributedParameters.max_policy_lag`). Off
policy, each worker gets a second block queued behind its current one, so that it never
waits for the learner between two (`BlocksInFlight.fill`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coach.core.run_phase import RunPhase
from coach.parallel.parameters import DistributedParameters
from coach.parallel.pool import WorkerPool


class BlocksInFlight:
    """The blocks handed out to the rollout workers of ``pool`` and not yet taken back.

    Args:
        pool: The workers.
        params: The block lengths (``block_steps``, ``heatup_block_steps``).
    """

    def __init__(self, pool: WorkerPool, params: DistributedParameters) -> None:
        self.pool = pool
        self.params = params
        self._by_rank: dict[int, list[tuple[int, int]]] = {}
        """Each busy rollout worker's blocks, oldest first: the policy version published
        when it got each, and its env steps."""

    def __bool__(self) -> bool:
        return bool(self._by_rank)

    def steps(self) -> int:
        """The env steps of every block in flight."""
        return sum(steps for blocks in self._by_rank.values() for _, steps in blocks)

    def oldest_version(self) -> int:
        """The oldest policy version a block in flight was handed out under."""
        return min(version for blocks in self._by_rank.values() for version, _ in blocks)

    def submit(self, rank: int, steps: int, phase: RunPhase, version: int) -> None:
        """Ask the worker of ``rank`` for a block of ``steps`` env steps in ``phase``, acting
        with the policy of ``version`` (the latest published)."""
        self.pool.submit(rank, "collect", steps, phase)
        self._by_rank.setdefault(rank, []).append((version, steps))

    def fill(self, phase: RunPhase, version: int, remaining: Callable[[], int] | None) -> None:
        """Give every worker a second block to run after its current one (no wait between
        two), as long as the blocks in flight do not cover what is left of the budget
        (``remaining``, ``None`` for a budget not counted in env steps)."""
        for depth in (1, 2):
            for rank in self.pool.idle(depth=depth):
                left = None if remaining is None else remaining() - self.steps()
                if left is not None and left <= 0:
                    return
                self.submit(rank, self.block_steps(phase, left), phase, version)

    def block_steps(self, phase: RunPhase, left: int | None) -> int:
        """The steps of the next block: ``block_steps`` (``heatup_block_steps`` in heatup,
        but no more than an even share of the budget not yet handed out, two blocks queued
        per worker), and never more than the ``left`` budget."""
        params = self.params
        block = params.block_steps
        if phase is RunPhase.HEATUP:
            block = params.heatup_block_steps
            if left is not None:
                block = max(params.block_steps, min(block, -(-left // (2 * params.num_workers))))
        return block if left is None else min(block, left)

    def next_result(self) -> tuple[int, Any]:
        """The next finished command of the pool, its rank and result; a rollout worker's
        block is no longer in flight."""
        rank, result = self.pool.next_result()
        blocks = self._by_rank.get(rank)
        if blocks:
            blocks.pop(0)
            if not blocks:
                del self._by_rank[rank]
        return rank, result
