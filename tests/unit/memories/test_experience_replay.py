"""Unit tests for coach/memories/experience_replay.py (and the Memory base in memory.py).

Every stored transition is tagged by an id ``k``: its state is ``k``, its next state
``k + 0.5``, its action ``k % 4``, its reward ``10 k``, terminated when ``k % 3 == 0`` and
truncated when ``k % 5 == 0``, so any row read back can be checked for consistency.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.experience_replay import ExperienceReplay, ExperienceReplayParameters

OBSERVATION_SPACE = spaces.Dict(
    {
        "observation": spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32),
        "goal": spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float64),
    }
)
ACTION_SPACE = spaces.Discrete(4)


def _memory(capacity: int, seed: int = 0) -> ExperienceReplay:
    return ExperienceReplay(capacity, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(seed))


def _store(memory: ExperienceReplay, ids: list[int]) -> None:
    k = np.asarray(ids, dtype=np.float64)
    memory.store(
        Transition(
            state={
                "observation": np.repeat(k[:, None], 3, axis=1),
                "goal": np.repeat(-k[:, None], 2, axis=1),
            },
            action=(k % 4).astype(np.int64),
            reward=(10 * k).astype(np.float32),
            next_state={
                "observation": np.repeat(k[:, None] + 0.5, 3, axis=1),
                "goal": np.repeat(-k[:, None] - 0.5, 2, axis=1),
            },
            terminated=k % 3 == 0,
            truncated=k % 5 == 0,
        )
    )


def _ids(batch: Batch) -> list[int]:
    return [int(v) for v in batch.states["observation"][:, 0]]


def _assert_consistent(batch: Batch) -> None:
    k = batch.states["observation"][:, 0].astype(np.float64)
    np.testing.assert_array_equal(batch.states["observation"], np.repeat(k[:, None], 3, axis=1))
    np.testing.assert_array_equal(batch.states["goal"], np.repeat(-k[:, None], 2, axis=1))
    np.testing.assert_array_equal(batch.next_states["observation"][:, 0], k + 0.5)
    np.testing.assert_array_equal(batch.next_states["goal"][:, 1], -k - 0.5)
    np.testing.assert_array_equal(batch.actions, k % 4)
    np.testing.assert_array_equal(batch.rewards, 10 * k)
    np.testing.assert_array_equal(batch.terminated, k % 3 == 0)
    np.testing.assert_array_equal(batch.truncated, k % 5 == 0)


@pytest.mark.parametrize("batch_size", [1, 4])
def test_len_grows_with_each_batch_and_caps_at_capacity(batch_size: int) -> None:
    memory = _memory(10)
    assert len(memory) == 0
    expected = 0
    for start in range(0, 24, batch_size):
        _store(memory, list(range(start, start + batch_size)))
        expected = min(expected + batch_size, 10)
        assert len(memory) == expected
    assert len(memory) == 10


@pytest.mark.parametrize("batch_size", [1, 4])
def test_contents_in_order_before_the_ring_wraps(batch_size: int) -> None:
    memory = _memory(12)
    for start in range(0, 8, batch_size):
        _store(memory, list(range(start, start + batch_size)))
    batch = memory.get(np.arange(8))
    assert _ids(batch) == list(range(8))
    _assert_consistent(batch)


def test_a_batch_straddling_the_end_wraps_and_overwrites_the_oldest() -> None:
    memory = _memory(5)
    _store(memory, [0, 1, 2])
    _store(memory, [3, 4, 5, 6])  # positions 3, 4, then 0, 1
    assert len(memory) == 5
    batch = memory.get(np.arange(5))
    assert _ids(batch) == [5, 6, 2, 3, 4]
    _assert_consistent(batch)

    _store(memory, [7, 8, 9, 10])  # positions 2, 3, 4, 0
    assert _ids(memory.get(np.arange(5))) == [10, 6, 7, 8, 9]
    assert len(memory) == 5


def test_a_batch_as_large_as_the_memory_replaces_everything() -> None:
    memory = _memory(4)
    _store(memory, [0, 1])
    _store(memory, [10, 11, 12, 13])
    assert sorted(_ids(memory.get(np.arange(4)))) == [10, 11, 12, 13]


def test_a_batch_larger_than_the_memory_raises() -> None:
    memory = _memory(3)
    with pytest.raises(CoachError, match="does not fit"):
        _store(memory, [0, 1, 2, 3])
    assert len(memory) == 0


def test_capacity_below_one_raises() -> None:
    with pytest.raises(CoachError, match="capacity"):
        _memory(0)


def test_sample_returns_a_batch_with_shapes_and_dtypes() -> None:
    memory = _memory(50)
    _store(memory, list(range(20)))
    batch = memory.sample(8)
    assert isinstance(batch, Batch)
    assert len(batch) == 8
    assert batch.states["observation"].shape == (8, 3)
    assert batch.states["observation"].dtype == np.float32
    assert batch.states["goal"].shape == (8, 2)
    assert batch.states["goal"].dtype == np.float64
    assert batch.next_states["observation"].shape == (8, 3)
    assert batch.actions.shape == (8,)
    assert batch.actions.dtype == np.int64
    assert batch.rewards.shape == (8,)
    assert batch.rewards.dtype == np.float32
    assert batch.terminated.dtype == np.bool_
    assert batch.truncated.dtype == np.bool_
    assert batch.indices.shape == (8,)
    assert batch.weights is None


def test_sampled_rows_are_stored_transitions() -> None:
    memory = _memory(100)
    _store(memory, list(range(30)))
    batch = memory.sample(500)
    _assert_consistent(batch)
    ids = _ids(batch)
    # Only the 30 filled rows are drawn from, never the zeros past them; all of them come up.
    assert set(ids) == set(range(30))
    np.testing.assert_array_equal(batch.indices, ids)


def test_sampling_after_wrapping_stays_consistent() -> None:
    memory = _memory(7)
    for start in range(0, 20, 3):
        _store(memory, list(range(start, start + 3)))
    batch = memory.sample(200)
    _assert_consistent(batch)
    assert set(_ids(batch)) == set(range(14, 21))


def test_sampling_is_reproducible_with_the_same_seed() -> None:
    first, second, other = _memory(40, seed=3), _memory(40, seed=3), _memory(40, seed=4)
    for memory in (first, second, other):
        _store(memory, list(range(25)))
    a, b, c = first.sample(16), second.sample(16), other.sample(16)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert _ids(a) == _ids(b)
    assert not np.array_equal(a.indices, c.indices)


def test_sampling_an_empty_memory_raises() -> None:
    with pytest.raises(CoachError, match="empty"):
        _memory(5).sample(1)


def test_a_single_step_stores_as_a_batch_of_one() -> None:
    memory = _memory(5)
    _store(memory, [1])
    memory.store(
        Transition.single(
            state={"observation": np.array([7.0, 7.0, 7.0]), "goal": np.array([-7.0, -7.0])},
            action=3,
            reward=70.0,
            next_state={
                "observation": np.array([7.5, 7.5, 7.5]),
                "goal": np.array([-7.5, -7.5]),
            },
            terminated=False,
            truncated=False,
        )
    )
    assert len(memory) == 2
    batch = memory.get(np.array([1]))
    np.testing.assert_array_equal(batch.states["observation"], [[7.0, 7.0, 7.0]])
    np.testing.assert_array_equal(batch.next_states["goal"], [[-7.5, -7.5]])
    np.testing.assert_array_equal(batch.actions, [3])
    np.testing.assert_array_equal(batch.rewards, [70.0])
    np.testing.assert_array_equal(batch.terminated, [False])
    np.testing.assert_array_equal(batch.truncated, [False])


@pytest.mark.parametrize("keys", [("cell",), ("cell", "position")])
def test_one_step_of_a_flat_observation_fills_its_row(keys) -> None:
    """A discrete observation's column is flat (one number a row) beside shaped ones."""
    observation_space = spaces.Dict(
        {"cell": spaces.Discrete(16), "position": spaces.Box(-1.0, 1.0, (2,))}
    )
    observation_space = spaces.Dict({k: observation_space[k] for k in keys})
    memory = ExperienceReplay(3, observation_space, spaces.Discrete(4), np.random.default_rng(0))
    for t in range(4):  # around the ring once
        state = {"cell": np.array([t]), "position": np.full((1, 2), t / 10)}
        next_state = {"cell": np.array([t + 1]), "position": np.full((1, 2), (t + 1) / 10)}
        flags, reward = np.zeros(1, dtype=bool), np.array([t], np.float32)
        memory.store(Transition(state, np.array([t % 4]), reward, next_state, flags, flags))
    batch = memory.get(np.array([0, 1, 2]))  # row 0 holds the fourth step
    np.testing.assert_array_equal(batch.states["cell"], [3, 1, 2])
    np.testing.assert_array_equal(batch.next_states["cell"], [4, 2, 3])
    if "position" in keys:
        np.testing.assert_allclose(batch.states["position"], [[0.3] * 2, [0.1] * 2, [0.2] * 2])
    np.testing.assert_array_equal(batch.actions, [3, 1, 2])


