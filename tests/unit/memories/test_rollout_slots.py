"""A rollout block whose slots step at different times (a turn-based game, an id that left):
each slot's column holds its own steps in order, GAE runs down each column over them alone,
and the minibatches draw every stored step once. The expectations come from GAE run on each
slot's steps as a block of their own."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.types import Transition
from coach.memories.advantages import generalized_advantages
from coach.memories.memory import SLOT
from coach.memories.rollout import Rollout, RolloutParameters

OBSERVATION = spaces.Dict({"observation": spaces.Box(-1e6, 1e6, (1,), np.float32)})
EXTRAS = {"value": spaces.Box(-np.inf, np.inf, (), np.float32)}
LENGTH, SLOTS = 4, 3


def block(seed: int = 0, slots: int = SLOTS) -> Rollout:
    """A block of ``LENGTH`` steps for ``slots`` slots, as the agent reserves it."""
    rollout = RolloutParameters(rollout_length=LENGTH).build(
        OBSERVATION, spaces.Discrete(2), np.random.default_rng(seed), EXTRAS
    )
    rollout.reserve(slots)
    return rollout


def step(slots: np.ndarray, k: np.ndarray, rng: np.random.Generator) -> Transition:
    """The k-th step of each slot in ``slots``: state 1000 slot + k, value and reward drawn,
    an episode end now and then."""
    n = len(slots)
    ends = rng.random(n)
    return Transition(
        state={"observation": (1000 * slots + k)[:, None].astype(np.float32)},
        action=rng.integers(0, 2, n),
        reward=rng.normal(size=n).astype(np.float32),
        next_state={"observation": (1000 * slots + k + 1)[:, None].astype(np.float32)},
        terminated=ends < 0.15,
        truncated=(ends >= 0.15) & (ends < 0.25),
        extras={"value": rng.normal(size=n).astype(np.float32), SLOT: slots},
    )


def fill(rollout: Rollout, seed: int) -> list[list[Transition]]:
    """Steps of random subsets of the slots until the block is full; each slot's own steps."""
    rng = np.random.default_rng(seed)
    taken: list[list[Transition]] = [[] for _ in range(SLOTS)]
    counts = np.zeros(SLOTS, dtype=np.int64)
    while not rollout.full:
        slots = np.flatnonzero(rng.random(SLOTS) < [0.9, 0.5, 0.2])
        if not len(slots):
            continue
        transition = step(slots, counts[slots], rng)
        rollout.store(transition)
        for row, slot in enumerate(slots):
            taken[slot].append(
                Transition(
                    **{
                        name: {k: v[row : row + 1] for k, v in value.items()}
                        if isinstance(value, dict)
                        else value[row : row + 1]
                        for name, value in vars_of(transition).items()
                    }
                )
            )
        counts[slots] += 1
    return taken


def vars_of(t: Transition) -> dict[str, object]:
    return {
        "state": t.state,
        "action": t.action,
        "reward": t.reward,
        "next_state": t.next_state,
        "terminated": t.terminated,
        "truncated": t.truncated,
        "extras": t.extras,
    }


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_gae_runs_down_each_slots_own_steps(seed: int) -> None:
    rollout = block()
    taken = fill(rollout, seed)
    assert len(rollout) == sum(map(len, taken)) >= LENGTH * SLOTS
    assert rollout.counts.tolist() == [len(steps) for steps in taken]
    assert not rollout.aligned and rollout.steps == max(map(len, taken)) > LENGTH  # grew
    steps = rollout.steps
    values = rollout.columns["extras"]["value"][:steps].astype(np.float64)
    last = np.arange(SLOTS, dtype=np.float64)[rollout.last_steps()[1]] * 10 + 5
    final = np.full((steps, SLOTS), 7.0)
    rollout.compute_advantages(values, last, final, 0.9, 0.8)
    assert rollout.advantages is not None
    for slot, own in enumerate(taken):
        if not own:
            continue
        column = Transition.concatenate(own)
        v = column.extras["value"].astype(np.float64)[:, None]
        successor = np.append(v[1:, 0], slot * 10 + 5)[:, None]
        successor = np.where(column.truncated[:, None], 7.0, successor)
        expected, _ = generalized_advantages(
            column.reward[:, None].astype(np.float64), v, successor,
            column.terminated[:, None], column.truncated[:, None], 0.9, 0.8,
        )  # fmt: skip
        np.testing.assert_allclose(rollout.advantages[: len(own), slot], expected[:, 0])


