"""Unit tests for coach/exploration/ou_process.py."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.ou_process import OUProcess, OUProcessParameters
from coach.schedules import ConstantSchedule, LinearSchedule

UNBOUNDED = spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float64)


def _ou(
    space: spaces.Space = UNBOUNDED,
    seed: int = 0,
    mu: float = 0.0,
    theta: float = 0.15,
    sigma: float = 0.2,
    dt: float = 0.01,
    relative: bool = False,
) -> OUProcess:
    return OUProcess(
        space,
        np.random.default_rng(seed),
        mu=mu,
        theta=theta,
        sigma_schedule=ConstantSchedule(sigma),
        dt=dt,
        noise_as_percentage_from_action_space=relative,
    )


def _noise(policy: OUProcess, count: int, phase: RunPhase = RunPhase.TRAIN) -> np.ndarray:
    """The noise the policy adds to zero actions (in an unbounded float64 box)."""
    return policy.get_action(np.zeros((count, *policy.box.shape)), phase)


def test_one_step_follows_the_recursion_exactly() -> None:
    mu, theta, sigma, dt = 0.3, 0.5, 0.7, 0.1
    policy = _ou(seed=4, mu=mu, theta=theta, sigma=sigma, dt=dt)
    kicks = np.random.default_rng(4)
    x = np.zeros((3, 2))
    for _ in range(3):
        x = x + theta * (mu - x) * dt + sigma * math.sqrt(dt) * kicks.standard_normal((3, 2))
        np.testing.assert_allclose(_noise(policy, 3), x, rtol=1e-12, atol=1e-15)


def test_stationary_mean_variance_and_lag_one_correlation() -> None:
    # theta * dt = 0.4 makes the discrete recursion's variance (sigma^2 dt / (1 - 0.6^2))
    # 25% above the continuous process's sigma^2 / (2 theta): the test tells them apart.
    mu, theta, sigma, dt, envs = 0.3, 2.0, 0.5, 0.2, 4_000
    rho = 1.0 - theta * dt
    variance = sigma**2 * dt / (1.0 - rho**2)
    policy = _ou(seed=1, mu=mu, theta=theta, sigma=sigma, dt=dt)
    for _ in range(60):  # rho^120 ~ 1e-27: the start at zero is forgotten
        _noise(policy, envs)
    now, after = [], []
    for _ in range(10):  # snapshots 10 steps apart are nearly independent (rho^10 ~ 0.006)
        for _ in range(9):
            _noise(policy, envs)
        now.append(_noise(policy, envs))
        after.append(_noise(policy, envs))
    x, x_next = np.concatenate(now), np.concatenate(after)
    samples = len(x)

    mean_se = math.sqrt(variance / samples)
    np.testing.assert_allclose(x.mean(axis=0), mu, atol=5 * mean_se)
    variance_se = variance * math.sqrt(2.0 / samples)
    np.testing.assert_allclose(x.var(axis=0), variance, atol=5 * variance_se)
    assert np.all(np.abs(x.var(axis=0) - sigma**2 / (2 * theta)) > 5 * variance_se)
    lag_one = ((x - mu) * (x_next - mu)).mean(axis=0) / variance
    np.testing.assert_allclose(lag_one, rho, atol=5 * (1 - rho**2) / math.sqrt(samples))


def test_default_parameters_are_ddpgs() -> None:
    policy = OUProcessParameters().build(UNBOUNDED, np.random.default_rng(0))
    assert isinstance(policy, OUProcess)
    assert (policy.mu, policy.theta, policy.sigma, policy.dt) == (0.0, 0.15, 0.2, 0.01)
    assert policy.noise_as_percentage_from_action_space is False
    assert policy.values() == {"sigma": 0.2}


def test_parameters_pass_everything_on() -> None:
    params = OUProcessParameters(
        mu=0.1,
        theta=0.3,
        sigma_schedule=ConstantSchedule(0.4),
        dt=0.05,
        noise_as_percentage_from_action_space=True,
    )
    policy = params.build(spaces.Box(-1.0, 1.0, shape=(2,)), np.random.default_rng(0))
    assert (policy.mu, policy.theta, policy.sigma, policy.dt) == (0.1, 0.3, 0.4, 0.05)
    np.testing.assert_array_equal(policy.scale, [2.0, 2.0])


def test_relative_noise_is_the_process_times_the_range() -> None:
    box = spaces.Box(np.array([-1.0, -10.0]), np.array([1.0, 10.0]), dtype=np.float64)
    relative = _ou(box, seed=3, sigma=0.01, relative=True)
    absolute = _ou(seed=3, sigma=0.01)
    for _ in range(5):
        np.testing.assert_allclose(
            _noise(relative, 6), _noise(absolute, 6) * [2.0, 20.0], rtol=1e-12
        )


def test_unbounded_box_is_refused_for_relative_noise_only() -> None:
    half_open = spaces.Box(np.array([0.0, -np.inf]), np.array([1.0, 1.0]), dtype=np.float64)
    _ou(half_open)  # absolute noise needs no bounds
    with pytest.raises(CoachError, match="finite bounds"):
        _ou(half_open, relative=True)


def test_actions_are_clipped_into_the_box_in_its_dtype() -> None:
    box = spaces.Box(-0.1, 0.1, shape=(3,), dtype=np.float32)
    policy = _ou(box, sigma=5.0, theta=0.5, dt=0.1)
    for _ in range(20):
        actions = policy.get_action(np.full((8, 3), 0.05, np.float32), RunPhase.TRAIN)
        assert actions.dtype == np.float32
        assert actions.shape == (8, 3)
        assert np.all(actions >= box.low)
        assert np.all(actions <= box.high)
    assert np.any(actions == box.high)
    assert np.any(actions == box.low)


def test_noise_is_added_to_the_policy_actions() -> None:
    policy, twin = _ou(seed=9, sigma=0.5), _ou(seed=9, sigma=0.5)
    base = np.array([[1.0, -2.0], [3.0, 0.5]])
    np.testing.assert_allclose(
        policy.get_action(base, RunPhase.TRAIN), base + _noise(twin, 2), rtol=1e-12
    )


def test_evaluation_adds_nothing_and_leaves_the_process_alone() -> None:
    box = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
    policy = _ou(box, sigma=1.0, theta=1.0, dt=0.1)
    policy.get_action(np.zeros((4, 2)), RunPhase.TRAIN)
    assert policy.state is not None
    state = policy.state.copy()
    actions = np.array([[0.5, -0.25], [2.0, -3.0], [0.0, 0.0], [1.0, -1.0]])
    evaluated = policy.get_action(actions, RunPhase.EVALUATE)
    np.testing.assert_array_equal(evaluated, np.clip(actions, -1.0, 1.0))
    assert evaluated.dtype == np.float32
    assert policy.steps == 4
    np.testing.assert_array_equal(policy.state, state)


def test_heatup_steps_the_process_like_training() -> None:
    heatup, train = _ou(seed=2), _ou(seed=2)
    np.testing.assert_array_equal(
        _noise(heatup, 5, RunPhase.HEATUP), _noise(train, 5, RunPhase.TRAIN)
    )
    assert heatup.steps == 5


def test_episode_end_resets_only_the_ended_envs() -> None:
    policy = _ou(sigma=1.0, theta=0.5, dt=0.1)
    for _ in range(10):
        _noise(policy, 4)
    assert policy.state is not None
    before = policy.state.copy()
    assert np.all(before != 0.0)
    policy.episode_ended(np.array([True, False, True, False]))
    np.testing.assert_array_equal(policy.state[[0, 2]], 0.0)
    np.testing.assert_array_equal(policy.state[[1, 3]], before[[1, 3]])


def test_episode_end_before_any_training_is_harmless() -> None:
    policy = _ou()
    policy.episode_ended(np.array([True, True]))
    assert policy.state is None


def test_a_new_number_of_envs_starts_a_new_process() -> None:
    policy = _ou(sigma=1.0)
    _noise(policy, 4)
    _noise(policy, 3)
    assert policy.state is not None
    assert policy.state.shape == (3, 2)
    assert policy.steps == 7


@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=str)
@pytest.mark.parametrize("count", [1, 8])
def test_batches_of_each_shape_keep_their_shape_and_count_steps(
    shape: tuple[int, ...], count: int
) -> None:
    box = spaces.Box(-1.0, 1.0, shape=shape, dtype=np.float32)
    policy = _ou(box, sigma=1.0)
    for calls in range(1, 4):
        actions = policy.get_action(np.zeros((count, *shape), np.float32), RunPhase.TRAIN)
        assert actions.shape == (count, *shape)
        assert actions.dtype == np.float32
        assert policy.steps == calls * count
    assert policy.state is not None
    assert policy.state.shape == (count, *shape)
    assert np.all(actions != 0.0)


def test_sigma_follows_its_schedule_of_training_steps() -> None:
    policy = OUProcess(
        UNBOUNDED, np.random.default_rng(0), sigma_schedule=LinearSchedule(1.0, 0.0, 100)
    )
    assert policy.values() == {"sigma": 1.0}
    _noise(policy, 10)
    assert policy.values() == {"sigma": pytest.approx(0.9)}
    _noise(policy, 10, RunPhase.EVALUATE)
    assert policy.values() == {"sigma": pytest.approx(0.9)}
    for _ in range(9):
        _noise(policy, 10)
    assert policy.state is not None
    state = policy.state.copy()
    # Sigma is 0 from here: the process only decays towards mu.
    np.testing.assert_allclose(_noise(policy, 10), state * (1 - 0.15 * 0.01), rtol=1e-12)


def test_draws_are_reproducible_by_seed() -> None:
    a, b, c = (_ou(seed=s) for s in (5, 5, 6))
    for _ in range(3):
        first, second, other = _noise(a, 8), _noise(b, 8), _noise(c, 8)
        np.testing.assert_array_equal(first, second)
        assert not np.array_equal(first, other)


def test_state_dict_round_trip_continues_identically() -> None:
    policy = _ou(sigma=1.0, theta=0.5, dt=0.1)
    for _ in range(7):
        _noise(policy, 4)
    state = policy.state_dict()
    assert state["steps"] == 28
    assert state["state"].shape == (4, 2)
    rng = copy.deepcopy(policy.rng)

    restored = OUProcess(UNBOUNDED, rng, sigma_schedule=ConstantSchedule(1.0), theta=0.5, dt=0.1)
    restored.load_state_dict(state)
    forgetful = OUProcess(
        UNBOUNDED, copy.deepcopy(rng), sigma_schedule=ConstantSchedule(1.0), theta=0.5, dt=0.1
    )
    state["state"][:] = 99.0  # the policy kept its own copy
    for _ in range(3):
        expected = _noise(policy, 4)
        np.testing.assert_array_equal(_noise(restored, 4), expected)
        assert not np.allclose(_noise(forgetful, 4), expected)
    assert restored.steps == policy.steps == 40


def test_state_dict_before_training_has_no_process() -> None:
    state = _ou().state_dict()
    assert state == {"steps": 0, "state": None}
    restored = _ou()
    restored.load_state_dict(state)
    assert restored.state is None


@pytest.mark.parametrize(
    "space",
    [spaces.Discrete(3), spaces.MultiDiscrete([2, 3]), spaces.MultiBinary(2)],
    ids=lambda s: type(s).__name__,
)
def test_non_box_spaces_are_refused_naming_the_space(space: spaces.Space) -> None:
    with pytest.raises(CoachError, match="Box") as error:
        _ou(space)
    assert str(space) in str(error.value)


def test_actions_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(CoachError, match=r"shape \(B, 2\)"):
        _ou().get_action(np.zeros(2), RunPhase.TRAIN)


def test_a_step_of_some_copies_moves_only_their_processes() -> None:
    every, some = _ou(seed=3), _ou(seed=3)
    zeros = np.zeros((3, 2))
    every.get_action(zeros, RunPhase.TRAIN)  # three copies' processes, from zero
    some.rows = np.array([0, 1, 2])
    some.get_action(zeros, RunPhase.TRAIN)
    np.testing.assert_array_equal(some.state, every.state)
    before = some.state.copy()
    some.rows = np.array([2])
    moved = some.get_action(np.zeros((1, 2)), RunPhase.TRAIN)
    np.testing.assert_array_equal(some.state[:2], before[:2])  # the others wait
    assert not np.array_equal(some.state[2], before[2])
    np.testing.assert_allclose(moved[0], some.state[2])
    some.rows = np.array([5])  # a copy not seen before starts at zero
    some.get_action(np.zeros((1, 2)), RunPhase.TRAIN)
    assert some.state.shape == (6, 2) and not some.state[3:5].any()
    some.episode_ended(np.array([False, False, True, False, False, False]))
    assert not some.state[2].any() and some.state[0].any()