def test_state_dict_round_trip() -> None:
    memory = _memory(6)
    _store(memory, [0, 1, 2, 3])
    _store(memory, [4, 5, 6])  # wraps: position 1
    state = memory.state_dict()

    restored = _memory(6, seed=99)
    restored.load_state_dict(state)
    assert len(restored) == len(memory) == 6
    # The same capacity: the buffer as it lay, so sampling carries on exactly.
    assert _ids(restored.get(np.arange(6))) == _ids(memory.get(np.arange(6))) == [6, 1, 2, 3, 4, 5]
    _assert_consistent(restored.get(np.arange(6)))

    # The next store overwrites the oldest transition (1) in both.
    _store(memory, [7])
    _store(restored, [7])
    assert _ids(restored.get(np.arange(6))) == _ids(memory.get(np.arange(6))) == [6, 7, 2, 3, 4, 5]


def test_state_dict_is_a_copy() -> None:
    memory = _memory(4)
    _store(memory, [0, 1])
    state = memory.state_dict()
    _store(memory, [8, 9])
    assert state["size"] == 2
    np.testing.assert_array_equal(state["rewards"], [0.0, 10.0])


def test_loading_more_than_the_capacity_raises() -> None:
    memory = _memory(6)
    _store(memory, [0, 1, 2, 3, 4])
    with pytest.raises(CoachError, match="capacity"):
        _memory(4).load_state_dict(memory.state_dict())


