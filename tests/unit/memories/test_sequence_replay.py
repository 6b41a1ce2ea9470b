"""Unit tests for coach/memories/sequence_replay.py: sequences cut from each env copy's
stream with their overlap, whole slots overwritten (never part of one), the hidden state at
each sequence's first step, sources kept apart, priorities and checkpoints."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.recurrent_columns import EPISODE_START, hidden_key, next_hidden_key
from coach.core.types import Transition
from coach.errors import CoachError
from coach.memories.sequence_replay import SequenceReplay, SequenceReplayParameters
from coach.schedules import ConstantSchedule
from coach.validation import InvalidParameter

OBSERVATION = spaces.Dict({"observation": spaces.Box(-1e6, 1e6, (1,), np.float32)})
STATE = spaces.Box(-np.inf, np.inf, (1, 1, 2), np.float32)
EXTRAS = {
    hidden_key("main"): STATE,
    next_hidden_key("main"): STATE,
    EPISODE_START: spaces.Box(0, 1, (), np.bool_),
}


def replay(
    max_size: int = 64, length: int = 4, overlap: int = 2, **kwargs: object
) -> SequenceReplay:
    params = SequenceReplayParameters(
        max_size=max_size,
        sequence_length=length,
        overlap=overlap,
        **kwargs,  # type: ignore[arg-type]
    )
    return params.build(OBSERVATION, spaces.Discrete(2), np.random.default_rng(0), EXTRAS)


def step(t: int, copies: int = 2, source: int = 0) -> Transition:
    """Step ``t`` of every copy: copy c's state is 1000 source + 100 c + t, and so is its
    hidden state before the step."""
    ids = 1000 * source + 100 * np.arange(copies) + t
    hidden = np.broadcast_to(ids[:, None, None, None], (copies, 1, 1, 2)).astype(np.float32)
    return Transition(
        state={"observation": ids[:, None].astype(np.float32)},
        action=np.zeros(copies, np.int64),
        reward=np.ones(copies, np.float32),
        next_state={"observation": ids[:, None].astype(np.float32) + 1},
        terminated=np.zeros(copies, bool),
        truncated=np.zeros(copies, bool),
        extras={
            hidden_key("main"): hidden,
            next_hidden_key("main"): hidden + 1,
            EPISODE_START: np.full(copies, t == 0),
        },
    )


def starts_of(memory: SequenceReplay) -> set[int]:
    return {int(s) for s in memory.columns[("state", "observation")][: memory.size, 0, 0]}


def test_each_copys_stream_is_cut_into_overlapping_sequences() -> None:
    memory = replay()
    for t in range(3):
        memory.store(step(t))
    assert len(memory) == 0  # no sequence of 4 steps yet
    for t in range(3, 8):
        memory.store(step(t))
    # Every 2 steps from the 4th on: sequences start at 0, 2 and 4 in both copies.
    assert starts_of(memory) == {0, 2, 4, 100, 102, 104} and len(memory) == 6 * 4
    batch = memory.sample(16)
    states = batch.states["observation"][..., 0]  # (4, 16), time-major
    assert states.shape == (4, 16) and batch.indices.shape == (16,)
    np.testing.assert_array_equal(np.diff(states, axis=0), 1)  # consecutive steps of a copy
    # The hidden state is kept at each sequence's first step only; no after-step states.
    np.testing.assert_array_equal(batch.extras[hidden_key("main")][:, 0, 0, 0], states[0])
    assert next_hidden_key("main") not in batch.extras
    np.testing.assert_array_equal(batch.extras[EPISODE_START], states % 100 == 0)


def test_sequences_never_mix_steps_of_overwritten_slots() -> None:
    memory = replay(max_size=12)  # 3 slots of 4 steps
    for t in range(40):
        memory.store(step(t, copies=1))
        if memory.size:
            states = memory.sample(8).states["observation"][..., 0]
            np.testing.assert_array_equal(np.diff(states, axis=0), 1)
            # Only the 3 newest sequences: the newest starts at t - 3 or t - 4, the oldest
            # live one two periods of 2 steps before it.
            assert states[0].min() >= t - 4 - 2 * 2
    assert memory.size == 3 and starts_of(memory) == {32, 34, 36}


def test_sources_are_kept_apart() -> None:
    memory = replay()
    for t in range(4):
        memory.stream(1).store(step(t, source=1))
        memory.stream(2).store(step(t, source=2))
    assert starts_of(memory) == {1000, 1100, 2000, 2100}
    with pytest.raises(CoachError, match="stored steps of 2 env copies, now one of 3"):
        memory.stream(1).store(step(4, copies=3, source=1))


def test_a_restart_is_in_the_episode_start_flags_alone() -> None:
    memory = replay()
    for t in range(3):
        memory.store(step(t))
    memory.end_episodes()  # the agent's episodes restart: nothing is rewritten
    memory.store(step(0))  # a new episode: the 4th step of the window
    starts = memory.columns[("extras", EPISODE_START)][: memory.size]
    assert starts[:, [0, 3]].all() and not starts[:, [1, 2]].any()
    assert not memory.columns[("truncated", "")][: memory.size].any()


def test_priorities_steer_the_samples_and_weigh_them() -> None:
    memory = replay(alpha=1.0, beta_schedule=ConstantSchedule(1.0), epsilon=1e-9)
    for t in range(4):
        memory.store(step(t))  # two slots: 0 (copy 0) and 1 (copy 1)
    memory.update_priorities(np.array([0, 1]), np.array([3.0, 1.0]))
    batch = memory.sample(4000)
    share = np.mean(batch.indices == 0)
    assert share == pytest.approx(0.75, abs=0.03)
    weights = dict(zip(batch.indices.tolist(), batch.weights.tolist(), strict=False))
    assert weights[1] == pytest.approx(1.0) and weights[0] == pytest.approx(1 / 3)
    with pytest.raises(CoachError, match="non-finite"):
        memory.update_priorities(np.array([0]), np.array([np.nan]))


def test_a_checkpoint_round_trip_samples_alike_and_keeps_the_open_windows() -> None:
    memory = replay(max_size=12)
    for t in range(9):
        memory.store(step(t))
    state = memory.state_dict()
    other = replay(max_size=12)
    other.load_state_dict(state)
    memory.rng, other.rng = np.random.default_rng(5), np.random.default_rng(5)
    for m in (memory, other):
        m.store(step(9))  # completes a window held open in the checkpoint
    a, b = memory.sample(6), other.sample(6)
    np.testing.assert_array_equal(a.states["observation"], b.states["observation"])
    np.testing.assert_array_equal(a.weights, b.weights)
    with pytest.raises(CoachError, match="cannot be restored"):
        replay(max_size=16).load_state_dict(state)


def test_parameters_are_checked() -> None:
    with pytest.raises(InvalidParameter, match="overlap must be below sequence_length"):
        SequenceReplayParameters(sequence_length=4, overlap=4).validate()
    with pytest.raises(InvalidParameter, match="max_size"):
        SequenceReplayParameters(max_size=10, sequence_length=20, overlap=0).validate()
