"""Unit tests for coach/filters/reward/rescale.py."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from coach.errors import CoachError
from coach.filters.pipeline import InputFilter
from coach.filters.reward.clipping import RewardClippingFilter
from coach.filters.reward.rescale import RewardRescaleFilter

REWARDS = [2.0, -4.0, 0.0, 100.0]

# (factor, REWARDS times the factor, worked out by hand): Coach multiplies, never divides
CASES = [
    (4.0, [8.0, -16.0, 0.0, 400.0]),
    (0.5, [1.0, -2.0, 0.0, 50.0]),
    (0.01, [0.02, -0.04, 0.0, 1.0]),
    (-1.0, [-2.0, 4.0, 0.0, -100.0]),
    (3, [6.0, -12.0, 0.0, 300.0]),
]


@pytest.mark.parametrize(("factor", "expected"), CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_rewards_are_multiplied_by_the_factor_as_float32(
    factor: float, expected: list[float], dtype: type
) -> None:
    reward: np.ndarray = np.array(REWARDS, dtype=dtype)
    out = RewardRescaleFilter(factor).filter(reward)
    assert out.dtype == np.float32 and out.shape == reward.shape
    assert np.array_equal(out, np.array(expected, dtype=np.float32))


def test_the_input_is_left_alone_and_a_new_array_returned() -> None:
    reward = np.array(REWARDS, dtype=np.float32)
    out = RewardRescaleFilter(1.0).filter(reward)
    assert reward.tolist() == REWARDS
    assert out.tolist() == REWARDS
    assert not np.shares_memory(out, reward)


def test_rescale_then_clip_in_an_input_filter() -> None:
    pipeline = InputFilter(reward_filters=[RewardRescaleFilter(0.5), RewardClippingFilter(-1, 1)])
    out = pipeline.filter_reward(np.array([1.0, -1.0, 4.0, -0.5], dtype=np.float32))
    assert out.tolist() == [0.5, -0.5, 1.0, -0.25]
    clip_first = InputFilter(reward_filters=[RewardClippingFilter(-1, 1), RewardRescaleFilter(0.5)])
    assert clip_first.filter_reward(np.array([4.0])).tolist() == [0.5]


@pytest.mark.parametrize(
    ("factor", "match"),
    [
        (0, "finite, non-zero number, got 0"),
        (0.0, "finite, non-zero number, got 0.0"),
        (math.inf, "finite, non-zero number, got inf"),
        (math.nan, "finite, non-zero number, got nan"),
        ("2", "must be a number, got '2'"),
        (True, "must be a number, got True"),
        (None, "must be a number, got None"),
    ],
)
def test_refuses_nonsense_factors(factor: Any, match: str) -> None:
    with pytest.raises(CoachError, match=f"RewardRescaleFilter: rescale_factor .*{match}"):
        RewardRescaleFilter(factor)


@pytest.mark.parametrize(("factor", "expected"), CASES)
def test_repr_reproduces_the_filter(factor: float, expected: list[float]) -> None:
    copy = eval(repr(RewardRescaleFilter(factor)), {"RewardRescaleFilter": RewardRescaleFilter})
    assert isinstance(copy, RewardRescaleFilter) and copy.rescale_factor == factor
    assert np.array_equal(copy.filter(np.array(REWARDS)), np.array(expected, dtype=np.float32))
    assert repr(RewardRescaleFilter(2)) == "RewardRescaleFilter(2.0)"


def test_keeps_no_state() -> None:
    f = RewardRescaleFilter(2.0)
    f.filter(np.array([1.0]))
    f.reset(np.array([True]))
    assert f.state_dict() == {}
    f.load_state_dict({})
    assert f.filter(np.array([1.0]), update=False).tolist() == [2.0]