def test_a_full_memory_restored_into_a_larger_one_keeps_only_stored_rows() -> None:
    small = _memory(4)
    _store(small, [1, 2, 3, 4])
    _store(small, [5])  # full, write position 1: rows [5, 2, 3, 4]
    larger = _memory(8)
    larger.load_state_dict(small.state_dict())
    _store(larger, [9])
    assert len(larger) == 5
    assert sorted(_ids(larger.get(np.arange(len(larger))))) == [2, 3, 4, 5, 9]


def test_parameters_build_an_experience_replay() -> None:
    memory = ExperienceReplayParameters(max_size=9).build(
        OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0)
    )
    assert isinstance(memory, ExperienceReplay)
    assert memory.capacity == 9
    assert memory.actions.shape == (9,)
    assert memory.states["observation"].shape == (9, 3)


def test_a_space_without_a_shape_raises() -> None:
    with pytest.raises(CoachError, match="no shape"):
        ExperienceReplay(
            4, OBSERVATION_SPACE, spaces.Tuple([spaces.Discrete(2)]), np.random.default_rng(0)
        )


@pytest.mark.parametrize("capacity", [10**13, 2**62])
def test_a_memory_the_machine_cannot_hold_is_refused_naming_max_size(capacity: int) -> None:
    with pytest.raises(CoachError, match=rf"replay memory of {capacity} .* lower its max_size"):
        ExperienceReplay(capacity, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0))


def test_a_round_drawn_ahead_is_the_batches_drawn_in_turn():
    ahead, in_turn = _memory(500, seed=3), _memory(500, seed=3)
    for memory in (ahead, in_turn):
        _store(memory, list(range(300)))
    drawn = list(ahead.batches(16, 40))
    expected = [in_turn.sample(16) for _ in range(40)]
    assert len(drawn) == 40
    for got, want in zip(drawn, expected, strict=True):
        np.testing.assert_array_equal(got.indices, want.indices)
        _assert_consistent(got)
    assert ahead.rng.integers(1 << 30) == in_turn.rng.integers(1 << 30)


def test_a_round_is_drawn_ahead_within_its_byte_budget(monkeypatch):
    import coach.memories.experience_replay as replay

    memory = _memory(500)
    _store(memory, list(range(300)))
    batch_bytes = replay._nbytes(memory.sample(8))
    monkeypatch.setattr(replay, "AHEAD_BYTES", 3 * batch_bytes)
    draws: list[int] = []
    sample = memory.sample
    monkeypatch.setattr(memory, "sample", lambda n: draws.append(n) or sample(n))
    rounds = memory.batches(8, 10)
    next(rounds)  # the first batch, then three more at a time
    assert len(draws) == 1
    next(rounds)
    assert len(draws) == 4
    assert len(list(rounds)) == 8 and len(draws) == 10
