"""Unit tests for coach/filters/observation/to_uint8.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gymnasium import spaces

from coach.errors import CoachError
from coach.filters.observation.to_uint8 import ObservationToUInt8Filter

# (space, input_low, input_high)
CASES = [
    (spaces.Box(-1.0, 1.0, shape=(3,), dtype=np.float32), -1.0, 1.0),
    (spaces.Box(-10.0, 10.0, shape=(2, 2), dtype=np.float64), -2.0, 6.0),
    (spaces.Box(0, 255, shape=(4, 4, 1), dtype=np.uint8), 0, 255),
    (spaces.Box(0, 1000, shape=(5,), dtype=np.int32), 100, 600),
]
IDS = [f"{c[0].shape}-{c[0].dtype}-[{c[1]},{c[2]}]" for c in CASES]


def _batch(space: spaces.Box, n: int = 6) -> np.ndarray:
    space.seed(5)
    return np.stack([space.sample() for _ in range(n)])


@pytest.mark.parametrize(("space", "low", "high"), CASES, ids=IDS)
def test_maps_the_range_onto_0_255_rounding(space: spaces.Box, low: float, high: float) -> None:
    f = ObservationToUInt8Filter(low, high)
    out_space = f.output_space(space)
    batch = _batch(space)
    original = batch.copy()
    out = f.filter(batch)
    expected = np.rint((np.clip(batch.astype(np.float64), low, high) - low) / (high - low) * 255)
    assert out.dtype == np.uint8 and out.shape == batch.shape
    assert np.array_equal(out, expected.astype(np.uint8))
    assert all(out_space.contains(row) for row in out)
    assert np.array_equal(batch, original)


def test_values_by_hand() -> None:
    f = ObservationToUInt8Filter(-1.0, 1.0)
    f.output_space(spaces.Box(-5.0, 5.0, shape=(7,)))
    observation = np.array([[-1.0, 1.0, 0.0, -0.5, 0.999, 5.0, -7.0]], dtype=np.float32)
    # 0 -> 127.5 rounds to the even 128; -0.5 -> 63.75; 0.999 -> 254.87; outside: clipped.
    assert f.filter(observation).tolist() == [[0, 255, 128, 64, 255, 255, 0]]


def test_uint8_in_the_full_range_is_unchanged() -> None:
    f = ObservationToUInt8Filter(0, 255)
    f.output_space(spaces.Box(0, 255, shape=(256,), dtype=np.uint8))
    every_value = np.arange(256, dtype=np.uint8)[None]
    assert np.array_equal(f.filter(every_value), every_value)


@pytest.mark.parametrize(("space", "low", "high"), CASES, ids=IDS)
def test_output_space_is_the_uint8_box_and_the_input_is_untouched(
    space: spaces.Box, low: float, high: float
) -> None:
    before = copy.deepcopy(space)
    out_space = ObservationToUInt8Filter(low, high).output_space(space)
    assert isinstance(out_space, spaces.Box)
    assert out_space.shape == space.shape and out_space.dtype == np.uint8
    assert np.all(out_space.low == 0) and np.all(out_space.high == 255)
    assert space == before and out_space is not space


@pytest.mark.parametrize(
    "space", [spaces.Discrete(3), spaces.MultiBinary(4), spaces.Dict({})], ids=str
)
def test_refuses_a_space_that_is_not_a_box_naming_both(space: spaces.Space) -> None:
    with pytest.raises(CoachError) as error:
        ObservationToUInt8Filter(0.0, 1.0).output_space(space)
    assert str(error.value) == f"ObservationToUInt8Filter needs a Box observation, got {space}"


@pytest.mark.parametrize(
    ("low", "high", "message"),
    [
        (1.0, 1.0, "input_low 1.0 is not below input_high 1.0"),
        (2.0, -1.0, "is not below"),
        (0.0, np.inf, "needs a finite range"),
        (np.nan, 1.0, "needs a finite range"),
    ],
)
def test_refuses_an_empty_or_infinite_range(low: float, high: float, message: str) -> None:
    with pytest.raises(CoachError, match=message):
        ObservationToUInt8Filter(low, high)


def test_keeps_no_state_and_repr_reproduces_it() -> None:
    f = ObservationToUInt8Filter(-0.5, 2.0)
    again = eval(repr(f), {"ObservationToUInt8Filter": ObservationToUInt8Filter})
    assert (again.input_low, again.input_high) == (-0.5, 2.0) and repr(again) == repr(f)
    assert f.state_dict() == {}
    f.load_state_dict({})
    f.output_space(spaces.Box(-1.0, 3.0, shape=(2,)))
    assert f.start_episodes(np.array([[-0.5, 2.0]]), np.array([3])).tolist() == [[0, 255]]
