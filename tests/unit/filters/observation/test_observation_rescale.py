"""Unit tests for coach/filters/observation/rescale.py."""

from __future__ import annotations

import copy
import sys

import cv2
import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.rescale import ObservationRescaleToSizeFilter

BOXES = [
    spaces.Box(0, 255, shape=(8, 6), dtype=np.uint8),
    spaces.Box(0, 255, shape=(8, 6, 3), dtype=np.uint8),
    spaces.Box(0.0, 1.0, shape=(8, 6, 1), dtype=np.float32),
    spaces.Box(-100, 100, shape=(8, 6, 4), dtype=np.int16),
    spaces.Box(0, 4000, shape=(8, 6, 2), dtype=np.uint16),
]


def _batch(space: spaces.Box, n: int = 3) -> np.ndarray:
    rng = np.random.default_rng(2)
    if np.issubdtype(space.dtype, np.floating):
        return rng.uniform(space.low, space.high, size=(n, *space.shape)).astype(space.dtype)
    return rng.integers(space.low, space.high, size=(n, *space.shape), endpoint=True).astype(
        space.dtype
    )


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_area_halving_averages_two_by_two_blocks(space: spaces.Box) -> None:
    batch = _batch(space)
    f = ObservationRescaleToSizeFilter(4, 3, interpolation="area")
    out_space = f.output_space(space)
    out = f.filter(batch)
    blocks = batch.astype(np.float64).reshape(3, 4, 2, 3, 2, *space.shape[2:])
    mean = blocks.mean(axis=(2, 4))
    assert out.dtype == space.dtype and out.shape == (3, 4, 3, *space.shape[2:])
    tolerance = 1e-6 if np.issubdtype(space.dtype, np.floating) else 0.5 + 1e-6
    assert np.all(np.abs(out - mean) <= tolerance)
    assert all(out_space.contains(row) for row in out)


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_nearest_doubling_repeats_pixels(space: spaces.Box) -> None:
    batch = _batch(space)
    f = ObservationRescaleToSizeFilter(16, 12, interpolation="nearest")
    out_space = f.output_space(space)
    out = f.filter(batch)
    assert np.array_equal(out, batch.repeat(2, axis=1).repeat(2, axis=2))
    assert out.dtype == space.dtype
    assert all(out_space.contains(row) for row in out)


@pytest.mark.parametrize("interpolation", ["nearest", "linear", "area", "cubic"])
@pytest.mark.parametrize("space", BOXES, ids=str)
def test_each_row_is_resized_on_its_own(space: spaces.Box, interpolation: str) -> None:
    batch = _batch(space, n=4)
    f = ObservationRescaleToSizeFilter(5, 7, interpolation=interpolation)
    out_space = f.output_space(space)
    out = f.filter(batch)
    mode = getattr(cv2, f"INTER_{interpolation.upper()}")
    for row, image in zip(out, batch, strict=True):
        expected = cv2.resize(image, (7, 5), interpolation=mode).reshape(out_space.shape)
        assert np.array_equal(row, np.clip(expected, space.low.min(), space.high.max()))
    assert all(out_space.contains(row) for row in out)
    assert np.array_equal(f.filter(batch[:0]), np.empty((0, *out_space.shape), space.dtype))


def test_cubic_overshoot_is_clipped_into_the_space() -> None:
    space = spaces.Box(0.0, 1.0, shape=(6, 6), dtype=np.float32)
    checkerboard = (np.indices((6, 6)).sum(axis=0) % 2).astype(np.float32)[None]
    f = ObservationRescaleToSizeFilter(17, 17, interpolation="cubic")
    out_space = f.output_space(space)
    raw = cv2.resize(checkerboard[0], (17, 17), interpolation=cv2.INTER_CUBIC)
    assert raw.min() < 0.0 and raw.max() > 1.0  # cubic interpolation does overshoot
    out = f.filter(checkerboard)
    assert out_space.contains(out[0])
    assert np.array_equal(out[0], np.clip(raw, 0.0, 1.0))


@pytest.mark.parametrize("space", BOXES, ids=str)
def test_output_space_keeps_the_bounds_and_the_input_is_untouched(space: spaces.Box) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationRescaleToSizeFilter(5, 7).output_space(space)
    assert isinstance(out_space, spaces.Box)
    assert out_space.shape == (5, 7, *space.shape[2:]) and out_space.dtype == space.dtype
    assert np.all(out_space.low == space.low.min()) and np.all(out_space.high == space.high.max())
    assert space == before and out_space is not space


def test_uneven_bounds_become_the_widest() -> None:
    low = np.arange(12, dtype=np.float32).reshape(4, 3)
    space = spaces.Box(low, low + 1, dtype=np.float32)
    out_space = ObservationRescaleToSizeFilter(2, 2).output_space(space)
    assert np.all(out_space.low == 0.0) and np.all(out_space.high == 12.0)


@pytest.mark.parametrize(
    "space",
    [
        spaces.Discrete(3),
        spaces.Box(0, 1, shape=(5,)),
        spaces.Box(0, 1, shape=(2, 5, 5, 3)),
        spaces.Box(0, 255, shape=(5, 5, 600), dtype=np.uint8),
    ],
    ids=str,
)
def test_refuses_a_space_that_is_not_an_image_naming_both(space: spaces.Space) -> None:
    with pytest.raises(CoachError, match=r"RescaleToSizeFilter needs a Box of shape \(H, W\).*got"):
        ObservationRescaleToSizeFilter(4, 4).output_space(space)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float16, np.bool_])
def test_refuses_a_dtype_opencv_cannot_resize_naming_both(dtype: type) -> None:
    space = spaces.Box(0, 1, shape=(4, 4), dtype=dtype)
    with pytest.raises(
        CoachError, match=r"needs a Box of dtype uint8, .*got Box.*" + np.dtype(dtype).name
    ):
        ObservationRescaleToSizeFilter(2, 2).output_space(space)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 4), "height must be a positive integer"),
        ((4, 2.5), "width must be a positive integer"),
        ((4, 4, "lanczos"), "interpolation must be one of"),
    ],
)
def test_refuses_nonsense_arguments(args: tuple, message: str) -> None:
    with pytest.raises(CoachError, match=message):
        ObservationRescaleToSizeFilter(*args)


def test_without_opencv_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cv2", None)  # makes `import cv2` fail
    with pytest.raises(CoachError, match=r"needs OpenCV: pip install 'coach\[atari\]'"):
        ObservationRescaleToSizeFilter(4, 4).output_space(BOXES[0])


def test_keeps_no_state_and_repr_reproduces_it() -> None:
    f = ObservationRescaleToSizeFilter(4, 3, interpolation="linear")
    again = eval(repr(f), {"ObservationRescaleToSizeFilter": ObservationRescaleToSizeFilter})
    assert repr(again) == repr(f) == "ObservationRescaleToSizeFilter(4, 3, interpolation='linear')"
    assert f.state_dict() == {}
    f.load_state_dict({})
    f.output_space(BOXES[1])
    batch = _batch(BOXES[1])
    original = batch.copy()
    assert np.array_equal(f.start_episodes(batch, np.arange(3)), f.filter(batch))
    assert np.array_equal(batch, original)
