"""Unit tests for coach/core/types.py: EnvResponse, Transition and Batch."""

from __future__ import annotations

import numpy as np
import pytest

from coach.core.types import Batch, EnvResponse, Transition, any_set


def _two_env_response() -> tuple[dict[str, np.ndarray], np.ndarray, EnvResponse]:
    """A step of two envs where env 1 ended (terminated): its copy was already reset."""
    state = {
        "observation": np.array([[0.0, 1.0], [10.0, 11.0]], dtype=np.float32),
        "goal": np.array([[5.0], [6.0]], dtype=np.float32),
    }
    action = np.array([1, 0])
    observation = {
        "observation": np.array([[2.0, 3.0], [-1.0, -1.0]], dtype=np.float32),
        "goal": np.array([[5.0], [9.0]], dtype=np.float32),
    }
    next_observation = {
        "observation": np.array([[2.0, 3.0], [12.0, 13.0]], dtype=np.float32),
        "goal": np.array([[5.0], [6.0]], dtype=np.float32),
    }
    response = EnvResponse(
        observation=observation,
        reward=np.array([0.5, -2.0], dtype=np.float32),
        terminated=np.array([False, True]),
        truncated=np.array([False, False]),
        next_observation=next_observation,
        episode_return=np.array([0.5, 7.0]),
        episode_length=np.array([1, 4]),
        infos=[{"a": 1}, {"b": 2}],
    )
    return state, action, response


@pytest.mark.parametrize(
    ("terminated", "truncated", "expected"),
    [
        ([False, False, True, True], [False, True, False, True], [False, True, True, True]),
        ([False], [False], [False]),
    ],
)
def test_env_response_done_is_terminated_or_truncated(
    terminated: list[bool], truncated: list[bool], expected: list[bool]
) -> None:
    n = len(terminated)
    observation = {"observation": np.zeros((n, 1))}
    response = EnvResponse(
        observation=observation,
        reward=np.zeros(n),
        terminated=np.array(terminated),
        truncated=np.array(truncated),
        next_observation=observation,
        episode_return=np.zeros(n),
        episode_length=np.zeros(n, dtype=np.int64),
    )
    np.testing.assert_array_equal(response.done, expected)
    assert response.num_envs == n


def test_a_step_response_starts_episodes_where_they_ended() -> None:
    _, _, response = _two_env_response()
    np.testing.assert_array_equal(response.episode_started, [False, True])


def test_explicit_episode_starts_are_kept() -> None:
    _, _, response = _two_env_response()
    flags = np.array([True, False])
    explicit = EnvResponse(
        observation=response.observation,
        reward=response.reward,
        terminated=response.terminated,
        truncated=response.truncated,
        next_observation=response.next_observation,
        episode_return=response.episode_return,
        episode_length=response.episode_length,
        episode_started=flags,
    )
    np.testing.assert_array_equal(explicit.episode_started, flags)


def test_a_reset_starts_every_episode_and_ends_none() -> None:
    observation = {"observation": np.zeros((3, 2))}
    response = EnvResponse.first(observation, 3)
    np.testing.assert_array_equal(response.episode_started, [True, True, True])
    assert not response.done.any()


def _three_rows() -> Transition:
    return Transition(
        state={"observation": np.arange(6.0).reshape(3, 2)},
        action=np.array([0, 1, 2]),
        reward=np.array([1.0, 2.0, 3.0], dtype=np.float32),
        next_state={"observation": np.arange(6.0, 12.0).reshape(3, 2)},
        terminated=np.array([False, True, False]),
        truncated=np.array([False, False, True]),
        extras={"log_prob": np.array([-0.1, -0.2, -0.3])},
    )


def test_transition_done_is_terminated_or_truncated() -> None:
    transition = _three_rows()
    assert len(transition) == 3
    np.testing.assert_array_equal(transition.done, [False, True, True])


def test_transition_rows_select_every_field() -> None:
    picked = _three_rows().rows(np.array([2, 0]))
    np.testing.assert_array_equal(picked.state["observation"], [[4.0, 5.0], [0.0, 1.0]])
    np.testing.assert_array_equal(picked.next_state["observation"], [[10.0, 11.0], [6.0, 7.0]])
    np.testing.assert_array_equal(picked.action, [2, 0])
    np.testing.assert_array_equal(picked.reward, [3.0, 1.0])
    np.testing.assert_array_equal(picked.truncated, [True, False])
    np.testing.assert_array_equal(picked.extras["log_prob"], [-0.3, -0.1])


