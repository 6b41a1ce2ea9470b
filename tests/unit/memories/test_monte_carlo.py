"""Monte Carlo returns (coach/memories/monte_carlo.py): each copy's episode held until it
ends, then its steps with their discounted returns, computed here by hand."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from coach.core.types import Transition
from coach.memories.monte_carlo import MC_RETURN, MonteCarloReturns, discounted_returns

G = 0.5


def _steps(
    t: int, rewards: list[float], ended: list[bool], truncated: list[bool] | None = None
) -> Transition:
    """A step of len(rewards) copies at time t: copy c observes 10*c + t."""
    copies = len(rewards)
    observation = np.array([[10 * c + t] for c in range(copies)], dtype=np.float32)
    cut = np.array(truncated or [False] * copies)
    return Transition(
        state={"observation": observation},
        action=np.arange(copies),
        reward=np.array(rewards, dtype=np.float32),
        next_state={"observation": observation + 1},
        terminated=np.array(ended) & ~cut,
        truncated=cut,
    )


def _rows(out: Transition | None) -> list[tuple[int, float, float]]:
    """(observation, reward, return) of each released step."""
    if out is None:
        return []
    return [
        (int(out.state["observation"][i, 0]), float(out.reward[i]), float(out.extras[MC_RETURN][i]))
        for i in range(len(out))
    ]


def test_discounted_returns_by_hand() -> None:
    np.testing.assert_allclose(
        discounted_returns(np.array([1.0, 2.0, 4.0]), G), [1 + 0.5 * 2 + 0.25 * 4, 2 + 0.5 * 4, 4]
    )
    assert discounted_returns(np.array([], dtype=np.float32), G).shape == (0,)


def test_an_episode_leaves_whole_when_it_ends_with_each_steps_return() -> None:
    returns = MonteCarloReturns(G, num_envs=1)
    assert returns.add(_steps(0, [1.0], [False])) is None
    assert returns.add(_steps(1, [2.0], [False])) is None
    out = returns.add(_steps(2, [4.0], [True]))
    assert _rows(out) == [(0, 1.0, 3.0), (1, 2.0, 4.0), (2, 4.0, 4.0)]
    assert out is not None and out.terminated.tolist() == [False, False, True]
    np.testing.assert_array_equal(out.next_state["observation"][:, 0], [1, 2, 3])
    # The next episode starts empty.
    assert _rows(returns.add(_steps(3, [8.0], [True]))) == [(3, 8.0, 8.0)]


def test_copies_keep_their_own_episodes_and_end_apart() -> None:
    returns = MonteCarloReturns(G, num_envs=2)
    assert returns.add(_steps(0, [1.0, 10.0], [False, False])) is None
    out = returns.add(_steps(1, [2.0, 20.0], [False, True]))
    assert _rows(out) == [(10, 10.0, 20.0), (11, 20.0, 20.0)]  # copy 1's episode only
    out = returns.add(_steps(2, [4.0, 40.0], [True, True]))  # both end: copy 0's first
    assert _rows(out) == [(0, 1.0, 3.0), (1, 2.0, 4.0), (2, 4.0, 4.0), (12, 40.0, 40.0)]


def test_a_truncated_episode_carries_the_rewards_seen_up_to_the_cut() -> None:
    returns = MonteCarloReturns(G, num_envs=1)
    returns.add(_steps(0, [2.0], [False]))
    out = returns.add(_steps(1, [2.0], [False], truncated=[True]))
    assert _rows(out) == [(0, 2.0, 3.0), (1, 2.0, 2.0)]
    assert out is not None and out.truncated.tolist() == [False, True]
    assert not out.terminated.any()


def test_steps_of_some_copies_join_those_copies_episodes() -> None:
    returns = MonteCarloReturns(G, num_envs=3)
    returns.add(_steps(0, [1.0, 1.0, 1.0], [False, False, False]))
    # Only copies 2 and 0 step (row for row), and copy 0 ends.
    step = _steps(1, [5.0, 7.0], [False, True])
    step.state["observation"] = np.array([[21.0], [1.0]], dtype=np.float32)
    out = returns.add(step, np.array([2, 0]))
    assert _rows(out) == [(0, 1.0, 4.5), (1, 7.0, 7.0)]
    flushed = returns.flush()  # copies 1 (one step) and 2 (two steps), cut where they are
    assert _rows(flushed) == [(10, 1.0, 1.0), (20, 1.0, 3.5), (21, 5.0, 5.0)]
    assert returns.flush() is None


def test_the_open_episodes_survive_a_checkpoint() -> None:
    returns = MonteCarloReturns(G, num_envs=2)
    for t in range(3):
        returns.add(_steps(t, [1.0, 2.0], [False, False]))
    restored = MonteCarloReturns(G, num_envs=2)
    restored.load_state_dict(copy.deepcopy(returns.state_dict()))
    last = _steps(3, [1.0, 2.0], [True, True])
    assert _rows(restored.add(last)) == _rows(returns.add(last))
    empty = MonteCarloReturns(G, num_envs=2)
    empty.load_state_dict(MonteCarloReturns(G, num_envs=2).state_dict())
    assert empty.flush() is None


@pytest.mark.parametrize("extra", [None, "discount"])
def test_the_steps_extras_come_along(extra: str | None) -> None:
    returns = MonteCarloReturns(G, num_envs=1)
    step = _steps(0, [1.0], [True])
    if extra is not None:
        step.extras[extra] = np.array([0.25], dtype=np.float32)
    out = returns.add(step)
    assert out is not None and set(out.extras) == {MC_RETURN} | ({extra} if extra else set())