def test_the_minibatches_draw_every_stored_step_once() -> None:
    rollout = block()
    taken = fill(rollout, 5)
    steps = rollout.steps
    rollout.compute_advantages(
        np.zeros((steps, SLOTS)), np.zeros(len(rollout.last_steps()[1])),
        np.zeros((steps, SLOTS)), 0.9, 0.8,
    )  # fmt: skip
    seen = []
    for batch in rollout.minibatches(5):
        seen += batch.states["observation"][:, 0].astype(int).tolist()
    expected = [1000 * slot + k for slot, own in enumerate(taken) for k in range(len(own))]
    assert sorted(seen) == sorted(expected)
    sample = rollout.sample(64).states["observation"][:, 0].astype(int)
    assert set(sample.tolist()) <= set(expected)


def test_steps_of_every_slot_give_what_a_full_step_gives() -> None:
    dense, slotted = block(seed=3), block(seed=3)
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    every = np.arange(SLOTS)
    for k in range(LENGTH):
        plain = step(every, np.full(SLOTS, k), rng_a)
        plain.extras.pop(SLOT)
        dense.store(plain)
        slotted.store(step(every, np.full(SLOTS, k), rng_b))
    assert slotted.aligned and slotted.full and dense.full
    values = dense.columns["extras"]["value"].astype(np.float64)
    for rollout in (dense, slotted):
        rollout.compute_advantages(values, np.ones(SLOTS), np.zeros((LENGTH, SLOTS)), 0.9, 0.8)
    np.testing.assert_array_equal(dense.advantages, slotted.advantages)
    for a, b in zip(dense.minibatches(5), slotted.minibatches(5), strict=True):
        np.testing.assert_array_equal(a.indices, b.indices)


def test_a_full_step_after_some_slots_goes_on_in_each_column() -> None:
    rollout = block()
    rng = np.random.default_rng(0)
    rollout.store(step(np.array([1]), np.array([0]), rng))
    plain = step(np.arange(SLOTS), np.array([0, 1, 0]), rng)
    plain.extras.pop(SLOT)
    rollout.store(plain)  # every slot, each at its own next row
    assert rollout.counts.tolist() == [1, 2, 1]
    states = rollout.columns["states"]["observation"][:, :, 0]
    assert states[:2, 1].tolist() == [1000, 1001] and states[0, [0, 2]].tolist() == [0, 2000]
    rollout.cut()
    truncated = rollout.columns["truncated"]
    assert truncated[0, 0] and truncated[1, 1] and truncated[0, 2]


def test_a_block_in_progress_resumes_from_its_state() -> None:
    rollout = block()
    rng = np.random.default_rng(2)
    for slots in ([0, 2], [2], [1, 2], [2], [2], [2]):  # slot 2 runs past T
        chosen = np.array(slots)
        rollout.store(step(chosen, rollout.counts[chosen].copy(), rng))
    restored = block()
    restored.load_state_dict(rollout.state_dict())
    assert restored.counts.tolist() == rollout.counts.tolist() == [1, 1, 6]
    assert len(restored) == len(rollout) == 8 and not restored.aligned
    for more in (rollout, restored):
        more.store(step(np.array([0, 1]), np.array([1, 1]), np.random.default_rng(4)))
    valid = rollout.valid()
    for key in ("rewards", "terminated", "actions"):
        a, b = rollout.columns[key][: rollout.steps], restored.columns[key][: restored.steps]
        np.testing.assert_array_equal(a[valid], b[valid])


def test_slots_beyond_the_first_steps_widen_the_block() -> None:
    rollout = block(slots=0)
    rng = np.random.default_rng(0)
    rollout.store(step(np.array([0]), np.array([0]), rng))
    assert rollout.num_envs == 1
    rollout.reserve(5)
    rollout.store(step(np.array([6]), np.array([0]), rng))
    assert rollout.num_envs == 7 and rollout.counts.tolist() == [1, 0, 0, 0, 0, 0, 1]
    assert rollout.columns["states"]["observation"][0, 6, 0] == 6000
    assert not rollout.full  # 2 of 4 x 7


def test_sequences_follow_each_slots_own_steps_and_mark_where_they_run_past_them() -> None:
    rollout = block()
    taken = fill(rollout, 7)
    seen = []
    for batch in rollout.sequence_minibatches(2, 4):
        states, valid = batch.states["observation"][..., 0], batch.extras["valid"]
        assert states.shape == valid.shape and states.shape[0] == 2
        for column, ok in zip(states.T, valid.T, strict=True):
            assert ok[0] and column[0] % 2 == 0  # a sequence starts at an even step
            kept = column[ok].astype(int)
            np.testing.assert_array_equal(np.diff(kept), 1)  # consecutive steps of a slot
            seen += kept.tolist()
    expected = [1000 * slot + k for slot, own in enumerate(taken) for k in range(len(own))]
    assert sorted(seen) == sorted(expected)
