"""Segment trees over a fixed number of leaves: sums and minimums, updated and queried in batches.

Prioritized replay needs three things of a priority per stored transition: the total (to draw
in proportion to it), the smallest (to normalise importance weights) and the leaf at which a
running sum is reached (to turn a uniform draw into a transition). A binary tree over the
priorities answers each in O(log n). Here every operation takes a whole batch of leaves or
queries and walks the tree one level at a time in numpy, so a batch of 256 costs
``log2(capacity)`` array operations instead of ``256 * log2(capacity)`` Python steps.

The tree is a single array of ``2 * leaves`` values: node 1 is the root, node ``i`` has the
children ``2i`` and ``2i + 1``, and the leaves are nodes ``leaves .. 2 * leaves - 1`` (node 0
is unused). ``leaves`` is the capacity rounded up to a power of two, so every leaf sits at the
same depth and one step of a descent is the same array operation for every query. The extra
leaves hold the operation's neutral value (0 for a sum, +inf for a minimum), so they never
change a result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class SegmentTree(ABC):
    """A binary tree whose inner nodes combine their two children (sum, minimum, ...).

    Args:
        capacity: How many leaves can be used, indexed ``0 .. capacity - 1``.
    """

    neutral: float
    """The value of an unused leaf: combining with it changes nothing."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"a segment tree needs a capacity >= 1, got {capacity}")
        self.capacity = capacity
        self._depth = (capacity - 1).bit_length()
        self._leaves = 1 << self._depth
        self._tree = np.full(2 * self._leaves, self.neutral, dtype=np.float64)

    @staticmethod
    @abstractmethod
    def _combine(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """The value of parents whose children hold ``left`` and ``right``."""

    def _check_values(self, values: np.ndarray) -> None:  # noqa: B027 - optional hook
        """Raise ``ValueError`` for leaf values this tree cannot hold."""

    def _leaf_nodes(self, indices: np.ndarray) -> np.ndarray:
        indices = np.asarray(indices, dtype=np.int64)
        # A negative index or one past the capacity would silently write an inner node or a
        # padding leaf and corrupt every query after it, so it is refused here.
        if indices.size and (indices.min() < 0 or indices.max() >= self.capacity):
            raise IndexError(
                f"leaf indices must lie in [0, {self.capacity}), "
                f"got values from {indices.min()} to {indices.max()}"
            )
        return indices + self._leaves

    def __len__(self) -> int:
        return self.capacity

    def __getitem__(self, indices: np.ndarray | int) -> np.ndarray:
        """The values of the leaves at ``indices``."""
        return self._tree[self._leaf_nodes(np.asarray(indices))]

    def update(self, indices: np.ndarray, values: np.ndarray | float) -> None:
        """Set the leaves at ``indices`` to ``values`` and recompute the nodes above them.

        Args:
            indices: Leaf indices, shape (n,); an index may appear more than once, and then
                the last value given for it is the one kept.
            values: The new values, shape (n,), or one value for all of them.
        """
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), indices.shape)
        if indices.size == 0:
            return
        self._check_values(values)
        nodes = self._leaf_nodes(indices)
        # numpy does not promise which of several writes to one element lands, so the last
        # value for each leaf is picked explicitly.
        nodes, first_from_the_end = np.unique(nodes[::-1], return_index=True)
        self._tree[nodes] = values[::-1][first_from_the_end]
        # Row p of this view holds nodes 2p and 2p + 1: the two children of node p.
        children = self._tree.reshape(-1, 2)
        for _ in range(self._depth):
            nodes = nodes >> 1
            # A parent of two updated leaves appears twice here. Both copies are computed from
            # the same children, final since the level below, so both writes carry the same
            # value and it does not matter which lands; that is cheaper than removing them.
            pairs = children[nodes]
            self._tree[nodes] = self._combine(pairs[:, 0], pairs[:, 1])


class SumTree(SegmentTree):
    """A segment tree of sums over non-negative leaves, with a search by running sum.

    Args:
        capacity: How many leaves can be used, indexed ``0 .. capacity - 1``; all start at 0.
    """

    neutral = 0.0

    @staticmethod
    def _combine(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        return np.add(left, right)

    def _check_values(self, values: np.ndarray) -> None:
        # A negative (or NaN) leaf would break the descent of find_prefix_sum.
        if not np.all(values >= 0):
            raise ValueError(
                f"a sum tree holds values >= 0, got {values[~(values >= 0)][:5].tolist()}"
            )

    def total(self) -> float:
        """The sum of all leaves."""
        return float(self._tree[1])

    def find_prefix_sum(self, prefix_sums: np.ndarray) -> np.ndarray:
        """For each query, the first leaf at which the running sum of the leaves exceeds it.

        That is the smallest ``i`` with ``leaf[0] + ... + leaf[i] > prefix_sum``, so a query
        drawn uniformly in ``[0, total())`` finds leaf ``i`` with probability
        ``leaf[i] / total()``. A leaf of value 0 is never returned while the total is
        positive: queries below 0 find the first positive leaf, and queries at or past the
        total (which rounding can produce at the very end) find the last one.

        Args:
            prefix_sums: The queries, any shape.

        Returns:
            Leaf indices (int64), the shape of ``prefix_sums``.
        """
        remaining = np.maximum(np.asarray(prefix_sums, dtype=np.float64), 0.0)
        nodes = np.ones(remaining.shape, dtype=np.int64)
        for _ in range(self._depth):
            left = 2 * nodes
            left_sum = self._tree[left]
            # Never step into a right subtree that sums to 0: a query a hair past the total
            # would otherwise end on a padding leaf or a row that holds nothing yet.
            go_right = (remaining >= left_sum) & (self._tree[left + 1] > 0)
            remaining = np.where(go_right, remaining - left_sum, remaining)
            nodes = left + go_right
        return nodes - self._leaves


class MinTree(SegmentTree):
    """A segment tree of minimums.

    Args:
        capacity: How many leaves can be used, indexed ``0 .. capacity - 1``; all start at
            +inf, so unused leaves never count.
    """

    neutral = float("inf")

    @staticmethod
    def _combine(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        return np.minimum(left, right)

    def min(self) -> float:
        """The smallest leaf (+inf while no leaf is set)."""
        return float(self._tree[1])
