"""Unit tests for coach/exploration/additive_noise.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.additive_noise import AdditiveNoise, AdditiveNoiseParameters
from coach.schedules import ConstantSchedule, LinearSchedule

# Ranges 2 and 10: a relative noise shows as a different std per dimension.
BOX = spaces.Box(np.array([-1.0, 0.0]), np.array([1.0, 10.0]), dtype=np.float64)
CENTRE = np.array([0.0, 5.0])
DRAWS = 20_000


def _noise(
    noise: float = 0.05,
    evaluation_noise: float = 0.0,
    relative: bool = True,
    space: spaces.Space = BOX,
    seed: int = 0,
) -> AdditiveNoise:
    return AdditiveNoise(
        space, np.random.default_rng(seed), ConstantSchedule(noise), evaluation_noise, relative
    )


def _at(point: np.ndarray, count: int = DRAWS) -> np.ndarray:
    return np.tile(point, (count, 1))


@pytest.mark.parametrize(
    ("relative", "expected_std"),
    [(True, [0.1, 0.5]), (False, [0.05, 0.05])],
    ids=["percentage", "absolute"],
)
def test_noise_std_is_the_schedule_value_times_the_range_or_absolute(
    relative: bool, expected_std: list[float]
) -> None:
    # The centre is 10 stds from every bound, so clipping cannot bend the statistics.
    actions = _noise(0.05, relative=relative).get_action(_at(CENTRE), RunPhase.TRAIN)
    deviation = actions - CENTRE
    std = np.asarray(expected_std)
    np.testing.assert_allclose(deviation.std(axis=0), std, rtol=5 / math.sqrt(2 * DRAWS))
    assert np.all(np.abs(deviation.mean(axis=0)) < 5 * std / math.sqrt(DRAWS))


def test_noise_follows_the_schedule_of_training_steps() -> None:
    policy = AdditiveNoise(BOX, np.random.default_rng(0), LinearSchedule(0.05, 0.01, DRAWS))
    assert policy.values() == {"noise": 0.05}
    first = policy.get_action(_at(CENTRE), RunPhase.TRAIN) - CENTRE  # at step 0: 0.05
    assert policy.steps == DRAWS
    assert policy.values() == {"noise": 0.01}
    second = policy.get_action(_at(CENTRE), RunPhase.TRAIN) - CENTRE  # from now on: 0.01
    tolerance = 5 / math.sqrt(2 * DRAWS)
    np.testing.assert_allclose(first.std(axis=0), [0.1, 0.5], rtol=tolerance)
    np.testing.assert_allclose(second.std(axis=0), [0.02, 0.1], rtol=tolerance)


def test_schedule_moves_by_the_batch_size_per_call() -> None:
    policy = AdditiveNoise(BOX, np.random.default_rng(0), LinearSchedule(0.5, 0.1, 100))
    policy.get_action(_at(CENTRE, 10), RunPhase.TRAIN)
    assert policy.values() == {"noise": pytest.approx(0.46)}
    policy.get_action(_at(CENTRE, 1), RunPhase.HEATUP)
    assert policy.steps == 11
    assert policy.noise == pytest.approx(0.456)


def test_evaluation_adds_no_noise_by_default_and_does_not_step() -> None:
    policy = _noise(0.3)
    actions = np.array([[0.5, 5.0], [-3.0, 11.0], [1.0, 0.0]])
    np.testing.assert_array_equal(
        policy.get_action(actions, RunPhase.EVALUATE), [[0.5, 5.0], [-1.0, 10.0], [1.0, 0.0]]
    )
    assert policy.steps == 0


def test_evaluation_noise_applies_in_evaluation() -> None:
    policy = _noise(0.3, evaluation_noise=0.02)
    deviation = policy.get_action(_at(CENTRE), RunPhase.EVALUATE) - CENTRE
    np.testing.assert_allclose(deviation.std(axis=0), [0.04, 0.2], rtol=5 / math.sqrt(2 * DRAWS))
    assert policy.steps == 0


def test_zero_noise_in_training_is_the_policy_clipped() -> None:
    actions = np.array([[0.25, 12.0], [-0.5, 3.0]])
    np.testing.assert_array_equal(
        _noise(0.0).get_action(actions, RunPhase.TRAIN), [[0.25, 10.0], [-0.5, 3.0]]
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_actions_stay_inside_the_bounds_in_the_space_dtype(dtype: type) -> None:
    space = spaces.Box(np.array([-1, 0], dtype), np.array([1, 10], dtype), dtype=dtype)
    policy = _noise(0.5, space=space)
    actions = policy.get_action(_at(np.array([0.9, 0.5]), 2_000).astype(dtype), RunPhase.TRAIN)
    assert actions.dtype == dtype
    assert np.all(actions >= space.low)
    assert np.all(actions <= space.high)
    # Clipping puts the mass beyond a bound on it.
    assert np.mean(actions[:, 0] == 1.0) > 0.3
    assert np.mean(actions[:, 1] == 0.0) > 0.3


def test_float64_policy_actions_come_back_in_a_float32_space_dtype() -> None:
    space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
    actions = _noise(0.1, space=space).get_action(np.zeros((3, 2)), RunPhase.TRAIN)
    assert actions.dtype == np.float32


@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=str)
@pytest.mark.parametrize("count", [1, 8])
def test_batches_of_each_shape_keep_their_shape_and_count_steps(
    shape: tuple[int, ...], count: int
) -> None:
    space = spaces.Box(-1.0, 1.0, shape=shape, dtype=np.float32)
    policy = _noise(0.1, space=space)
    inputs = np.zeros((count, *shape), np.float32)
    for calls in range(1, 4):
        actions = policy.get_action(inputs, RunPhase.TRAIN)
        assert actions.shape == (count, *shape)
        assert policy.steps == calls * count
    assert np.all(actions != 0.0)
    assert policy.get_action(inputs, RunPhase.EVALUATE).shape == (count, *shape)


def test_draws_are_reproducible_by_seed() -> None:
    inputs = _at(CENTRE, 50)
    a = _noise(seed=11).get_action(inputs, RunPhase.TRAIN)
    b = _noise(seed=11).get_action(inputs, RunPhase.TRAIN)
    c = _noise(seed=12).get_action(inputs, RunPhase.TRAIN)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_state_dict_round_trip() -> None:
    def policy() -> AdditiveNoise:
        return AdditiveNoise(BOX, np.random.default_rng(0), LinearSchedule(0.5, 0.1, 100))

    original = policy()
    original.get_action(_at(CENTRE, 37), RunPhase.TRAIN)
    state = original.state_dict()
    assert state == {"steps": 37}
    restored = policy()
    restored.load_state_dict(state)
    assert restored.steps == 37
    assert restored.noise == pytest.approx(original.noise) == pytest.approx(0.352)


def test_default_parameters() -> None:
    policy = AdditiveNoiseParameters().build(BOX, np.random.default_rng(0))
    assert isinstance(policy, AdditiveNoise)
    assert policy.values() == {"noise": 0.1}
    assert policy.evaluation_noise == 0.0
    assert policy.noise_as_percentage_from_action_space is True


def test_parameters_pass_everything_on() -> None:
    params = AdditiveNoiseParameters(
        noise_schedule=ConstantSchedule(0.2),
        evaluation_noise=0.05,
        noise_as_percentage_from_action_space=False,
    )
    policy = params.build(BOX, np.random.default_rng(0))
    assert policy.noise == 0.2
    assert policy.evaluation_noise == 0.05
    np.testing.assert_array_equal(policy.std(0.2), [0.2, 0.2])


@pytest.mark.parametrize(
    ("space", "reason"),
    [
        (spaces.Discrete(3), "Box"),
        (spaces.MultiDiscrete([2, 3]), "Box"),
        (spaces.MultiBinary(2), "Box"),
        (spaces.Box(-np.inf, np.inf, shape=(2,)), "finite bounds"),
        (
            spaces.Box(np.array([0.0, -np.inf]), np.array([1.0, 1.0]), dtype=np.float64),
            "finite bounds",
        ),
    ],
    ids=lambda v: str(v),
)
def test_spaces_it_cannot_take_are_refused_naming_them(space: spaces.Space, reason: str) -> None:
    with pytest.raises(CoachError, match=reason) as error:
        _noise(space=space)
    assert str(space) in str(error.value)


def test_actions_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(CoachError, match=r"shape \(B, 2\)"):
        _noise().get_action(np.zeros((4, 3)), RunPhase.TRAIN)