def test_transitions_concatenate_row_after_row() -> None:
    one, two = _three_rows(), _three_rows().rows(np.array([1]))
    joined = Transition.concatenate([one, two])
    assert len(joined) == 4
    np.testing.assert_array_equal(joined.action, [0, 1, 2, 1])
    np.testing.assert_array_equal(joined.terminated, [False, True, False, True])
    np.testing.assert_array_equal(joined.extras["log_prob"], [-0.1, -0.2, -0.3, -0.2])


def test_a_single_step_is_a_batch_of_one() -> None:
    single = Transition.single(
        state={"observation": np.zeros(2)},
        action=1,
        reward=0.5,
        next_state={"observation": np.ones(2)},
        terminated=True,
        truncated=False,
    )
    assert len(single) == 1
    assert single.state["observation"].shape == (1, 2)
    np.testing.assert_array_equal(single.action, [1])
    np.testing.assert_array_equal(single.done, [True])
    assert single.extras == {}


def _batch(**overrides: object) -> Batch:
    values: dict[str, object] = {
        "states": {"observation": np.arange(6.0).reshape(3, 2), "goal": np.ones((3, 1))},
        "actions": np.array([0, 1, 2]),
        "rewards": np.array([1.0, 2.0, 3.0]),
        "next_states": {
            "observation": np.arange(6.0, 12.0).reshape(3, 2),
            "goal": np.zeros((3, 1)),
        },
        "terminated": np.array([False, True, False]),
        "truncated": np.array([False, False, True]),
    }
    values.update(overrides)
    return Batch(**values)  # type: ignore[arg-type]


def test_batch_len_is_the_number_of_rows() -> None:
    assert len(_batch()) == 3
    assert len(_batch(rewards=np.zeros(7))) == 7


def test_batch_map_applies_to_every_array_and_keeps_none() -> None:
    batch = _batch(extras={"returns": np.array([4.0, 5.0, 6.0])})
    assert batch.indices is None
    assert batch.weights is None

    doubled = batch.map(lambda a: np.asarray(a) * 2)

    assert isinstance(doubled, Batch)
    assert doubled is not batch
    np.testing.assert_array_equal(doubled.states["observation"], batch.states["observation"] * 2)
    np.testing.assert_array_equal(doubled.states["goal"], [[2.0], [2.0], [2.0]])
    np.testing.assert_array_equal(doubled.actions, [0, 2, 4])
    np.testing.assert_array_equal(doubled.rewards, [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(
        doubled.next_states["observation"], batch.next_states["observation"] * 2
    )
    np.testing.assert_array_equal(doubled.terminated, [0, 2, 0])
    np.testing.assert_array_equal(doubled.truncated, [0, 0, 2])
    np.testing.assert_array_equal(doubled.extras["returns"], [8.0, 10.0, 12.0])
    assert doubled.indices is None
    assert doubled.weights is None
    # The original is left as it was.
    np.testing.assert_array_equal(batch.rewards, [1.0, 2.0, 3.0])


def test_batch_map_counts_calls_per_array() -> None:
    calls: list[object] = []
    batch = _batch(indices=np.array([4, 5, 6]), weights=np.ones(3))

    def record(a: object) -> object:
        calls.append(a)
        return a

    mapped = batch.map(record)
    # 2 state keys + actions + rewards + 2 next-state keys + terminated + truncated
    # + indices + weights (extras is empty, Nones are skipped).
    assert len(calls) == 10
    assert mapped.indices is batch.indices
    assert mapped.weights is batch.weights
    assert mapped.extras == {}


@pytest.mark.parametrize("size", [1, 3, 64])
def test_any_set_says_what_ndarray_any_says(size: int) -> None:
    rng = np.random.default_rng(size)
    for flags in [np.zeros(size, bool), np.ones(size, bool), rng.random(size) < 0.1]:
        assert any_set(flags) == bool(flags.any())
        for i in range(size):
            one = np.zeros(size, bool)
            one[i] = True
            assert any_set(one)
