"""Unit tests for coach/filters/observation/rgb_to_luminance.py."""

from __future__ import annotations

import copy
import sys

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.rgb_to_luminance import ObservationRGBToLuminanceFilter

BT601 = np.array([0.299, 0.587, 0.114])
BOXES = [
    spaces.Box(0, 255, shape=(21, 16, 3), dtype=np.uint8),
    spaces.Box(0.0, 1.0, shape=(5, 7, 3), dtype=np.float32),
    spaces.Box(-2.0, 3.0, shape=(4, 4, 3), dtype=np.float64),
]


def _batch(space: spaces.Box, n: int = 3) -> np.ndarray:
    rng = np.random.default_rng(3)
    if space.dtype == np.uint8:
        return rng.integers(0, 256, size=(n, *space.shape)).astype(np.uint8)
    return rng.uniform(space.low, space.high, size=(n, *space.shape)).astype(space.dtype)


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_luminance_is_the_bt601_weighted_sum(space: spaces.Box) -> None:
    batch = _batch(space)
    original = batch.copy()
    f = ObservationRGBToLuminanceFilter()
    out_space = f.output_space(space)
    out = f.filter(batch)
    exact = batch.astype(np.float64) @ BT601
    assert out.shape == batch.shape[:3]
    if space.dtype == np.uint8:
        assert out.dtype == np.uint8
        # Rounded to the nearest integer (fixed point: up to 0.004 off a half).
        assert np.all(np.abs(out - exact) <= 0.504)
    else:
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, exact, rtol=1e-6, atol=1e-6)
    assert all(out_space.contains(row) for row in out)
    assert np.array_equal(batch, original)


def test_uint8_values_by_hand() -> None:
    pixels = np.array([[[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255], [10, 20, 30]]]])
    f = ObservationRGBToLuminanceFilter()
    f.output_space(spaces.Box(0, 255, shape=(1, 5, 3), dtype=np.uint8))
    # 76.245, 149.685, 29.07, 255, 18.15
    assert f.filter(pixels.astype(np.uint8)).tolist() == [[[76, 150, 29, 255, 18]]]


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_a_strided_batch_and_an_empty_one(space: spaces.Box) -> None:
    f = ObservationRGBToLuminanceFilter()
    f.output_space(space)
    batch = _batch(space, n=4)
    every_other = batch[::2]
    assert np.array_equal(f.filter(every_other), f.filter(batch)[::2])
    empty = f.filter(batch[:0])
    assert empty.shape == (0, *space.shape[:2]) and empty.dtype == f.filter(batch).dtype


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_output_space_drops_the_channels_and_the_input_is_untouched(space: spaces.Box) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationRGBToLuminanceFilter().output_space(space)
    assert isinstance(out_space, spaces.Box)
    assert out_space.shape == space.shape[:2]
    assert out_space.dtype == (np.uint8 if space.dtype == np.uint8 else np.float32)
    assert np.all(out_space.low == space.low.flat[0]) and np.all(
        out_space.high == space.high.flat[0]
    )
    assert space == before and out_space is not space


def test_uneven_bounds_take_each_pixels_lowest_and_highest_channel() -> None:
    low = np.zeros((1, 2, 3), dtype=np.float32)
    high = np.array([[[1.0, 2.0, 3.0], [4.0, 0.5, 0.5]]], dtype=np.float32)
    low[0, 1] = [-1.0, 0.0, 0.25]
    out_space = ObservationRGBToLuminanceFilter().output_space(spaces.Box(low, high))
    assert out_space.low.tolist() == [[0.0, -1.0]] and out_space.high.tolist() == [[3.0, 4.0]]


@pytest.mark.parametrize(
    "space",
    [
        spaces.Discrete(3),
        spaces.Box(0, 255, shape=(84, 84), dtype=np.uint8),
        spaces.Box(0, 255, shape=(84, 84, 4), dtype=np.uint8),
        spaces.Box(0, 1, shape=(3,)),
    ],
    ids=str,
)
def test_refuses_a_space_that_is_not_an_rgb_image_naming_both(space: spaces.Space) -> None:
    with pytest.raises(CoachError) as error:
        ObservationRGBToLuminanceFilter().output_space(space)
    assert str(error.value) == (
        f"ObservationRGBToLuminanceFilter needs a Box of shape (H, W, 3), got {space}"
    )


def test_refuses_an_integer_dtype_other_than_uint8() -> None:
    space = spaces.Box(0, 1000, shape=(4, 4, 3), dtype=np.int16)
    with pytest.raises(
        CoachError, match=r"needs a Box of dtype uint8 or floating point, got .*int16"
    ):
        ObservationRGBToLuminanceFilter().output_space(space)


def test_without_opencv_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cv2", None)  # makes `import cv2` fail
    with pytest.raises(CoachError, match=r"needs OpenCV: pip install 'coach\[atari\]'"):
        ObservationRGBToLuminanceFilter().output_space(BOXES[0])


def test_keeps_no_state_and_repr_reproduces_it() -> None:
    f = ObservationRGBToLuminanceFilter()
    again = eval(repr(f), {"ObservationRGBToLuminanceFilter": ObservationRGBToLuminanceFilter})
    assert isinstance(again, ObservationRGBToLuminanceFilter) and repr(again) == repr(f)
    assert f.state_dict() == {}
    f.load_state_dict({})
    f.output_space(BOXES[0])
    batch = _batch(BOXES[0])
    assert np.array_equal(f.start_episodes(batch, np.arange(3)), f.filter(batch))
