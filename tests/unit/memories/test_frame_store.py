"""Unit tests for coach/memories/frame_store.py, through the replay memories that use it.

Streams of frame stacks are made the way an agent makes them: B environment copies, each
frame a unique small image, episodes of random lengths whose first stack repeats the first
frame. A memory whose key is `StackedFrames` must hand back exactly what a memory storing
the whole stacks hands back, while writing each frame once.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from coach.core.spaces import StackedFrames
from coach.core.types import Transition
from coach.errors import CoachError
from coach.memories.experience_replay import ExperienceReplay
from coach.memories.frame_store import FrameStore
from coach.memories.n_step import NStepAccumulator
from coach.memories.prioritized_experience_replay import PrioritizedExperienceReplay

K = 4
FRAME = spaces.Box(0, 255, shape=(6, 5), dtype=np.uint8)
ACTIONS = spaces.Discrete(3)


def _spaces(stacked: bool) -> spaces.Dict:
    frames = StackedFrames(FRAME, K) if stacked else spaces.Box(0, 255, (K, 6, 5), np.uint8)
    return spaces.Dict({"observation": frames, "position": spaces.Box(-1e9, 1e9, (1,))})


class FrameStream:
    """B envs stepping: their frame stacks, with episodes ending at random."""

    def __init__(self, num_envs: int, seed: int, mean_episode: float = 12.0) -> None:
        self.rng = np.random.default_rng(seed)
        self.num_envs = num_envs
        self.mean_episode = mean_episode
        self.serial = 0
        self.frames_made = 0
        self.episodes = 0
        self.stacks = np.stack([self._first() for _ in range(num_envs)])

    def _frame(self) -> np.ndarray:
        self.serial += 1
        self.frames_made += 1
        # A unique frame: its serial number written into the first bytes.
        frame = self.rng.integers(0, 256, size=FRAME.shape, dtype=np.uint8)
        frame.flat[:4] = np.frombuffer(np.uint32(self.serial).tobytes(), np.uint8)
        return frame

    def _first(self) -> np.ndarray:
        return np.repeat(self._frame()[None], K, axis=0)

    def step(self) -> dict[str, np.ndarray]:
        """One step of every env, as the keyword arguments of `Memory.store`."""
        state = self.stacks
        next_state = np.stack([np.concatenate([s[1:], self._frame()[None]]) for s in state])
        ended = self.rng.random(self.num_envs) < 1.0 / self.mean_episode
        terminated = ended & (self.rng.random(self.num_envs) < 0.5)
        truncated = ended & ~terminated
        self.stacks = next_state.copy()
        for i in np.flatnonzero(ended):
            self.stacks[i] = self._first()
            self.episodes += 1
        position = state[:, -1].reshape(self.num_envs, -1)[:, :4].copy().view(np.uint32)
        return {
            "state": {"observation": state, "position": position.astype(np.float32)},
            "action": self.rng.integers(0, 3, size=self.num_envs),
            "reward": self.rng.standard_normal(self.num_envs).astype(np.float32),
            "next_state": {"observation": next_state, "position": position + 1.0},
            "terminated": terminated,
            "truncated": truncated,
        }


def _pair(capacity: int, prioritized: bool = False) -> tuple[ExperienceReplay, ExperienceReplay]:
    kind = PrioritizedExperienceReplay if prioritized else ExperienceReplay
    return (
        kind(capacity, _spaces(True), ACTIONS, np.random.default_rng(7)),
        kind(capacity, _spaces(False), ACTIONS, np.random.default_rng(7)),
    )


def _assert_same_batches(stacked: ExperienceReplay, whole: ExperienceReplay) -> None:
    assert len(stacked) == len(whole)
    for _ in range(5):
        a, b = stacked.sample(64), whole.sample(64)
        np.testing.assert_array_equal(a.indices, b.indices)
        for key in ("observation", "position"):
            np.testing.assert_array_equal(a.states[key], b.states[key])
            np.testing.assert_array_equal(a.next_states[key], b.next_states[key])
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.rewards, b.rewards)
        np.testing.assert_array_equal(a.terminated, b.terminated)


@pytest.mark.parametrize("num_envs", [1, 3])
@pytest.mark.parametrize("prioritized", [False, True], ids=["uniform", "prioritized"])
def test_samples_equal_a_memory_of_whole_stacks(num_envs: int, prioritized: bool) -> None:
    stacked, whole = _pair(500, prioritized)
    stream = FrameStream(num_envs, seed=1)
    for _ in range(400):  # wraps the ring more than once
        step = stream.step()
        stacked.store(Transition(**step))
        whole.store(Transition(**step))
    _assert_same_batches(stacked, whole)


def test_each_frame_is_written_once() -> None:
    stacked, _ = _pair(10_000)
    stream = FrameStream(2, seed=2)
    for _ in range(1000):
        stacked.store(Transition(**stream.step()))
    store = stacked.frame_stores["observation"]
    # Every frame the envs produced, each once: one per step and one per new episode.
    assert store.written == stream.frames_made
    assert stream.frames_made == 2 * 1000 + 2 + stream.episodes


def test_n_step_transitions_share_frames_too() -> None:
    memory, whole = _pair(5000)
    stream = FrameStream(2, seed=3)
    accumulators = [NStepAccumulator(3, 0.9, 2), NStepAccumulator(3, 0.9, 2)]
    for _ in range(600):
        step = stream.step()
        for target, accumulator in zip((memory, whole), accumulators, strict=True):
            ready = accumulator.add(
                Transition(
                    state=step["state"],
                    action=step["action"],
                    reward=step["reward"],
                    next_state=step["next_state"],
                    terminated=step["terminated"],
                    truncated=step["truncated"],
                )
            )
            if ready is not None:
                ready.extras = {}
                target.store(ready)
    assert memory.frame_stores["observation"].written == stream.frames_made
    _assert_same_batches(memory, whole)


@pytest.mark.parametrize("prioritized", [False, True], ids=["uniform", "prioritized"])
def test_when_frames_outrun_transitions_the_oldest_transitions_are_forgotten(
    prioritized: bool,
) -> None:
    kind = PrioritizedExperienceReplay if prioritized else ExperienceReplay
    memory = kind(300, _spaces(True), ACTIONS, np.random.default_rng(0))
    store = FrameStore(300, StackedFrames(FRAME, K), window=20, slack=40)
    memory.frame_stores["observation"] = store
    assert store.num_frames == 300 + 40
    stream = FrameStream(1, seed=4, mean_episode=1.5)  # about 1.7 frames per transition
    for _ in range(2000):
        memory.store(Transition(**stream.step()))
        assert len(memory) < 300
    # Every live row still reads back the frames it was stored with.
    batch = memory.get(memory._live_rows())
    frames = batch.states["observation"][:, -1].reshape(len(batch.rewards), -1)[:, :4]
    np.testing.assert_array_equal(
        frames.copy().view(np.uint32)[:, 0], batch.states["position"][:, 0]
    )
    assert np.all(np.diff(batch.states["position"][:, 0]) > 0)
    if prioritized:
        live = np.zeros(300, dtype=bool)
        live[memory._live_rows()] = True
        assert np.all(memory.sum_tree[np.flatnonzero(~live)] == 0)
        assert set(memory.sample(256).indices) <= set(np.flatnonzero(live))


@pytest.mark.parametrize("prioritized", [False, True], ids=["uniform", "prioritized"])
def test_state_dict_round_trip_continues_exactly(prioritized: bool) -> None:
    stacked, _ = _pair(300, prioritized)
    stream = FrameStream(2, seed=5)
    for _ in range(250):
        stacked.store(Transition(**stream.step()))
    restored, _ = _pair(300, prioritized)
    restored.load_state_dict(stacked.state_dict())
    for _ in range(50):
        step = stream.step()
        stacked.store(Transition(**step))
        restored.store(Transition(**step))
    _assert_same_batches(restored, stacked)
    assert (
        restored.frame_stores["observation"].written == stacked.frame_stores["observation"].written
    )


def test_state_dict_into_another_capacity_keeps_the_newest_transitions() -> None:
    source, whole = _pair(300)
    stream = FrameStream(2, seed=6)
    for _ in range(200):
        step = stream.step()
        source.store(Transition(**step))
        whole.store(Transition(**step))
    larger, _ = _pair(1000)
    larger.load_state_dict(source.state_dict())
    reference_whole = ExperienceReplay(1000, _spaces(False), ACTIONS, np.random.default_rng(7))
    reference_whole.load_state_dict(whole.state_dict())
    _assert_same_batches(larger, reference_whole)


def test_bytes_per_atari_transition() -> None:
    frame = spaces.Box(0, 255, shape=(84, 84), dtype=np.uint8)
    capacity = 1_000_000
    memory = ExperienceReplay(
        capacity,
        spaces.Dict({"observation": StackedFrames(frame, 4)}),
        spaces.Discrete(18),
        np.random.default_rng(0),
    )
    per_transition = memory.nbytes() / capacity
    # One 7,056-byte frame and 1,024 frames of slack in a million; per transition a 4-byte
    # anchor, seven 2-byte offsets, a 1-byte action, a 4-byte reward and two flags; per
    # frame the 8-byte serial of its last user: 7,096.2 bytes (issue 21 asks for 7,100).
    assert 7056 < per_transition <= 7100
    assert memory.actions.dtype == np.uint8


def _assert_live_rows_equal(stacked: ExperienceReplay, whole: ExperienceReplay) -> None:
    live = stacked._live_rows()
    a, b = stacked.get(live), whole.get(live)
    for key in ("observation", "position"):
        np.testing.assert_array_equal(a.states[key], b.states[key])
        np.testing.assert_array_equal(a.next_states[key], b.next_states[key])


def test_exactly_the_transitions_whose_frames_are_overwritten_are_forgotten() -> None:
    # Three copies whose episodes end at random: a copy that starts an episode refers to
    # newer frames than the copies stored after it, so the oldest row is not always the
    # one with the oldest frames.
    stacked, whole = _pair(300)
    stacked.frame_stores["observation"] = FrameStore(300, StackedFrames(FRAME, K), slack=40)
    stream = FrameStream(3, seed=8, mean_episode=2.0)
    for t in range(600):
        step = stream.step()
        stacked.store(Transition(**step))
        whole.store(Transition(**step))
        if t > 150:
            assert len(stacked) < 300  # frames outrun transitions
            _assert_live_rows_equal(stacked, whole)
            # The newest forgotten row had a frame overwritten: nothing is forgotten early.
            forgotten = np.array([(stacked._live_rows()[0] - 1) % 300])
            states, next_states = stacked.frame_stores["observation"].get(forgotten)
            reference = whole.get(forgotten)
            assert not (
                np.array_equal(states, reference.states["observation"])
                and np.array_equal(next_states, reference.next_states["observation"])
            )


def test_batches_larger_than_a_chunk_in_a_ring_of_more_than_65536_frames() -> None:
    # A window this wide leaves chunks of 3 rows, so every store of 7 copies is split; the
    # ring wraps past 65,536 frames, where offsets are differences of frame serials.
    capacity = 66_000
    stacked, whole = _pair(capacity)
    store = FrameStore(capacity, StackedFrames(FRAME, K), window=32767 - 40 * 3)
    stacked.frame_stores["observation"] = store
    assert store._chunk == 3 and store.num_frames > 65536
    stream = FrameStream(7, seed=9, mean_episode=500.0)
    for _ in range(10_000):
        step = stream.step()
        stacked.store(Transition(**step))
        whole.store(Transition(**step))
    assert store.written > store.num_frames
    _assert_same_batches(stacked, whole)
    _assert_live_rows_equal(stacked, whole)


def test_a_ring_too_small_for_a_batch_is_an_error() -> None:
    memory, _ = _pair(2)
    memory.frame_stores["observation"] = FrameStore(2, StackedFrames(FRAME, K), slack=0)
    with pytest.raises(CoachError, match="too small"):
        memory.store(Transition(**FrameStream(2, seed=10).step()))


@pytest.mark.parametrize(
    ("space", "stored"),
    [
        (spaces.Discrete(18), np.uint8),
        (spaces.Discrete(256), np.uint8),
        (spaces.Discrete(300), np.uint16),
        (spaces.Discrete(3, start=-1), np.int64),
        (spaces.Discrete(70_000), np.int64),
        (spaces.Box(-1, 1, (2,)), np.float32),
    ],
)
def test_actions_are_kept_in_the_narrowest_dtype_and_sampled_in_the_spaces(
    space: spaces.Space, stored: type
) -> None:
    memory = ExperienceReplay(50, _spaces(True), space, np.random.default_rng(0))
    assert memory.actions.dtype == stored
    stream = FrameStream(2, seed=11)
    actions = []
    for _ in range(20):
        step = stream.step()
        step["action"] = np.array([space.sample() for _ in range(2)], dtype=space.dtype)
        actions.append(step["action"])
        memory.store(Transition(**step))
    batch = memory.get(np.arange(40))
    assert batch.actions.dtype == space.dtype
    np.testing.assert_array_equal(batch.actions, np.concatenate(actions))


def test_a_saved_layout_the_offsets_cannot_hold_is_stored_again() -> None:
    # A store of an earlier version could keep a row's frames anywhere in the ring; one
    # 33,000 slots from the row's newest frame is further than 16 bits reach either way
    # round a ring of 67,024.
    capacity = 66_000
    memory, _ = _pair(capacity)
    stream = FrameStream(1, seed=12)
    for _ in range(300):
        memory.store(Transition(**stream.step()))
    state = memory.state_dict()
    saved = state["frame_stores"]["observation"]
    far = int(saved["next_state_slots"][-1, -1]) + 33_000
    frames = np.zeros((far + 1, *FRAME.shape), np.uint8)
    frames[: len(saved["frames"])] = saved["frames"]
    frames[far] = frames[saved["state_slots"][-1, 0]]
    saved["frames"], saved["state_slots"][-1, 0] = frames, far
    live = memory._live_rows()
    assert not FrameStore(capacity, StackedFrames(FRAME, K)).load_state_dict(saved, live)
    restored, _ = _pair(capacity)
    restored.load_state_dict(state)
    a, b = restored.get(live), memory.get(live)
    for key in ("observation", "position"):
        np.testing.assert_array_equal(a.states[key], b.states[key])
        np.testing.assert_array_equal(a.next_states[key], b.next_states[key])
