"""Unit tests for coach/filters/observation/squeeze.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.squeeze import ObservationSqueezeFilter


def _ramp_box(shape: tuple[int, ...], dtype: type = np.float32) -> spaces.Box:
    low = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    return spaces.Box(low, low + 3, dtype=dtype)


# (space, axis, the per-env shape after squeezing)
CASES = [
    (spaces.Box(0, 255, shape=(6, 5, 1), dtype=np.uint8), None, (6, 5)),
    (_ramp_box((1, 4)), 0, (4,)),
    (_ramp_box((3, 1, 1), np.float64), -1, (3, 1)),
    (_ramp_box((1, 3, 1), np.int16), (0, -1), (3,)),
    (_ramp_box((1,)), None, ()),
    (_ramp_box((2, 3)), None, (2, 3)),
]
IDS = [f"{c[0].shape}-{c[0].dtype}-axis={c[1]}" for c in CASES]


def _batch(space: spaces.Box, n: int = 3) -> np.ndarray:
    space.seed(6)
    return np.stack([space.sample() for _ in range(n)])


@pytest.mark.parametrize(("space", "axis", "shape"), CASES, ids=IDS)
def test_removes_the_axes_of_each_row(space: spaces.Box, axis: object, shape: tuple) -> None:
    f = ObservationSqueezeFilter(axis)  # type: ignore[arg-type]
    out_space = f.output_space(space)
    batch = _batch(space)
    out = f.filter(batch)
    assert out.shape == (3, *shape) and out.dtype == space.dtype
    assert np.array_equal(out.ravel(), batch.ravel())  # same values, in the same order
    assert not np.shares_memory(out, batch)
    assert all(out_space.contains(np.asarray(row)) for row in out)  # rows of shape () too


@pytest.mark.parametrize(("space", "axis", "shape"), CASES, ids=IDS)
def test_never_removes_the_batch_axis(space: spaces.Box, axis: object, shape: tuple) -> None:
    f = ObservationSqueezeFilter(axis)  # type: ignore[arg-type]
    f.output_space(space)
    assert f.filter(_batch(space, n=1)).shape == (1, *shape)


@pytest.mark.parametrize(("space", "axis", "shape"), CASES, ids=IDS)
def test_output_space_is_the_squeezed_box_and_the_input_is_untouched(
    space: spaces.Box, axis: object, shape: tuple
) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationSqueezeFilter(axis).output_space(space)  # type: ignore[arg-type]
    assert isinstance(out_space, spaces.Box)
    assert out_space.shape == shape and out_space.dtype == space.dtype
    assert np.array_equal(out_space.low, space.low.reshape(shape))
    assert np.array_equal(out_space.high, space.high.reshape(shape))
    assert space == before and out_space is not space


@pytest.mark.parametrize(
    ("space", "axis", "message"),
    [
        (
            spaces.Box(0, 1, shape=(4, 1)),
            0,
            r"removes axes \[0\], which needs a Box whose size is 1",
        ),
        (spaces.Box(0, 1, shape=(1, 4)), (0, 1), r"removes axes \[0, 1\], which needs a Box whose"),
        (
            spaces.Box(0, 1, shape=(4, 1)),
            2,
            r"removes axes \[2\], which needs a Box with more axes",
        ),
        (spaces.Box(0, 1, shape=(4, 1)), -3, r"removes axes \[-3\], which needs a Box with more"),
        (spaces.Discrete(3), None, "needs a Box observation"),
    ],
    ids=["size-4", "one-of-two", "past-the-end", "before-the-start", "discrete"],
)
def test_refuses_a_space_it_cannot_squeeze_naming_both(
    space: spaces.Space, axis: object, message: str
) -> None:
    with pytest.raises(CoachError, match=f"ObservationSqueezeFilter {message}") as error:
        ObservationSqueezeFilter(axis).output_space(space)  # type: ignore[arg-type]
    assert str(error.value).endswith(f"got {space}")


@pytest.mark.parametrize("axis", ["0", 1.0, True, (), [0]])
def test_refuses_an_axis_that_is_not_one(axis: object) -> None:
    with pytest.raises(CoachError, match="axis is an integer, a tuple of integers or None"):
        ObservationSqueezeFilter(axis)  # type: ignore[arg-type]


@pytest.mark.parametrize("axis", [None, 2, -1, (0, 2)])
def test_repr_reproduces_the_filter(axis: object) -> None:
    f = ObservationSqueezeFilter(axis)  # type: ignore[arg-type]
    again = eval(repr(f), {"ObservationSqueezeFilter": ObservationSqueezeFilter})
    assert again.axis == axis and repr(again) == repr(f)
    assert repr(ObservationSqueezeFilter(np.int64(2))) == "ObservationSqueezeFilter(2)"


def test_keeps_no_state() -> None:
    f = ObservationSqueezeFilter()
    assert f.state_dict() == {}
    f.load_state_dict({})
    f.output_space(spaces.Box(0, 9, shape=(2, 1)))
    assert f.start_episodes(np.array([[[1.0], [2.0]]]), np.array([1])).tolist() == [[1.0, 2.0]]
