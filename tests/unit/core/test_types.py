"""Unit tests for coach/core/types.py: EnvResponse, Transition and Batch."""

from __future__ import annotations

import numpy as np
import pytest

from coach.core.types import Batch, EnvResponse, Transition


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


def test_transitions_one_per_env_with_the_right_rows() -> None:
    state, action, response = _two_env_response()
    transitions = response.transitions(state, action)
    assert len(transitions) == 2
    first, second = transitions
    assert all(isinstance(t, Transition) for t in transitions)

    np.testing.assert_array_equal(first.state["observation"], [0.0, 1.0])
    np.testing.assert_array_equal(first.state["goal"], [5.0])
    assert first.action == 1
    assert first.reward == 0.5
    assert isinstance(first.reward, float)
    np.testing.assert_array_equal(first.next_state["observation"], [2.0, 3.0])
    assert first.terminated is False
    assert first.truncated is False
    assert first.info == {"a": 1}

    np.testing.assert_array_equal(second.state["observation"], [10.0, 11.0])
    assert second.action == 0
    assert second.reward == -2.0
    # The ended env's transition leads to the final observation, not to the reset one.
    np.testing.assert_array_equal(second.next_state["observation"], [12.0, 13.0])
    np.testing.assert_array_equal(second.next_state["goal"], [6.0])
    assert second.terminated is True
    assert second.truncated is False
    assert second.info == {"b": 2}


def test_transitions_without_infos_get_empty_dicts() -> None:
    state, action, response = _two_env_response()
    response.infos = []
    assert [t.info for t in response.transitions(state, action)] == [{}, {}]


@pytest.mark.parametrize(
    ("terminated", "truncated", "done"),
    [(False, False, False), (True, False, True), (False, True, True), (True, True, True)],
)
def test_transition_done(terminated: bool, truncated: bool, done: bool) -> None:
    transition = Transition(
        state={"observation": np.zeros(2)},
        action=0,
        reward=0.0,
        next_state={"observation": np.ones(2)},
        terminated=terminated,
        truncated=truncated,
    )
    assert transition.done is done
    assert transition.info == {}


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
