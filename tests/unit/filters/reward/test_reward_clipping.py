"""Unit tests for coach/filters/reward/clipping.py."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from coach.errors import CoachError
from coach.filters.pipeline import InputFilter
from coach.filters.reward.clipping import RewardClippingFilter

REWARDS = [1.5, -0.5, -7.0, 0.0, 1.0, 3.0]

# (low, high, the clipped REWARDS, worked out by hand)
CASES = [
    (-1.0, 1.0, [1.0, -0.5, -1.0, 0.0, 1.0, 1.0]),
    (0.0, 2.0, [1.5, 0.0, 0.0, 0.0, 1.0, 2.0]),
    (-math.inf, 0.5, [0.5, -0.5, -7.0, 0.0, 0.5, 0.5]),
    (-2.0, math.inf, [1.5, -0.5, -2.0, 0.0, 1.0, 3.0]),
    (1.0, 1.0, [1.0] * 6),
]


@pytest.mark.parametrize(("low", "high", "expected"), CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rewards_are_clipped_into_the_range_as_float32(
    low: float, high: float, expected: list[float], dtype: type
) -> None:
    reward: np.ndarray = np.array(REWARDS, dtype=dtype)
    out = RewardClippingFilter(low, high).filter(reward)
    assert out.dtype == np.float32 and out.shape == reward.shape
    assert out.tolist() == expected


def test_integer_rewards_come_out_as_float32() -> None:
    out = RewardClippingFilter(-1, 1).filter(np.array([5, -5, 0], dtype=np.int64))
    assert out.dtype == np.float32
    assert out.tolist() == [1.0, -1.0, 0.0]


def test_the_defaults_let_every_reward_through() -> None:
    reward = np.array([1e30, -1e30, 0.25], dtype=np.float32)
    assert np.array_equal(RewardClippingFilter().filter(reward), reward)


def test_the_input_is_left_alone_and_a_new_array_returned() -> None:
    reward = np.array(REWARDS, dtype=np.float32)
    out = RewardClippingFilter(-1.0, 1.0).filter(reward)
    assert reward.tolist() == REWARDS
    assert not np.shares_memory(out, reward)
    # Already float32 and in range: still a copy.
    inside = np.array([0.5, -0.5], dtype=np.float32)
    assert not np.shares_memory(RewardClippingFilter(-1.0, 1.0).filter(inside), inside)


def test_works_in_an_input_filter_and_ignores_update() -> None:
    pipeline = InputFilter(reward_filters=[RewardClippingFilter(-1.0, 1.0)])
    reward = np.array(REWARDS, dtype=np.float32)
    first = pipeline.filter_reward(reward, update=True)
    second = pipeline.filter_reward(reward, update=False)
    assert first.tolist() == second.tolist() == CASES[0][2]


@pytest.mark.parametrize(
    ("low", "high", "match"),
    [
        (1.0, -1.0, "clipping_low 1.0 is above clipping_high -1.0"),
        (0.5, 0.25, "above"),
        (math.nan, 1.0, "clipping_low must be a number, got nan"),
        (-1.0, math.nan, "clipping_high must be a number, got nan"),
        ("-1", 1.0, "clipping_low must be a number, got '-1'"),
        (-1.0, True, "clipping_high must be a number, got True"),
        (None, 1.0, "clipping_low must be a number, got None"),
    ],
)
def test_refuses_nonsense_bounds(low: Any, high: Any, match: str) -> None:
    with pytest.raises(CoachError, match=f"RewardClippingFilter: .*{match}"):
        RewardClippingFilter(low, high)


@pytest.mark.parametrize(("low", "high", "expected"), CASES)
def test_repr_reproduces_the_filter(low: float, high: float, expected: list[float]) -> None:
    f = RewardClippingFilter(low, high)
    copy = eval(repr(f), {"RewardClippingFilter": RewardClippingFilter, "inf": math.inf})
    assert isinstance(copy, RewardClippingFilter)
    assert (copy.clipping_low, copy.clipping_high) == (low, high)
    assert copy.filter(np.array(REWARDS)).tolist() == expected


def test_repr_reads_like_the_construction() -> None:
    assert repr(RewardClippingFilter(-1, 1)) == "RewardClippingFilter(-1.0, 1.0)"
    assert repr(RewardClippingFilter()) == "RewardClippingFilter(-inf, inf)"


def test_keeps_no_state() -> None:
    f = RewardClippingFilter(-1.0, 1.0)
    f.filter(np.array([3.0, -3.0]))
    f.reset(np.array([True, False]))
    assert f.state_dict() == {}
    f.load_state_dict({})
    assert f.filter(np.array([3.0, -3.0])).tolist() == [1.0, -1.0]
