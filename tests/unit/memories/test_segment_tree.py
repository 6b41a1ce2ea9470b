"""Unit tests for coach/memories/segment_tree.py: SumTree and MinTree against brute force.

Leaf values in the search tests are multiples of 1/8, so every partial sum is exact in
float64 and the tree's answers can be compared with a cumulative sum for equality.
"""

from __future__ import annotations

import numpy as np
import pytest

from coach.memories.segment_tree import MinTree, SegmentTree, SumTree

CAPACITIES = [1, 2, 3, 5, 8, 13, 64, 100]


def _brute_force(tree: SegmentTree, leaves: np.ndarray) -> float:
    return float(leaves.sum()) if isinstance(tree, SumTree) else float(leaves.min(initial=np.inf))


def _query(tree: SegmentTree) -> float:
    if isinstance(tree, SumTree):
        return tree.total()
    assert isinstance(tree, MinTree)
    return tree.min()


@pytest.mark.parametrize("tree_class", [SumTree, MinTree])
@pytest.mark.parametrize("capacity", CAPACITIES)
def test_random_batched_updates_match_brute_force(
    tree_class: type[SegmentTree], capacity: int
) -> None:
    rng = np.random.default_rng(capacity)
    tree = tree_class(capacity)
    leaves = np.full(capacity, tree.neutral)
    for _ in range(50):
        # Batches larger than the capacity are bound to repeat leaves: the last value counts.
        indices = rng.integers(0, capacity, size=rng.integers(1, 2 * capacity + 2))
        values = rng.uniform(0.0, 10.0, size=len(indices))
        tree.update(indices, values)
        for i, v in zip(indices, values, strict=True):
            leaves[i] = v
        np.testing.assert_array_equal(tree[np.arange(capacity)], leaves)
        assert _query(tree) == pytest.approx(_brute_force(tree, leaves), rel=1e-12)


@pytest.mark.parametrize("tree_class", [SumTree, MinTree])
def test_duplicate_indices_keep_the_last_value_and_parents_follow(
    tree_class: type[SegmentTree],
) -> None:
    tree = tree_class(8)
    tree.update(np.arange(8), np.full(8, 5.0))
    tree.update(np.array([2, 5, 2, 7, 5, 2]), np.array([1.0, 9.0, 3.0, 4.0, 0.5, 6.0]))
    np.testing.assert_array_equal(tree[np.array([2, 5, 7])], [6.0, 0.5, 4.0])
    assert _query(tree) == (5 * 5.0 + 6.0 + 0.5 + 4.0 if tree_class is SumTree else 0.5)


def test_sibling_leaves_updated_together_both_reach_the_root() -> None:
    tree = SumTree(4)
    tree.update(np.array([0, 1, 2, 3]), np.array([1.0, 2.0, 4.0, 8.0]))
    assert tree.total() == 15.0
    tree.update(np.array([1, 0]), np.array([20.0, 10.0]))  # one parent, reached twice
    assert tree.total() == 42.0


def test_a_scalar_value_sets_every_given_leaf() -> None:
    tree = MinTree(6)
    tree.update(np.array([1, 4]), 2.5)
    np.testing.assert_array_equal(tree[np.arange(6)], [np.inf, 2.5, np.inf, np.inf, 2.5, np.inf])
    assert tree.min() == 2.5


def test_an_empty_update_changes_nothing() -> None:
    tree = SumTree(4)
    tree.update(np.array([3]), np.array([2.0]))
    tree.update(np.array([], dtype=np.int64), np.array([]))
    assert tree.total() == 2.0


@pytest.mark.parametrize("tree_class", [SumTree, MinTree])
def test_fresh_trees_hold_the_neutral_value(tree_class: type[SegmentTree]) -> None:
    tree = tree_class(5)
    assert len(tree) == 5
    assert _query(tree) == (0.0 if tree_class is SumTree else np.inf)


