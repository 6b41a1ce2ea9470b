"""Unit tests for coach/exploration/truncated_normal.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.truncated_normal import (
    TruncatedNormal,
    TruncatedNormalParameters,
    sample_truncated_normal,
)
from coach.schedules import ConstantSchedule, LinearSchedule

# Ranges 2 and 10: a relative noise shows as a different std per dimension.
BOX = spaces.Box(np.array([-1.0, 0.0]), np.array([1.0, 10.0]), dtype=np.float64)
CENTRE = np.array([0.0, 5.0])
DRAWS = 20_000


def _policy(
    noise: float = 0.05,
    evaluation_noise: float = 0.0,
    space: spaces.Space = BOX,
    seed: int = 0,
    clip_low: float | None = None,
    clip_high: float | None = None,
    relative: bool = True,
) -> TruncatedNormal:
    return TruncatedNormal(
        space,
        np.random.default_rng(seed),
        ConstantSchedule(noise),
        evaluation_noise,
        clip_low=clip_low,
        clip_high=clip_high,
        noise_as_percentage_from_action_space=relative,
    )


def _at(point: np.ndarray | list[float], count: int = DRAWS) -> np.ndarray:
    return np.tile(np.asarray(point, dtype=np.float64), (count, 1))


# -- the truncated normal, analytically (independent of the sampler's torch functions) -------


def _pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _upper_tail(x: float) -> float:
    """1 - Phi(x), accurate for large x."""
    return 0.5 * math.erfc(x / math.sqrt(2))


def _moments(mean: float, std: float, low: float, high: float) -> tuple[float, float]:
    """Mean and standard deviation of N(mean, std^2) truncated to [low, high]."""
    a, b = (low - mean) / std, (high - mean) / std
    mass = _upper_tail(a) - _upper_tail(b)
    shift = (_pdf(a) - _pdf(b)) / mass
    variance = 1 + (a * _pdf(a) - (b * _pdf(b) if math.isfinite(b) else 0.0)) / mass - shift**2
    return mean + std * shift, std * math.sqrt(variance)


def _cdf(x: float, mean: float, std: float, low: float, high: float) -> float:
    a, b, z = ((v - mean) / std for v in (low, high, x))
    return (_upper_tail(a) - _upper_tail(z)) / (_upper_tail(a) - _upper_tail(b))


# -- sampling -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "point",
    [[0.0, 5.0], [1.0, 0.0], [-1.0, 10.0], [0.99, 0.01], [3.0, -4.0], [-500.0, 1e6]],
    ids=str,
)
def test_every_draw_lies_inside_the_bounds(point: list[float]) -> None:
    actions = _policy(0.3).get_action(_at(point, 2_000), RunPhase.TRAIN)
    assert np.all(np.isfinite(actions))
    assert np.all(actions >= BOX.low)
    assert np.all(actions <= BOX.high)


def test_at_the_centre_with_a_small_std_it_is_the_plain_normal() -> None:
    # 10 stds from every bound: the truncation removes a mass of 1e-23.
    deviation = _policy(0.05).get_action(_at(CENTRE), RunPhase.TRAIN) - CENTRE
    std = np.array([0.1, 0.5])
    np.testing.assert_allclose(deviation.std(axis=0), std, rtol=5 / math.sqrt(2 * DRAWS))
    assert np.all(np.abs(deviation.mean(axis=0)) < 5 * std / math.sqrt(DRAWS))


@pytest.mark.parametrize(
    ("point", "dimension"),
    [
        ([1.0, 5.0], 0),  # on the upper bound
        ([-0.9, 5.0], 0),  # half a std inside the lower bound
        ([0.0, 10.5], 1),  # a std outside the upper bound
        ([0.0, -1.0], 1),  # two stds below the lower bound
    ],
    ids=["on-high", "near-low", "past-high", "below-low"],
)
def test_near_a_bound_the_draws_follow_the_truncated_normal(
    point: list[float], dimension: int
) -> None:
    policy = _policy(0.1)  # stds 0.2 and 1.0
    draws = policy.get_action(_at(point), RunPhase.TRAIN)[:, dimension]
    mean, std = point[dimension], [0.2, 1.0][dimension]
    low, high = BOX.low[dimension], BOX.high[dimension]
    expected_mean, expected_std = _moments(mean, std, low, high)
    assert draws.mean() == pytest.approx(expected_mean, abs=5 * expected_std / math.sqrt(DRAWS))
    assert draws.std() == pytest.approx(expected_std, rel=5 / math.sqrt(2 * DRAWS))
    # The whole distribution, at its quartiles: not just its first two moments.
    for quantile in np.quantile(draws, [0.25, 0.5, 0.75]):
        assert _cdf(quantile, mean, std, low, high) == pytest.approx(
            np.mean(draws <= quantile), abs=0.015
        )
    # Not a clipped normal: no mass piles up on the bounds.
    assert np.mean((draws == low) | (draws == high)) < 1e-3


def test_the_mean_shifts_inwards_from_a_bound_unlike_clipping() -> None:
    draws = _policy(0.1).get_action(_at([1.0, 5.0]), RunPhase.TRAIN)[:, 0]
    # On the bound, the truncated mean is 1 - 0.2 * 2 * pdf(0) = 0.840; clipping gives 0.920.
    assert draws.mean() == pytest.approx(1.0 - 0.4 * _pdf(0.0), abs=0.003)


@pytest.mark.parametrize("outside", [3.0, 10.0, 30.0])
def test_far_outside_the_draws_hug_the_nearer_bound(outside: float) -> None:
    # N(-outside, 1) truncated to [0, 1]; far out, close to an exponential of rate `outside`
    # above 0, whose standard deviation is its mean.
    rng = np.random.default_rng(0)
    draws = sample_truncated_normal(rng, np.full(DRAWS, -outside), 1.0, 0.0, 1.0)
    assert np.all((draws >= 0.0) & (draws <= 1.0))
    expected_mean, _ = _moments(-outside, 1.0, 0.0, 1.0)
    assert draws.mean() == pytest.approx(expected_mean, rel=5 / math.sqrt(DRAWS))
    mirrored = sample_truncated_normal(rng, np.full(DRAWS, 1.0 + outside), 1.0, 0.0, 1.0)
    assert 1.0 - mirrored.mean() == pytest.approx(expected_mean, rel=5 / math.sqrt(DRAWS))


def test_beyond_the_float_range_of_the_tail_a_draw_is_the_nearer_bound() -> None:
    draws = sample_truncated_normal(
        np.random.default_rng(0), np.array([-1e3, 1e3]), 1.0, np.zeros(2), np.ones(2)
    )
    np.testing.assert_array_equal(draws, [0.0, 1.0])


def test_clip_bounds_narrow_the_truncation() -> None:
    policy = _policy(0.5, clip_low=-0.25, clip_high=4.0)
    actions = policy.get_action(_at(CENTRE, 5_000), RunPhase.TRAIN)
    np.testing.assert_array_equal(policy.low, [-0.25, 0.0])
    np.testing.assert_array_equal(policy.high, [1.0, 4.0])
    assert actions[:, 0].min() >= -0.25
    assert actions[:, 0].max() <= 1.0
    assert actions[:, 1].max() <= 4.0
    assert actions[:, 1].min() < 1.0  # the spread is still the box's (std 5)
    assert actions[:, 1].max() > 3.0


def test_clip_bounds_outside_the_box_are_refused() -> None:
    with pytest.raises(CoachError, match="clip_low=20"):
        _policy(clip_low=20.0)


def test_a_dimension_of_zero_range_keeps_its_only_value() -> None:
    space = spaces.Box(np.array([0.0, 2.0]), np.array([1.0, 2.0]), dtype=np.float64)
    actions = _policy(0.2, space=space).get_action(_at([0.5, 0.0], 500), RunPhase.TRAIN)
    np.testing.assert_array_equal(actions[:, 1], 2.0)
    assert actions[:, 0].std() > 0.1


def test_absolute_noise_is_in_the_actions_units() -> None:
    policy = _policy(0.05, relative=False)
    deviation = policy.get_action(_at(CENTRE), RunPhase.TRAIN) - CENTRE
    np.testing.assert_allclose(deviation.std(axis=0), 0.05, rtol=5 / math.sqrt(2 * DRAWS))


# -- phases, steps, schedules -----------------------------------------------------------------


def test_evaluation_adds_no_noise_by_default_and_does_not_step() -> None:
    policy = _policy(0.3)
    actions = np.array([[0.5, 5.0], [-3.0, 11.0]])
    np.testing.assert_array_equal(
        policy.get_action(actions, RunPhase.EVALUATE), [[0.5, 5.0], [-1.0, 10.0]]
    )
    assert policy.steps == 0


def test_evaluation_noise_applies_in_evaluation() -> None:
    policy = _policy(0.3, evaluation_noise=0.02)
    deviation = policy.get_action(_at(CENTRE), RunPhase.EVALUATE) - CENTRE
    np.testing.assert_allclose(deviation.std(axis=0), [0.04, 0.2], rtol=5 / math.sqrt(2 * DRAWS))
    assert policy.steps == 0


def test_noise_follows_the_schedule_of_training_steps() -> None:
    policy = TruncatedNormal(BOX, np.random.default_rng(0), LinearSchedule(0.05, 0.01, DRAWS))
    assert policy.values() == {"noise": 0.05}
    first = policy.get_action(_at(CENTRE), RunPhase.TRAIN) - CENTRE
    assert policy.steps == DRAWS
    assert policy.values() == {"noise": 0.01}
    second = policy.get_action(_at(CENTRE), RunPhase.HEATUP) - CENTRE
    assert policy.steps == 2 * DRAWS
    tolerance = 5 / math.sqrt(2 * DRAWS)
    np.testing.assert_allclose(first.std(axis=0), [0.1, 0.5], rtol=tolerance)
    np.testing.assert_allclose(second.std(axis=0), [0.02, 0.1], rtol=tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_actions_come_back_in_the_space_dtype(dtype: type) -> None:
    space = spaces.Box(np.array([-1, 0], dtype), np.array([1, 10], dtype), dtype=dtype)
    policy = _policy(0.5, space=space)
    for phase in (RunPhase.TRAIN, RunPhase.EVALUATE):
        actions = policy.get_action(_at([0.999, 0.001], 500), phase)
        assert actions.dtype == dtype
        assert np.all((actions >= space.low) & (actions <= space.high))


@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=str)
@pytest.mark.parametrize("count", [1, 8])
def test_batches_of_each_shape_keep_their_shape_and_count_steps(
    shape: tuple[int, ...], count: int
) -> None:
    space = spaces.Box(-1.0, 1.0, shape=shape, dtype=np.float32)
    policy = _policy(0.1, space=space)
    inputs = np.zeros((count, *shape), np.float32)
    for calls in range(1, 4):
        actions = policy.get_action(inputs, RunPhase.TRAIN)
        assert actions.shape == (count, *shape)
        assert policy.steps == calls * count
    assert np.all(actions != 0.0)
    assert policy.get_action(inputs, RunPhase.EVALUATE).shape == (count, *shape)


def test_draws_are_reproducible_by_seed() -> None:
    inputs = _at([0.9, 5.0], 50)
    a = _policy(seed=11).get_action(inputs, RunPhase.TRAIN)
    b = _policy(seed=11).get_action(inputs, RunPhase.TRAIN)
    c = _policy(seed=12).get_action(inputs, RunPhase.TRAIN)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_state_dict_round_trip() -> None:
    def policy() -> TruncatedNormal:
        return TruncatedNormal(BOX, np.random.default_rng(0), LinearSchedule(0.5, 0.1, 100))

    original = policy()
    original.get_action(_at(CENTRE, 37), RunPhase.TRAIN)
    state = original.state_dict()
    assert state == {"steps": 37}
    restored = policy()
    restored.load_state_dict(state)
    assert restored.steps == 37
    assert restored.noise == pytest.approx(original.noise) == pytest.approx(0.352)


def test_default_parameters() -> None:
    policy = TruncatedNormalParameters().build(BOX, np.random.default_rng(0))
    assert isinstance(policy, TruncatedNormal)
    assert policy.values() == {"noise": 0.1}
    assert policy.evaluation_noise == 0.0
    assert policy.noise_as_percentage_from_action_space is True
    np.testing.assert_array_equal(policy.low, BOX.low)
    np.testing.assert_array_equal(policy.high, BOX.high)


def test_parameters_pass_everything_on() -> None:
    params = TruncatedNormalParameters(
        noise_schedule=ConstantSchedule(0.2),
        evaluation_noise=0.05,
        clip_low=0.0,
        clip_high=0.5,
        noise_as_percentage_from_action_space=False,
    )
    policy = params.build(BOX, np.random.default_rng(0))
    assert policy.noise == 0.2
    assert policy.evaluation_noise == 0.05
    np.testing.assert_array_equal(policy.low, [0.0, 0.0])
    np.testing.assert_array_equal(policy.high, [0.5, 0.5])
    np.testing.assert_array_equal(policy.std(0.2), [0.2, 0.2])


@pytest.mark.parametrize(
    ("space", "reason"),
    [
        (spaces.Discrete(3), "Box"),
        (spaces.MultiDiscrete([2, 3]), "Box"),
        (spaces.Box(-np.inf, np.inf, shape=(2,)), "finite bounds"),
        (spaces.Box(np.array([0.0, 0.0]), np.array([1.0, np.inf]), dtype=np.float64), "finite"),
    ],
    ids=lambda v: str(v),
)
def test_spaces_it_cannot_take_are_refused_naming_them(space: spaces.Space, reason: str) -> None:
    with pytest.raises(CoachError, match=reason) as error:
        _policy(space=space)
    assert str(space) in str(error.value)


def test_actions_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(CoachError, match=r"shape \(B, 2\)"):
        _policy().get_action(np.zeros(2), RunPhase.TRAIN)
