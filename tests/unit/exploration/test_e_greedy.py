"""Unit tests for coach/exploration/e_greedy.py and coach/exploration/exploration_policy.py."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.e_greedy import EGreedy, EGreedyParameters
from coach.exploration.exploration_policy import random_actions, uniform_integers
from coach.schedules import ConstantSchedule, LinearSchedule, PieceWiseSchedule

N_ACTIONS = 4


def _e_greedy(
    epsilon: float = 1.0,
    evaluation_epsilon: float = 0.0,
    space: spaces.Space | None = None,
    seed: int = 0,
) -> EGreedy:
    return EGreedy(
        space or spaces.Discrete(N_ACTIONS),
        np.random.default_rng(seed),
        ConstantSchedule(epsilon),
        evaluation_epsilon,
    )


def _q_values(count: int, greedy: int = 2) -> np.ndarray:
    values = np.zeros((count, N_ACTIONS))
    values[:, greedy] = 1.0
    return values


def test_evaluation_with_zero_epsilon_is_argmax() -> None:
    policy = _e_greedy(epsilon=1.0, evaluation_epsilon=0.0)
    q_values = np.random.default_rng(5).normal(size=(50, N_ACTIONS))
    actions = policy.get_action(q_values, RunPhase.EVALUATE)
    np.testing.assert_array_equal(actions, q_values.argmax(axis=1))
    assert actions.shape == (50,)


def test_train_with_zero_epsilon_is_argmax() -> None:
    policy = _e_greedy(epsilon=0.0)
    q_values = np.random.default_rng(6).normal(size=(30, N_ACTIONS))
    np.testing.assert_array_equal(
        policy.get_action(q_values, RunPhase.TRAIN), q_values.argmax(axis=1)
    )


@pytest.mark.parametrize("phase", [RunPhase.TRAIN, RunPhase.EVALUATE])
def test_epsilon_one_draws_uniform_actions(phase: RunPhase) -> None:
    policy = _e_greedy(epsilon=1.0, evaluation_epsilon=1.0)
    draws = 20_000
    actions = policy.get_action(_q_values(draws), phase)
    frequencies = np.bincount(actions, minlength=N_ACTIONS) / draws
    np.testing.assert_allclose(frequencies, np.full(N_ACTIONS, 1 / N_ACTIONS), atol=0.015)


def test_epsilon_point_three_is_greedy_about_0_7_plus_0_3_over_n() -> None:
    policy = _e_greedy(epsilon=0.3)
    draws = 20_000
    actions = policy.get_action(_q_values(draws, greedy=1), RunPhase.TRAIN)
    greedy_fraction = np.mean(actions == 1)
    assert greedy_fraction == pytest.approx(0.7 + 0.3 / N_ACTIONS, abs=0.015)
    for other in (0, 2, 3):
        assert np.mean(actions == other) == pytest.approx(0.3 / N_ACTIONS, abs=0.01)


def test_draws_are_reproducible_by_seed() -> None:
    q_values = _q_values(200)
    a = _e_greedy(epsilon=0.5, seed=11).get_action(q_values, RunPhase.TRAIN)
    b = _e_greedy(epsilon=0.5, seed=11).get_action(q_values, RunPhase.TRAIN)
    c = _e_greedy(epsilon=0.5, seed=12).get_action(q_values, RunPhase.TRAIN)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_epsilon_follows_the_schedule_per_env_row_in_train() -> None:
    policy = EGreedy(
        spaces.Discrete(N_ACTIONS), np.random.default_rng(0), LinearSchedule(1.0, 0.0, 100)
    )
    assert policy.epsilon == 1.0
    policy.get_action(_q_values(10), RunPhase.TRAIN)
    assert policy.steps == 10
    assert policy.epsilon == pytest.approx(0.9)
    assert policy.values() == {"epsilon": pytest.approx(0.9)}
    policy.get_action(_q_values(1), RunPhase.TRAIN)
    assert policy.steps == 11
    assert policy.epsilon == pytest.approx(0.89)
    for _ in range(20):
        policy.get_action(_q_values(5), RunPhase.TRAIN)
    assert policy.steps == 111
    assert policy.epsilon == 0.0


def test_evaluation_does_not_advance_the_schedule() -> None:
    policy = EGreedy(
        spaces.Discrete(N_ACTIONS), np.random.default_rng(0), LinearSchedule(1.0, 0.0, 100)
    )
    policy.get_action(_q_values(10), RunPhase.TRAIN)
    for _ in range(5):
        policy.get_action(_q_values(8), RunPhase.EVALUATE)
    assert policy.steps == 10
    assert policy.epsilon == pytest.approx(0.9)


def test_a_call_uses_the_epsilon_of_the_steps_before_it() -> None:
    # Epsilon 1 for the first 4 steps, then 0: a first call of 4 rows is all random,
    # the second call all greedy.
    schedule = PieceWiseSchedule([(ConstantSchedule(1.0), 4), (ConstantSchedule(0.0), 0)])
    policy = EGreedy(spaces.Discrete(N_ACTIONS), np.random.default_rng(1), schedule)
    first = policy.get_action(_q_values(4_000, greedy=3), RunPhase.TRAIN)
    assert np.mean(first == 3) < 0.5
    second = policy.get_action(_q_values(4_000, greedy=3), RunPhase.TRAIN)
    assert np.all(second == 3)


def test_discrete_start_is_added_to_actions() -> None:
    space = spaces.Discrete(3, start=5)
    greedy = _e_greedy(epsilon=0.0, space=space)
    q_values = np.array([[0.0, 1.0, 0.0], [3.0, 1.0, 0.0], [0.0, 0.0, 9.0]])
    np.testing.assert_array_equal(greedy.get_action(q_values, RunPhase.TRAIN), [6, 5, 7])
    explorer = _e_greedy(epsilon=1.0, space=space)
    actions = explorer.get_action(np.zeros((3_000, 3)), RunPhase.TRAIN)
    assert set(actions.tolist()) == {5, 6, 7}


@pytest.mark.parametrize(
    "space",
    [spaces.Box(-1.0, 1.0, shape=(2,)), spaces.MultiDiscrete([2, 3]), spaces.MultiBinary(3)],
    ids=lambda s: type(s).__name__,
)
def test_non_discrete_space_raises(space: spaces.Space) -> None:
    with pytest.raises(CoachError, match="Discrete"):
        EGreedy(space, np.random.default_rng(0), ConstantSchedule(0.1))


def test_state_dict_round_trip() -> None:
    policy = EGreedy(
        spaces.Discrete(N_ACTIONS), np.random.default_rng(0), LinearSchedule(1.0, 0.0, 100)
    )
    policy.get_action(_q_values(37), RunPhase.TRAIN)
    state = policy.state_dict()
    assert state == {"steps": 37}

    restored = EGreedy(
        spaces.Discrete(N_ACTIONS), np.random.default_rng(0), LinearSchedule(1.0, 0.0, 100)
    )
    restored.load_state_dict(state)
    assert restored.steps == 37
    assert restored.epsilon == pytest.approx(policy.epsilon) == pytest.approx(0.63)


def test_parameters_build_an_e_greedy_policy() -> None:
    params = EGreedyParameters(epsilon_schedule=ConstantSchedule(0.2), evaluation_epsilon=0.05)
    policy = params.build(spaces.Discrete(3), np.random.default_rng(0))
    assert isinstance(policy, EGreedy)
    assert policy.epsilon == 0.2
    assert policy.evaluation_epsilon == 0.05


def test_default_parameters_decay_from_one() -> None:
    policy = EGreedyParameters().build(spaces.Discrete(3), np.random.default_rng(0))
    assert policy.epsilon == 1.0


# -- random actions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("space", "shape"),
    [
        (spaces.Discrete(5), ()),
        (spaces.Discrete(3, start=-1), ()),
        (spaces.Discrete(4, start=10), ()),
        (spaces.Box(np.array([-1, 0], np.float32), np.array([1, 5], np.float32)), (2,)),
        (spaces.Box(-2.0, 3.0, shape=(2, 3), dtype=np.float64), (2, 3)),
        (spaces.MultiDiscrete([2, 3, 4]), (3,)),
        (spaces.MultiDiscrete([3, 3], start=[1, -2]), (2,)),
        (spaces.MultiBinary(4), (4,)),
    ],
    ids=lambda v: str(v),
)
def test_random_actions_lie_in_the_space(space: spaces.Space, shape: tuple[int, ...]) -> None:
    actions = random_actions(space, 500, np.random.default_rng(0))
    assert actions.shape == (500, *shape)
    for action in actions:
        assert space.contains(np.asarray(action, dtype=space.dtype)), action


def test_random_discrete_actions_cover_the_range_with_start() -> None:
    actions = random_actions(spaces.Discrete(4, start=10), 2_000, np.random.default_rng(0))
    assert set(actions.tolist()) == {10, 11, 12, 13}
    frequencies = np.bincount(actions - 10) / 2_000
    np.testing.assert_allclose(frequencies, np.full(4, 0.25), atol=0.04)


def test_random_box_actions_keep_dtype_and_bounds() -> None:
    space = spaces.Box(np.array([-1, 0], np.float32), np.array([1, 5], np.float32))
    actions = random_actions(space, 2_000, np.random.default_rng(0))
    assert actions.dtype == np.float32
    assert np.all(actions >= space.low)
    assert np.all(actions <= space.high)
    # They spread over the box rather than sitting at a point.
    assert actions[:, 1].min() < 0.5
    assert actions[:, 1].max() > 4.5


def test_random_multi_discrete_actions_cover_each_dimension() -> None:
    space = spaces.MultiDiscrete([3, 3], start=[1, -2])
    actions = random_actions(space, 1_000, np.random.default_rng(0))
    assert set(actions[:, 0].tolist()) == {1, 2, 3}
    assert set(actions[:, 1].tolist()) == {-2, -1, 0}


def test_random_multi_binary_actions() -> None:
    actions = random_actions(spaces.MultiBinary(4), 1_000, np.random.default_rng(0))
    assert actions.dtype == spaces.MultiBinary(4).dtype
    assert set(np.unique(actions).tolist()) == {0, 1}
    np.testing.assert_allclose(actions.mean(axis=0), np.full(4, 0.5), atol=0.06)


def test_random_actions_are_reproducible_by_seed() -> None:
    space = spaces.Discrete(6)
    a = random_actions(space, 100, np.random.default_rng(3))
    b = random_actions(space, 100, np.random.default_rng(3))
    c = random_actions(space, 100, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "space",
    [
        spaces.Box(-np.inf, np.inf, shape=(2,)),
        spaces.Box(np.array([0, -np.inf], np.float32), np.array([1, 1], np.float32)),
        spaces.Tuple([spaces.Discrete(2)]),
    ],
    ids=lambda s: str(s),
)
def test_random_actions_refuse_spaces_they_cannot_draw_from(space: spaces.Space) -> None:
    with pytest.raises(CoachError):
        random_actions(space, 3, np.random.default_rng(0))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000])
def test_uniform_integers_stay_in_range(n: int) -> None:
    values = uniform_integers(np.random.default_rng(0), n, 5_000)
    assert values.dtype == np.int64
    assert values.min() >= 0
    assert values.max() == n - 1


# -- action masks: the values mark illegal actions with -inf ---------------------------------

LEGAL = np.array([True, False, True, False])
"""Actions 0 and 2 legal; the masked action 3 has the highest value."""


def _masked_values(count: int) -> np.ndarray:
    values = np.tile([1.0, -np.inf, 2.0, -np.inf], (count, 1))
    return values


@pytest.mark.parametrize("phase", [RunPhase.TRAIN, RunPhase.EVALUATE])
def test_masked_random_actions_are_uniform_over_the_legal_ones(phase: RunPhase) -> None:
    policy = _e_greedy(epsilon=1.0, evaluation_epsilon=1.0, space=spaces.Discrete(4, start=2))
    policy.masked = True
    draws = 40_000
    actions = policy.get_action(_masked_values(draws), phase) - 2
    frequencies = np.bincount(actions, minlength=N_ACTIONS) / draws
    assert frequencies[~LEGAL].sum() == 0.0  # never an illegal one
    np.testing.assert_allclose(frequencies, [0.5, 0.0, 0.5, 0.0], atol=0.01)


def test_masked_e_greedy_mixes_the_greedy_legal_action_and_the_legal_ones() -> None:
    # Epsilon 0.4: the greedy legal action 2 gets 0.6 + 0.4 / 2, action 0 gets 0.4 / 2; its
    # probabilities (what a dataset logs) agree with its draws.
    policy = _e_greedy(epsilon=0.4)
    policy.masked = True
    values = _masked_values(40_000)
    values[:, 3] = -np.inf
    probabilities = policy.action_probabilities(values[:1], RunPhase.TRAIN)[0]
    np.testing.assert_allclose(probabilities, [0.2, 0.0, 0.8, 0.0])
    actions = policy.get_action(values, RunPhase.TRAIN)
    np.testing.assert_allclose(
        np.bincount(actions, minlength=N_ACTIONS) / len(actions), probabilities, atol=0.01
    )


def test_masked_e_greedy_rows_have_their_own_legal_actions() -> None:
    policy = _e_greedy(epsilon=1.0)
    policy.masked = True
    values = np.tile([[0.0, 0.0, -np.inf, -np.inf], [-np.inf, -np.inf, -np.inf, 5.0]], (500, 1))
    actions = policy.get_action(values, RunPhase.TRAIN).reshape(500, 2)
    assert set(actions[:, 0]) == {0, 1} and set(actions[:, 1]) == {3}


def test_with_every_value_finite_masked_draws_are_the_unmasked_ones() -> None:
    values = np.random.default_rng(2).normal(size=(300, N_ACTIONS))
    masked, plain = _e_greedy(epsilon=0.5, seed=4), _e_greedy(epsilon=0.5, seed=4)
    masked.masked = True
    np.testing.assert_array_equal(
        masked.get_action(values, RunPhase.TRAIN), plain.get_action(values, RunPhase.TRAIN)
    )
    np.testing.assert_array_equal(
        masked.action_probabilities(values, RunPhase.TRAIN),
        plain.action_probabilities(values, RunPhase.TRAIN),
    )
