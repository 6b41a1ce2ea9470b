"""Unit tests for coach/filters/observation/move_axis.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.move_axis import ObservationMoveAxisFilter


def _ramp_box(shape: tuple[int, ...], dtype: type = np.float32) -> spaces.Box:
    """A Box whose bounds differ element by element, to see where each one goes."""
    low = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    return spaces.Box(low, low + 3, dtype=dtype)


# (space, origin, target, the per-env permutation of axes, as np.transpose takes it)
CASES = [
    (spaces.Box(0, 255, shape=(4, 5, 3), dtype=np.uint8), -1, 0, (2, 0, 1)),  # HWC -> CHW
    (_ramp_box((3, 4, 5)), 0, -1, (1, 2, 0)),  # CHW -> HWC
    (_ramp_box((2, 6), np.float64), 0, 1, (1, 0)),
    (_ramp_box((2, 3, 4, 5), np.int16), 1, 2, (0, 2, 1, 3)),
    (_ramp_box((2, 3)), -2, 0, (0, 1)),  # already there
]
IDS = [f"{c[0].shape}-{c[0].dtype}-{c[1]}to{c[2]}" for c in CASES]


def _batch(space: spaces.Box, n: int = 3) -> np.ndarray:
    space.seed(7)
    return np.stack([space.sample() for _ in range(n)])


@pytest.mark.parametrize(("space", "origin", "target", "order"), CASES, ids=IDS)
def test_moves_the_axis_of_each_row(
    space: spaces.Box, origin: int, target: int, order: tuple[int, ...]
) -> None:
    f = ObservationMoveAxisFilter(origin, target)
    out_space = f.output_space(space)
    batch = _batch(space)
    out = f.filter(batch)
    expected = np.stack([np.transpose(row, order) for row in batch])
    assert np.array_equal(out, expected) and out.shape == expected.shape
    assert out.dtype == space.dtype and out.flags.c_contiguous
    assert not np.shares_memory(out, batch)
    assert all(out_space.contains(row) for row in out)


@pytest.mark.parametrize(("space", "origin", "target", "order"), CASES, ids=IDS)
def test_output_space_moves_its_bounds_and_the_input_is_untouched(
    space: spaces.Box, origin: int, target: int, order: tuple[int, ...]
) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationMoveAxisFilter(origin, target).output_space(space)
    assert isinstance(out_space, spaces.Box) and out_space.dtype == space.dtype
    assert out_space.shape == tuple(space.shape[i] for i in order)
    assert np.array_equal(out_space.low, np.transpose(space.low, order))
    assert np.array_equal(out_space.high, np.transpose(space.high, order))
    assert space == before and out_space is not space
    out_space.low[...] = 0  # the output space shares no memory with the input one
    assert space == before


@pytest.mark.parametrize(
    ("space", "origin", "target", "needs"),
    [
        (spaces.Box(0, 1, shape=(4, 5)), 2, 0, "at least 3 axes"),
        (spaces.Box(0, 1, shape=(4, 5)), 0, -3, "at least 3 axes"),
        (spaces.Box(0, 1, shape=(4,)), -1, 1, "at least 2 axes"),
        (spaces.Discrete(3), 0, 1, "needs a Box observation"),
    ],
    ids=["origin-past-the-end", "target-before-the-start", "1-d", "discrete"],
)
def test_refuses_an_axis_out_of_range_naming_both(
    space: spaces.Space, origin: int, target: int, needs: str
) -> None:
    with pytest.raises(CoachError, match=f"ObservationMoveAxisFilter .*{needs}") as error:
        ObservationMoveAxisFilter(origin, target).output_space(space)
    assert str(error.value).endswith(f"got {space}")


@pytest.mark.parametrize(("origin", "target"), [(0.5, 1), (0, "1"), (None, 0), (True, 0)])
def test_refuses_an_axis_that_is_not_an_integer(origin: object, target: object) -> None:
    with pytest.raises(CoachError, match="must be an integer"):
        ObservationMoveAxisFilter(origin, target)  # type: ignore[arg-type]


def test_keeps_no_state_and_repr_reproduces_it() -> None:
    f = ObservationMoveAxisFilter(np.int64(-1), 0)
    assert repr(f) == "ObservationMoveAxisFilter(-1, 0)"
    again = eval(repr(f), {"ObservationMoveAxisFilter": ObservationMoveAxisFilter})
    assert (again.axis_origin, again.axis_target) == (-1, 0)
    assert f.state_dict() == {}
    f.load_state_dict({})
    f.output_space(spaces.Box(0, 9, shape=(1, 2, 2)))
    first = f.start_episodes(np.arange(4.0).reshape(1, 1, 2, 2), np.array([0]))
    assert first.tolist() == [[[[0.0, 2.0]], [[1.0, 3.0]]]]  # (1, 2, 2) -> (2, 1, 2)
