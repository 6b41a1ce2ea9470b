"""Ensemble exploration: a head per episode, and UCB over the heads."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.run_phase import RunPhase
from coach.errors import CoachError
from coach.exploration.ensemble import Bootstrapped, BootstrappedParameters, UCBParameters
from coach.schedules import LinearSchedule
from coach.validation import InvalidParameter

# Two envs, three heads, two actions: head k prefers action k % 2.
VALUES = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]] * 2)


def test_each_env_follows_its_head_until_its_episode_ends() -> None:
    policy = Bootstrapped(spaces.Discrete(2), np.random.default_rng(0), num_heads=3)
    first = policy.get_action(VALUES, RunPhase.TRAIN)
    heads = policy.heads.copy()
    np.testing.assert_array_equal(first, heads % 2)
    for _ in range(5):  # the same head while the episode lasts
        np.testing.assert_array_equal(policy.get_action(VALUES, RunPhase.TRAIN), first)
    np.testing.assert_array_equal(policy.heads, heads)
    redrawn = []
    for _ in range(50):
        policy.episode_ended(np.array([True, False]))
        redrawn.append(policy.heads[0])
        assert policy.heads[1] == heads[1]
    assert set(redrawn) == {0, 1, 2}


def test_evaluation_uses_the_ensemble_mean() -> None:
    policy = BootstrappedParameters(num_heads=3).build(spaces.Discrete(2), np.random.default_rng(0))
    assert policy.get_action(VALUES, RunPhase.EVALUATE).tolist() == [0, 0]  # mean (2/3, 1/3)
    with pytest.raises(CoachError, match=r"\(B, 3, A\)"):
        policy.get_action(np.zeros((2, 4, 2)), RunPhase.TRAIN)


def test_state_round_trip_keeps_the_heads() -> None:
    policy = Bootstrapped(spaces.Discrete(2), np.random.default_rng(0), num_heads=3)
    policy.get_action(VALUES, RunPhase.TRAIN)
    other = Bootstrapped(spaces.Discrete(2), np.random.default_rng(1), num_heads=3)
    other.load_state_dict(policy.state_dict())
    np.testing.assert_array_equal(other.heads, policy.heads)


def test_ucb_adds_the_heads_disagreement() -> None:
    # Action 0: mean 0.5, no disagreement. Action 1: mean 0.4, heads disagree (std 0.4).
    values = np.array([[[0.5, 0.0], [0.5, 0.8]]])
    assert UCBParameters(c=1.0).build(spaces.Discrete(2), np.random.default_rng(0)).get_action(
        values, RunPhase.TRAIN
    ).tolist() == [1]
    ucb = UCBParameters(c=0.1).build(spaces.Discrete(2), np.random.default_rng(0))
    assert ucb.get_action(values, RunPhase.TRAIN).tolist() == [0]
    assert ucb.get_action(values, RunPhase.EVALUATE).tolist() == [0]


def test_masked_actions_are_passed_over_by_every_head_and_by_ucb() -> None:
    # Action 1 is masked (-inf in every head); action 2 disagrees most between the heads.
    values = np.array([[[0.5, -np.inf, 0.0], [0.5, -np.inf, 0.9], [0.5, -np.inf, 0.3]]] * 2)
    bootstrapped = Bootstrapped(spaces.Discrete(3), np.random.default_rng(0), num_heads=3)
    bootstrapped.masked = True
    for phase in (RunPhase.TRAIN, RunPhase.EVALUATE):
        assert 1 not in bootstrapped.get_action(values, phase)
    ucb = UCBParameters(c=1.0).build(spaces.Discrete(3), np.random.default_rng(0))
    ucb.masked = True
    # The spread of the -inf values is nan, which a plain argmax would take; mean + std of
    # action 2 is 0.4 + 0.37 > 0.5.
    with np.errstate(all="raise"):
        assert ucb.get_action(values, RunPhase.TRAIN).tolist() == [2, 2]
    assert ucb.get_action(values, RunPhase.EVALUATE).tolist() == [0, 0]


def test_copies_that_step_apart_each_follow_their_own_head() -> None:
    policy = Bootstrapped(spaces.Discrete(2), np.random.default_rng(1), num_heads=3)
    policy.rows = np.array([1])
    one = policy.get_action(VALUES[:1], RunPhase.TRAIN)
    assert len(policy.heads) == 2  # heads drawn for copies 0 and 1
    policy.rows = np.array([0, 1])
    both = policy.get_action(VALUES, RunPhase.TRAIN)
    np.testing.assert_array_equal(both, policy.heads % 2)
    assert both[1] == one[0]  # copy 1 kept its head
    policy.rows = np.array([3])
    policy.get_action(VALUES[:1], RunPhase.TRAIN)
    assert len(policy.heads) == 4


def test_an_epsilon_replaces_the_followed_heads_action_at_its_rate() -> None:
    """With an epsilon schedule the followed head is e-greedy: at 0.3 about 30% of the
    steps take a random action (half of them the other one), none in evaluation, and the
    schedule follows the training steps."""
    params = BootstrappedParameters(num_heads=3, epsilon_schedule=LinearSchedule(0.3, 0.0, 4000))
    params.validate()
    policy = params.build(spaces.Discrete(2), np.random.default_rng(0))
    values = np.repeat(VALUES[:1], 1000, axis=0)
    first = policy.get_action(values, RunPhase.TRAIN)
    greedy = policy.heads % 2
    assert 0.1 < np.mean(first != greedy) < 0.2, np.mean(first != greedy)
    assert policy.values() == {"epsilon": pytest.approx(0.3 * 3000 / 4000)}
    for _ in range(3):
        policy.get_action(values, RunPhase.TRAIN)
    np.testing.assert_array_equal(policy.get_action(values, RunPhase.TRAIN), policy.heads % 2)
    np.testing.assert_array_equal(
        policy.get_action(values, RunPhase.EVALUATE), np.zeros(1000, dtype=np.int64)
    )
    # Masked: a random action is a legal one.
    masked = params.build(spaces.Discrete(3), np.random.default_rng(0))
    masked.masked = True
    values = np.repeat(np.array([[[0.5, -np.inf, 0.0]] * 3]), 1000, axis=0)
    assert 1 not in masked.get_action(values, RunPhase.TRAIN)


def test_an_epsilon_outside_0_1_is_refused() -> None:
    with pytest.raises(InvalidParameter, match="epsilon_schedule"):
        BootstrappedParameters(epsilon_schedule=LinearSchedule(1.5, 0.0, 10)).validate()
