"""N-step returns across terminations and truncations inside the window."""

from __future__ import annotations

import numpy as np
import pytest

from coach.core.types import Transition
from coach.memories.n_step import NStepAccumulator

G = 0.5


def step(acc: NStepAccumulator, t: int, reward: float, term: bool = False, trunc: bool = False):  # type: ignore[no-untyped-def]
    return acc.add(
        Transition(
            state={"observation": np.array([[t]], dtype=np.float32)},
            action=np.array([t]),
            reward=np.array([reward], dtype=np.float32),
            next_state={"observation": np.array([[t + 1]], dtype=np.float32)},
            terminated=np.array([term]),
            truncated=np.array([trunc]),
        )
    )


def rows(out: Transition | None) -> list[tuple[int, float, int, bool, bool, float]]:
    if out is None:
        return []
    return [
        (
            int(out.state["observation"][i, 0]),
            float(out.reward[i]),
            int(out.next_state["observation"][i, 0]),
            bool(out.terminated[i]),
            bool(out.truncated[i]),
            float(out.extras["discount"][i]),
        )
        for i in range(len(out))
    ]


def test_full_windows_sum_n_discounted_rewards() -> None:
    acc = NStepAccumulator(3, G, 1)
    assert rows(step(acc, 0, 1.0)) == [] and rows(step(acc, 1, 2.0)) == []
    assert rows(step(acc, 2, 4.0)) == [(0, 1 + G * 2 + G**2 * 4, 3, False, False, G**3)]
    assert rows(step(acc, 3, 8.0)) == [(1, 2 + G * 4 + G**2 * 8, 4, False, False, G**3)]


def test_termination_inside_the_window_flushes_shorter_returns() -> None:
    acc = NStepAccumulator(3, G, 1)
    step(acc, 0, 1.0)
    step(acc, 1, 2.0)
    out = rows(step(acc, 2, 4.0))  # completes the first window
    out += rows(step(acc, 3, 8.0, term=True))
    assert out == [
        (0, 1 + G * 2 + G**2 * 4, 3, False, False, G**3),
        (1, 2 + G * 4 + G**2 * 8, 4, True, False, G**3),
        (2, 4 + G * 8, 4, True, False, G**2),
        (3, 8.0, 4, True, False, G),
    ]
    assert all(len(w) == 0 for w in acc.windows)


def test_truncation_inside_the_window_keeps_the_bootstrap() -> None:
    acc = NStepAccumulator(4, G, 1)
    step(acc, 0, 1.0)
    out = rows(step(acc, 1, 2.0, trunc=True))
    # Not terminal: the learner bootstraps from state 2 with G**k.
    assert out == [(0, 1 + G * 2, 2, False, True, G**2), (1, 2.0, 2, False, True, G)]


def test_envs_keep_separate_windows() -> None:
    acc = NStepAccumulator(2, G, 2)

    def both(t: int, done: list[bool]):  # type: ignore[no-untyped-def]
        return acc.add(
            Transition(
                state={"observation": np.array([[t], [100 + t]], dtype=np.float32)},
                action=np.array([t, t]),
                reward=np.array([1.0, 10.0], dtype=np.float32),
                next_state={"observation": np.array([[t + 1], [101 + t]], dtype=np.float32)},
                terminated=np.array(done),
                truncated=np.array([False, False]),
            )
        )

    assert both(0, [False, True]) is not None  # env 1 terminates at once
    out = rows(both(1, [False, False]))
    assert out == [(0, 1 + G * 1, 2, False, False, G**2)]  # env 0's window; env 1 has 1 step


def test_flush_truncates_waiting_steps() -> None:
    acc = NStepAccumulator(3, G, 1)
    step(acc, 0, 1.0)
    step(acc, 1, 2.0)
    assert rows(acc.flush()) == [(0, 1 + G * 2, 2, False, True, G**2), (1, 2.0, 2, False, True, G)]
    assert acc.flush() is None


def test_state_round_trip() -> None:
    acc = NStepAccumulator(3, G, 1)
    step(acc, 0, 1.0)
    step(acc, 1, 2.0)
    other = NStepAccumulator(3, G, 1)
    other.load_state_dict(acc.state_dict())
    assert rows(step(other, 2, 4.0)) == rows(step(acc, 2, 4.0))


def test_n_must_be_positive() -> None:
    with pytest.raises(ValueError):
        NStepAccumulator(0, G, 1)
