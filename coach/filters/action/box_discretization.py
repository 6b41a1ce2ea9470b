"""Let a discrete agent act in a continuous Box: a grid of points over the box."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.filter import ActionFilter

MAX_ACTIONS = 1_000_000
"""The most grid points a discretization may have: the grid is kept as a table, and no
discrete agent learns over more actions than this."""


class BoxDiscretization(ActionFilter):
    """A discrete agent on a bounded Box environment: each agent action is a grid point.

    Dimension ``d`` of the box (its elements in C order, so a box of shape ``(2, 2)`` has
    four dimensions) gets ``bins[d]`` evenly spaced values, ``linspace(low[d], high[d],
    bins[d])``, both bounds included. The agent acts in ``Discrete(prod(bins))`` and action
    ``i`` is the ``i``-th point of the cartesian product of those values, the last dimension
    varying fastest (``itertools.product`` order, as in the original Coach). With bins
    ``(3, 2)`` over ``[0, 1] x [10, 20]``, actions 0 to 5 are ``(0, 10), (0, 20), (0.5, 10),
    (0.5, 20), (1, 10), (1, 20)``. One bin pins its dimension at the low bound.

    Args:
        num_bins_per_dimension: The number of values per dimension: one count for every
            dimension, or a count per dimension (as many as the box has elements).
        force_int_bins: Round every value down to an integer, for a box of integer bounds
            (Coach truncated toward zero, the same on non-negative ranges; rounding down keeps
            the values inside the bounds and apart). The box's dtype may then be integer.
    """

    def __init__(
        self, num_bins_per_dimension: int | Sequence[int], force_int_bins: bool = False
    ) -> None:
        given: Any = num_bins_per_dimension
        single = isinstance(given, int | np.integer) and not isinstance(given, bool)
        counts = [given] if single else list(given) if isinstance(given, list | tuple) else []
        if not counts or any(
            isinstance(c, bool) or not isinstance(c, int | np.integer) or c < 1 for c in counts
        ):
            raise CoachError(
                "BoxDiscretization: num_bins_per_dimension must be a positive integer or a "
                f"non-empty list of them, got {given!r}"
            )
        if not isinstance(force_int_bins, bool):
            raise CoachError(
                f"BoxDiscretization: force_int_bins must be True or False, got {force_int_bins!r}"
            )
        self.num_bins_per_dimension: int | list[int] = (
            int(counts[0]) if single else [int(c) for c in counts]
        )
        self.force_int_bins = force_int_bins
        self.points: np.ndarray | None = None
        """The environment action of every agent action, ``(n, *box.shape)``; set by
        `input_space`."""

    def __repr__(self) -> str:
        return (
            f"BoxDiscretization({self.num_bins_per_dimension!r}, "
            f"force_int_bins={self.force_int_bins})"
        )

    def input_space(self, output_space: spaces.Space[Any]) -> spaces.Space[Any]:
        if not isinstance(output_space, spaces.Box):
            raise CoachError(
                f"BoxDiscretization needs a Box action space to discretize, got {output_space}"
            )
        if not output_space.is_bounded("both"):
            raise CoachError(
                "BoxDiscretization needs a Box bounded on both sides (its grid spans the "
                f"bounds), got {output_space}"
            )
        low, high = output_space.low.ravel(), output_space.high.ravel()
        if isinstance(self.num_bins_per_dimension, int):
            counts = [self.num_bins_per_dimension] * low.size
        elif len(self.num_bins_per_dimension) == low.size:
            counts = self.num_bins_per_dimension
        else:
            raise CoachError(
                f"BoxDiscretization needs one bin count per dimension of the Box ({low.size}), "
                f"got {len(self.num_bins_per_dimension)} counts {self.num_bins_per_dimension} "
                f"for {output_space}"
            )
        if math.prod(counts) > MAX_ACTIONS:
            raise CoachError(
                f"BoxDiscretization: bins {counts} make {math.prod(counts)} actions, more than "
                f"{MAX_ACTIONS}; use fewer bins for the Box {output_space}"
            )
        integer_box = np.issubdtype(output_space.dtype, np.integer)
        if integer_box and not self.force_int_bins:
            raise CoachError(
                "BoxDiscretization needs force_int_bins=True for a Box of integer dtype (its "
                f"grid points would not be integers), got {output_space}"
            )
        if self.force_int_bins and not (
            np.array_equal(low, np.floor(low)) and np.array_equal(high, np.floor(high))
        ):
            raise CoachError(
                "BoxDiscretization with force_int_bins needs a Box of integer bounds, got "
                f"{output_space}"
            )

        axes = []
        for d, count in enumerate(counts):
            # float64 so that the bounds of a float32 box are met exactly
            values = np.linspace(np.float64(low[d]), np.float64(high[d]), count)
            if self.force_int_bins:
                values = np.floor(values)
                if len(np.unique(values)) < count:
                    raise CoachError(
                        f"BoxDiscretization: force_int_bins asks for {count} integer values in "
                        f"dimension {d}, which holds only {int(high[d] - low[d]) + 1}, got "
                        f"{output_space}"
                    )
            axes.append(values)
        # every combination, the last dimension varying fastest (itertools.product order)
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, low.size)
        self.points = grid.reshape(len(grid), *output_space.shape).astype(output_space.dtype)
        return spaces.Discrete(len(grid))

    def filter(self, action: np.ndarray) -> np.ndarray:
        """Map a batch of indices ``(B,)`` to their grid points ``(B, *box.shape)``."""
        if self.points is None:
            raise RuntimeError("BoxDiscretization.filter called before input_space")
        return self.points[action]  # fancy indexing: a new array
