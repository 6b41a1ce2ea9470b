"""The T x B rollout block and GAE, against a hand-computed case with a termination and a
truncation inside the block."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.types import Transition
from coach.errors import CoachError
from coach.memories.rollout import Rollout, RolloutParameters, generalized_advantages

OBSERVATION = spaces.Dict({"observation": spaces.Box(-100, 100, (1,), np.float32)})
EXTRAS = {"value": spaces.Box(-np.inf, np.inf, (), np.float32)}


def filled() -> tuple[Rollout, np.ndarray]:
    """Env 0: rewards 1..4, V = 10..40, terminated at t=1, truncated at t=3.
    Env 1: rewards 1, V = 0, no episode end."""
    rollout = RolloutParameters(rollout_length=4).build(
        OBSERVATION, spaces.Discrete(2), np.random.default_rng(0), EXTRAS
    )
    values = np.array([[10, 0], [20, 0], [30, 0], [40, 0]], dtype=np.float64)
    for t in range(4):
        rollout.store(
            Transition(
                state={"observation": np.array([[t], [100 + t]], np.float32)},
                action=np.array([t % 2, 1]),
                reward=np.array([t + 1, 1], np.float32),
                next_state={"observation": np.array([[t + 1], [101 + t]], np.float32)},
                terminated=np.array([t == 1, False]),
                truncated=np.array([t == 3, False]),
                extras={"value": values[t].astype(np.float32)},
            )
        )
    return rollout, values


def test_gae_by_hand_with_a_termination_and_a_truncation() -> None:
    rollout, values = filled()
    final_values = np.zeros((4, 2))
    final_values[3, 0] = 7.0  # V(final observation) of the truncated step
    final_values[1, 0] = 99.0  # the terminal step's successor: must not be used
    rollout.compute_advantages(values, np.array([55.0, 2.0]), final_values, 0.5, 0.5)
    # Env 0, deltas: 1 + .5*20 - 10 = 1; 2 - 20 = -18 (terminal); 3 + .5*40 - 30 = -7;
    # 4 + .5*7 - 40 = -32.5 (truncated: bootstraps from 7, not from the last value 55).
    # Traces (gamma*lambda = .25) stop at both episode ends.
    expected_env0 = [1 + 0.25 * -18, -18.0, -7 + 0.25 * -32.5, -32.5]
    # Env 1, no end: deltas 1, 1, 1, 1 + .5*2 = 2.
    expected_env1 = [1 + 0.25 * 1.375, 1 + 0.25 * 1.5, 1 + 0.25 * 2, 2.0]
    assert rollout.advantages is not None and rollout.returns is not None
    np.testing.assert_allclose(rollout.advantages[:, 0], expected_env0)
    np.testing.assert_allclose(rollout.advantages[:, 1], expected_env1)
    np.testing.assert_allclose(rollout.returns, rollout.advantages + values)


def test_lambda_one_is_the_discounted_return_minus_the_value() -> None:
    rewards = np.array([[1.0], [1.0], [1.0]])
    values = np.array([[0.5], [0.25], [0.125]])
    next_values = np.array([[0.25], [0.125], [8.0]])
    none = np.zeros((3, 1), bool)
    _, returns = generalized_advantages(rewards, values, next_values, none, none, 0.5, 1.0)
    np.testing.assert_allclose(
        returns[:, 0], [1 + 0.5 + 0.25 + 0.125 * 8, 1 + 0.5 + 0.25 * 8, 1 + 4]
    )


def test_minibatches_cover_the_block_once_with_aligned_columns() -> None:
    rollout, values = filled()
    rollout.compute_advantages(values, np.zeros(2), np.zeros((4, 2)), 0.5, 0.5)
    seen = []
    for batch in rollout.minibatches(3):
        t = batch.states["observation"][:, 0] % 100
        env = (batch.states["observation"][:, 0] >= 100).astype(int)
        np.testing.assert_array_equal(batch.extras["value"], values[t.astype(int), env])
        np.testing.assert_allclose(
            batch.extras["returns"] - batch.extras["advantages"], batch.extras["value"], rtol=1e-6
        )
        seen += batch.indices.tolist()
    assert sorted(seen) == list(range(8))


def test_the_block_refuses_misuse() -> None:
    rollout, values = filled()
    obs = {"observation": np.zeros((2, 1))}
    fields = (obs, np.zeros(2), np.zeros(2), obs, np.zeros(2, bool), np.zeros(2, bool))
    with pytest.raises(CoachError, match="full"):
        rollout.store(Transition(*fields, extras={"value": np.zeros(2)}))
    rollout.clear()
    assert len(rollout) == 0 and not rollout.full
    with pytest.raises(CoachError, match="full block"):
        rollout.compute_advantages(values, np.zeros(2), np.zeros((4, 2)), 0.5, 0.5)
    with pytest.raises(CoachError, match="columns"):
        rollout.store(Transition(*fields))


def test_sequence_minibatches_cover_the_block_in_whole_columns() -> None:
    rollout = RolloutParameters(rollout_length=8).build(
        OBSERVATION, spaces.Discrete(2), np.random.default_rng(0), EXTRAS
    )
    for t in range(8):  # env b's state at step t is 10 b + t
        rollout.store(
            Transition(
                state={"observation": np.array([[t], [10 + t], [20 + t]], np.float32)},
                action=np.zeros(3, np.int64),
                reward=np.zeros(3, np.float32),
                next_state={"observation": np.zeros((3, 1), np.float32)},
                terminated=np.zeros(3, bool),
                truncated=np.zeros(3, bool),
                extras={"value": np.zeros(3, np.float32)},
            )
        )
    seen = []
    for batch in rollout.sequence_minibatches(length=4, batch_size=8):
        states = batch.states["observation"][..., 0]
        assert states.shape[0] == 4 and states.shape[1] <= 2  # time-major, 2 sequences
        for column in states.T:  # one env copy, consecutive steps from a multiple of 4
            assert column[0] % 10 in (0, 4)
            np.testing.assert_array_equal(np.diff(column), 1)
            seen.append(int(column[0]))
        assert batch.indices.shape == states.shape
    assert sorted(seen) == [0, 4, 10, 14, 20, 24]  # every step once per epoch
    with pytest.raises(CoachError, match="do not tile"):
        next(rollout.sequence_minibatches(length=3, batch_size=6))
