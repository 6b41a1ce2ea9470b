"""Unit tests for coach/filters/reward/normalization.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from coach.errors import CoachError
from coach.filters.reward.normalization import RewardNormalizationFilter

EPSILON = 1e-8
# Two envs, discount 0.5; env 0's episode ends after the second step.
REWARDS = [[1, 2], [2, 0], [4, 1], [0, -2]]
RETURNS = [
    [1.0, 2.0],
    [0.5 * 1.0 + 2, 0.5 * 2.0 + 0],  # [2.5, 1.0]
    [0.0 + 4, 0.5 * 1.0 + 1],  # env 0 starts over: [4.0, 1.5]
    [0.5 * 4.0 + 0, 0.5 * 1.5 - 2],  # [2.0, -1.25]
]
DTYPES = [np.float32, np.float64, np.int64]


def _run(f: RewardNormalizationFilter, dtype: type, steps: range) -> list[np.ndarray]:
    outputs = []
    for step in steps:
        outputs.append(f.filter(np.array(REWARDS[step], dtype=dtype)))
        if step == 1:
            f.reset(np.array([True, False]))
    return outputs


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_divides_by_the_spread_of_the_discounted_returns(dtype: type) -> None:
    f = RewardNormalizationFilter(discount=0.5, epsilon=EPSILON)
    outputs = _run(f, dtype, range(4))
    for step, out in enumerate(outputs):
        seen = np.array(RETURNS[: step + 1]).ravel()
        expected = np.array(REWARDS[step]) / np.sqrt(seen.var() + EPSILON)
        assert out.dtype == np.float32 and out.shape == (2,)
        np.testing.assert_allclose(out, expected, rtol=1e-6)
    np.testing.assert_allclose(outputs[0], [2.0, 4.0], rtol=1e-6)  # var([1, 2]) = 0.25
    np.testing.assert_allclose(f.returns, RETURNS[-1])
    assert f.stats.count == 8.0
    np.testing.assert_allclose(f.stats.mean, np.mean(RETURNS))


@pytest.mark.parametrize("n_envs", [1, 3])
def test_outputs_are_clipped(n_envs: int) -> None:
    # The returns have no spread yet: the rewards are divided by sqrt(epsilon).
    assert (
        RewardNormalizationFilter(clip=10.0).filter(np.full(n_envs, 3.0)).tolist()
        == [10.0] * n_envs
    )
    assert (
        RewardNormalizationFilter(clip=2.0).filter(np.full(n_envs, -3.0)).tolist()
        == [-2.0] * n_envs
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_update_false_freezes_the_statistics_but_not_the_returns(dtype: type) -> None:
    f = RewardNormalizationFilter(discount=0.5, epsilon=EPSILON)
    f.filter(np.array(REWARDS[0], dtype=dtype))
    stats = copy.deepcopy(f.stats.state_dict())

    out = f.filter(np.array(REWARDS[1], dtype=dtype), update=False)

    after = f.stats.state_dict()
    assert after["count"] == stats["count"] == 2.0
    assert after["mean"] == stats["mean"] and after["var"] == stats["var"]
    np.testing.assert_allclose(out, np.array(REWARDS[1]) / np.sqrt(0.25 + EPSILON), rtol=1e-6)
    # The returns are per-episode history: they move on in every phase.
    np.testing.assert_allclose(f.returns, RETURNS[1])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_state_dict_round_trip(dtype: type) -> None:
    source = RewardNormalizationFilter(discount=0.5)
    _run(source, dtype, range(2))
    state = source.state_dict()
    assert set(state) == {"stats", "returns"} and set(state["stats"]) == {"count", "mean", "var"}
    np.testing.assert_allclose(state["returns"], [0.0, 1.0])  # after env 0's reset

    restored = RewardNormalizationFilter(discount=0.5)
    restored.load_state_dict(copy.deepcopy(state))
    expected = _run(source, dtype, range(2, 4))
    got = _run(restored, dtype, range(2, 4))
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(restored.returns, source.returns)

    fresh = RewardNormalizationFilter().state_dict()
    assert fresh["returns"] is None and fresh["stats"]["count"] == 0.0
    unused = RewardNormalizationFilter()
    unused.load_state_dict(fresh)
    assert unused.returns is None


def test_a_state_dict_is_a_snapshot() -> None:
    f = RewardNormalizationFilter()
    f.filter(np.array([1.0, 2.0]))
    state = f.state_dict()
    f.filter(np.array([5.0, 5.0]))
    f.reset(np.array([True, True]))
    assert state["returns"].tolist() == [1.0, 2.0] and state["stats"]["count"] == 2.0
    state = f.state_dict()
    state["returns"][...] = 7.0  # writing into a state leaves the filter alone
    assert f.returns is not None and f.returns.tolist() == [0.0, 0.0]


def test_reset_before_the_first_reward_is_harmless() -> None:
    f = RewardNormalizationFilter(discount=0.5)
    f.reset(np.array([True, True]))
    assert f.returns is None
    f.filter(np.array([1.0, 3.0]))
    f.reset(np.array([False, True]))
    assert f.returns is not None and f.returns.tolist() == [1.0, 0.0]


def test_refuses_rewards_for_another_number_of_envs() -> None:
    f = RewardNormalizationFilter()
    f.filter(np.zeros(2))
    with pytest.raises(CoachError, match=r"returns for 2 envs, got rewards shaped \(3,\)"):
        f.filter(np.zeros(3))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"discount": 1.5}, r"discount must be in \[0, 1\]"),
        ({"discount": -0.1}, r"discount must be in \[0, 1\]"),
        ({"clip": 0.0}, "clip must be positive"),
        ({"epsilon": -1.0}, "epsilon must be positive"),
    ],
)
def test_refuses_nonsense_arguments(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(CoachError, match=message):
        RewardNormalizationFilter(**kwargs)


def test_repr_reproduces_the_filter() -> None:
    f = RewardNormalizationFilter(discount=0.9, clip=5.0, epsilon=1e-6)
    again = eval(repr(f), {"RewardNormalizationFilter": RewardNormalizationFilter})
    assert (again.discount, again.clip, again.epsilon) == (0.9, 5.0, 1e-6)
    assert repr(again) == repr(f)
