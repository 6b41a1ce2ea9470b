"""Unit tests for coach/parallel/in_flight.py: the learner's account of the blocks its
workers collect, on a pool that runs nothing and answers in a scripted order."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

from coach.core.run_phase import RunPhase
from coach.parallel.in_flight import BlocksInFlight
from coach.parallel.parameters import DistributedParameters
from coach.parallel.pool import WorkerPool
from coach.parallel.worker import PolicySnapshot, WorkerSpec


class ScriptedPool(WorkerPool):
    """Records what it is asked; finishes commands oldest first over the ranks in
    ``order``."""

    def __init__(self, num_workers: int, evaluation_worker: bool = False) -> None:
        def make_spec(rank: int, start: int) -> WorkerSpec:
            raise AssertionError("a scripted pool starts no worker")

        super().__init__(make_spec, num_workers, evaluation_worker, lambda message: None)
        self.submitted: list[tuple[int, str, tuple[Any, ...]]] = []
        self.order: deque[int] = deque()

    def publish(self, snapshot: PolicySnapshot) -> None:
        raise AssertionError("blocks are not published")

    def submit(self, rank: int, method: str, *args: Any) -> None:
        self.submitted.append((rank, method, args))
        self._queue(rank, method, args)

    def next_result(self) -> tuple[int, Any]:
        rank = self.order.popleft()
        method, args = self.pending[rank][0]
        self._done(rank)
        return rank, (method, args)

    def pids(self) -> dict[int, int]:
        return {}

    def close(self) -> None:
        pass


def _blocks(num_workers: int = 2, **params: Any) -> tuple[BlocksInFlight, ScriptedPool]:
    pool = ScriptedPool(num_workers, evaluation_worker=True)
    return BlocksInFlight(pool, DistributedParameters(num_workers=num_workers, **params)), pool


def test_fill_queues_a_second_block_behind_each_workers_first() -> None:
    blocks, pool = _blocks(block_steps=10)
    blocks.fill(RunPhase.TRAIN, version=3, remaining=None)
    assert [(rank, args) for rank, _, args in pool.submitted] == [
        (1, (10, RunPhase.TRAIN)),
        (2, (10, RunPhase.TRAIN)),
        (1, (10, RunPhase.TRAIN)),
        (2, (10, RunPhase.TRAIN)),
    ]
    assert blocks.steps() == 40 and blocks.oldest_version() == 3
    blocks.fill(RunPhase.TRAIN, version=4, remaining=None)  # everyone is busy twice over
    assert len(pool.submitted) == 4


def test_no_more_is_handed_out_than_the_budget_needs() -> None:
    blocks, pool = _blocks(block_steps=10)
    blocks.fill(RunPhase.TRAIN, version=0, remaining=lambda: 25)
    assert [args[0] for _, _, args in pool.submitted] == [10, 10, 5]
    assert blocks.steps() == 25


@pytest.mark.parametrize(
    ("left", "expected"),
    [
        (None, 1000),  # no env-step budget: heatup_block_steps
        (10_000, 1000),  # a share of 2500 a block, more than heatup_block_steps
        (300, 100),  # a share of 75: but never below block_steps
        (2400, 600),  # a share of 600
        (60, 60),  # never more than is left
    ],
)
def test_heatup_blocks_are_a_fair_share_of_what_is_left(left: int | None, expected: int) -> None:
    blocks, _ = _blocks(block_steps=100, heatup_block_steps=1000)
    assert blocks.block_steps(RunPhase.HEATUP, left) == expected
    assert blocks.block_steps(RunPhase.TRAIN, left) == min(100, left or 100)


def test_a_result_takes_its_workers_oldest_block_out_of_flight() -> None:
    blocks, pool = _blocks(block_steps=10)
    blocks.submit(1, 10, RunPhase.TRAIN, version=0)
    blocks.submit(2, 7, RunPhase.TRAIN, version=1)
    blocks.submit(1, 4, RunPhase.TRAIN, version=2)
    pool.submit(0, "evaluate", 5)  # the evaluation worker's command is not a block
    pool.order.extend([1, 0, 2, 1])
    assert blocks.next_result() == (1, ("collect", (10, RunPhase.TRAIN)))
    assert (blocks.steps(), blocks.oldest_version()) == (11, 1)
    assert blocks.next_result() == (0, ("evaluate", (5,)))
    assert blocks.steps() == 11
    blocks.next_result()
    assert (blocks.steps(), blocks.oldest_version()) == (4, 2)
    assert blocks
    blocks.next_result()
    assert not blocks and blocks.steps() == 0
