"""Boltzmann exploration: frequencies follow softmax(Q / T); evaluation is greedy."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.boltzmann import Boltzmann, BoltzmannParameters
from coach.schedules import ConstantSchedule, LinearSchedule


def test_frequencies_follow_the_softmax() -> None:
    policy = Boltzmann(spaces.Discrete(3), np.random.default_rng(0), ConstantSchedule(0.5))
    values = np.tile([[1.0, 0.5, 0.0]], (60_000, 1))
    actions = policy.get_action(values, RunPhase.TRAIN)
    expected = np.exp(np.array([1.0, 0.5, 0.0]) / 0.5)
    expected /= expected.sum()
    np.testing.assert_allclose(
        np.bincount(actions, minlength=3) / len(actions), expected, atol=0.01
    )


def test_evaluation_is_greedy_and_does_not_count() -> None:
    policy = BoltzmannParameters().build(spaces.Discrete(3, start=1), np.random.default_rng(0))
    actions = policy.get_action(np.array([[0.0, 2.0, 1.0], [5.0, 0.0, 0.0]]), RunPhase.EVALUATE)
    assert actions.tolist() == [2, 1] and policy.steps == 0


def test_temperature_follows_its_schedule() -> None:
    policy = Boltzmann(spaces.Discrete(2), np.random.default_rng(0), LinearSchedule(1.0, 0.0, 10))
    policy.get_action(np.zeros((5, 2)), RunPhase.TRAIN)
    assert policy.temperature == pytest.approx(0.5) and policy.values() == {"temperature": 0.5}
    # Near zero temperature it is greedy, and the softmax stays finite.
    policy.steps = 10
    assert policy.get_action(np.array([[0.0, 1e3]]), RunPhase.TRAIN).tolist() == [1]


def test_a_step_samples_at_the_temperature_its_logged_probabilities_have() -> None:
    """The recorder logs action_probabilities before the step: they must be what the step
    samples from, not the next step's temperature."""
    schedule = LinearSchedule(1.0, 0.01, 10)
    values = np.tile([[0.0, 1.0]], (20_000, 1))
    policy = Boltzmann(spaces.Discrete(2), np.random.default_rng(0), schedule)
    logged = policy.action_probabilities(values, RunPhase.TRAIN)[0]
    actions = policy.get_action(values, RunPhase.TRAIN)
    np.testing.assert_allclose(logged, [1 / (1 + np.e), np.e / (1 + np.e)])  # temperature 1
    np.testing.assert_allclose(np.bincount(actions, minlength=2) / len(actions), logged, atol=0.01)


def test_refuses_continuous_actions() -> None:
    with pytest.raises(CoachError, match="Discrete"):
        Boltzmann(spaces.Box(-1, 1, (2,)), np.random.default_rng(0), ConstantSchedule(1.0))


def test_an_evaluation_temperature_samples_and_gives_its_probabilities() -> None:
    policy = BoltzmannParameters(evaluation_temperature=0.5).build(
        spaces.Discrete(3), np.random.default_rng(0)
    )
    values = np.tile([[1.0, 0.5, 0.0]], (60_000, 1))
    expected = np.exp(np.array([1.0, 0.5, 0.0]) / 0.5)
    expected /= expected.sum()
    actions = policy.get_action(values, RunPhase.EVALUATE)
    assert policy.steps == 0  # evaluation does not move the schedule
    np.testing.assert_allclose(
        np.bincount(actions, minlength=3) / len(actions), expected, atol=0.01
    )
    np.testing.assert_allclose(
        policy.action_probabilities(values[:1], RunPhase.EVALUATE)[0], expected
    )
    greedy = BoltzmannParameters().build(spaces.Discrete(3), np.random.default_rng(0))
    assert greedy.action_probabilities(values[:1], RunPhase.EVALUATE).tolist() == [[1.0, 0.0, 0.0]]
    with pytest.raises(CoachError, match="evaluation_temperature"):
        BoltzmannParameters(evaluation_temperature=-1.0).build(
            spaces.Discrete(3), np.random.default_rng(0)
        )


def test_e_greedy_probabilities_match_its_draws() -> None:
    from coach.exploration.e_greedy import EGreedyParameters

    policy = EGreedyParameters(epsilon_schedule=ConstantSchedule(0.3)).build(
        spaces.Discrete(3), np.random.default_rng(1)
    )
    values = np.tile([[0.0, 2.0, 1.0]], (60_000, 1))
    probabilities = policy.action_probabilities(values[:1], RunPhase.TRAIN)[0]
    np.testing.assert_allclose(probabilities, [0.1, 0.8, 0.1])
    actions = policy.get_action(values, RunPhase.TRAIN)
    np.testing.assert_allclose(
        np.bincount(actions, minlength=3) / len(actions), probabilities, atol=0.01
    )


def test_an_action_of_value_minus_infinity_has_probability_zero() -> None:
    policy = Boltzmann(spaces.Discrete(3), np.random.default_rng(0), ConstantSchedule(1.0))
    policy.masked = True
    values = np.tile([[1.0, -np.inf, 0.0]], (30_000, 1))
    probabilities = policy.action_probabilities(values[:1], RunPhase.TRAIN)[0]
    np.testing.assert_allclose(probabilities, [np.e / (1 + np.e), 0.0, 1 / (1 + np.e)])
    actions = policy.get_action(values, RunPhase.TRAIN)
    frequencies = np.bincount(actions, minlength=3) / len(actions)
    assert frequencies[1] == 0.0
    np.testing.assert_allclose(frequencies, probabilities, atol=0.01)
    assert policy.get_action(values[:1], RunPhase.EVALUATE).tolist() == [0]


class _Past(np.random.Generator):
    """Draws as close to 1 as floats go: past a cumulative total that rounds below 1."""

    def __init__(self) -> None:
        super().__init__(np.random.PCG64(0))

    def random(self, size=None, dtype=np.float64, out=None):  # type: ignore[no-untyped-def,override]
        return np.full(size, np.nextafter(1.0, 0.0))


def test_a_draw_past_the_rounded_total_does_not_fall_on_a_masked_last_action() -> None:
    policy = Boltzmann(spaces.Discrete(4), _Past(), ConstantSchedule(1.0))
    policy.masked = True
    values = np.array([[-2.4, 1.2, 0.3, -np.inf]])
    # The cumulative total rounds below the draw: the inverse CDF runs off the end.
    assert policy.probabilities(values).cumsum()[-1] < np.nextafter(1.0, 0.0)
    assert policy.get_action(values, RunPhase.TRAIN).tolist() == [1]  # the likeliest
