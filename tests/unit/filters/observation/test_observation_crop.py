"""Unit tests for coach/filters/observation/crop.py."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.crop import ObservationCropFilter


def _ramp_box(shape: tuple[int, ...], dtype: type = np.float32) -> spaces.Box:
    """A Box whose bounds differ element by element, to see which ones the crop keeps."""
    low = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    return spaces.Box(low, low + 10, dtype=dtype)


# (space, crop_low, crop_high, the per-env index expression the crop amounts to)
CASES = [
    (_ramp_box((10,)), (2,), (7,), np.s_[2:7]),
    (spaces.Box(0, 255, shape=(6, 8), dtype=np.uint8), (1, None), (None, 5), np.s_[1:, :5]),
    (_ramp_box((5, 6, 3), np.float64), (0, 2, 1), (5, 6, 2), np.s_[0:5, 2:6, 1:2]),
    (
        spaces.Box(0, 255, shape=(21, 16, 3), dtype=np.uint8),
        None,
        np.array([20, 15, 3]),
        np.s_[:20, :15, :3],
    ),
    (_ramp_box((4, 5), np.int32), np.array([3, 0]), None, np.s_[3:, :]),
]
IDS = [f"{c[0].shape}-{c[0].dtype}" for c in CASES]


def _batch(space: spaces.Box, n: int = 4) -> np.ndarray:
    space.seed(4)
    return np.stack([space.sample() for _ in range(n)])


@pytest.mark.parametrize(("space", "low", "high", "index"), CASES, ids=IDS)
def test_keeps_the_cropped_part_of_every_row(
    space: spaces.Box, low: Any, high: Any, index: Any
) -> None:
    f = ObservationCropFilter(low, high)
    out_space = f.output_space(space)
    batch = _batch(space)
    out = f.filter(batch)
    expected = np.stack([row[index] for row in batch])
    assert np.array_equal(out, expected) and out.dtype == space.dtype
    assert not np.shares_memory(out, batch)  # a copy: later filters may write into it
    assert all(out_space.contains(row) for row in out)


@pytest.mark.parametrize(("space", "low", "high", "index"), CASES, ids=IDS)
def test_output_space_is_the_cropped_box_and_the_input_is_untouched(
    space: spaces.Box, low: Any, high: Any, index: Any
) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationCropFilter(low, high).output_space(space)
    assert isinstance(out_space, spaces.Box) and out_space.dtype == space.dtype
    assert np.array_equal(out_space.low, space.low[index])
    assert np.array_equal(out_space.high, space.high[index])
    assert out_space.shape == space.low[index].shape
    assert space == before and out_space is not space
    out_space.low[...] = 1  # the output space shares no memory with the input one
    assert space == before


@pytest.mark.parametrize(
    ("space", "low", "high", "needs"),
    [
        (spaces.Box(0, 1, shape=(6, 8)), (0,), (3,), "crops 1 axes, so it needs a Box with 1 axes"),
        (
            spaces.Box(0, 1, shape=(6,)),
            (0, 0),
            (3, 3),
            "crops 2 axes, so it needs a Box with 2 axes",
        ),
        (
            spaces.Box(0, 1, shape=(6, 8)),
            (0, 0),
            (7, 8),
            "crops axis 0 from index 0 to 7, .* at least 7 entries",
        ),
        (
            spaces.Box(0, 1, shape=(6, 8)),
            (0, 9),
            None,
            "crops axis 1 from index 9 to its end, .* at least 10 entries",
        ),
        (spaces.Discrete(5), (0,), (3,), "needs a Box observation"),
    ],
    ids=["too-few-axes", "too-many-axes", "past-the-end", "start-past-the-end", "discrete"],
)
def test_refuses_a_space_it_cannot_crop_naming_both(
    space: spaces.Space, low: Any, high: Any, needs: str
) -> None:
    with pytest.raises(CoachError, match=f"ObservationCropFilter {needs}") as error:
        ObservationCropFilter(low, high).output_space(space)
    assert str(error.value).endswith(f"got {space}")


@pytest.mark.parametrize(
    ("low", "high", "message"),
    [
        (None, None, "needs crop_low, crop_high or both"),
        ((0, 1), (3,), "different lengths"),
        ((4, 0), (3, 5), "not below crop_high .* on axis 0"),
        ((2,), (2,), "not below crop_high"),
        ((-1,), None, "non-negative integer or None"),
        (None, (1.5,), "non-negative integer or None"),
        ((True,), None, "non-negative integer or None"),
        (5, None, "one non-negative integer or None .* per axis, got 5"),
    ],
)
def test_refuses_nonsense_crops(low: Any, high: Any, message: str) -> None:
    with pytest.raises(CoachError, match=message):
        ObservationCropFilter(low, high)


def test_repr_reproduces_the_filter() -> None:
    f = ObservationCropFilter(np.array([1, 0]), (None, np.int64(5)))
    assert repr(f) == "ObservationCropFilter(crop_low=(1, 0), crop_high=(None, 5))"
    again = eval(repr(f), {"ObservationCropFilter": ObservationCropFilter})
    space = spaces.Box(0, 255, shape=(6, 8), dtype=np.uint8)
    assert again.output_space(space) == f.output_space(space)
    batch = _batch(space)
    assert np.array_equal(again.filter(batch), f.filter(batch))


def test_keeps_no_state() -> None:
    f = ObservationCropFilter((1,), (3,))
    assert f.state_dict() == {}
    f.load_state_dict({})
    f.output_space(spaces.Box(-10, 10, shape=(4,)))
    first = f.start_episodes(np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([0]))
    assert first.tolist() == [[2.0, 3.0]]
