"""Unit tests for coach/memories/prioritized_experience_replay.py.

As in the uniform replay's tests, every stored transition is tagged by an id ``k``: its state
is ``k``, its next state ``k + 0.5``, its action ``k % 4`` and its reward ``10 k``, so a row read
back can be checked for consistency. Priorities are set through TD errors; with ``alpha=1``
and a tiny ``epsilon`` a TD error of ``d`` gives a priority of (almost exactly) ``d``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.types import Batch, Transition
from coach.errors import CoachError
from coach.memories.experience_replay import ExperienceReplay
from coach.memories.prioritized_experience_replay import (
    PrioritizedExperienceReplay,
    PrioritizedExperienceReplayParameters,
)
from coach.schedules import ConstantSchedule, LinearSchedule

OBSERVATION_SPACE = spaces.Dict(
    {"observation": spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32)}
)
ACTION_SPACE = spaces.Discrete(4)
EPSILON = 1e-9


def _memory(capacity: int, seed: int = 0, **kwargs: Any) -> PrioritizedExperienceReplay:
    kwargs = {"alpha": 1.0, "epsilon": EPSILON, **kwargs}
    return PrioritizedExperienceReplay(
        capacity, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(seed), **kwargs
    )


def _store(memory: ExperienceReplay, ids: list[int]) -> None:
    k = np.asarray(ids, dtype=np.float64)
    memory.store(
        Transition(
            state={"observation": np.repeat(k[:, None], 3, axis=1)},
            action=(k % 4).astype(np.int64),
            reward=(10 * k).astype(np.float32),
            next_state={"observation": np.repeat(k[:, None] + 0.5, 3, axis=1)},
            terminated=k % 3 == 0,
            truncated=k % 5 == 0,
        )
    )


def _ids(batch: Batch) -> list[int]:
    return [int(v) for v in batch.states["observation"][:, 0]]


def _assert_consistent(batch: Batch) -> None:
    k = batch.states["observation"][:, 0].astype(np.float64)
    np.testing.assert_array_equal(batch.states["observation"], np.repeat(k[:, None], 3, axis=1))
    np.testing.assert_array_equal(batch.next_states["observation"][:, 0], k + 0.5)
    np.testing.assert_array_equal(batch.actions, k % 4)
    np.testing.assert_array_equal(batch.rewards, 10 * k)


def _priorities(memory: PrioritizedExperienceReplay) -> np.ndarray:
    return memory.sum_tree[np.arange(memory.capacity)]


def _assert_trees_match_rows(memory: PrioritizedExperienceReplay) -> None:
    """Stored rows have a positive priority in both trees, the rest none, totals agree."""
    stored = np.arange(len(memory))
    empty = np.arange(len(memory), memory.capacity)
    sums, mins = memory.sum_tree[stored], memory.min_tree[stored]
    np.testing.assert_array_equal(sums, mins)
    assert np.all(sums > 0)
    np.testing.assert_array_equal(memory.sum_tree[empty], 0.0)
    np.testing.assert_array_equal(memory.min_tree[empty], np.inf)
    assert memory.sum_tree.total() == pytest.approx(sums.sum(), rel=1e-12)
    assert memory.min_tree.min() == sums.min()


def _frequencies(memory: PrioritizedExperienceReplay, calls: int, batch_size: int) -> np.ndarray:
    counts = np.zeros(memory.capacity)
    for _ in range(calls):
        np.add.at(counts, memory.sample(batch_size).indices, 1)
    return counts / (calls * batch_size)


# -- sampling ---------------------------------------------------------------------------------


def test_sampling_frequencies_follow_the_priorities() -> None:
    memory = _memory(5, seed=1)
    _store(memory, [0, 1, 2, 3, 4])
    priorities = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    memory.update_priorities(np.arange(5), priorities)
    frequencies = _frequencies(memory, calls=2000, batch_size=100)  # 200k draws
    np.testing.assert_allclose(frequencies, priorities / 20.0, rtol=0.02)


def test_alpha_flattens_the_distribution() -> None:
    memory = _memory(2, seed=2, alpha=0.5)
    _store(memory, [0, 1])
    memory.update_priorities(np.array([0, 1]), np.array([1.0, 9.0]))  # priorities 1 and 3
    np.testing.assert_allclose(_frequencies(memory, 500, 64), [0.25, 0.75], rtol=0.02)


def test_a_sample_is_stratified_over_equal_segments_of_the_total() -> None:
    # Equal priorities and as many draws as rows: each segment holds exactly one row, so every
    # row comes up once, in order. Independent draws would repeat rows nearly every time.
    memory = _memory(8, seed=3)
    _store(memory, list(range(6)))
    for _ in range(20):
        np.testing.assert_array_equal(memory.sample(6).indices, np.arange(6))


def test_the_segments_take_one_uniform_draw_each_from_the_memory_rng() -> None:
    memory = _memory(4, seed=4)
    _store(memory, [0, 1, 2, 3])
    memory.update_priorities(np.arange(4), np.array([1.0, 1.0, 1.0, 5.0]))  # total 8
    draws = np.random.default_rng(4).random(2)
    expected = np.searchsorted([1.0, 2.0, 3.0, 8.0], (np.arange(2) + draws) * 4.0, side="right")
    np.testing.assert_array_equal(memory.sample(2).indices, expected)


def test_sampled_rows_are_stored_transitions_and_never_empty_rows() -> None:
    memory = _memory(13, seed=5)  # 16 leaves underneath: 3 padding, 10 empty rows
    _store(memory, [0, 1, 2])
    batch = memory.sample(3000)
    _assert_consistent(batch)
    assert set(_ids(batch)) == {0, 1, 2}
    np.testing.assert_array_equal(batch.indices, _ids(batch))


def test_sample_returns_indices_and_float32_weights() -> None:
    memory = _memory(10)
    _store(memory, list(range(7)))
    batch = memory.sample(5)
    assert len(batch) == 5
    assert batch.indices.shape == (5,)
    assert batch.indices.dtype == np.int64
    assert batch.weights.shape == (5,)
    assert batch.weights.dtype == np.float32


def test_update_priorities_changes_the_distribution() -> None:
    memory = _memory(4, seed=6)
    _store(memory, [0, 1, 2, 3])
    np.testing.assert_allclose(_frequencies(memory, 200, 100), 0.25, rtol=0.02)
    memory.update_priorities(np.array([2]), np.array([97.0]))  # 1, 1, 97, 1 of 100
    np.testing.assert_allclose(_frequencies(memory, 200, 100), [0.01, 0.01, 0.97, 0.01], rtol=0.05)


def test_update_priorities_uses_abs_td_plus_epsilon_to_the_alpha() -> None:
    memory = _memory(4, alpha=0.5, epsilon=0.25)
    _store(memory, [0, 1, 2])
    memory.update_priorities(np.array([0, 2]), np.array([-3.75, 0.0]))
    np.testing.assert_allclose(_priorities(memory)[:3], [2.0, 1.0, 0.5])


def test_a_row_given_twice_keeps_its_last_priority() -> None:
    memory = _memory(4)
    _store(memory, [0, 1, 2, 3])
    memory.update_priorities(np.array([1, 3, 1]), np.array([5.0, 2.0, 0.5]))
    np.testing.assert_allclose(_priorities(memory), [1.0, 0.5, 1.0, 2.0])
    assert memory.sum_tree.total() == pytest.approx(4.5)
    assert memory.max_priority == pytest.approx(5.0)  # the largest given, as the paper's p_max


def test_sampling_an_empty_memory_raises() -> None:
    with pytest.raises(CoachError, match="empty"):
        _memory(4).sample(1)


def test_a_batch_size_below_one_raises() -> None:
    memory = _memory(4)
    _store(memory, [0])
    with pytest.raises(CoachError, match="batch size"):
        memory.sample(0)


# -- importance weights -----------------------------------------------------------------------


def test_importance_weights_by_hand() -> None:
    memory = _memory(4, seed=7, beta_schedule=ConstantSchedule(0.5))
    _store(memory, [0, 1, 2])
    memory.update_priorities(np.arange(3), np.array([1.0, 2.0, 4.0]))
    # P = (1, 2, 4) / 7, N = 3: w = (3 P) ** -0.5 = (2.6458, 1.8708, 1.3229), and the largest
    # (row 0's) divides them: (1, 1 / sqrt(2), 1 / 2).
    n, p = 3, np.array([1.0, 2.0, 4.0]) / 7.0
    raw = (n * p) ** -0.5
    expected = raw / raw.max()
    np.testing.assert_allclose(expected, [1.0, 2**-0.5, 0.5])
    for _ in range(10):
        batch = memory.sample(4)
        np.testing.assert_allclose(batch.weights, expected[batch.indices], rtol=1e-6)


def test_weights_are_normalised_by_the_largest_weight_in_memory_not_in_the_batch() -> None:
    memory = _memory(3, seed=8, beta_schedule=ConstantSchedule(0.5))
    _store(memory, [0, 1, 2])
    memory.update_priorities(np.arange(3), np.array([1.0, 100.0, 100.0]))
    batch = memory.sample(2)
    assert 0 not in batch.indices  # row 0 holds 1/201 of the mass: with this seed, not drawn
    # (100 / 1) ** -0.5: a batch-wise maximum would have made these 1.
    np.testing.assert_allclose(batch.weights, [0.1, 0.1], rtol=1e-6)


def test_weights_are_one_with_equal_priorities_or_beta_zero() -> None:
    equal = _memory(8, beta_schedule=ConstantSchedule(1.0))
    _store(equal, list(range(5)))
    np.testing.assert_array_equal(equal.sample(16).weights, 1.0)
    beta_zero = _memory(8, beta_schedule=ConstantSchedule(0.0))
    _store(beta_zero, list(range(5)))
    beta_zero.update_priorities(np.arange(5), np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    np.testing.assert_array_equal(beta_zero.sample(16).weights, 1.0)


def test_beta_follows_the_schedule_over_sample_calls() -> None:
    memory = _memory(4, seed=9, beta_schedule=LinearSchedule(0.4, 1.0, 10))
    _store(memory, [0, 1, 2, 3])
    memory.update_priorities(np.arange(4), np.array([1.0, 2.0, 4.0, 8.0]))
    assert memory.beta == pytest.approx(0.4)
    for _ in range(3):
        memory.sample(4)
    assert memory.sample_calls == 3
    assert memory.beta == pytest.approx(0.58)
    # The fourth call weighs with the beta of 3 calls before it, then moves on.
    batch = memory.sample(4)
    priorities = np.array([1.0, 2.0, 4.0, 8.0])
    np.testing.assert_allclose(batch.weights, (priorities[batch.indices] / 1.0) ** -0.58, rtol=1e-6)
    assert memory.beta == pytest.approx(0.64)
    for _ in range(20):
        memory.sample(4)
    assert memory.beta == 1.0


# -- priorities of new rows -------------------------------------------------------------------


def test_new_rows_get_priority_one_before_any_update() -> None:
    memory = _memory(6)
    _store(memory, [0, 1, 2])
    np.testing.assert_array_equal(_priorities(memory), [1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    assert memory.max_priority == 1.0


def test_new_rows_get_the_largest_priority_given_so_far() -> None:
    memory = _memory(6)
    _store(memory, [0, 1, 2])
    memory.update_priorities(np.arange(3), np.array([0.5, 3.0, 1.5]))
    memory.update_priorities(np.array([1]), np.array([0.1]))  # row 1 drops; the maximum stays
    _store(memory, [3, 4])
    np.testing.assert_allclose(_priorities(memory), [0.5, 0.1, 1.5, 3.0, 3.0, 0.0])
    assert memory.max_priority == pytest.approx(3.0)


def test_a_wrapping_store_keeps_the_trees_in_step_with_the_rows() -> None:
    memory = _memory(5, seed=10)  # 8 leaves underneath
    _store(memory, [0, 1, 2])
    _assert_trees_match_rows(memory)
    memory.update_priorities(np.array([0, 1, 2]), np.array([0.5, 0.25, 2.0]))
    _store(memory, [3, 4, 5, 6])  # rows 3, 4, then 0, 1 (an index array, not a slice)
    np.testing.assert_allclose(_priorities(memory), [2.0, 2.0, 2.0, 2.0, 2.0])
    memory.update_priorities(np.array([2, 4]), np.array([7.0, 0.125]))
    _store(memory, [7, 8, 9, 10])  # rows 2, 3, 4, 0
    np.testing.assert_allclose(_priorities(memory), [7.0, 2.0, 7.0, 7.0, 7.0])
    assert _ids(memory.get(np.arange(5))) == [10, 6, 7, 8, 9]
    _assert_trees_match_rows(memory)
    _assert_consistent(memory.sample(200))


def test_a_batch_as_large_as_the_memory_resets_every_priority() -> None:
    memory = _memory(4)
    _store(memory, [0])
    memory.update_priorities(np.array([0]), np.array([0.5]))
    _store(memory, [1, 2, 3, 4])  # rows 1, 2, 3, 0
    np.testing.assert_array_equal(_priorities(memory), 1.0)
    _assert_trees_match_rows(memory)


# -- errors -----------------------------------------------------------------------------------


def test_update_priorities_of_rows_not_stored_raises() -> None:
    memory = _memory(8)
    _store(memory, [0, 1, 2])
    with pytest.raises(CoachError, match="0 to 2"):
        memory.update_priorities(np.array([1, 3]), np.array([1.0, 1.0]))
    with pytest.raises(CoachError, match="rows"):
        memory.update_priorities(np.array([-1]), np.array([1.0]))
    np.testing.assert_array_equal(_priorities(memory)[:3], 1.0)


def test_update_priorities_with_non_finite_td_errors_raises() -> None:
    memory = _memory(4)
    _store(memory, [0, 1])
    with pytest.raises(CoachError, match="non-finite"):
        memory.update_priorities(np.array([0, 1]), np.array([1.0, np.nan]))
    assert memory.sum_tree.total() == 2.0


def test_update_priorities_needs_one_td_error_per_row() -> None:
    memory = _memory(4)
    _store(memory, [0, 1])
    with pytest.raises(CoachError, match="2 rows and 3 TD errors"):
        memory.update_priorities(np.array([0, 1]), np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"alpha": -0.1}, "alpha"), ({"epsilon": 0.0}, "epsilon")]
)
def test_invalid_alpha_or_epsilon_raise(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(CoachError, match=match):
        _memory(4, **kwargs)


# -- checkpoints and determinism --------------------------------------------------------------


def _used_memory(seed: int = 11) -> PrioritizedExperienceReplay:
    """A memory that has wrapped (write position 2), with updated priorities and samples."""
    memory = _memory(6, seed=seed, beta_schedule=LinearSchedule(0.4, 1.0, 100))
    _store(memory, [0, 1, 2, 3])
    batch = memory.sample(4)
    memory.update_priorities(batch.indices, np.array([0.5, 4.0, 2.0, 8.0]))
    _store(memory, [4, 5, 6, 7])
    memory.update_priorities(np.array([3, 5]), np.array([16.0, 0.25]))
    memory.sample(3)
    return memory


def test_state_dict_round_trip_samples_identically() -> None:
    memory = _used_memory()
    restored = _memory(6, seed=99, beta_schedule=LinearSchedule(0.4, 1.0, 100))
    _store(restored, [50, 51, 52, 53, 54])  # contents that the load must replace entirely
    restored.update_priorities(np.array([4]), np.array([1000.0]))
    restored.load_state_dict(memory.state_dict())

    np.testing.assert_array_equal(_priorities(restored), _priorities(memory))
    assert restored.max_priority == memory.max_priority == pytest.approx(16.0)
    assert restored.sample_calls == memory.sample_calls == 2
    assert restored.beta == memory.beta
    _assert_trees_match_rows(restored)

    restored.rng.bit_generator.state = memory.rng.bit_generator.state
    for _ in range(5):
        a, b = memory.sample(4), restored.sample(4)
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_array_equal(a.weights, b.weights)
        assert _ids(a) == _ids(b)
    # Storing goes on at the same position with the same priority in both.
    _store(memory, [8])
    _store(restored, [8])
    np.testing.assert_array_equal(_priorities(restored), _priorities(memory))
    assert _ids(restored.get(np.arange(6))) == _ids(memory.get(np.arange(6)))


def test_loading_a_smaller_state_drops_the_priorities_held_before() -> None:
    saved = _memory(6)
    _store(saved, [0, 1])
    saved.update_priorities(np.array([0, 1]), np.array([2.0, 3.0]))
    memory = _memory(6)
    _store(memory, [10, 11, 12, 13])
    memory.update_priorities(np.array([3]), np.array([0.5]))
    memory.load_state_dict(saved.state_dict())
    np.testing.assert_allclose(_priorities(memory), [2.0, 3.0, 0.0, 0.0, 0.0, 0.0])
    assert memory.min_tree.min() == pytest.approx(2.0)
    _assert_trees_match_rows(memory)


def test_state_dict_is_a_copy() -> None:
    memory = _used_memory()
    state = memory.state_dict()
    saved = state["priorities"].copy()
    memory.update_priorities(np.arange(6), np.full(6, 123.0))
    np.testing.assert_array_equal(state["priorities"], saved)


def test_restoring_into_another_capacity_raises_naming_both() -> None:
    memory = _used_memory()
    with pytest.raises(CoachError, match=r"capacity 6 .* capacity 8.*max_size=6"):
        _memory(8).load_state_dict(memory.state_dict())


def test_restoring_with_another_alpha_carries_the_priorities_over() -> None:
    memory = _memory(4, alpha=0.5)
    _store(memory, [0, 1, 2])
    memory.update_priorities(np.arange(3), np.array([4.0, 9.0, 1.0]))  # priorities 2, 3, 1
    restored = _memory(4, alpha=1.0)
    restored.load_state_dict(memory.state_dict())
    np.testing.assert_allclose(_priorities(restored)[:3], [4.0, 9.0, 1.0])
    assert restored.max_priority == pytest.approx(9.0)


def test_a_uniform_memory_loads_with_every_row_at_priority_one() -> None:
    uniform = ExperienceReplay(4, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0))
    _store(uniform, [0, 1, 2])
    _store(uniform, [3, 4])  # wrapped: rows [4, 1, 2, 3]
    memory = _memory(6)
    memory.load_state_dict(uniform.state_dict())  # another capacity: laid out oldest first
    assert _ids(memory.get(np.arange(4))) == [1, 2, 3, 4]
    np.testing.assert_array_equal(_priorities(memory), [1.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    assert memory.sample_calls == 0
    _assert_trees_match_rows(memory)


def test_a_corrupted_priority_array_raises() -> None:
    state = _used_memory().state_dict()
    state["priorities"] = state["priorities"][:-1]
    with pytest.raises(CoachError, match="corrupted"):
        _memory(6).load_state_dict(state)


def test_sampling_is_reproducible_with_the_same_seed() -> None:
    first, second, other = _used_memory(3), _used_memory(3), _used_memory(4)
    np.testing.assert_array_equal(_priorities(first), _priorities(second))
    # Small batches of a wide distribution, so that another seed shows in the rows drawn.
    a = [first.sample(2) for _ in range(10)]
    b = [second.sample(2) for _ in range(10)]
    c = [other.sample(2) for _ in range(10)]
    np.testing.assert_array_equal([x.indices for x in a], [x.indices for x in b])
    np.testing.assert_array_equal([x.weights for x in a], [x.weights for x in b])
    assert not np.array_equal([x.indices for x in a], [x.indices for x in c])


# -- parameters -------------------------------------------------------------------------------


def test_parameters_build_a_prioritized_replay() -> None:
    schedule = ConstantSchedule(0.7)
    params = PrioritizedExperienceReplayParameters(
        max_size=9, alpha=0.3, beta_schedule=schedule, epsilon=0.01
    )
    memory = params.build(OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0))
    assert isinstance(memory, PrioritizedExperienceReplay)
    assert memory.capacity == 9
    assert (memory.alpha, memory.epsilon, memory.beta_schedule) == (0.3, 0.01, schedule)
    assert memory.beta == 0.7


def test_extra_columns_are_stored_and_sampled_with_the_rows() -> None:
    discount = spaces.Box(0.0, 1.0, shape=(), dtype=np.float32)
    params = PrioritizedExperienceReplayParameters(max_size=4, alpha=1.0, epsilon=EPSILON)
    # Positionally, as the agent builds its memory.
    memory = params.build(
        OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0), {"discount": discount}
    )
    for ids in ([0, 1, 2], [3, 4]):  # the second batch wraps
        k = np.asarray(ids, dtype=np.float64)
        memory.store(
            Transition(
                state={"observation": np.repeat(k[:, None], 3, axis=1)},
                action=(k % 4).astype(np.int64),
                reward=(10 * k).astype(np.float32),
                next_state={"observation": np.repeat(k[:, None] + 0.5, 3, axis=1)},
                terminated=np.zeros(len(ids), dtype=bool),
                truncated=np.zeros(len(ids), dtype=bool),
                extras={"discount": (k / 10).astype(np.float32)},
            )
        )
    batch = memory.sample(50)
    np.testing.assert_allclose(batch.extras["discount"], np.array(_ids(batch)) / 10, rtol=1e-6)
    assert set(_ids(batch)) == {1, 2, 3, 4}
    _assert_trees_match_rows(memory)


def test_parameter_defaults() -> None:
    params = PrioritizedExperienceReplayParameters()
    assert (params.max_size, params.alpha, params.epsilon) == (1_000_000, 0.6, 1e-6)
    assert params.beta_schedule == LinearSchedule(0.4, 1.0, 100_000)
    # Each instance has its own schedule, and a typo is an error, not a new attribute.
    assert params.beta_schedule is not PrioritizedExperienceReplayParameters().beta_schedule
    with pytest.raises(AttributeError):
        params.alhpa = 0.5  # type: ignore[attr-defined]


def test_a_round_is_drawn_in_turn_as_the_priorities_change():
    memory = _memory(64)
    _store(memory, list(range(64)))
    assert not memory.draws_ahead
    rounds = memory.batches(8, 3)
    first = next(rounds)
    # the step's new priorities reach the next draw: only row 5 matters now
    memory.update_priorities(first.indices, np.zeros(len(first.indices)))
    memory.update_priorities(np.arange(64), np.where(np.arange(64) == 5, 1e6, 1e-9))
    second = next(rounds)
    assert (second.indices == 5).all()
