"""The block queue of the asynchronous actor-learner: blocks filled per source, full ones
queued oldest first, bounded, a batch of them side by side, and a checkpoint of it all."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.types import Transition
from coach.errors import CoachError
from coach.memories.block_queue import BlockQueue, BlockQueueParameters

OBSERVATION = spaces.Dict({"observation": spaces.Box(-1e6, 1e6, (1,), np.float32)})
EXTRAS = {"value": spaces.Box(-np.inf, np.inf, (), np.float32)}


def queue(blocks_per_batch: int = 2, capacity: int | None = None) -> BlockQueue:
    params = BlockQueueParameters(
        rollout_length=3, blocks_per_batch=blocks_per_batch, capacity=capacity
    )
    params.validate()
    return params.build(OBSERVATION, spaces.Discrete(2), np.random.default_rng(0), EXTRAS)


def step(source: int, t: int, copies: int = 2) -> Transition:
    """Step ``t`` of ``source``: its observation names both (1000 source + 10 copy + t)."""
    ids = 1000 * source + 10 * np.arange(copies) + t
    return Transition(
        state={"observation": ids[:, None].astype(np.float32)},
        action=np.zeros(copies, np.int64),
        reward=ids.astype(np.float32),
        next_state={"observation": (ids + 1)[:, None].astype(np.float32)},
        terminated=np.zeros(copies, bool),
        truncated=np.zeros(copies, bool),
        extras={"value": np.zeros(copies, np.float32)},
    )


def test_each_source_fills_its_own_blocks_and_a_batch_joins_the_oldest_side_by_side() -> None:
    q = queue()
    sources = {1: q.stream(1), 2: q.stream(2), 3: q.stream(3)}
    for t in range(3):  # interleaved, as the workers' blocks arrive
        for source in (2, 1, 3):
            sources[source].store(step(source, t))
            assert q.full == (t == 2 and source != 2)  # two blocks ready from 1 on
    assert q.full and len(q.ready) == 3
    batch = q.take()
    assert batch.full and batch.num_envs == 4 and batch.steps == 3
    # Source 2 finished first, then source 1: their copies side by side, in time order.
    expected = np.array(
        [
            [2000 + 10 * c + t for c in (0, 1)] + [1000 + 10 * c + t for c in (0, 1)]
            for t in range(3)
        ]
    )
    np.testing.assert_array_equal(batch.columns["rewards"], expected)
    assert q.batch is batch and len(q.ready) == 1 and not q.full
    with pytest.raises(CoachError, match="takes 2 ready blocks; 1 are ready"):
        q.take()


def test_the_queue_is_bounded_and_drops_the_oldest() -> None:
    q = queue(blocks_per_batch=1, capacity=2)
    for source in (1, 2, 3, 4):
        for t in range(3):
            q.store_from(source, step(source, t))
    assert len(q.ready) == 2 and q.dropped == 2
    assert q.take().columns["rewards"][0, 0] == 3000  # sources 1 and 2 were pushed out
    assert q.take().columns["rewards"][0, 0] == 4000


def test_a_capacity_below_the_batch_is_refused() -> None:
    with pytest.raises(CoachError, match="capacity"):
        BlockQueueParameters(blocks_per_batch=4, capacity=3).validate()


def test_episodes_ended_early_cut_the_blocks_being_filled() -> None:
    q = queue(blocks_per_batch=1)
    q.store_from(1, step(1, 0))
    q.end_episodes()
    q.store_from(1, step(1, 1))
    q.store_from(1, step(1, 2))
    truncated = q.take().columns["truncated"]
    np.testing.assert_array_equal(truncated[:, 0], [True, False, False])


def test_a_checkpoint_keeps_the_blocks_filling_and_ready() -> None:
    q = queue()
    for t in range(3):
        q.store_from(1, step(1, t))
    q.store_from(2, step(2, 0))
    restored = queue()
    restored.load_state_dict(q.state_dict())
    for memory in (q, restored):
        for t in (1, 2):
            memory.store_from(2, step(2, t))
    a, b = q.take(), restored.take()
    np.testing.assert_array_equal(a.columns["rewards"], b.columns["rewards"])
    np.testing.assert_array_equal(
        a.columns["states"]["observation"], b.columns["states"]["observation"]
    )