@pytest.mark.parametrize("tree_class", [SumTree, MinTree])
@pytest.mark.parametrize("bad", [-1, 5, 7])
def test_leaf_indices_outside_the_capacity_raise(tree_class: type[SegmentTree], bad: int) -> None:
    tree = tree_class(5)  # 8 leaves underneath: 5, 6 and 7 are padding
    with pytest.raises(IndexError, match=r"\[0, 5\)"):
        tree.update(np.array([0, bad]), np.array([1.0, 1.0]))
    with pytest.raises(IndexError):
        tree[np.array([bad])]
    assert _query(tree) == (0.0 if tree_class is SumTree else np.inf)


@pytest.mark.parametrize("bad", [-0.5, np.nan])
def test_a_sum_tree_refuses_negative_or_nan_values(bad: float) -> None:
    tree = SumTree(4)
    with pytest.raises(ValueError, match=">= 0"):
        tree.update(np.array([0, 1]), np.array([1.0, bad]))


def test_capacity_below_one_raises() -> None:
    with pytest.raises(ValueError, match="capacity"):
        SumTree(0)


def _brute_force_search(leaves: np.ndarray, prefix_sums: np.ndarray) -> np.ndarray:
    """The first leaf whose running sum exceeds each query."""
    return np.searchsorted(np.cumsum(leaves), prefix_sums, side="right")


@pytest.mark.parametrize("capacity", CAPACITIES)
def test_find_prefix_sum_matches_a_cumulative_sum_search(capacity: int) -> None:
    rng = np.random.default_rng(100 + capacity)
    tree = SumTree(capacity)
    for _ in range(10):
        # Eighths, with about a third of them 0 (never found), some at the very end.
        leaves = rng.integers(0, 40, size=capacity) / 8.0 * (rng.random(capacity) > 0.3)
        leaves[rng.integers(0, capacity)] = 1.0  # the total is never 0
        tree.update(np.arange(capacity), leaves)
        total = tree.total()
        assert total == leaves.sum()
        # Random queries, and every boundary between leaves (where ties must go right) short
        # of the total: past it the brute force answers ``capacity``, a leaf that is not there.
        boundaries = np.cumsum(leaves)
        queries = np.concatenate([rng.uniform(0.0, total, 500), boundaries[boundaries < total]])
        found = tree.find_prefix_sum(queries)
        np.testing.assert_array_equal(found, _brute_force_search(leaves, queries))
        assert np.all(leaves[found] > 0)


def test_find_prefix_sum_on_a_hand_example() -> None:
    tree = SumTree(6)
    tree.update(np.arange(6), np.array([0.0, 0.0, 3.0, 0.0, 2.0, 0.0]))
    queries = np.array([0.0, 1.0, 2.999, 3.0, 4.5])
    np.testing.assert_array_equal(tree.find_prefix_sum(queries), [2, 2, 2, 4, 4])


def test_find_prefix_sum_outside_the_total_finds_the_first_or_last_positive_leaf() -> None:
    tree = SumTree(6)  # 8 leaves: the 2 padding ones, like the 0 rows, must never come up
    tree.update(np.arange(6), np.array([0.0, 0.0, 3.0, 0.0, 2.0, 0.0]))
    queries = np.array([-1.0, 5.0, 5.0 + 1e-9, 1e9])
    np.testing.assert_array_equal(tree.find_prefix_sum(queries), [2, 4, 4, 4])


def test_find_prefix_sum_keeps_the_shape_of_the_queries() -> None:
    tree = SumTree(4)
    tree.update(np.arange(4), np.ones(4))
    found = tree.find_prefix_sum(np.array([[0.5, 1.5], [2.5, 3.5]]))
    assert found.dtype == np.int64
    np.testing.assert_array_equal(found, [[0, 1], [2, 3]])


def test_find_prefix_sum_on_a_single_leaf() -> None:
    tree = SumTree(1)
    tree.update(np.array([0]), np.array([4.0]))
    np.testing.assert_array_equal(tree.find_prefix_sum(np.array([0.0, 3.9])), [0, 0])
